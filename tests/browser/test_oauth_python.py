"""The Python SDK's OAuthClientProvider, end to end, with the person in chromium:

discovery (401 → protected resource metadata → authorization server metadata) → registration
(dynamic, or a client ID metadata document served by a local https host) → the authorize URL on
the real page → sign-in by the email link from the outbox → consent → Allow → token → a held
write → the card on the page → Confirm → completed, seen by the agent."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from tests.browser.oauth_person import answer_consent, open_consent
from tests.browser.pages import card, ready, sign_in
from tests.support.oauth import PythonAgent


def _held_write_confirmed_on_the_page(page, tenant, agent, server, client_name):
    """The agent (holding its tokens) files a held write; the person confirms its card."""
    [held] = agent.run([("publish_note", {"note_id": "n1", "text": "written by an OAuth agent"})])
    assert held["status"] == "pending", held
    page.goto(f"{server.origin}/confirm")
    ready(page, "confirm")
    one = card(page, held["confirmationId"])
    expect(one.locator(".meta")).to_contain_text(f"Asked by {client_name}")
    one.get_by_role("button", name="Confirm").click()
    expect(one.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
    [status] = agent.run([("get_confirmation_status", {"confirmation_id": held["confirmationId"]})])
    assert status["status"] == "completed", status
    assert tenant.note("n1")["text"] == "written by an OAuth agent"
    return held


@pytest.mark.parametrize("registration", ["dynamic", "metadata document"])
def test_python_sdk_connects_and_its_held_write_is_confirmed(live, tenant, page, watch, registration,
                                                            document_host, cimd_fetcher):
    runtime, server = live
    document_url = None
    name = "Python agent (DCR)"
    if registration == "metadata document":
        name = "Python agent (CIMD)"
        document_url = document_host.serve_json("/python-agent.json", {
            "client_id": document_host.url("/python-agent.json"), "client_name": name,
            "redirect_uris": ["http://127.0.0.1:3000/callback"],  # loopback: any port matches
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        })
    agent = PythonAgent(tenant.url, name=name, client_metadata_url=document_url).start([("list_notes", {})])
    authorize_url = agent.authorize_url()
    query = parse_qs(urlsplit(authorize_url).query)
    assert authorize_url.startswith(f"{server.origin}/oauth/authorize?")
    assert query["code_challenge_method"] == ["S256"] and query["resource"] == [tenant.url]
    if document_url:
        assert query["client_id"] == [document_url]
    else:
        assert query["client_id"][0] == agent.storage.client_info.client_id

    # The person: the client's URL → sign in by email → who asks, where it returns → Allow.
    open_consent(page, authorize_url, runtime, tenant.person.email)
    expect(page.locator('[data-field="client-name"]')).to_have_text(name)
    expect(page.locator('[data-field="redirect-host"]')).to_contain_text("127.0.0.1")
    expect(page.locator('[data-field="redirect-host"]')).to_contain_text("an app on this device")
    if document_url:
        expect(page.locator('[data-field="client-host"]')).to_have_text(f"localhost:{document_host.port}")
    expect(page.get_by_label("Acme")).to_be_checked()
    callback = answer_consent(page, "http://127.0.0.1:33418/callback")
    answer = parse_qs(urlsplit(callback).query)
    assert answer["state"] == query["state"] and answer["iss"] == [server.origin]
    agent.answer(callback)
    [notes] = agent.result()
    assert [n["id"] for n in notes["notes"]] == ["n1", "n2"]

    # The connection is the person's, named after the client, shown in Settings with its last use.
    [connection] = [c for c in tenant.store.connections.list_connections(tenant.workspace_id) if c.name == name]
    page.goto(f"{server.origin}/settings/connections")
    ready(page, "settings")
    row = page.locator(f'li[data-connection-id="{connection.id}"]')
    expect(row).to_contain_text(name)
    expect(row.locator(".last-used")).to_contain_text("last used")
    expect(row).to_contain_text("Connected itself with OAuth; returns to 127.0.0.1")

    held = _held_write_confirmed_on_the_page(page, tenant, agent, server, name)
    trail = tenant.store.cards.audit_trail(tenant.workspace_id, held["confirmationId"])
    assert trail[0].connection_id == connection.id and [e.event for e in trail] == ["filed", "completed"]

    # A refresh rotates the tokens; the connection goes on working.
    agent.provider.context.token_expiry_time = time.time() - 1
    before = agent.storage.tokens.refresh_token
    [listed] = agent.run([("list_confirmations", {})])
    assert listed.get("confirmations", []) == [] and agent.storage.tokens.refresh_token != before
    assert watch.errors == [], watch.errors
    # The page loaded nothing from elsewhere; the one other origin is the client's redirect.
    assert watch.origins == {server.origin, "http://127.0.0.1:33418"}, watch.origins


def test_deny_sends_access_denied_and_connects_nothing(live, tenant, page):
    runtime, server = live
    sign_in(page, tenant)  # already signed in: the authorize URL goes straight to the consent view
    agent = PythonAgent(tenant.url, name="Denied agent").start([("list_notes", {})])
    open_consent(page, agent.authorize_url())
    callback = answer_consent(page, "http://127.0.0.1:33418/callback", allow=False)
    answer = parse_qs(urlsplit(callback).query)
    assert answer["error"] == ["access_denied"] and answer["iss"] == [server.origin] and "code" not in answer
    agent.answer(callback)
    with pytest.raises(BaseException) as failed:  # the SDK's task group wraps the callback's error
        agent.result()
    assert "access_denied" in repr(failed.value.exceptions if hasattr(failed.value, "exceptions") else failed.value)
    assert [c.name for c in tenant.store.connections.list_connections(tenant.workspace_id)] == ["Test agent"]
