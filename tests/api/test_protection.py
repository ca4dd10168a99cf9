"""CSRF, Origin, security headers, body limits and bad input on every kind of request."""

from __future__ import annotations

import pytest

from tests.api.pages import Page
from tests.api.test_cards import file

pytestmark = pytest.mark.anyio

SECURITY = {"cache-control": "no-store", "x-content-type-options": "nosniff", "x-frame-options": "DENY",
            "referrer-policy": "no-referrer"}


def assert_secure(response) -> None:
    for name, value in SECURITY.items():
        assert response.headers.get(name) == value, (name, response.status_code, response.request.url)


@pytest.mark.parametrize("how", ["no token", "wrong token", "wrong origin", "no origin", "token of another session"])
async def test_state_changes_need_csrf_and_origin(signed, tenant, page, how):
    card_id = await file(tenant)
    other_csrf = None
    if how == "token of another session":
        other = Page(signed.origin).sign_in(tenant.runtime, tenant.person)
        other_csrf = other.csrf
        other.close()
    kwargs = {"no token": {"csrf": None}, "wrong token": {"csrf": "x" * 43},
              "wrong origin": {"origin": "http://evil.localhost:1"}, "no origin": {"origin": None},
              "token of another session": {"csrf": other_csrf}}[how]
    attempts = [
        signed.post(f"/api/cards/{card_id}/confirm", **kwargs),
        signed.post(f"/api/cards/{card_id}/decline", {"reason": "csrf"}, **kwargs),
        signed.patch("/api/settings/me", {"agent_requests_email": False}, **kwargs),
        signed.patch("/api/settings/workspace", {"ask_before_drafting": False}, **kwargs),
        signed.post("/api/connections", {"name": "sneaky"}, **kwargs),
        signed.post(f"/api/connections/{tenant.connection_id}/revoke", **kwargs),
        signed.post("/api/signout", **kwargs),
    ]
    for response in attempts:
        assert response.status_code == 403, (response.request.url, response.text)
        assert response.json()["error"]["code"] == "csrf"
        assert_secure(response)
    # Nothing was written.
    assert signed.get(f"/api/cards/{card_id}").json()["state"] == "pending"
    assert tenant.note("n1")["text"] == "text 1"
    assert signed.get("/api/settings").json()["me"]["agent_requests_email"] is True
    assert signed.get("/api/settings").json()["workspace"]["ask_before_drafting"] is True
    assert [c["name"] for c in signed.get("/api/connections").json()["connections"]] == ["Test agent"]
    assert signed.get("/api/session").status_code == 200


async def test_state_changes_without_a_session(page, tenant):
    card_id = await file(tenant)
    response = page.post(f"/api/cards/{card_id}/confirm", csrf="anything")
    assert response.status_code == 401 and response.json()["error"]["code"] == "signed_out"
    assert tenant.note("n1")["text"] == "text 1"


def test_security_headers_everywhere(signed):
    responses = [
        signed.get("/api/session"), signed.get("/api/session", cookie=None), signed.get("/api/cards"),
        signed.get("/api/nope"), signed.request("DELETE", "/api/session"), signed.get("/api/openapi.json"),
        signed.patch("/api/settings/me", content=b"{not json", headers={"Content-Type": "application/json"}),
        signed.post("/api/connections", content=b"x" * (64 * 1024 + 1), headers={"Content-Type": "application/json"}),
    ]
    for response in responses:
        assert_secure(response)
        assert response.headers["content-type"].startswith("application/json")
    assert [r.status_code for r in responses] == [200, 401, 200, 404, 405, 200, 422, 413]
    assert responses[3].json()["error"]["code"] == "not_found"
    assert responses[4].json()["error"]["code"] == "method_not_allowed"
    assert responses[7].json()["error"]["code"] == "too_large"


def test_body_limit(signed):
    name = "y" * (64 * 1024)
    big = signed.post("/api/connections", {"name": name})
    assert big.status_code == 413
    assert [c["name"] for c in signed.get("/api/connections").json()["connections"]] == ["Test agent"]
    just_under = signed.post("/api/cards/c_unknown/decline", {"reason": "z" * 400})
    assert just_under.status_code == 404


def test_malformed_json_and_wrong_types(signed):
    cases = [
        (b"{not json", "body"),
        (b"[1, 2]", "body"),
        (b'"a string"', "body"),
        (b"", "body"),
        (b'{"name": ["list"]}', "name"),
        (b'{"name": null}', "name"),
        (b'{"name": "ok", "token": "x"}', "token"),
    ]
    for raw, field in cases:
        response = signed.post("/api/connections", content=raw, headers={"Content-Type": "application/json"})
        assert response.status_code == 422, (raw, response.text)
        body = response.json()
        assert body["error"]["code"] == "invalid"
        assert body["error"]["message"].startswith(field), (raw, body)
        assert not any(bit in body["error"]["message"] for bit in ("Input should", "Field required", "[type=")), body
    assert [c["name"] for c in signed.get("/api/connections").json()["connections"]] == ["Test agent"]


@pytest.mark.parametrize("raw", [b'{"name": "\xff\xfe"}', b"\xff\xfe\x00", b'{"reason": "caf\xe9"}'])
def test_a_body_that_is_not_utf8_gets_the_error_shape(signed, raw):
    for path in ("/api/connections", "/api/cards/c_unknown/decline", "/api/settings/me"):
        sent = signed.patch if path.endswith("/me") else signed.post
        response = sent(path, content=raw, headers={"Content-Type": "application/json"})
        assert_secure(response)
        assert response.status_code == 422, (path, response.text)
        error = {"code": "invalid", "message": "body: the request body is not JSON in UTF-8."}
        assert response.json() == {"error": error, "field": "body"}
    assert [c["name"] for c in signed.get("/api/connections").json()["connections"]] == ["Test agent"]


def test_options_and_405_name_every_method_of_the_path(signed):
    expected = {"/api/connections": "GET, POST, OPTIONS", "/api/cards": "GET, OPTIONS",
                "/api/cards/c_x/reopen": "POST, OPTIONS", "/api/settings/me": "PATCH, OPTIONS",
                "/api/session": "GET, OPTIONS", "/api/signin/request": "POST, OPTIONS"}
    schema = signed.get("/api/openapi.json").json()["paths"]
    for path, allow in expected.items():
        options = signed.request("OPTIONS", path)
        assert options.status_code == 204 and options.headers["allow"] == allow, (path, options.text)
        assert_secure(options)
        wrong = signed.request("PUT", path)
        assert wrong.status_code == 405 and wrong.headers["allow"] == allow
        assert wrong.json()["error"]["code"] == "method_not_allowed"
        documented = next(v for k, v in schema.items() if k.split("/")[2:3] == path.split("/")[2:3]
                          and len(k.split("/")) == len(path.split("/")))
        assert {m.upper() for m in documented} | {"OPTIONS"} == set(allow.split(", ")), path
    assert signed.request("OPTIONS", "/api/nope").status_code == 404


def test_openapi_is_served_and_the_docs_ui_is_off(page):
    schema = page.get("/api/openapi.json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert {"/api/signin/request", "/api/signin/complete", "/api/session", "/api/signout", "/api/cards",
            "/api/cards/{card_id}", "/api/history", "/api/cards/{card_id}/confirm", "/api/cards/{card_id}/decline",
            "/api/cards/{card_id}/reopen", "/api/cards/{card_id}/edit",
            "/api/settings", "/api/settings/me", "/api/settings/me/test-email", "/api/settings/workspace",
            "/api/settings/members", "/api/connections",
            "/api/connections/{connection_id}/revoke", "/api/oauth/requests/{request_id}",
            "/api/oauth/requests/{request_id}/allow", "/api/oauth/requests/{request_id}/deny",
            "/api/passkeys", "/api/passkeys/register/options", "/api/passkeys/{credential_id}",
            "/api/passkeys/remove/options", "/api/passkeys/{credential_id}/remove", "/api/signin/passkey/options",
            "/api/signin/passkey", "/api/cards/{card_id}/passkey/options", "/api/cards/{card_id}/passkey/confirm",
            "/api/cards/{card_id}/receipt", "/api/settings/passkey-policy", "/api/settings/card-lifetimes",
            "/api/settings/upstreams", "/api/settings/upstreams/{name}", "/api/settings/upstreams/{name}/refresh",
            "/api/standing-grants", "/api/standing-grants/options", "/api/standing-grants/{grant_id}/revoke",
            "/api/standing-grants/rules", "/api/quorum-rules", "/api/escalation-rules", "/api/policy",
            "/api/settings/slack", "/api/settings/slack/link-code", "/api/settings/slack/link",
            "/api/settings/slack/test",
            "/api/settings/webhooks", "/api/settings/webhooks/{endpoint_id}",
            "/api/settings/webhooks/{endpoint_id}/enable", "/api/settings/webhooks/{endpoint_id}/disable",
            "/api/settings/webhooks/{endpoint_id}/deliveries",
            "/api/settings/push", "/api/settings/push/subscriptions",
            "/api/settings/push/subscriptions/{subscription_id}",
            "/api/settings/push/subscriptions/{subscription_id}/test",
            "/api/settings/push/renew",
            } == set(paths)  # Slack's own callbacks (/slack/*) are not the page's API: left out of it
    for path in ("/api/docs", "/api/redoc", "/docs", "/redoc"):
        assert page.get(path).status_code == 404


def test_openapi_documents_every_error_body_it_names(page):
    """Error responses are documented by reference (no validator built per entry at cold start):
    every reference resolves, and the bodies are the ones the API sends."""
    document = page.get("/api/openapi.json").json()
    components = document["components"]["schemas"]

    def refs(value):
        if isinstance(value, dict):
            if "$ref" in value:
                yield value["$ref"]
            for v in value.values():
                yield from refs(v)
        elif isinstance(value, list):
            for v in value:
                yield from refs(v)

    named = set(refs(document))
    assert {"#/components/schemas/ErrorBody", "#/components/schemas/RefusalBody"} <= named
    assert {r.rsplit("/", 1)[1] for r in named} <= set(components), "a reference names no schema"
    confirm = document["paths"]["/api/cards/{card_id}/confirm"]["post"]["responses"]
    assert confirm["409"]["description"] == "Conflict"
    assert confirm["409"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/RefusalBody"}
    assert confirm["401"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}
    assert components["ErrorBody"] == {
        "properties": {"error": {"$ref": "#/components/schemas/ErrorDetail"},
                       "field": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Field"}},
        "required": ["error"], "title": "ErrorBody", "type": "object"}
    assert components["RefusalBody"]["properties"]["card"] == {"$ref": "#/components/schemas/CardView"}
    assert set(components["ErrorDetail"]["required"]) == {"code", "message"}


def test_a_trailing_slash_is_no_endpoint_and_no_redirect(signed):
    for method, path in (("GET", "/api/cards/"), ("POST", "/api/cards/c_x/confirm/"), ("GET", "/api/session/")):
        response = signed.request(method, path)
        assert response.status_code == 404 and "location" not in response.headers, (path, response.status_code)
        assert response.json()["error"]["code"] == "not_found"
