"""Client ID Metadata Documents: what the fetcher refuses (not https, a private address, too big,
too slow, a redirect, a document that is not the client's) against a real https host on
127.0.0.1, and how /oauth/authorize answers a refused one (400 with the reason, never a redirect)."""

from __future__ import annotations

import json

import pytest

from countersign.core.addresses import refused_address
from countersign.identity.oauth.cimd import DocumentFetcher, DocumentRefused, check_url
from tests.oauth.conftest import REDIRECT, pkce
from tests.support.oauth import Served


def document(url: str, **changes) -> dict:
    return {"client_id": url, "client_name": "Doc client", "redirect_uris": [REDIRECT],
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none", **changes}


def test_a_good_document_is_fetched_and_checked(document_host):
    url = document_host.serve_json("/good.json", document(document_host.url("/good.json")))
    fetched = document_host.fetcher().fetch(url)
    assert fetched.document["client_name"] == "Doc client" and fetched.document["redirect_uris"] == [REDIRECT]
    assert fetched.cache_seconds == 600


@pytest.mark.parametrize("url,why", [
    ("http://localhost/client.json", "https"), ("https://localhost/", "path"), ("https://localhost", "path"),
    ("https://user@localhost/c.json", "user name"), ("https://localhost/a/../c.json", "path"),
    ("https://localhost/c.json#x", "fragment"), ("https://localhost/" + "a" * 2000, "too long"),
    ("https://localhost/a/%2e%2e/c.json", "path"), ("https://localhost/a/%2E/c.json", "path"),
])
def test_urls_that_are_never_fetched(url, why):
    with pytest.raises(DocumentRefused, match=why):
        check_url(url)


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254",
                                     "100.64.0.1", "0.0.0.0", "::1", "fe80::1", "fc00::1", "::ffff:10.0.0.1",
                                     "224.0.0.1", "240.0.0.1",
                                     # IPv4 inside IPv6: 6to4 of 127.0.0.1 and of 169.254.169.254, NAT64, Teredo
                                     "2002:7f00:1::1", "2002:a9fe:a9fe::1", "64:ff9b::a9fe:a9fe",
                                     "2001:0:4136:e378:8000:63bf:3fff:fdd2"])
def test_private_and_reserved_addresses_are_refused(address):
    assert refused_address(address)


def test_public_addresses_are_not_refused():
    assert not refused_address("93.184.215.14") and not refused_address("2606:2800:21f:cb07:6820:80da:af6b:8b2c")
    assert not refused_address("2002:5db8:d70e::1")  # 6to4 of a public address


def test_a_private_address_is_refused_before_connecting(document_host):
    url = document_host.serve_json("/private.json", document(document_host.url("/private.json")))
    before = len(document_host.requests)
    with pytest.raises(DocumentRefused, match="private"):
        DocumentFetcher(ssl_context=document_host.client_context()).fetch(url)  # the server's own setting
    # A name that resolves to a private address is refused too (one checked lookup, then pinned).
    with pytest.raises(DocumentRefused, match="private"):
        DocumentFetcher(resolver=lambda host, port: ["93.184.215.14", "10.0.0.7"]).fetch("https://client.test/c.json")
    assert len(document_host.requests) == before


def test_too_big_too_slow_redirected_or_not_the_clients(document_host):
    big = document_host.url("/big.json")
    document_host.serve_json("/big.json", document(big, client_name="x" * 6000))
    with pytest.raises(DocumentRefused, match="larger than 5120 bytes"):
        document_host.fetcher().fetch(big)
    trickled = document_host.url("/trickle.json")
    document_host.documents["/trickle.json"] = Served(json.dumps(document(trickled, client_name="y" * 6000)).encode(),
                                                      trickle=True)
    with pytest.raises(DocumentRefused, match="larger than 5120 bytes"):  # no Content-Length: counted as it comes
        document_host.fetcher().fetch(trickled)
    slow = document_host.url("/slow.json")
    document_host.documents["/slow.json"] = Served(json.dumps(document(slow)).encode(), delay=0.05, trickle=True)
    with pytest.raises(DocumentRefused, match="took longer than 0.5 s"):  # a trickle cannot outlast the limit
        document_host.fetcher(timeout=0.5).fetch(slow)
    moved = document_host.url("/moved.json")
    document_host.documents["/moved.json"] = Served(b"{}", status=302)
    with pytest.raises(DocumentRefused, match="HTTP 302"):
        document_host.fetcher().fetch(moved)
    other = document_host.serve_json("/other.json", document("https://elsewhere.example/other.json"))
    with pytest.raises(DocumentRefused, match="not exactly the URL"):
        document_host.fetcher().fetch(other)
    secret = document_host.serve_json("/secret.json", document(document_host.url("/secret.json"),
                                                               token_endpoint_auth_method="client_secret_basic"))
    with pytest.raises(DocumentRefused, match="public clients"):
        document_host.fetcher().fetch(secret)
    plain = document_host.serve_json("/plain.json", document(document_host.url("/plain.json"),
                                                             redirect_uris=["http://app.example/cb"]))
    with pytest.raises(DocumentRefused, match="loopback"):
        document_host.fetcher().fetch(plain)


def test_an_untrusted_certificate_is_refused(document_host):
    url = document_host.serve_json("/tls.json", document(document_host.url("/tls.json")))
    with pytest.raises(DocumentRefused, match="certificate"):
        DocumentFetcher(allow_private=True).fetch(url)  # the system's CAs do not know the test CA


def test_authorize_answers_a_refused_document_with_the_reason(flow, document_host, live):
    """Through the live server in its own setting (no loopback fetches): 400, no redirect, no consent."""
    _, challenge = pkce()
    url = document_host.serve_json("/live-private.json", document(document_host.url("/live-private.json")))
    for client_id, why in ((url, "private or reserved address"), ("http://localhost/client.json", "not found")):
        flow.client_id = client_id
        refused = flow.authorize(challenge)
        assert refused.status_code == 400 and "location" not in refused.headers, refused.text
        assert why in refused.json()["error_description"]


def test_authorize_with_a_document_in_the_test_setting(flow, document_host, cimd_fetcher, tenant):
    url = document_host.serve_json("/live-good.json", document(document_host.url("/live-good.json")))
    flow.client_id = url
    verifier, challenge = pkce()
    request_id = flow.request_id(flow.authorize(challenge, redirect_uri="http://127.0.0.1:61000/callback"))
    shown = flow.page.get(f"/api/oauth/requests/{request_id}").json()
    assert shown["client"] == {"name": "Doc client", "clientId": url, "host": f"localhost:{document_host.port}",
                               "metadataDocument": True, "verified": False, "verifiedBy": None,
                               "namedItself": True}  # it returns to 127.0.0.1: any app there may claim it
    assert shown["loopback"] is True and shown["redirectHost"] == "127.0.0.1"
    # A redirect the document does not list is refused (no redirect), fetched or cached.
    _, other = pkce()
    assert flow.authorize(other, redirect_uri="https://evil.example/cb").status_code == 400
    answer = flow.allow(request_id).json()["redirectTo"]
    assert answer.startswith("http://127.0.0.1:61000/callback?code=")
