"""The OpenAPI document states what the server enforces beyond JSON types (schemathesis found it
looser): a card listing's cursor, a connection's name, a passkey's name, the passkey policy, an
upstream's name, credential header and credential.

Each rule is read from ``/api/openapi.json`` as published and held to the server's answers: a value
the document refuses is refused (422 naming the field), and one it allows is not refused for that
field (it may still be refused for another reason: an unknown passkey, a private upstream URL).
"""

from __future__ import annotations

from urllib.parse import urlencode

import jsonschema
import pytest

from tests.api.test_cards import file

pytestmark = pytest.mark.anyio

UPSTREAM = {"name": "files", "url": "https://127.0.0.1:9/mcp"}  # loopback: refused as private, never reached


@pytest.fixture
def document(page) -> dict:
    response = page.get("/api/openapi.json")
    assert response.status_code == 200
    return response.json()


def string_schema(schema: dict) -> dict:
    """A field's string schema: its own, or its string branch when it may also be null."""
    return next(branch for branch in schema.get("anyOf", [schema]) if branch.get("type") == "string")


def body_field(document: dict, method: str, path: str, name: str) -> dict:
    schema = document["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
    if "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return string_schema(schema["properties"][name])


def query_parameter(document: dict, method: str, path: str, name: str) -> dict:
    parameter = next(p for p in document["paths"][path][method]["parameters"] if p["name"] == name)
    return string_schema(parameter["schema"])


def allows(schema: dict, value: str) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


def refused_for(response, field: str) -> bool:
    body = response.json() if "json" in response.headers.get("content-type", "") else {}
    message = str(body.get("error", {}).get("message", ""))
    return response.status_code == 422 and (body.get("field") == field or message.startswith(field))


def held_to(schema: dict, send, field: str, refused: list[str], allowed: list[str]) -> None:
    """``refused`` breaks the document's rule and the server refuses each for ``field``;
    ``allowed`` keeps it and the server refuses none of them for ``field``."""
    for value in refused:
        assert not allows(schema, value), (field, value)
        response = send(value)
        assert refused_for(response, field), (field, value, response.status_code, response.text)
    for value in allowed:
        assert allows(schema, value), (field, value)
        response = send(value)
        assert not refused_for(response, field), (field, value, response.text)


async def test_a_cursor_is_url_safe_base64_as_both_listings_issue_it(document, signed, tenant):
    for path in ("/api/cards", "/api/history"):
        schema = query_parameter(document, "get", path, "cursor")
        assert schema["maxLength"] == 512 and "pattern" in schema
        for bad in ("abc!", "a b", "%%", "a/b", "a+b", "abc==="):
            assert not allows(schema, bad), bad
            assert refused_for(signed.get(f"{path}?{urlencode({'cursor': bad})}"), "cursor"), bad
        assert allows(schema, "")  # the first page
        assert signed.get(f"{path}?cursor=").status_code == 200
    for i in range(3):
        await file(tenant, "n1", f"text {i}")
    cursor = signed.get("/api/cards?limit=1").json()["nextCursor"]
    assert cursor and allows(query_parameter(document, "get", "/api/cards", "cursor"), cursor)
    assert signed.get(f"/api/cards?limit=1&cursor={cursor}").status_code == 200


def test_a_connection_name_is_printable_once_stripped(document, signed):
    schema = body_field(document, "post", "/api/connections", "name")
    assert schema["maxLength"] == 100
    held_to(schema, lambda name: signed.post("/api/connections", {"name": name}), "name",
            refused=["a\x07b", "bell\x07", "\x00", "tab\tinside", "next\x85line", "esc\x1b[31m", "   ", "x" * 101],
            allowed=["Claude on laptop", "  padded\n", "\tTabbed\r\n", "Zoë’s agent ✓", "x" * 100])


def test_a_passkey_name_is_at_most_64_characters_without_control_characters(document, signed):
    rename = body_field(document, "patch", "/api/passkeys/{credential_id}", "name")
    assert rename["maxLength"] == 64
    held_to(rename, lambda name: signed.patch("/api/passkeys/unknown", {"name": name}), "name",
            refused=["x" * 65, "y" * 200, "a\x1bb", "nul\x00", "del\x7f", "   ", ""],
            allowed=["My phone", "x" * 64, "two\nlines", "  trimmed  "])
    register = body_field(document, "post", "/api/passkeys", "name")
    assert register["maxLength"] == 64
    held_to(register, lambda name: signed.post("/api/passkeys", {"credential": {}, "name": name}), "name",
            refused=["x" * 65, "a\x07b", "c1\x9b"],
            allowed=["", "Laptop", "x" * 64])


def test_the_passkey_policy_is_one_of_three(document, signed):
    schema = body_field(document, "post", "/api/settings/passkey-policy", "policy")
    assert schema["enum"] == ["never", "risky", "every"]
    held_to(schema, lambda policy: signed.post("/api/settings/passkey-policy", {"policy": policy}), "policy",
            refused=["sometimes", "EVERY", "", "every "], allowed=["every", "risky"])


def test_an_upstreams_name_header_and_credential(document, signed):
    path = "/api/settings/upstreams"
    held_to(body_field(document, "post", path, "credential"),
            lambda credential: signed.post(path, dict(UPSTREAM, credential=credential)), "credential",
            refused=["a\nb", "line\rbreak", "nul\x00", "   ", "\n"],
            allowed=["Bearer tok", "  tok \n", "key with spaces"])
    held_to(body_field(document, "post", path, "credentialHeader"),
            lambda header: signed.post(path, dict(UPSTREAM, credential="tok", credentialHeader=header)),
            "credentialHeader", refused=["Bad Header", "", "x:y", "h" * 65], allowed=["X-Api-Key", "Authorization"])
    held_to(body_field(document, "post", path, "name"),
            lambda name: signed.post(path, dict(UPSTREAM, name=name)), "name",
            refused=["Files", "1files", "", "a" * 17, "my-files"], allowed=["files", "f", "a" * 16])
