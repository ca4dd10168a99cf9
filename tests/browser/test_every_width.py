"""Every view, every phone width (issue 42): at 320, 360, 390 and 414 px, light and dark, with text
at 100 % and 200 % (tests/browser/layout.py says how), under reduced motion — the waiting list with
cards of the notes, budget and mail toolsets and of the gateway, one card, the decline form,
outcomes (as the click leaves them, and as the card's own page shows them later), History, the
Settings index and each of its sections, sign-in and OAuth consent: no sideways scrolling, every
label whole, every target at least 44 x 44 px, nothing moving.

One workspace for the whole file (built once per process); per width one signed-in context, and
each view loaded once and checked in all four combinations of scheme and text size. Each width
files the two cards it answers and reads from the store which cards wait, so it passes alone, in
any order and beside the others in parallel (pytest-xdist: one workspace per worker)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser import scene as scenes
from tests.browser.layout import problems
from tests.browser.pages import card, new_context, ready, sign_in
from tests.support.harness import new_tenant

WIDTHS = (320, 360, 390, 414)
SECTIONS = ("notifications", "passkeys", "connections", "grants", "policy", "members", "upstreams", "workspace",
            "slack", "webhooks")


@pytest.fixture(scope="module")
def scene(live, tmp_path_factory):
    runtime, server = live
    built = scenes.build(new_tenant(runtime, server.origin), live_upstream=tmp_path_factory.mktemp("upstream"))
    scenes.channels(built.tenant, runtime.desk.now(), slack_connected=False)  # Slack's form, webhooks off
    return built


@pytest.fixture(scope="module")
def signed_in(scene, browser):
    """The storage state of a signed-in browser (one sign-in for every width)."""
    ctx = new_context(browser)
    try:
        sign_in(ctx.new_page(), scene.tenant)
        return ctx.storage_state()
    finally:
        ctx.close()


@pytest.fixture
def answerable(scene) -> list[str]:
    """Two waiting notes cards of this test's own, which it confirms and declines."""
    return scenes.spare_cards(scene, 2)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_view_fits_and_reads_whole(scene, signed_in, answerable, browser, watch, width):
    origin = scene.origin
    ctx = new_context(browser, watch, storage_state=signed_in, viewport={"width": width, "height": 740},
                      is_mobile=True, has_touch=True, reduced_motion="reduce")
    found: list[str] = []
    try:
        page = ctx.new_page()
        cdp = ctx.new_cdp_session(page)

        def visit(path: str, view: str, where: str | None = None) -> None:
            page.goto(origin + path)
            ready(page, view)
            found.extend(problems(page, cdp, where or path))

        visit("/confirm", "confirm", "the waiting list")
        waiting = scenes.waiting(scene)  # this test's two cards among them, answered below
        assert set(answerable) <= waiting and set(scene.pending.values()) <= waiting
        listed = page.locator("article.card[data-state=pending]")
        expect(listed).to_have_count(len(waiting))
        assert set(listed.evaluate_all("cards => cards.map(c => c.dataset.cardId)")) == waiting
        # (the list holds every kind of card: notes, budget, mail, the gateway's, one filed from Settings)
        visit(f"/confirm?card={scene.pending['gateway-refresh']}", "card", "the gateway's refresh card")
        # The decline form open.
        visit(f"/confirm?card={scene.pending['budget']}", "card", "the budget card")
        one = card(page, scene.pending["budget"])
        one.get_by_role("button", name="Decline").click()
        expect(one.get_by_label("Reason (optional, the agent sees it)")).to_be_visible()
        found.extend(problems(page, cdp, "the decline form"))
        # Edit open (the budget card declares its amount editable).
        visit(f"/confirm?card={scene.pending['budget']}", "card", "the budget card")
        one.get_by_role("button", name="Edit").click()
        expect(one.get_by_label("amount budgeted")).to_be_visible()
        found.extend(problems(page, cdp, "the edit form"))
        # "Allow this again…" open: offered where granting needs no passkey the person lacks.
        workspaces = scene.tenant.store.workspaces
        workspaces.update_workspace_settings(scene.tenant.workspace_id, {"passkey_policy": "never"})
        try:
            visit(f"/confirm?card={scene.pending['budget']}", "card", "the budget card")
            one.get_by_role("button", name="Allow this again…").click()
            expect(one.get_by_label("Name of the grant")).to_be_visible()
            found.extend(problems(page, cdp, "the grant form"))
        finally:
            workspaces.update_workspace_settings(scene.tenant.workspace_id, {"passkey_policy": "risky"})
        # Outcomes as a click leaves them: confirmed, then declined.
        for card_id, answer in zip(answerable, ("confirm", "decline"), strict=True):
            page.goto(f"{origin}/confirm?card={card_id}")
            ready(page, "card")
            shown = card(page, card_id)
            shown.get_by_role("button", name="Confirm" if answer == "confirm" else "Decline").click()
            if answer == "decline":
                shown.get_by_label("Reason (optional, the agent sees it)").fill("Not this week")
                shown.locator("form").get_by_role("button", name="Decline").click()
            expect(shown.locator("[data-outcome]")).to_have_attribute(
                "data-outcome", "completed" if answer == "confirm" else "declined")
            found.extend(problems(page, cdp, f"after {answer}"))
        # Outcomes as the card's page shows them later.
        for what, card_id in scene.answered.items():
            visit(f"/confirm?card={card_id}", "card", f"the {what} outcome")
        visit("/history", "history")
        visit("/settings", "settings", "the Settings index")
        for section in SECTIONS:
            visit(f"/settings/{section}", "settings")
        # The owner's forms of Settings, Policy, opened: a rule of each kind, what no grant may cover.
        page.goto(origin + "/settings/policy")
        ready(page, "settings")
        for add in page.locator("details.policy-add > summary").all():
            add.click()
        page.locator("[data-policy-section=quorum]").get_by_label("Covers").select_option(label="an amount over…")
        found.extend(problems(page, cdp, "Settings, Policy, every form open"))
        visit(scenes.consent_url(origin).removeprefix(origin), "consent", "OAuth consent")
        # Signed in, the sign-in page; then signed out.
        visit("/signin", "signin", "sign-in (signed in)")
        ctx.clear_cookies()
        visit("/confirm", "signin", "sign-in")
    finally:
        ctx.close()
    assert not found, "\n".join(found[:60])
    assert watch.errors == [] and watch.dialogs == [], (watch.errors, watch.dialogs)
