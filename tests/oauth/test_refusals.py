"""What the authorization server refuses, over real HTTP against the live server: PKCE, code
replay, redirect URIs, the resource, refresh token reuse, consent without the page's CSRF token,
and an open redirect through any parameter."""

from __future__ import annotations

import json
import sqlite3
from urllib.parse import parse_qs, urlsplit

import pytest

from countersign.store.hashes import secret_hash
from tests.oauth.conftest import REDIRECT, pkce
from tests.support.harness import SECRETS


def test_a_wrong_or_missing_pkce_verifier_gets_no_token(flow):
    verifier, challenge = pkce()
    code = flow.code(challenge)
    wrong, _ = pkce()
    refused = flow.exchange(code, wrong)
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    missing = flow.token(grant_type="authorization_code", code=code, redirect_uri=REDIRECT)
    assert missing.status_code == 400 and missing.json()["error"] == "invalid_request"
    assert flow.exchange(code, verifier).status_code == 200  # the right verifier still works


def test_authorize_refuses_plain_pkce_and_no_challenge(flow):
    _, challenge = pkce()
    for params in ({"code_challenge_method": "plain"}, {"code_challenge": None}):
        refused = flow.authorize(challenge, **params)
        assert refused.status_code == 302  # redirect URI known and valid: the client hears why
        answer = parse_qs(urlsplit(refused.headers["location"]).query)
        assert answer["error"] == ["invalid_request"] and answer["state"] == ["st-1"]
        assert answer["iss"] == [flow.origin]  # RFC 9207 on error redirects too


def test_a_replayed_code_is_refused_and_ends_the_grant(flow, tenant):
    verifier, challenge = pkce()
    code = flow.code(challenge)
    first = flow.exchange(code, verifier)
    assert first.status_code == 200
    access = first.json()["access_token"]
    assert flow.mcp(access).status_code == 200
    replay = flow.exchange(code, verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    # The code may have been stolen: every token it gave stops working.
    after = flow.mcp(access)
    assert after.status_code == 401 and 'error="invalid_token"' in after.headers["www-authenticate"]
    refreshed = flow.token(grant_type="refresh_token", refresh_token=first.json()["refresh_token"])
    assert refreshed.status_code == 400


def test_redirect_uri_mismatch_is_refused_without_a_redirect(flow):
    _, challenge = pkce()
    for other in ("http://127.0.0.1:45678/other", "https://evil.example/callback", "http://evil.example:45678/callback",
                  "http://127.0.0.1.evil.example/callback", REDIRECT + "?next=https://evil.example"):
        refused = flow.authorize(challenge, redirect_uri=other)
        assert refused.status_code == 400 and "location" not in refused.headers, other
    # Loopback on any port is the same redirect URI (RFC 8252 §7.3): accepted, answered there.
    elsewhere = "http://127.0.0.1:51515/callback"
    allowed = flow.allow(flow.request_id(flow.authorize(challenge, redirect_uri=elsewhere)))
    assert allowed.json()["redirectTo"].startswith(elsewhere + "?code=")
    # At the token endpoint the redirect URI must be the one the code was issued for.
    verifier, challenge = pkce()
    code = flow.code(challenge)
    refused = flow.token(grant_type="authorization_code", code=code, code_verifier=verifier,
                         redirect_uri="http://127.0.0.1:45678/other")
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"  # RFC 6749 §5.2


def test_registration_refuses_redirects_that_are_not_https_or_loopback(flow):
    for uris in (["http://evil.example/cb"], ["cursor://anything/cb"], ["javascript:alert(1)"],
                 ["https://app.example/cb#frag"], ["https://user:pw@app.example/cb"], []):
        refused = flow.register(redirect_uris=uris)
        assert refused.status_code == 400, uris
        assert refused.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")
    made = flow.register(redirect_uris=["https://app.example/cb", "http://[::1]/cb"], token_endpoint_auth_method=None)
    assert made.status_code == 201
    # Every client here is public: no secret is minted, even when none was asked for.
    assert made.json()["token_endpoint_auth_method"] == "none" and "client_secret" not in made.json()


def test_a_token_for_another_resource_is_refused(flow, tenant, configure):
    _, challenge = pkce()
    refused = flow.authorize(challenge, resource="https://other.example/mcp")
    answer = parse_qs(urlsplit(refused.headers["location"]).query)
    assert answer["error"] == ["invalid_target"] and answer["iss"] == [flow.origin]
    verifier, challenge = pkce()
    code = flow.code(challenge)
    other = flow.exchange(code, verifier, **{"resource": "https://other.example/mcp"})
    assert other.status_code == 400 and other.json()["error"] == "invalid_target"
    tokens = flow.exchange(code, verifier).json()
    assert flow.mcp(tokens["access_token"]).status_code == 200
    # The same token at a server whose resource is another URL (here: this one, moved).
    configure(public_url=flow.origin.replace("localhost", "127.0.0.1"))
    moved = flow.mcp(tokens["access_token"])
    assert moved.status_code == 401 and "another resource" in moved.headers["www-authenticate"]


def test_refresh_tokens_rotate_and_reuse_ends_the_grant(flow, tenant):
    tokens = flow.tokens()
    connection_id = _connection_of(flow, tenant, tokens["access_token"])
    held = _held_write(flow, tokens["access_token"])  # a card of the OAuth connection, waiting
    rotated = flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert rotated.status_code == 200 and rotated.json()["refresh_token"] != tokens["refresh_token"]
    assert flow.mcp(rotated.json()["access_token"]).status_code == 200
    reused = flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    # Reuse means one of the two holders is a thief: the whole grant ends, cards withdrawn.
    assert flow.mcp(rotated.json()["access_token"]).status_code == 401
    assert flow.token(grant_type="refresh_token", refresh_token=rotated.json()["refresh_token"]).status_code == 400
    assert tenant.store.connections.get_connection(tenant.workspace_id, connection_id).revoked
    card = tenant.store.cards.get_card(tenant.workspace_id, held, tenant.runtime.desk.now())
    assert card.state.value == "withdrawn"


def test_consent_needs_the_page_csrf_token_and_origin(flow, tenant):
    _, challenge = pkce()
    request_id = flow.request_id(flow.authorize(challenge))
    for kw in ({"csrf": None}, {"csrf": "not-the-token"}, {"origin": "https://evil.example"}, {"origin": None}):
        refused = flow.allow(request_id, **kw)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "csrf", kw
        denied = flow.page.post(f"/api/oauth/requests/{request_id}/deny", {}, **kw)
        assert denied.status_code == 403, kw
    signed_out = flow.page.request("POST", f"/api/oauth/requests/{request_id}/allow",
                                   {"workspaceId": tenant.workspace_id}, cookie=None)
    assert signed_out.status_code in (401, 403)
    assert [c.name for c in tenant.store.connections.list_connections(tenant.workspace_id)] == ["Test agent"]
    assert flow.allow(request_id).status_code == 200  # the request was still waiting, unanswered
    assert flow.allow(request_id).status_code == 404  # answered once


def test_consent_for_another_workspace_is_refused(flow, tenant, other_tenant):
    _, challenge = pkce()
    request_id = flow.request_id(flow.authorize(challenge))
    refused = flow.page.post(f"/api/oauth/requests/{request_id}/allow", {"workspaceId": other_tenant.workspace_id})
    assert refused.status_code == 403
    assert other_tenant.store.connections.list_connections(other_tenant.workspace_id)[0].name == "Test agent"


@pytest.mark.parametrize("param,value", [
    ("redirect_uri", "https://evil.example/"), ("client_id", "https://10.9.8.7/evil.example/client.json"),
    ("client_id", "nobody"), ("response_type", "token"), ("scope", "admin"),
])
def test_no_open_redirect_through_any_parameter(flow, param, value):
    """A parameter that is not this client's own never makes the server send the person
    anywhere but back to the client's registered redirect URI (or nowhere)."""
    _, challenge = pkce()
    answer = flow.authorize(challenge, **{param: value})
    location = answer.headers.get("location", "")
    assert not location or location.startswith(REDIRECT + "?"), location
    assert "evil.example" not in location
    # A request the SDK refuses before it asks the provider still redirects only where registered.
    broken = flow.authorize(challenge, **{param: value, "redirect_uri": "https://evil.example/cb",
                                          "code_challenge": None})
    assert broken.status_code == 400 and "location" not in broken.headers


def test_the_consent_page_is_not_an_open_redirect(flow):
    """What the page navigates to comes only from the stored request: the page's own URL can
    carry nothing that changes it."""
    _, challenge = pkce()
    request_id = flow.request_id(flow.authorize(challenge))
    shown = flow.page.get(f"/api/oauth/requests/{request_id}?redirect_uri=https://evil.example/")
    assert shown.json()["redirectUri"] == REDIRECT
    extra = flow.page.post(f"/api/oauth/requests/{request_id}/allow",
                           {"workspaceId": flow.workspace_id, "redirectTo": "https://evil.example/"})
    assert extra.status_code == 422  # unknown fields are refused
    assert flow.allow(request_id).json()["redirectTo"].startswith(REDIRECT + "?code=")


def _connection_of(flow, tenant, access_token: str) -> str:
    return tenant.store.grants.get_issued_token(secret_hash(access_token), tenant.runtime.desk.now()).connection_id


def _held_write(flow, access_token: str) -> str:
    """A held write through the OAuth connection (2025-11-25, stateful: initialize, then call)."""
    init = flow.mcp(access_token)
    session = init.headers["mcp-session-id"]
    headers = {"Authorization": f"Bearer {access_token}", "Mcp-Session-Id": session,
               "Accept": "application/json, text/event-stream", "Content-Type": "application/json",
               "MCP-Protocol-Version": "2025-11-25"}
    flow.http.post("/mcp", headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    called = flow.http.post("/mcp", headers=headers, json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "publish_note", "arguments": {"note_id": "n1", "text": "held"}}})
    data = [line[6:] for line in called.text.splitlines() if line.startswith("data: ")]
    result = json.loads(data[-1])["result"]["structuredContent"]
    assert result["status"] == "pending", result
    return result["confirmationId"]



def test_an_allow_that_fails_half_way_leaves_no_working_connection(flow, tenant):
    """The code cannot be stored (a real SQLite failure, from a trigger): the answer is an error,
    and the connection made a moment before is revoked, never left looking usable."""
    _, challenge = pkce()
    request_id = flow.request_id(flow.authorize(challenge))
    path = tenant.runtime.settings.store[len("sqlite:///"):]
    db = sqlite3.connect(path)
    with db:
        db.execute("CREATE TRIGGER no_codes BEFORE INSERT ON oauth_codes BEGIN SELECT RAISE(ABORT, 'no room'); END")
    try:
        failed = flow.allow(request_id)
    finally:
        with db:
            db.execute("DROP TRIGGER no_codes")
        db.close()
    assert failed.status_code == 500 and "redirectTo" not in failed.text
    made = [c for c in tenant.store.connections.list_connections(tenant.workspace_id) if c.name != "Test agent"]
    assert [(c.name, c.revoked, c.revoked_reason) for c in made] == [("Raw client", True, "not_stored")]
    assert flow.allow(request_id).status_code == 404  # the request was answered; the client starts again


def test_a_registration_nobody_allowed_is_forgotten_after_a_week_and_an_allowed_one_is_kept(flow, tenant):
    from countersign.identity.oauth import UNUSED_CLIENT_TTL

    store, now = tenant.store, tenant.runtime.desk.now()
    registered = store.authorizations.get_oauth_client(flow.client_id, now)
    assert registered is not None and now < registered.expires_at <= now + UNUSED_CLIENT_TTL + 5
    assert store.authorizations.get_oauth_client(flow.client_id,
                                                 registered.expires_at) is None  # unused: gone after a week

    flow.tokens()  # a person allowed it
    kept = store.authorizations.get_oauth_client(flow.client_id, now)
    assert kept is not None and kept.expires_at is None
    assert store.authorizations.get_oauth_client(flow.client_id, now + 365 * 24 * 3600) is not None


@pytest.mark.parametrize(("method", "path", "allowed"), [
    ("GET", "/oauth/token", "OPTIONS, POST"), ("PUT", "/oauth/register", "OPTIONS, POST"),
    ("GET", "/oauth/revoke", "OPTIONS, POST"), ("DELETE", "/oauth/authorize", "GET, HEAD, POST"),
    ("POST", "/.well-known/oauth-authorization-server", "GET, HEAD, OPTIONS"),
    ("PATCH", "/.well-known/oauth-protected-resource/mcp", "GET, HEAD, OPTIONS"),
])
def test_another_method_on_an_oauth_endpoint_is_a_405_naming_the_methods(flow, method, path, allowed):
    refused = flow.http.request(method, path)
    assert refused.status_code == 405, refused.text
    assert refused.headers["allow"] == allowed
    said = f"{path} accepts {allowed}, not {method}."
    assert refused.json() == {"error": "invalid_request", "error_description": said}
    assert flow.http.head(path).status_code != 500


@pytest.mark.parametrize(("registered", "given", "answered", "others"), [
    ("http://127.0.0.1:33418", "http://127.0.0.1:33418", "http://127.0.0.1:33418/",
     ["http://127.0.0.1:33418/other", "http://127.0.0.1:33418/?x=1", "http://127.0.0.2:33418/"]),
    ("http://127.0.0.1:33418", "http://127.0.0.1:33418/", "http://127.0.0.1:33418/", ["http://127.0.0.1:33418//"]),
    ("http://localhost:33418/", "http://LOCALHOST:40000", "http://localhost:40000/", ["http://localhost:40000/cb"]),
    ("https://app.example", "https://app.example/", "https://app.example/",
     ["https://app.example/other", "https://app.example.evil/", "https://app.example:8443/"]),
    ("https://App.Example:443/cb", "https://app.example/cb", "https://app.example/cb",
     ["https://app.example/CB", "https://app.example/cb/", "https://app.example:444/cb"]),
])
def test_one_redirect_uri_spelled_two_ways_is_the_same_uri_and_gets_a_code(flow, registered, given, answered, others):
    """A client that registered ``http://127.0.0.1:33418`` and sends it back as the MCP SDK's client
    does (``…:33418/``) is answered there; the rest of the URI is still compared exactly."""
    assert flow.register(redirect_uris=[registered]).status_code == 201
    verifier, challenge = pkce()
    allowed = flow.allow(flow.request_id(flow.authorize(challenge, redirect_uri=given)))
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["redirectTo"].startswith(answered + "?code=")
    code = parse_qs(urlsplit(allowed.json()["redirectTo"]).query)["code"][0]
    SECRETS.add(code)
    issued = flow.exchange(code, verifier, redirect_uri=given)
    assert issued.status_code == 200, issued.text
    for other in others:
        _, challenge = pkce()
        refused = flow.authorize(challenge, redirect_uri=other)
        assert refused.status_code == 400 and "location" not in refused.headers, other


def test_a_client_that_did_not_register_the_refresh_grant_gets_no_refresh_token(flow):
    assert flow.register(grant_types=["authorization_code"]).status_code == 201
    verifier, challenge = pkce()
    issued = flow.exchange(flow.code(challenge), verifier)
    assert issued.status_code == 200, issued.text
    assert "refresh_token" not in issued.json() and issued.json()["expires_in"] == 3600
    assert flow.mcp(issued.json()["access_token"]).status_code == 200
    assert flow.register().status_code == 201  # one that did gets both
    verifier, challenge = pkce()
    both = flow.exchange(flow.code(challenge), verifier).json()
    assert both["refresh_token"].startswith("csr_")
    assert flow.token(grant_type="refresh_token", refresh_token=both["refresh_token"]).status_code == 200


@pytest.mark.parametrize("grant", ["password", "client_credentials", "urn:ietf:params:oauth:grant-type:jwt-bearer"])
def test_a_grant_type_this_server_has_none_of_is_unsupported_grant_type(flow, grant):
    refused = flow.token(grant_type=grant, username="a", password="b")
    assert refused.status_code == 400
    assert refused.json() == {"error": "unsupported_grant_type",
                              "error_description": "this server's grant types are authorization_code and refresh_token"}


def test_pkce_values_of_the_wrong_shape_are_refused(flow):
    """A challenge that is no S256 output can never be met (refused at /authorize, to the client),
    and a verifier outside RFC 7636's 43 to 128 characters is refused even when it hashes right."""
    for challenge in ("abc", "A" * 44, "A" * 42 + "+", "x" * 4000):
        refused = flow.authorize(challenge)
        assert refused.status_code == 302, challenge[:50]
        answer = parse_qs(urlsplit(refused.headers["location"]).query)
        assert answer["error"] == ["invalid_request"] and "RFC 7636" in answer["error_description"][0]
    import base64
    import hashlib

    for verifier in ("short", "a" * 129, "a" * 42 + "!"):
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        refused = flow.exchange(flow.code(challenge), verifier)
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_request", verifier
        assert "RFC 7636" in refused.json()["error_description"]


def test_the_allow_answer_shows_the_connection_as_settings_will(flow):
    _, challenge = pkce()
    allowed = flow.allow(flow.request_id(flow.authorize(challenge)))
    assert allowed.status_code == 200
    SECRETS.add(parse_qs(urlsplit(allowed.json()["redirectTo"]).query)["code"][0])
    made = allowed.json()["connection"]
    assert made["oauth"] == {"clientId": flow.client_id, "redirectHost": "127.0.0.1", "connected": False,
                             "earlierOf": None}
    listed = {c["id"]: c for c in flow.page.get("/api/connections").json()["connections"]}
    assert listed[made["id"]]["oauth"] == made["oauth"]


def _listed(flow) -> dict:
    return {c["id"]: c for c in flow.page.get("/api/connections").json()["connections"]}


def test_a_client_that_never_spends_its_code_leaves_no_working_looking_connection(flow, tenant, monkeypatch):
    import time

    from countersign.identity.oauth import CODE_TTL

    first_verifier, challenge = pkce()
    allowed = flow.allow(flow.request_id(flow.authorize(challenge)))
    code = parse_qs(urlsplit(allowed.json()["redirectTo"]).query)["code"][0]
    SECRETS.add(code)
    made = allowed.json()["connection"]["id"]
    waiting = _listed(flow)[made]
    assert waiting["revoked"] is False and waiting["oauth"]["connected"] is False  # the page: "waiting for…"

    verifier, challenge = pkce()  # a second client of the same person that does finish
    finished = flow.exchange(flow.code(challenge), verifier)
    assert finished.status_code == 200
    finished_id = tenant.store.grants.get_issued_token(secret_hash(finished.json()["access_token"]),
                                                tenant.runtime.desk.now()).connection_id
    assert _listed(flow)[finished_id]["oauth"]["connected"] is True

    later = time.time() + CODE_TTL + 61
    monkeypatch.setattr(tenant.runtime.desk, "clock", lambda: later)
    listed = _listed(flow)
    assert listed[made]["revoked"] is True and listed[made]["oauth"]["connected"] is False
    assert listed[made]["revokedReason"] == "never_finished"
    assert tenant.store.connections.get_connection(tenant.workspace_id, made).revoked
    assert listed[finished_id]["revoked"] is False  # one that connected stays, whatever its age
    assert flow.mcp(finished.json()["access_token"]).status_code == 200
    monkeypatch.undo()
    late = flow.exchange(code, first_verifier)  # its code, still unexpired by the wall clock, revives nothing
    assert late.status_code == 400 and late.json()["error"] == "invalid_grant"
    assert tenant.store.connections.get_connection(tenant.workspace_id, made).revoked


def _exchanged_by_an_earlier_release(flow, tenant, monkeypatch) -> tuple[str, str]:
    """Allow here, the code exchanged by an instance of the release before (a rolling deploy): it
    spends the code and stores tokens, and knows nothing of the grant's code. (connection id, access token)"""
    from countersign.surfaces.oauth import provider as oauth_provider

    verifier, challenge = pkce()
    code = flow.code(challenge)
    with monkeypatch.context() as earlier:
        earlier.setattr(oauth_provider, "connected", lambda store, record: None)
        exchanged = flow.exchange(code, verifier)
    assert exchanged.status_code == 200
    access = exchanged.json()["access_token"]
    connection_id = tenant.store.grants.get_issued_token(secret_hash(access), tenant.runtime.desk.now()).connection_id
    [grant] = [g for g in tenant.store.grants.list_oauth_grants(tenant.workspace_id)
               if g.connection_id == connection_id]
    assert grant.code_hash is not None  # as the earlier release left it
    return connection_id, access


def _after_the_code_expired(tenant, monkeypatch) -> None:
    import time

    from countersign.identity.oauth import CODE_TTL

    later = time.time() + CODE_TTL + 61
    monkeypatch.setattr(tenant.runtime.desk, "clock", lambda: later)


def test_a_code_an_earlier_release_exchanged_counts_as_connected_though_the_connection_was_never_used(
        flow, tenant, monkeypatch):
    connection_id, access = _exchanged_by_an_earlier_release(flow, tenant, monkeypatch)
    _after_the_code_expired(tenant, monkeypatch)
    listed = _listed(flow)[connection_id]
    assert listed["revoked"] is False and listed["oauth"]["connected"] is True
    assert not tenant.store.connections.get_connection(tenant.workspace_id, connection_id).revoked
    [grant] = [g for g in tenant.store.grants.list_oauth_grants(tenant.workspace_id)
               if g.connection_id == connection_id]
    assert grant.code_hash is None  # decided once: not looked up again
    monkeypatch.undo()
    assert flow.mcp(access).status_code == 200


def test_a_used_connection_counts_as_connected_once_its_code_is_no_longer_kept(flow, tenant, monkeypatch):
    connection_id, access = _exchanged_by_an_earlier_release(flow, tenant, monkeypatch)
    assert flow.mcp(access).status_code == 200  # the client calls at once, as clients do
    with tenant.store.database.write() as db:  # the expired code is removed, as it is in time
        db.execute("DELETE FROM oauth_codes")
    _after_the_code_expired(tenant, monkeypatch)
    listed = _listed(flow)[connection_id]
    assert listed["revoked"] is False and listed["oauth"]["connected"] is True


def test_connections_are_listed_as_they_stand_when_settling_a_grant_cannot_be_written(flow, tenant, monkeypatch):
    from countersign.store.errors import StoreUnavailable

    connection_id, _ = _exchanged_by_an_earlier_release(flow, tenant, monkeypatch)
    _after_the_code_expired(tenant, monkeypatch)

    def full_disk(*args, **kwargs):
        raise StoreUnavailable("The disk is full; nothing was written.")

    with monkeypatch.context() as faulty:
        faulty.setattr(type(tenant.store.grants), "forget_grant_code", full_disk)
        listed = flow.page.get("/api/connections")
    assert listed.status_code == 200
    shown = {c["id"]: c for c in listed.json()["connections"]}[connection_id]
    assert shown["revoked"] is False and shown["oauth"]["connected"] is False  # as it stands: not yet decided
    assert _listed(flow)[connection_id]["oauth"]["connected"] is True  # decided at the next listing


def test_an_earlier_release_exchange_is_not_ended_when_its_code_is_no_longer_kept(flow, tenant, monkeypatch):
    """The code is gone (removed some time after its expiry) and the client has not called yet:
    nothing says it never finished, so it is not revoked on a guess."""
    connection_id, access = _exchanged_by_an_earlier_release(flow, tenant, monkeypatch)
    with tenant.store.database.write() as db:
        db.execute("DELETE FROM oauth_codes")
    _after_the_code_expired(tenant, monkeypatch)
    listed = _listed(flow)[connection_id]
    assert listed["revoked"] is False and listed["oauth"]["connected"] is True
    monkeypatch.undo()
    assert flow.mcp(access).status_code == 200


def test_a_spent_code_whose_tokens_could_not_be_stored_ends_its_connection(flow, tenant, monkeypatch):
    from countersign.store.errors import StoreUnavailable

    def full_disk(*args, **kwargs):
        raise StoreUnavailable("The disk is full; nothing was written.")

    verifier, challenge = pkce()
    before = {g.connection_id for g in tenant.store.grants.list_oauth_grants(tenant.workspace_id)}
    code = flow.code(challenge)
    [made] = [g.connection_id for g in tenant.store.grants.list_oauth_grants(tenant.workspace_id)
              if g.connection_id not in before]
    with monkeypatch.context() as faulty:
        faulty.setattr(type(tenant.store.grants), "put_issued_tokens", full_disk)
        failed = flow.exchange(code, verifier)
    assert failed.status_code >= 500 and "access_token" not in failed.text
    assert tenant.store.connections.get_connection(tenant.workspace_id, made).revoked  # it has no token and never will
    assert _listed(flow)[made]["revoked"] is True
