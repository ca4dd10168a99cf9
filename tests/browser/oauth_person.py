"""The person's side of connecting an agent with OAuth, in chromium: the authorize URL an MCP
client opened, sign-in by the email link from the outbox, the consent view, Allow or Deny, and
the client's redirect caught as the browser goes there (nothing of ours is served at it)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.pages import outbox_dir, ready, wait_for_signin_link


def sign_in_by_email(page, runtime, email: str) -> None:
    """On a page showing the sign-in form: ask for a link, open it from the outbox, press Sign in."""
    folder = outbox_dir(runtime)
    seen = set(folder.glob("*.eml")) if folder.is_dir() else set()
    page.get_by_label("Your email").fill(email)
    with page.expect_response("**/api/signin/request") as asked:
        page.get_by_role("button", name="Email me a sign-in link").click()
    assert asked.value.status == 202
    link = wait_for_signin_link(page, runtime, email, seen)
    page.goto(link)
    ready(page, "signin")
    with page.expect_response("**/api/signin/complete") as done:
        page.get_by_role("button", name="Sign in").click()
    assert done.value.status == 200


def open_consent(page, authorize_url: str, runtime=None, email: str | None = None) -> None:
    """Open the client's authorize URL; sign in by email first when the page asks (``email``)."""
    page.goto(authorize_url)
    ready(page)
    if page.locator("body").get_attribute("data-view") == "signin":
        assert email is not None, "the page asked to sign in"
        expect(page.get_by_role("heading", name="Sign in to connect an agent")).to_be_visible()
        sign_in_by_email(page, runtime, email)
    ready(page, "consent")
    assert "code=" not in page.url


def answer_consent(page, redirect_prefix: str, allow: bool = True) -> str:
    """Press Allow (or Deny); the URL the browser is then sent to (the client's redirect URI)."""
    caught: list[str] = []

    def catch(route):
        caught.append(route.request.url)
        route.fulfill(status=200, content_type="text/plain", body="You can close this window.")

    page.route(redirect_prefix + "**", catch)
    try:
        with page.expect_response(redirect_prefix + "**"):
            page.get_by_role("button", name="Allow" if allow else "Deny").click()
    finally:
        page.unroute(redirect_prefix + "**")
    [url] = caught
    return url
