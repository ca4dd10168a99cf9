"""The person's whole path: email link → sign in → the cards an agent filed → confirm and decline,
and the agent learns each outcome over MCP."""

from __future__ import annotations

import time

from playwright.sync_api import expect

from countersign.toolkit import ActionContext
from countersign.toolsets.mail.demo import seed
from tests.browser.pages import (
    call_tool,
    card,
    file_cards,
    outbox_dir,
    ready,
    shot,
    sign_in,
    status_of,
    wait_for_signin_link,
)


def test_email_signin_then_confirm_and_decline(live, tenant, page, watch):
    runtime, server = live
    held = file_cards(tenant, [("n1", "confirmed text"), ("n2", "declined text")])
    first, second = (h["confirmationId"] for h in held)
    seen = set(outbox_dir(runtime).glob("*.eml")) if outbox_dir(runtime).is_dir() else set()

    # The notification email, sent when the first card was filed, links that card (a plain GET,
    # no token in it).
    card_link = _notification_link(runtime, tenant.person.email)
    assert card_link == f"{server.origin}/confirm?card={first}", card_link

    # Signed out, the card's page asks for an email and sends a link.
    page.goto(card_link)
    ready(page, "signin")
    expect(page.locator("article.card")).to_have_count(0)
    page.get_by_label("Your email").fill(tenant.person.email)
    with page.expect_response("**/api/signin/request") as asked:
        page.get_by_role("button", name="Email me a sign-in link").click()
    assert asked.value.status == 202
    expect(page.get_by_text("Check your email")).to_be_visible()

    # The link from the email opens a button; only the click signs in.
    page.wait_for_timeout(50)
    link = wait_for_signin_link(page, runtime, tenant.person.email, seen)
    assert link.startswith(f"{server.origin}/signin#token=")
    page.goto(link)
    ready(page, "signin")
    assert "token" not in page.url  # the fragment is gone from the address bar and history
    with page.expect_response("**/api/signin/complete") as done:
        page.get_by_role("button", name="Sign in").click()
    assert done.value.status == 200
    ready(page, "card")
    assert page.url == card_link  # back where the person started: the card alone
    expect(card(page, first).locator(".meta")).to_contain_text("Asked by Test agent")
    page.get_by_role("link", name="See everything waiting for you").click()
    ready(page, "confirm")
    assert page.url == f"{server.origin}/confirm"

    # Both cards, oldest first, with who asked and when they expire.
    cards = page.locator("article.card")
    expect(cards).to_have_count(2)
    assert cards.evaluate_all("els => els.map(e => e.dataset.cardId)") == [first, second]
    one = card(page, first)
    expect(one.locator(".title")).to_have_text("Change note ‘Note 1’?")
    expect(one.locator(".lines")).to_contain_text("text 1 → confirmed text")
    expect(one.locator(".meta")).to_contain_text("Asked by Test agent")
    expect(one.locator(".meta")).to_contain_text("expires")
    expect(page.locator(".count")).to_have_text("2 requests are waiting for you.")

    # Confirm the first: the card shows the result, the agent sees completed with the result.
    with page.expect_response(f"**/api/cards/{first}/confirm") as clicked:
        one.get_by_role("button", name="Confirm").click()
    assert clicked.value.status == 200
    expect(one.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
    expect(one).to_contain_text("Confirmed — it ran")
    expect(one.locator(".outcome-line")).to_have_text(["The note now reads:", "confirmed text"])
    # What the agent is told sits folded behind its own disclosure, never as instructions to the person.
    told = one.locator("details.agent-told")
    expect(told.locator("summary")).to_have_text("What the agent is told")
    expect(told).not_to_have_attribute("open", "")
    expect(told.locator(".next")).to_be_hidden()
    told.locator("summary").click()
    expect(told.locator(".next")).to_contain_text("Next steps suggested to the agent")
    expect(told.locator(".next li")).to_have_text(["Read the notes back to check the change."])
    expect(told.locator(".result dd")).to_have_text(["n1", "confirmed text"])
    expect(page.locator(".count")).to_have_text("1 request is waiting for you.")
    status = status_of(tenant, first)
    assert status["status"] == "completed", status
    assert status["result"] == {"note": "n1", "text": "confirmed text"}
    assert tenant.note("n1")["text"] == "confirmed text"

    # Decline the second with a reason: the agent sees declined and the reason; nothing ran.
    two = card(page, second)
    two.get_by_role("button", name="Decline").click()
    two.get_by_label("Reason (optional, the agent sees it)").fill("Not this week <b>please</b>")
    with page.expect_response(f"**/api/cards/{second}/decline") as declined:
        two.locator("form").get_by_role("button", name="Decline").click()
    assert declined.value.status == 200
    expect(two.locator("[data-outcome]")).to_have_attribute("data-outcome", "declined")
    expect(two).to_contain_text("Reason: Not this week <b>please</b>")
    expect(page.locator(".count")).to_have_text("Nothing is waiting for you.")
    status = status_of(tenant, second)
    assert status["status"] == "declined" and status["reason"] == "Not this week <b>please</b>", status
    assert tenant.note("n2")["text"] == "text 2"

    # A card filed now shows up when the page looks again (after an answer, or on return).
    shot(page, "flow-answered-800")
    page.goto(f"{server.origin}/history")
    ready(page, "history")
    expect(page.locator("article.card")).to_have_count(2)
    expect(card(page, first)).to_contain_text("Confirmed — it ran")
    expect(card(page, second)).to_contain_text("Declined")
    # Nothing to answer in History; the declined request alone can be asked again (reopened).
    expect(page.locator("article.card button")).to_have_count(1)
    expect(card(page, second).get_by_role("button", name="Ask me again")).to_be_visible()

    assert watch.dialogs == [] and watch.errors == [], (watch.dialogs, watch.errors)
    assert watch.origins == {server.origin}


def _notification_link(runtime, email):
    # Notifications go out off the event loop, just after the held reply: poll briefly.
    for _ in range(100):
        try:
            return _find_notification_link(runtime, email)
        except (AssertionError, FileNotFoundError):
            time.sleep(0.05)
    return _find_notification_link(runtime, email)


def _find_notification_link(runtime, email):
    from email import policy
    from email.parser import BytesParser

    for path in sorted(outbox_dir(runtime).glob("*.eml"), key=lambda p: p.stat().st_mtime_ns, reverse=True):
        message = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        if str(message["To"]).strip().lower() != email.lower():
            continue
        text = message.get_body(preferencelist=("plain",)).get_content()
        if "/signin#token=" in text:
            continue
        links = [w for w in text.split() if w.startswith(("http://", "https://"))]
        assert links, text
        return links[0]
    raise AssertionError(f"no notification email to {email} in the outbox")


def test_one_card_page_and_new_cards_appear(live, tenant, page):
    _, server = live
    (held,) = file_cards(tenant, [("n1", "only this one")])
    sign_in(page, tenant)
    page.goto(held["confirmationUrl"])
    ready(page, "card")
    expect(page.locator("article.card")).to_have_count(1)
    expect(page.locator("h1.title")).to_have_text("Change note ‘Note 1’?")

    # Meanwhile the agent files another card; the list page picks it up after an answer.
    page.goto(f"{server.origin}/confirm")
    ready(page, "confirm")
    expect(page.locator("article.card")).to_have_count(1)
    (later,) = file_cards(tenant, [("n2", "filed later")])
    card(page, held["confirmationId"]).get_by_role("button", name="Confirm").click()
    expect(card(page, held["confirmationId"]).locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
    expect(card(page, later["confirmationId"])).to_be_visible()
    expect(page.locator(".count")).to_have_text("1 request is waiting for you.")

    # The one-card page of an answered card shows its outcome and no buttons.
    page.goto(held["confirmationUrl"])
    ready(page, "card")
    expect(page.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
    expect(page.locator("article.card button")).to_have_count(0)

    # Confirming on the one-card page works too, and the agent learns it.
    page.goto(later["confirmationUrl"])
    ready(page, "card")
    page.get_by_role("button", name="Confirm").click()
    expect(page.locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
    assert status_of(tenant, later["confirmationId"])["status"] == "completed"
    assert call_tool(tenant, "list_confirmations", {}).get("confirmations", []) == []


def test_an_outcome_reads_in_words_and_keeps_its_line_breaks(live, tenant, page):
    """A real tool's outcome in a person's words (money, not thousandths), and a text of several
    lines drawn on several lines; the agent's next steps only behind the disclosure, with no
    "you will need to act"."""
    _, server = live
    seed(tenant.store.docs, ActionContext(tenant.store.docs, tenant.store.workspaces.get_workspace(
        tenant.workspace_id), tenant.person, None, 0))
    bought = call_tool(tenant, "buy_credits", {"credits": 250})
    (note,) = file_cards(tenant, [("n1", "first line\nsecond line")])
    sign_in(page, tenant)
    page.goto(f"{server.origin}/confirm")
    ready(page, "confirm")
    purchase = card(page, bought["confirmationId"])
    purchase.get_by_role("button", name="Confirm").click()
    expect(purchase.locator(".outcome-line")).to_have_text([
        "Bought 250.00 credits · balance 350.00 credits", "Charged 250.00 USD to the workspace's payment method"])
    assert "milli" not in purchase.inner_text()  # what the person sees (the disclosure is folded)
    purchase.locator("details.agent-told summary").click()
    expect(purchase.locator(".agent-told .next")).to_contain_text("If a launch was refused for want of credits")
    expect(purchase).not_to_contain_text("you will need to act")
    expect(purchase.locator(".agent-told .result")).to_contain_text("bought_milli")  # the agent's view, as is
    written = card(page, note["confirmationId"])
    written.get_by_role("button", name="Confirm").click()
    lines = written.locator(".outcome-line")
    expect(lines).to_have_text(["The note now reads:", "first line\nsecond line"])
    expect(lines.nth(1)).to_have_css("white-space", "pre-wrap")
    box = lines.nth(1).bounding_box()
    assert box is not None and box["height"] > 1.6 * float(
        lines.nth(1).evaluate("e => parseFloat(getComputedStyle(e).lineHeight) || 20")), box


def test_a_line_keeps_its_halves_in_order_and_its_spaces_and_the_count_is_every_waiting_card(live, tenant, page):
    """Right-to-left text on either side of "→" cannot swap before and after; two spaces are not
    drawn as one; past a page of cards the heading and the tab still count them all."""
    _, server = live
    (rtl,) = file_cards(tenant, [("n1", "העברה  900")])  # "text 1" → Hebrew, two spaces
    file_cards(tenant, [("n2", f"text v{i}") for i in range(21)])
    sign_in(page, tenant)
    page.goto(f"{server.origin}/confirm")
    ready(page, "confirm")
    expect(page.locator("article.card")).to_have_count(20)  # one page
    expect(page.locator(".count")).to_have_text("22 requests are waiting for you.")
    expect(page).to_have_title("(22) countersign")
    line = card(page, rtl["confirmationId"]).locator("ul.lines li").first
    halves = line.locator("bdi")
    expect(halves).to_have_count(2)
    expect(halves.nth(0)).to_have_text("text 1")
    assert halves.nth(1).text_content() == "העברה  900"
    expect(line).to_have_css("white-space", "pre-wrap")
    card(page, rtl["confirmationId"]).get_by_role("button", name="Confirm").click()
    expect(card(page, rtl["confirmationId"]).locator("[data-outcome]")).to_have_attribute("data-outcome", "completed")
    expect(page.locator(".count")).to_have_text("21 requests are waiting for you.")


def test_a_sign_in_link_opened_while_signed_in_says_it_would_switch_accounts(live, tenant, page):
    from countersign.identity.sessions import mint_signin_token

    sign_in(page, tenant)
    stranger = tenant.add_person("member")
    link = mint_signin_token(tenant.store.sessions, stranger)
    page.goto(f"{tenant.origin}/signin#token={link}")
    ready(page, "signin")
    warning = page.get_by_role("alert")
    expect(warning).to_contain_text(f"You are signed in as {tenant.person.email}.")
    expect(warning).to_contain_text("signs this browser in as whoever it was sent to instead")
    expect(page.get_by_role("button", name="Sign in")).to_be_visible()  # still the person's choice


def test_show_more_after_the_session_ended_goes_to_sign_in(live, tenant, page):
    _, server = live
    file_cards(tenant, [("n1", f"text w{i}") for i in range(21)])
    sign_in(page, tenant)
    page.goto(f"{server.origin}/confirm")
    ready(page, "confirm")
    more = page.get_by_role("button", name="Show more")
    expect(more).to_be_visible()
    page.context.clear_cookies()  # the session ended (signed out elsewhere, or it lapsed)
    more.click()
    ready(page, "signin")
    expect(page.get_by_label("Your email")).to_be_visible()
