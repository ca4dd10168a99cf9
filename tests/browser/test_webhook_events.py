"""Settings → Webhooks: an owner changes the events an endpoint is sent, in place, in real chromium
at 360 px, with the keyboard: the add form's boxes, ticked as it is sent now; a refusal shown in
words beside them and nothing stored; every box ticked is every event (no list sent), as adding."""

from __future__ import annotations

import json
from dataclasses import replace

from playwright.sync_api import expect

from countersign.core.ids import new_id
from countersign.store.webhook_endpoints import WebhookEndpoint
from tests.browser.pages import ready, sign_in
from tests.browser.test_mobile import check_layout


def test_an_owner_changes_an_endpoints_events_with_the_keyboard(live, tenant, page, watch):
    _, server = live
    store, ws = tenant.store, tenant.workspace_id
    endpoint = store.webhook_endpoints.add_endpoint(WebhookEndpoint(
        id=new_id("wh_"), workspace_id=ws, url="https://hooks.example.com/countersign", events=("card.filed",),
        secret_sealed="never-sent", created_at=int(tenant.runtime.desk.now()), created_by=tenant.person.id))
    page.set_viewport_size({"width": 360, "height": 780})
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/webhooks")
    ready(page, "settings")
    row = page.locator(f"[data-endpoint='{endpoint.id}']")
    expect(row.locator("p.muted").first).to_have_text("card.filed")
    edit = row.get_by_role("button", name="Edit events")
    expect(edit).to_have_attribute("aria-expanded", "false")
    edit.focus()
    page.keyboard.press("Enter")
    expect(edit).to_have_attribute("aria-expanded", "true")
    expect(row.get_by_label("card.filed")).to_be_focused()
    for name in ("card.filed", "card.answered", "card.completed", "card.failed", "card.lapsed", "card.edited"):
        (expect(row.get_by_label(name)).to_be_checked if name == "card.filed"
         else expect(row.get_by_label(name)).not_to_be_checked)()
    check_layout(page, "the endpoint's events, open")

    # no box ticked: refused in words beside the boxes, nothing stored
    page.keyboard.press("Space")
    expect(row.get_by_label("card.filed")).not_to_be_checked()
    with page.expect_response(lambda r: r.request.method == "PATCH") as answer:
        row.get_by_role("button", name="Save events").click()
    assert answer.value.status == 422
    expect(row.locator("[role=alert]")).to_have_text(
        "events: name at least one of card.filed, card.answered, card.completed, card.failed, card.lapsed, "
        "card.edited.")
    assert store.webhook_endpoints.get_endpoint(ws, endpoint.id).events == ("card.filed",)

    row.get_by_label("card.answered").check()
    row.get_by_label("card.lapsed").check()
    row.get_by_role("button", name="Save events").focus()
    with page.expect_response(lambda r: r.request.method == "PATCH") as answer:
        page.keyboard.press("Enter")
    assert answer.value.status == 200 and json.loads(answer.value.request.post_data) == {
        "events": ["card.answered", "card.lapsed"]}
    expect(row.locator("p.muted").first).to_have_text("card.answered, card.lapsed")
    expect(row.get_by_role("button", name="Edit events")).to_be_focused()
    expect(row.locator("form")).to_have_count(0)
    expect(page.locator("#status")).to_have_text("The endpoint's events were saved.")
    assert store.webhook_endpoints.get_endpoint(ws, endpoint.id) == replace(endpoint,
                                                                           events=("card.answered", "card.lapsed"))

    # opened again: ticked as it is sent now; Cancel closes it and changes nothing
    row.get_by_role("button", name="Edit events").click()
    expect(row.get_by_label("card.answered")).to_be_checked()
    expect(row.get_by_label("card.filed")).not_to_be_checked()
    row.get_by_role("button", name="Cancel").click()
    expect(row.locator("form")).to_have_count(0)
    expect(row.get_by_role("button", name="Edit events")).to_be_focused()

    # every box ticked: every event, those added later too (no list sent)
    row.get_by_role("button", name="Edit events").click()
    for name in ("card.filed", "card.completed", "card.failed", "card.edited"):
        row.get_by_label(name).check()
    with page.expect_response(lambda r: r.request.method == "PATCH") as answer:
        row.get_by_role("button", name="Save events").click()
    assert answer.value.status == 200 and json.loads(answer.value.request.post_data) == {"everyEvent": True}
    expect(row.locator("p.muted").first).to_have_text("Every event, and any added later")
    assert store.webhook_endpoints.get_endpoint(ws, endpoint.id).events == ()
    check_layout(page, "the endpoint after its events changed")
    assert watch.errors == [], watch.errors
