"""Settings: the email setting, workspace settings for owners and admins only, connections
(create → token shown once and works over MCP; revoke → it stops working, its cards withdrawn)."""

from __future__ import annotations

import re
from email import policy
from email.parser import BytesParser

import httpx2
import pytest
from playwright.sync_api import expect

from countersign.core import lifetimes
from countersign.notify.message import TEST_SUBJECT
from tests.browser.pages import call_tool, file_cards, outbox_dir, ready, run_async, sign_in, status_of
from tests.support.harness import mcp_client

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "revoked", "version": "1"}}}


class _Statuses(httpx2.AsyncBaseTransport):
    """The status of every response the MCP client was given."""

    def __init__(self):
        self.inner, self.statuses = httpx2.AsyncHTTPTransport(), []

    async def handle_async_request(self, request):
        response = await self.inner.handle_async_request(request)
        self.statuses.append(response.status_code)
        return response

    async def aclose(self):
        await self.inner.aclose()


def test_email_and_workspace_settings(live, tenant, page):
    _, server = live
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/notifications")
    ready(page, "settings")
    email = page.get_by_label("Email me when an agent asks")
    expect(email).to_be_checked()
    with page.expect_response("**/api/settings/me") as saved:
        email.uncheck()
    assert saved.value.status == 200
    expect(page.locator(".toggle").first).to_contain_text("Saved")
    assert tenant.store.workspaces.get_person(tenant.workspace_id, tenant.person.id).agent_requests_email is False

    page.goto(f"{server.origin}/settings/workspace")
    ready(page, "settings")
    drafting = page.get_by_label("Ask before drafting steps")
    expect(drafting).to_be_checked()
    with page.expect_response("**/api/settings/workspace") as saved:
        drafting.uncheck()
    assert saved.value.status == 200
    assert tenant.store.workspaces.get_workspace(tenant.workspace_id).setting("ask_before_drafting") is False

    page.reload()
    ready(page, "settings")
    expect(page.get_by_label("Ask before drafting steps")).not_to_be_checked()
    expect(page.get_by_label("Ask before approvals")).to_be_checked()
    page.goto(f"{server.origin}/settings/notifications")
    ready(page, "settings")
    expect(page.get_by_label("Email me when an agent asks")).not_to_be_checked()
    page.goto(f"{server.origin}/settings")
    ready(page, "settings")
    expect(page.locator("body")).to_contain_text(tenant.person.email)


def _test_emails_to(runtime, address: str) -> list[str]:
    """The plain text of each test email to ``address`` in the live server's outbox."""
    found = []
    for path in sorted(outbox_dir(runtime).glob("*.eml"), key=lambda p: p.stat().st_mtime_ns):
        message = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        if str(message["To"]).strip().lower() == address.lower() and str(message["Subject"]) == TEST_SUBJECT:
            found.append(message.get_body(preferencelist=("plain",)).get_content())
    return found


def test_quiet_hours_and_a_test_email(live, tenant, page):
    runtime, server = live
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/notifications")
    ready(page, "settings")
    minutes = runtime.desk.settings.email_interval // 60
    expect(page.locator(".toggle").first).to_contain_text(
        f"At most one email every {minutes} minutes; requests in between are listed in the next one.")
    quiet = page.get_by_label("Quiet hours")
    expect(quiet).not_to_be_checked()
    zone = page.get_by_label("Time zone")
    expect(zone).to_have_value(page.evaluate("Intl.DateTimeFormat().resolvedOptions().timeZone"))

    quiet.check()
    zone.fill("Not/AZone")
    with page.expect_response("**/api/settings/me") as refused:
        page.get_by_role("button", name="Save quiet hours").click()
    assert refused.value.status == 422
    message = refused.value.json()["error"]["message"]
    expect(page.locator(".quiet-field", has=zone).locator(".field-error")).to_have_text(message)
    assert tenant.store.workspaces.get_person(tenant.workspace_id, tenant.person.id).quiet_hours is None

    # Quiet all day but one minute: quiet hours run now whatever the clock says.
    page.get_by_label("From").fill("00:00")
    page.get_by_label("Until").fill("23:59")
    zone.fill("Europe/Berlin")
    with page.expect_response("**/api/settings/me") as saved:
        page.get_by_role("button", name="Save quiet hours").click()
    assert saved.value.status == 200
    expect(page.locator(".quiet-hours .saved")).to_have_text("Saved")
    expect(page.locator(".quiet-field .field-error:not(:empty)")).to_have_count(0)
    stored = tenant.store.workspaces.get_person(tenant.workspace_id, tenant.person.id).quiet_hours
    assert (stored.start, stored.end, stored.zone) == ("00:00", "23:59", "Europe/Berlin")
    until = saved.value.json()["me"]["quiet_until"]
    if until:  # in the minute 23:59 Berlin time, quiet hours do not run
        expect(page.locator(".quiet-now")).to_contain_text("Quiet now — emails wait until ")
        expect(page.locator(".quiet-now time")).to_have_attribute("datetime", until)

    page.reload()
    ready(page, "settings")
    expect(page.get_by_label("Quiet hours")).to_be_checked()
    expect(page.get_by_label("From")).to_have_value("00:00")
    expect(page.get_by_label("Until")).to_have_value("23:59")
    expect(page.get_by_label("Time zone")).to_have_value("Europe/Berlin")

    button = page.get_by_role("button", name="Send me a test email", exact=True)
    with page.expect_response("**/api/settings/me/test-email") as sent:
        button.click()
    assert sent.value.status == 200
    expect(page.locator(".test-email-answer")).to_have_text(sent.value.json()["message"])
    expect(page.locator(".test-email-answer")).to_contain_text(f"A test email is on its way to {tenant.person.email}.")
    emails = _test_emails_to(runtime, tenant.person.email)
    assert len(emails) == 1 and "Quiet hours: 00:00 to 23:59 (Europe/Berlin)." in emails[0]
    expect(button).to_be_enabled()

    page.get_by_label("Quiet hours").uncheck()
    with page.expect_response("**/api/settings/me") as off:
        page.get_by_role("button", name="Save quiet hours").click()
    assert off.value.status == 200 and off.value.json()["me"]["quiet_hours"] is None
    expect(page.locator(".quiet-now")).to_be_hidden()
    assert tenant.store.workspaces.get_person(tenant.workspace_id, tenant.person.id).quiet_hours is None
    page.reload()
    ready(page, "settings")
    expect(page.get_by_label("Quiet hours")).not_to_be_checked()


def test_test_emails_asked_too_often_wait(live, tenant, page):
    _, server = live
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/notifications")
    ready(page, "settings")
    button = page.get_by_role("button", name="Send me a test email", exact=True)
    answer = page.locator(".test-email-answer")
    for _ in range(10):
        with page.expect_response("**/api/settings/me/test-email") as sent:
            button.click()
        if sent.value.status == 429:
            break
        assert sent.value.status == 200
        expect(button).to_be_enabled()
    expect(answer).to_have_text(sent.value.json()["error"]["message"])
    assert int(sent.value.headers["retry-after"]) > 0
    expect(button).to_be_disabled()


def test_member_sees_no_workspace_settings(live, tenant, page):
    _, server = live
    member = tenant.add_person("member")
    sign_in(page, tenant, member)
    page.goto(f"{server.origin}/settings/notifications")
    ready(page, "settings")
    expect(page.get_by_label("Email me when an agent asks")).to_be_visible()
    page.goto(f"{server.origin}/settings")
    ready(page, "settings")
    # notifications, Slack, passkeys, connections, grants, policy (read only)
    expect(page.locator("[data-settings-link]")).to_have_count(6)
    expect(page.get_by_role("link", name="Workspace")).to_have_count(0)
    page.goto(f"{server.origin}/settings/workspace")
    ready(page, "settings")
    expect(page.get_by_text("Ask before drafting steps")).to_have_count(0)
    expect(page.get_by_role("heading", name="Workspace")).to_have_count(0)


def test_owners_see_the_members_and_their_roles_members_do_not(live, tenant, page, context):
    _, server = live
    approver = tenant.add_person("approver")
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/members")
    ready(page, "settings")
    expect(page.get_by_role("heading", level=1)).to_have_text("Members")
    panel = page.locator("[data-settings-section=members]")
    rows = panel.locator("li")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text(f"{tenant.person.email} (you)")
    expect(rows.nth(0).locator(".badge")).to_have_text("owner")
    expect(rows.nth(1)).to_contain_text(approver.email)
    expect(rows.nth(1).locator(".badge")).to_have_text("approver")

    other = context.new_page()
    sign_in(other, tenant, approver)
    other.goto(f"{server.origin}/settings/members")
    ready(other, "settings")
    expect(other.get_by_role("heading", name="Members")).to_have_count(0)
    other.close()


def test_create_connection_then_revoke(live, tenant, page, context):
    _, server = live
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/connections")
    ready(page, "settings")
    page.get_by_label("Name of the new connection").fill("Claude on phone")
    with page.expect_response("**/api/connections") as made:
        page.get_by_role("button", name="Create connection").click()
    assert made.value.status == 201
    token = page.locator("#new-token").input_value()
    assert token.startswith("cs_") and token == made.value.json()["token"]
    expect(page.locator("#new-mcp-url")).to_have_value(f"{server.origin}/mcp")
    expect(page.locator(".new-token")).to_contain_text("shown only once")

    # The copy button puts the token on the clipboard.
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.origin)
    page.locator(".new-token").get_by_role("button", name="Copy").first.click()
    expect(page.locator(".new-token").get_by_role("button", name="Copied")).to_be_visible()
    assert page.evaluate("() => navigator.clipboard.readText()") == token

    # The token works over MCP, and a card filed through it waits on this person.
    (held,) = file_cards(tenant, [("n1", "via the new connection")], token=token)

    # Shown once: after a reload the token is nowhere on the page.
    page.reload()
    ready(page, "settings")
    assert token not in page.content()
    row = page.locator("li", has_text="Claude on phone")
    expect(row).to_be_visible()

    row.get_by_role("button", name="Revoke").click()
    with page.expect_response("**/revoke") as revoked:
        row.get_by_role("button", name="Revoke it").click()
    assert revoked.value.status == 200
    expect(page.locator("li", has_text="Claude on phone")).to_contain_text("Revoked")

    # The revoked token no longer reaches the MCP endpoint (401, named revoked); its waiting card was withdrawn.
    refused = httpx2.post(f"{server.origin}/mcp", json=INITIALIZE, timeout=10, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"})
    assert refused.status_code == 401, refused.text
    assert 'error="invalid_token"' in refused.headers["www-authenticate"]
    assert "revoked" in refused.json()["error_description"]
    answered = _Statuses()

    async def try_token():
        async with mcp_client(f"{server.origin}/mcp", token, transport=answered) as client:
            await client.list_tools()

    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the refusal (an ExceptionGroup of an MCPError)
        run_async(try_token)
    assert answered.statuses and set(answered.statuses) == {401}  # the client was refused, every time, by a 401
    assert status_of(tenant, held["confirmationId"])["status"] == "declined"
    assert call_tool(tenant, "list_confirmations", {})["confirmations"] == []


def test_an_oauth_client_that_never_finished_is_shown_waiting_then_revoked(live, tenant, page, monkeypatch):
    from countersign.identity.oauth import CODE_TTL, grants
    from countersign.store.authorizations import PendingAuthorization

    runtime, server = live
    now = runtime.desk.now()
    pending = PendingAuthorization(
        request_hash="unfinished", client_id="https://slow.example/client.json", client_name="Slow client",
        redirect_uri="http://127.0.0.1:4000/cb", redirect_uri_provided_explicitly=True, code_challenge="c" * 43,
        resource=f"{server.origin}/mcp", created_at=now, expires_at=now + 600)
    workspace = tenant.store.workspaces.get_workspace(tenant.workspace_id)
    allowed = grants.allow(runtime.desk, pending, tenant.person, workspace)
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/connections")
    ready(page, "settings")
    row = page.locator(f'li[data-connection-id="{allowed.connection.id}"]')
    expect(row).to_contain_text("Allowed; waiting for the client to finish connecting. It was sent back to 127.0.0.1")
    expect(row.get_by_role("button", name="Revoke")).to_be_visible()

    later = runtime.desk.now() + CODE_TTL + 61
    monkeypatch.setattr(runtime.desk, "clock", lambda: later)
    page.reload()
    ready(page, "settings")
    expect(row).to_contain_text("The client never finished connecting with OAuth")
    expect(row).to_contain_text("Revoked")
    expect(row.get_by_role("button", name="Revoke")).to_have_count(0)


def test_a_person_whose_address_bounced_is_told_on_the_page(live, tenant, page):
    """SES reported a permanent bounce (the notifier suppressed the address): when the person next
    signs in, the page says card emails stopped and why; the notice goes once it is lifted."""
    from countersign.store.suppressions import Suppression

    _, server = live
    address = tenant.person.email.lower()
    tenant.store.suppressions.suppress_address(Suppression(address, "bounce", 1_800_000_000, "General"))
    try:
        sign_in(page, tenant)
        page.goto(f"{server.origin}/confirm")
        ready(page, "confirm")
        notice = page.locator("#email-notice")
        expect(notice).to_be_visible()
        expect(notice).to_contain_text(f"Card emails to {tenant.person.email} stopped")
        expect(notice).to_contain_text("did not accept mail")
    finally:
        tenant.store.suppressions.lift_suppression(address)
    page.reload()
    ready(page, "confirm")
    expect(page.locator("#email-notice")).to_be_hidden()


def test_an_owner_asks_to_add_an_upstream_on_a_phone_and_bad_input_names_the_field(live, tenant, page, watch):
    from tests.support.harness import SECRETS

    secret = "browser-typed-token-5c2e9a71d04b8f63"
    SECRETS.add(secret)
    _, server = live
    page.set_viewport_size({"width": 360, "height": 780})
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/upstreams")
    ready(page, "settings")
    panel = page.locator("[data-section=upstreams]")
    expect(panel).to_contain_text("None yet.")
    page.get_by_label("Server name").fill("Files")
    page.get_by_label("Server URL").fill("https://files.example.com/mcp")
    page.get_by_label("Credential (optional)").fill(f"Bearer {secret}")
    with page.expect_response("**/api/settings/upstreams") as answer:
        page.get_by_role("button", name="Request to add").click()
    assert answer.value.status == 422 and secret not in answer.value.text()
    expect(panel.locator("[role=alert]")).to_contain_text("name: 1 to 16 lowercase letters and digits")
    expect(page.get_by_label("Server name")).to_have_attribute("aria-invalid", "true")
    page.get_by_label("Server name").fill("files")
    page.get_by_label("Server URL").fill("http://127.0.0.1:9/mcp")  # this server allows no private upstreams
    with page.expect_response("**/api/settings/upstreams") as answer:
        page.get_by_role("button", name="Request to add").click()
    assert answer.value.status == 422 and answer.value.json()["field"] == "url"
    expect(panel.locator("[role=alert]")).to_contain_text("url: an upstream must be https")
    expect(page.get_by_label("Server URL")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Server name")).not_to_have_attribute("aria-invalid", "true")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    assert secret not in page.content()
    assert tenant.store.docs.list_docs(tenant.workspace_id, "upstream") == []
    assert watch.errors == [], watch.errors


def test_a_client_allowed_again_is_one_row_and_a_revocation_says_why(live, tenant, page, watch):
    """Three authorizations of a client that registers anew each run (as the Python SDK's does
    when it keeps nothing): one row, the latest, with the earlier ones folded under it; the one
    whose refresh token came back twice says so; the prompts speak of each kind."""
    from countersign.store.hashes import secret_hash
    from tests.oauth.conftest import Flow
    from tests.support.confirm_page import Page

    runtime, server = live
    made = []
    with httpx2.Client(base_url=server.origin, timeout=30, follow_redirects=False) as http:
        api = Page(server.origin).sign_in(runtime, tenant.person)
        flow = Flow(server.origin, http, api, tenant.workspace_id)
        for _ in range(3):
            assert flow.register(name="py-sdk-oauth-probe").status_code == 201
            tokens = flow.tokens()
            made.append(tenant.store.grants.get_issued_token(secret_hash(tokens["access_token"]),
                                                             runtime.desk.now()).connection_id)
            if len(made) == 1:  # the first one's refresh token is used twice
                assert flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"]).status_code == 200
                assert flow.token(grant_type="refresh_token", refresh_token=tokens["refresh_token"]).status_code == 400
        api.close()
    reused, earlier, latest = made

    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/connections")
    ready(page, "settings")
    panel = page.locator("[data-settings-section=connections]")
    top = panel.locator("li[data-connection-id]:not(.earlier li)")
    expect(top).to_have_count(2)  # the connection token, and the client once
    expect(top.nth(1)).to_have_attribute("data-connection-id", latest)
    folded = top.nth(1).locator('[data-field="earlier"]')
    expect(folded.locator("summary")).to_have_text("2 earlier authorizations of this app (1 still active)")
    expect(folded.locator(f'li[data-connection-id="{reused}"]')).to_be_hidden()  # folded until asked
    folded.locator("summary").click()
    row = folded.locator(f'li[data-connection-id="{reused}"]')
    expect(row.locator(".badge")).to_have_text("Revoked")
    expect(row.locator('[data-field="revoked-why"]')).to_have_text(
        "Its refresh token was used twice — a sign it was copied. Allow the app again if you still use it.")

    # Revoking an OAuth connection is worded for an app; a token's for the agent holding it.
    other = folded.locator(f'li[data-connection-id="{earlier}"]')
    other.get_by_role("button", name="Revoke").click()
    expect(other.locator(".confirm-revoke")).to_have_text(
        "py-sdk-oauth-probe loses access at once: every token the app holds stops working, and its waiting "
        "requests are withdrawn. To use it again, connect it again from the app.Revoke itCancel")
    with page.expect_response("**/revoke") as revoked:
        other.get_by_role("button", name="Revoke it").click()
    assert revoked.value.status == 200
    expect(other.locator('[data-field="revoked-why"]')).to_have_text("You revoked it.")
    expect(folded.locator("summary")).to_have_text("2 earlier authorizations of this app")
    token_row = top.nth(0)
    token_row.get_by_role("button", name="Revoke").click()
    expect(token_row.locator(".confirm-revoke p")).to_have_text(
        "The agent using this token loses access, and its waiting requests are withdrawn.")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= page.evaluate("() => innerWidth")
    assert watch.errors == [], watch.errors


def test_settings_is_an_index_and_connections_are_one_tap_away(live, tenant, page):
    """Settings lists its sections; each is its own screen with a way back (issue 42)."""
    _, server = live
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings")
    ready(page, "settings")
    expect(page.locator("[data-settings-link]")).to_have_text(
        [re.compile(f"^{name}") for name in ("Notifications", "Slack", "Passkeys", "Connections", "Grants", "Policy",
                                              "Members", "Upstreams", "Webhooks", "Workspace")])
    expect(page.locator("#nav [aria-current=page]")).to_have_text("Settings")
    page.get_by_role("link", name=re.compile("^Connections")).click()
    expect(page).to_have_url(f"{server.origin}/settings/connections")
    expect(page.get_by_role("heading", level=1)).to_have_text("Connections")
    expect(page.locator("li[data-connection-id]")).to_have_count(1)
    expect(page.locator("#nav [aria-current=page]")).to_have_text("Settings")
    page.get_by_role("link", name="All settings").click()
    expect(page).to_have_url(f"{server.origin}/settings")
    expect(page.locator("[data-settings-link]")).to_have_count(10)


def test_the_workspace_section_says_how_long_requests_wait(live, tenant, page):
    _, server = live
    rules = lifetimes.as_text({"default": {"wait": "2h", "remind_before": "30m"}, "risky": {"lapse": "declined"}})
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"card_lifetimes": rules})
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/workspace")
    ready(page, "settings")
    words = page.locator(".lifetimes")
    expect(words.locator("h3")).to_have_text("How long requests wait")
    expect(words.locator("li")).to_have_text([
        "Every card: waits 2 hours, a reminder 30 minutes before it lapses; unanswered, it expires.",
        "Cards that spend, send, grant or cannot be undone: waits 2 hours, a reminder 30 minutes before it lapses; "
        "unanswered, it counts as declined.",
    ])
