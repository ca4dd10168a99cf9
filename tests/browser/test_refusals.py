"""Clicks the server must refuse: a card withdrawn or changed while its page was open, a browser
without a session, a request without the CSRF token. Each says why, and nothing runs."""

from __future__ import annotations

from playwright.sync_api import expect

from countersign.core.card_states import CardState
from countersign.store.docs import DocWrite
from tests.browser.pages import call_tool, card, file_cards, new_context, ready, sign_in, status_of


def test_withdrawn_while_open(live, tenant, page, watch):
    (held,) = file_cards(tenant, [("n1", "never runs")])
    card_id = held["confirmationId"]
    sign_in(page, tenant)
    page.goto(held["confirmationUrl"])
    ready(page, "card")
    expect(page.get_by_role("button", name="Confirm")).to_be_enabled()

    withdrawn = call_tool(tenant, "cancel_confirmation", {"confirmation_id": card_id})
    assert withdrawn["status"] == "withdrawn", withdrawn

    with page.expect_response(f"**/api/cards/{card_id}/confirm") as clicked:
        page.get_by_role("button", name="Confirm").click()
    assert clicked.value.status == 409
    assert clicked.value.json()["error"]["code"] == "withdrawn"
    outcome = page.locator("[data-outcome]")
    expect(outcome).to_have_attribute("data-outcome", "withdrawn")
    expect(outcome).to_contain_text("withdrew")
    expect(page.get_by_role("button", name="Confirm")).to_have_count(0)
    assert tenant.note("n1")["text"] == "text 1"
    assert status_of(tenant, card_id)["status"] == "declined"
    assert watch.errors == [], watch.errors


def test_changed_while_open(live, tenant, page):
    first, second = file_cards(tenant, [("n1", "drawn against text 1"), ("n2", "still fine")])
    sign_in(page, tenant)
    expect(page.locator("article.card")).to_have_count(2)

    # The data behind the first card moves while the page is open.
    doc = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
    tenant.store.docs.write_docs(
        tenant.workspace_id, [DocWrite("note", "n1", dict(doc.data, text="edited elsewhere"), doc.version)]
    )

    one = card(page, first["confirmationId"])
    with page.expect_response(f"**/api/cards/{first['confirmationId']}/confirm") as clicked:
        one.get_by_role("button", name="Confirm").click()
    assert clicked.value.status == 409
    assert clicked.value.json()["error"]["code"] == "changed"
    expect(one.locator("[data-outcome]")).to_have_attribute("data-outcome", "changed")
    expect(one).to_contain_text("changed since")
    assert tenant.note("n1")["text"] == "edited elsewhere"  # nothing ran
    status = status_of(tenant, first["confirmationId"])
    assert status["status"] == "declined" and "changed" in status["reason"], status

    # The other card on the same page still answers normally.
    two = card(page, second["confirmationId"])
    two.get_by_role("button", name="Confirm").click()
    expect(two.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
    expect(page.locator(".count")).to_have_text("Nothing is waiting for you.")


def test_already_answered_elsewhere(live, tenant, browser):
    """Two open pages (two devices): the second click is refused as already answered."""
    (held,) = file_cards(tenant, [("n1", "once only")])
    card_id = held["confirmationId"]
    pages = []
    contexts = [new_context(browser), new_context(browser)]
    try:
        for ctx in contexts:
            p = ctx.new_page()
            sign_in(p, tenant)
            p.goto(held["confirmationUrl"])
            ready(p, "card")
            pages.append(p)
        pages[0].get_by_role("button", name="Confirm").click()
        expect(pages[0].locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
        pages[1].get_by_role("button", name="Confirm").click()
        expect(pages[1].locator("[data-outcome]")).to_have_attribute("data-outcome", "already_answered")
        expect(pages[1].locator("[data-outcome]")).to_contain_text("Already answered")
    finally:
        for ctx in contexts:
            ctx.close()
    events = [e.event for e in tenant.store.cards.audit_trail(tenant.workspace_id, card_id)]
    assert events == ["filed", "completed"], events


def test_no_session_sees_nothing_and_cannot_confirm(live, tenant, page, browser):
    _, server = live
    (held,) = file_cards(tenant, [("n1", "not for strangers")])
    card_id = held["confirmationId"]
    sign_in(page, tenant)  # the owner's own context is signed in; a second one is not

    stranger = new_context(browser)
    try:
        other = stranger.new_page()
        other.goto(held["confirmationUrl"])
        ready(other, "signin")
        expect(other.locator("article.card")).to_have_count(0)
        expect(other.get_by_text("Change note")).to_have_count(0)
        answers = other.evaluate(
            """async (id) => {
                const get = (p) => fetch(p).then(r => r.status);
                const post = (p) => fetch(p, {method: 'POST', headers: {'X-CSRF-Token': 'guess'}}).then(r => r.status);
                return {
                    list: await get('/api/cards'), one: await get('/api/cards/' + id),
                    history: await get('/api/history'),
                    session: await get('/api/session'), confirm: await post('/api/cards/' + id + '/confirm'),
                    decline: await post('/api/cards/' + id + '/decline'),
                };
            }""",
            card_id,
        )
        assert answers["list"] == answers["one"] == answers["history"] == answers["session"] == 401, answers
        assert answers["confirm"] in (401, 403) and answers["decline"] in (401, 403), answers
    finally:
        stranger.close()
    assert tenant.store.cards.get_card(tenant.workspace_id, card_id,
                                       tenant.runtime.desk.now()).state is CardState.PENDING
    assert tenant.note("n1")["text"] == "text 1"


def test_post_without_csrf_token_is_refused(live, tenant, page):
    (held,) = file_cards(tenant, [("n1", "needs the token")])
    card_id = held["confirmationId"]
    sign_in(page, tenant)
    answers = page.evaluate(
        """async (id) => {
            const post = (p, headers) => fetch(p, {method: 'POST', headers})
                .then(async r => [r.status, await r.json()]);
            const session = await fetch('/api/session').then(r => r.json());
            return {
                none: await post('/api/cards/' + id + '/confirm', {}),
                wrong: await post('/api/cards/' + id + '/confirm', {'X-CSRF-Token': 'x' + session.csrfToken}),
                decline: await post('/api/cards/' + id + '/decline', {}),
                signout: await post('/api/signout', {}),
                patch: await fetch('/api/settings/me', {method: 'PATCH', headers: {'Content-Type': 'application/json'},
                                   body: JSON.stringify({agent_requests_email: false})}).then(r => r.status),
            };
        }""",
        card_id,
    )
    assert answers["none"][0] == 403 and answers["none"][1]["error"]["code"] == "csrf", answers
    assert answers["wrong"][0] == 403, answers
    assert answers["decline"][0] == 403, answers
    assert answers["signout"][0] == 403, answers
    assert answers["patch"] == 403, answers
    assert tenant.store.cards.get_card(tenant.workspace_id, card_id,
                                       tenant.runtime.desk.now()).state is CardState.PENDING
    # The page's own click (with the token) still works in the same session.
    page.reload()
    ready(page, "confirm")
    card(page, card_id).get_by_role("button", name="Confirm").click()
    expect(card(page, card_id).locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")


def test_expired_while_open(live, tenant, page):
    (held,) = file_cards(tenant, [("n1", "too late")])
    card_id = held["confirmationId"]
    sign_in(page, tenant)
    page.goto(held["confirmationUrl"])
    ready(page, "card")
    desk = tenant.runtime.desk
    real = desk.clock
    desk.clock = lambda: real() + desk.settings.card_ttl + 60  # a day later, the page still open
    try:
        with page.expect_response(f"**/api/cards/{card_id}/confirm") as clicked:
            page.get_by_role("button", name="Confirm").click()
        assert clicked.value.status == 409 and clicked.value.json()["error"]["code"] == "expired"
        expect(page.locator("[data-outcome]")).to_have_attribute("data-outcome", "expired")
        expect(page.locator("[data-outcome]")).to_contain_text("expired")
        assert status_of(tenant, card_id)["status"] == "expired"
    finally:
        desk.clock = real
    assert tenant.note("n1")["text"] == "text 1"


def test_someone_elses_card(live, tenant, page):
    """A card waiting on another member of the workspace is not in the list and cannot be answered."""
    member = tenant.add_person("approver")
    (held,) = file_cards(tenant, [("n1", "for the approver")], token=tenant.connect(member, "Approver's agent"))
    sign_in(page, tenant)  # the owner
    expect(page.locator(".count")).to_have_text("Nothing is waiting for you.")
    page.goto(held["confirmationUrl"])
    ready(page, "card")
    expect(page.locator(".error")).to_contain_text("someone else")
    expect(page.get_by_role("button", name="Confirm")).to_have_count(0)
    status = page.evaluate(
        """async (id) => {
            const s = await fetch('/api/session').then(r => r.json());
            return fetch('/api/cards/' + id + '/confirm', {method: 'POST', headers: {'X-CSRF-Token': s.csrfToken}})
                .then(async r => [r.status, (await r.json()).error.code]);
        }""",
        held["confirmationId"],
    )
    assert status == [403, "not_yours"]
    assert tenant.note("n1")["text"] == "text 1"
