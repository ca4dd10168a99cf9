"""Sign-in on the page: opening the link changes nothing (scanner-safe), the button signs in once,
the cookie is out of the page's reach, and signing out ends the session."""

from __future__ import annotations

from playwright.sync_api import expect

from countersign.identity.sessions import mint_signin_token
from tests.browser.pages import new_context, ready


def test_link_is_scanner_safe_and_single_use(live, tenant, browser, watch):
    _, server = live
    token = mint_signin_token(tenant.store.sessions, tenant.person)
    link = f"{server.origin}/signin#token={token}"

    # A scanner (or a preview) opens the link: it sees a button and nothing is spent.
    scanner = new_context(browser, watch)
    try:
        p = scanner.new_page()
        p.goto(link)
        ready(p, "signin")
        expect(p.get_by_role("button", name="Sign in")).to_be_visible()
        assert p.url == f"{server.origin}/signin"
        assert scanner.cookies() == []
    finally:
        scanner.close()
    assert not any(token in u for u in watch.urls), "the token left the fragment"

    # The person opens the same link and presses the button: signed in.
    person = new_context(browser, watch)
    try:
        p = person.new_page()
        p.goto(link)
        ready(p, "signin")
        p.get_by_role("button", name="Sign in").click()
        ready(p, "confirm")
        expect(p.get_by_role("heading", name="Waiting for you")).to_be_visible()
        (cookie,) = person.cookies()
        assert cookie["name"] == "__Host-cs_session"
        assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Lax" and cookie["path"] == "/"
        assert "cs_session" not in p.evaluate("() => document.cookie")
        assert p.evaluate("() => history.length") <= 2  # no entry with the token was added

        # The link works once: pressing it again (another device) is refused with a way forward.
        other = new_context(browser, watch)
        try:
            q = other.new_page()
            q.goto(link)
            ready(q, "signin")
            with q.expect_response("**/api/signin/complete") as answer:
                q.get_by_role("button", name="Sign in").click()
            assert answer.value.status == 400
            expect(q.locator(".error")).to_contain_text("invalid, expired or already used")
            expect(q.get_by_label("Your email")).to_be_visible()
            assert other.cookies() == []
        finally:
            other.close()

        # Sign out ends the session on the server, not only in this tab.
        p.goto(f"{server.origin}/settings")
        ready(p, "settings")
        with p.expect_response("**/api/signout") as out:
            p.get_by_role("button", name="Sign out").click()
        assert out.value.status == 204
        ready(p, "signin")
        assert p.url == f"{server.origin}/signin"
        assert p.evaluate("() => fetch('/api/session').then(r => r.status)") == 401
        p.goto(f"{server.origin}/confirm")
        ready(p, "signin")
        expect(p.locator("article.card")).to_have_count(0)
    finally:
        person.close()
    assert watch.dialogs == [] and watch.errors == [], (watch.dialogs, watch.errors)


def test_bogus_token_and_next_page(live, tenant, page):
    _, server = live
    page.goto(f"{server.origin}/signin#token=not-a-real-token")
    ready(page, "signin")
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator(".error")).to_contain_text("invalid, expired or already used")

    # Signed out on /history: after signing in (in this browser) the person lands back there.
    page.goto(f"{server.origin}/history")
    ready(page, "signin")
    expect(page.get_by_role("heading", name="Sign in to answer requests")).to_be_visible()
    token = mint_signin_token(tenant.store.sessions, tenant.person)
    page.goto(f"{server.origin}/signin#token={token}")
    ready(page, "signin")
    page.get_by_role("button", name="Sign in").click()
    ready(page, "history")
    assert page.url == f"{server.origin}/history"
