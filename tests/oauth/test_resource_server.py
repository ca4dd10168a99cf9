"""The resource side: metadata (RFC 9728, RFC 8414), every 401 on /mcp naming the metadata,
invalid_token for an expired or revoked token, revocation (RFC 7009 and Settings), last use."""

from __future__ import annotations

from dataclasses import replace

from countersign.store.grants import ACCESS
from countersign.store.hashes import secret_hash
from tests.oauth.conftest import Flow
from tests.oauth.test_refusals import _connection_of, _held_write


def test_metadata_documents(flow):
    resource = flow.http.get("/.well-known/oauth-protected-resource/mcp")
    assert resource.status_code == 200
    assert resource.json() == {"resource": f"{flow.origin}/mcp", "authorization_servers": [flow.origin],
                               "scopes_supported": ["mcp"], "bearer_methods_supported": ["header"],
                               "resource_name": "countersign"}
    server = flow.http.get("/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == flow.origin  # no trailing slash: clients compare it as a string
    assert server["authorization_endpoint"] == f"{flow.origin}/oauth/authorize"
    assert server["code_challenge_methods_supported"] == ["S256"]
    assert server["client_id_metadata_document_supported"] is True
    assert server["authorization_response_iss_parameter_supported"] is True
    assert server["token_endpoint_auth_methods_supported"] == ["none"]
    assert server["grant_types_supported"] == ["authorization_code", "refresh_token"]
    assert resource.headers["cache-control"] == "no-store" and resource.headers["x-content-type-options"] == "nosniff"
    browser = flow.http.get("/.well-known/oauth-authorization-server", headers={"Origin": "https://app.example"})
    assert browser.headers["access-control-allow-origin"] == "*"  # browser-based clients may read it
    assert flow.http.get("/.well-known/oauth-protected-resource").status_code == 404


def test_every_401_on_mcp_names_the_resource_metadata(flow, tenant):
    metadata = f'resource_metadata="{flow.origin}/.well-known/oauth-protected-resource/mcp"'
    anonymous = flow.mcp(None)
    assert anonymous.status_code == 401 and metadata in anonymous.headers["www-authenticate"]
    assert "error=" not in anonymous.headers["www-authenticate"]
    for token in ("csa_never-issued-0123456789012345678901234567", "cs_not-a-connection-token", "garbage"):
        refused = flow.mcp(token)
        challenge = refused.headers["www-authenticate"]
        assert refused.status_code == 401 and metadata in challenge and 'error="invalid_token"' in challenge, token
    assert flow.mcp(tenant.token).status_code == 200  # CLI-made tokens keep working


def test_an_expired_access_token_gets_invalid_token(flow, tenant):
    tokens = flow.tokens()
    issued = tenant.store.grants.get_issued_token(secret_hash(tokens["access_token"]), tenant.runtime.desk.now())
    assert issued.kind == ACCESS and issued.expires_at - issued.created_at == 3600
    expired = "csa_expired-" + tokens["access_token"][4:]
    now = tenant.runtime.desk.now()
    tenant.store.grants.put_issued_tokens([replace(issued, token_hash=secret_hash(expired), created_at=now - 7200,
                                            expires_at=now - 1)])
    refused = flow.mcp(expired)
    assert refused.status_code == 401 and 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert flow.mcp(tokens["access_token"]).status_code == 200


def test_revoking_in_settings_stops_the_tokens_at_once_and_withdraws_cards(flow, tenant):
    tokens = flow.tokens()
    connection_id = _connection_of(flow, tenant, tokens["access_token"])
    held = _held_write(flow, tokens["access_token"])
    listed = flow.page.get("/api/connections").json()["connections"]
    [mine] = [c for c in listed if c["id"] == connection_id]
    assert mine["name"] == "Raw client" and mine["oauth"] == {"clientId": flow.client_id, "redirectHost": "127.0.0.1",
                                                                    "connected": True, "earlierOf": None}
    assert mine["lastUsedAt"] is not None and mine["lastUsedAt"].endswith("Z")
    revoked = flow.page.post(f"/api/connections/{connection_id}/revoke")
    assert revoked.status_code == 200 and revoked.json()["withdrawnCards"] == 1
    refused = flow.mcp(tokens["access_token"])
    assert refused.status_code == 401 and "revoked" in refused.headers["www-authenticate"]
    assert flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"]).status_code == 400
    assert tenant.store.cards.get_card(tenant.workspace_id, held, tenant.runtime.desk.now()).state.value == "withdrawn"


def test_the_client_revokes_its_grant(flow, tenant):
    tokens = flow.tokens()
    connection_id = _connection_of(flow, tenant, tokens["access_token"])
    unknown = flow.http.post("/oauth/revoke", data={"token": "csr_unknown", "client_id": flow.client_id})
    assert unknown.status_code == 200  # RFC 7009 §2.2: nothing to say about unknown tokens
    assert flow.mcp(tokens["access_token"]).status_code == 200
    other = flow.http.post("/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": "someone-else"})
    assert other.status_code == 401
    stranger = Flow(flow.origin, flow.http, flow.page, flow.workspace_id)
    assert stranger.register().status_code == 201
    theirs = flow.http.post("/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": stranger.client_id})
    assert theirs.status_code == 400 and theirs.json()["error"] == "unauthorized_client"  # RFC 7009 §2.1
    assert flow.mcp(tokens["access_token"]).status_code == 200  # nothing was revoked
    done = flow.http.post("/oauth/revoke", data={"token": tokens["refresh_token"], "client_id": flow.client_id})
    assert done.status_code == 200
    assert flow.mcp(tokens["access_token"]).status_code == 401
    assert tenant.store.connections.get_connection(tenant.workspace_id, connection_id).revoked


def test_every_consent_asks_again_and_makes_its_own_connection(flow, tenant):
    """No silent re-consent: the same client asking again goes to the page again."""
    first, second = flow.tokens(), flow.tokens()
    assert _connection_of(flow, tenant, first["access_token"]) != _connection_of(flow, tenant, second["access_token"])
