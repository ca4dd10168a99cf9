"""What the person is told, over real HTTP against the live server: whether a client's name is its
own claim or vouched for by a host, where a refused request sends a browser (the page's own error
view; a program still gets the JSON, and a request that can go back to its client still does),
one entry per client allowed again, and why a connection the server ended was revoked."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.oauth.conftest import REDIRECT, pkce
from tests.oauth.test_metadata_documents import document

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
           "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}


def _authorize(flow, challenge: str, headers: dict | None = None, **params):
    query = {"response_type": "code", "client_id": flow.client_id, "code_challenge": challenge,
             "code_challenge_method": "S256", "state": "st-1", "redirect_uri": REDIRECT, **params}
    return flow.http.get("/oauth/authorize", params={k: v for k, v in query.items() if v is not None},
                         headers=headers or {})


# -- a request that cannot go back to its client ----------------------------------------------------

@pytest.mark.parametrize("params,why", [
    ({"client_id": "no-such-client"}, "unknown_client"),
    ({"redirect_uri": "https://evil.example/cb"}, "bad_redirect"),
    ({"client_id": None}, "bad_request"),
])
def test_a_browser_is_sent_to_the_pages_error_view_a_program_gets_the_json(flow, params, why):
    _, challenge = pkce()
    shown = _authorize(flow, challenge, BROWSER, **params)
    assert shown.status_code == 303, shown.text
    assert shown.headers["location"] == f"{flow.origin}/confirm?authorize_error={why}"
    assert shown.headers["cache-control"] == "no-store"
    for headers in ({}, {"Accept": "application/json"}):  # a program: the JSON RFC 6749 gives, no redirect
        refused = _authorize(flow, challenge, headers, **params)
        assert refused.status_code == 400 and "location" not in refused.headers
        assert refused.json()["error"] == "invalid_request"


def test_only_accepting_html_is_enough_to_be_a_browser(flow):
    _, challenge = pkce()
    shown = _authorize(flow, challenge, {"Accept": "text/html"}, client_id="no-such-client")
    assert shown.headers["location"] == f"{flow.origin}/confirm?authorize_error=unknown_client"


def test_a_refused_metadata_document_sends_a_browser_to_the_error_view(flow, document_host):
    _, challenge = pkce()
    url = document_host.serve_json("/view-private.json", document(document_host.url("/view-private.json")))
    flow.client_id = url  # the live server's own setting: a private address is refused
    shown = _authorize(flow, challenge, BROWSER)
    assert shown.status_code == 303
    assert shown.headers["location"] == f"{flow.origin}/confirm?authorize_error=client_document_refused"
    refused = _authorize(flow, challenge)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_client"


def test_an_error_the_client_can_hear_still_goes_back_to_it_from_a_browser(flow):
    """RFC 6749 §4.1.2.1: with a known client and its redirect URI, errors go to the client."""
    _, challenge = pkce()
    for params, error in (({"code_challenge_method": "plain"}, "invalid_request"), ({"scope": "admin"},
                                                                                     "invalid_scope")):
        answer = _authorize(flow, challenge, BROWSER, **params)
        assert answer.status_code == 302 and answer.headers["location"].startswith(REDIRECT + "?"), params
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        assert query["error"] == [error] and query["state"] == ["st-1"] and query["iss"] == [flow.origin]
    # And a good request from a browser goes to the consent view, as ever.
    assert flow.request_id(_authorize(flow, challenge, BROWSER))


# -- whose name it is -------------------------------------------------------------------------------

def test_a_registered_clients_name_is_only_its_claim(flow):
    _, challenge = pkce()
    shown = flow.page.get(f"/api/oauth/requests/{flow.request_id(flow.authorize(challenge))}").json()
    assert shown["client"] == {"name": "Raw client", "clientId": flow.client_id, "host": "127.0.0.1",
                               "metadataDocument": False, "verified": False, "verifiedBy": None,
                               "namedItself": True}
    assert flow.register(name="").status_code == 201  # no name: known by where it returns
    shown = flow.page.get(f"/api/oauth/requests/{flow.request_id(flow.authorize(challenge))}").json()
    assert shown["client"]["name"] == "127.0.0.1" and shown["client"]["namedItself"] is False


def test_a_metadata_documents_host_vouches_only_when_the_client_returns_there(flow, document_host, cimd_fetcher):
    _, challenge = pkce()
    home = f"https://localhost:{document_host.port}/callback"
    url = document_host.serve_json("/vouched.json", document(document_host.url("/vouched.json"),
                                                             redirect_uris=[home, REDIRECT]))
    flow.client_id = url
    vouched = flow.page.get(f"/api/oauth/requests/{flow.request_id(flow.authorize(challenge, redirect_uri=home))}")
    assert vouched.json()["client"]["verified"] is True and vouched.json()["client"]["verifiedBy"] == "localhost"
    # The same document, returning to an app on this device (which any app may listen as): a claim.
    loopback = flow.page.get(f"/api/oauth/requests/{flow.request_id(flow.authorize(challenge))}").json()
    assert loopback["client"]["verified"] is False and loopback["client"]["verifiedBy"] is None
    assert loopback["client"]["host"] == f"localhost:{document_host.port}"


# -- allowed again ----------------------------------------------------------------------------------

def _listed(flow) -> dict[str, dict]:
    return {c["id"]: c for c in flow.page.get("/api/connections").json()["connections"]}


def test_a_client_allowed_again_is_listed_under_its_latest_authorization(flow, tenant):
    """A client that keeps nothing registers anew each run (a new client_id): the same name and
    redirect host make it the same client in the list; nothing is revoked for it."""
    made = []
    for _ in range(3):
        assert flow.register(name="py-sdk-oauth-probe").status_code == 201
        _, challenge = pkce()
        made.append(flow.allow(flow.request_id(flow.authorize(challenge))).json()["connection"]["id"])
    assert flow.register(name="Another app").status_code == 201
    _, challenge = pkce()
    other = flow.allow(flow.request_id(flow.authorize(challenge))).json()["connection"]["id"]
    listed = _listed(flow)
    first, second, latest = made
    assert [listed[i]["oauth"]["earlierOf"] for i in made] == [latest, latest, None]
    assert listed[other]["oauth"]["earlierOf"] is None
    assert not any(listed[i]["revoked"] for i in (*made, other))
    # The latest revoked: the live one allowed last leads.
    assert flow.page.post(f"/api/connections/{latest}/revoke").status_code == 200
    listed = _listed(flow)
    assert [listed[i]["oauth"]["earlierOf"] for i in made] == [second, None, second]
    assert listed[latest]["revokedReason"] == "person" and listed[latest]["revokedWhy"] == "You revoked it."


# -- why it was revoked ---------------------------------------------------------------------------

def test_the_server_says_why_it_ended_a_connection(flow, tenant):
    reused = flow.tokens()
    assert flow.token(grant_type="refresh_token", refresh_token=reused["refresh_token"]).status_code == 200
    assert flow.token(grant_type="refresh_token", refresh_token=reused["refresh_token"]).status_code == 400
    verifier, challenge = pkce()
    code = flow.code(challenge)
    assert flow.exchange(code, verifier).status_code == 200
    assert flow.exchange(code, verifier).status_code == 400
    ended = flow.tokens()
    assert flow.http.post("/oauth/revoke", data={"token": ended["refresh_token"],
                                                 "client_id": flow.client_id}).status_code == 200
    listed = flow.page.get("/api/connections").json()["connections"]
    oauth = [(c["revoked"], c["revokedReason"], c["revokedWhy"]) for c in listed if c["oauth"]]
    assert oauth == [
        (True, "refresh_token_reused", "Its refresh token was used twice — a sign it was copied. Allow the app "
                                       "again if you still use it."),
        (True, "code_reused", "Its sign-in code was used twice — a sign it was intercepted. Allow the app again "
                              "if you still use it."),
        (True, "client_revoked", "The app ended the connection itself."),
    ]
    [token_connection] = [c for c in listed if not c["oauth"]]
    assert token_connection["revokedReason"] is None and token_connection["revokedWhy"] is None
