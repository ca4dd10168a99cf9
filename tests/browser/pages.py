"""Helpers for the browser tests and bench/page.py: launching Debian's chromium the one allowed
way, driving the agent's side over MCP from sync code, and the person's side on the page.

Rules: launch Debian's chromium by path (never `playwright
install`), always with the host-resolver rule so the browser makes no DNS lookup and opens only
loopback connections, and never pass our own --disable-features (it would replace Playwright's).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from dataclasses import dataclass, field
from email import policy
from email.parser import BytesParser
from pathlib import Path
from urllib.parse import urlsplit

from countersign.identity.sessions import mint_signin_token

CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]
INSTALL_HINT = (
    "Debian's chromium is needed for the browser tests and was not found at {path!r}. Install it with\n"
    "    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium\n"
    "(scripts/test does this for you), or point CHROMIUM_PATH at a chromium binary. "
    "Do not run `playwright install`."
)
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


class ChromiumMissing(RuntimeError):
    pass


def chromium_path() -> str:
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"


def launch(playwright):
    """Debian's chromium with the project's arguments; :class:`ChromiumMissing` says how to install it."""
    path = chromium_path()
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise ChromiumMissing(INSTALL_HINT.format(path=path))
    return playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)


@dataclass
class Watch:
    """What the pages of a context did that a test may want to assert on."""

    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # uncaught page errors, console errors (CSP, ...)
    origins: set[str] = field(default_factory=set)
    urls: list[str] = field(default_factory=list)

    def console(self, msg) -> None:
        # An API answering 401/403/409 is logged by chromium as "Failed to load resource"; the
        # tests check those statuses themselves. Everything else logged as an error is a problem.
        if msg.type == "error" and not msg.text.startswith("Failed to load resource"):
            self.errors.append(f"console: {msg.text}")


def new_context(browser, watch: Watch | None = None, **options):
    options.setdefault("viewport", {"width": 800, "height": 900})
    ctx = browser.new_context(**options)
    ctx.set_default_timeout(10_000)
    if watch is not None:
        def on_page(page):
            def on_dialog(dialog):
                watch.dialogs.append(f"{dialog.type}: {dialog.message}")
                dialog.dismiss()

            page.on("dialog", on_dialog)
            page.on("pageerror", lambda exc: watch.errors.append(f"pageerror: {exc}"))
            page.on("console", lambda msg: watch.console(msg))
            page.on("request", lambda req: (watch.origins.add(origin_of(req.url)), watch.urls.append(req.url)))

        ctx.on("page", on_page)
    return ctx


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https", "ws", "wss") else parts.scheme + ":"

# -- the agent's side, from a sync test ------------------------------------------------------------


def run_async(fn, *args):
    """Run ``await fn(*args)`` to completion on a fresh event loop in a worker thread (the sync
    Playwright API owns this thread's loop)."""
    box: dict = {}

    def target():
        try:
            box["value"] = asyncio.run(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(60)
    if thread.is_alive():
        raise TimeoutError(f"{fn.__name__} did not finish in 60 s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def call_tools(tenant, calls: list[tuple[str, dict]], token: str | None = None) -> list[dict]:
    """Call MCP tools as the tenant's agent (or the connection of ``token``), in one session, in
    order; the structured results."""
    from tests.support.harness import mcp_client

    async def go():
        out = []
        async with mcp_client(tenant.url, token or tenant.token) as client:
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                out.append(result.structured_content or {"isError": result.is_error, "content": result.content})
        return out

    return run_async(go)


def call_tool(tenant, name: str, arguments: dict, token: str | None = None) -> dict:
    return call_tools(tenant, [(name, arguments)], token)[0]


def file_cards(
    tenant, edits: list[tuple[str, str]], tool: str = "publish_note", token: str | None = None
) -> list[dict]:
    """File one held card per (note_id, text); each held reply must be pending."""
    replies = call_tools(tenant, [(tool, {"note_id": nid, "text": text}) for nid, text in edits], token)
    for reply in replies:
        assert reply.get("status") == "pending", reply
    return replies


def status_of(tenant, card_id: str) -> dict:
    return call_tool(tenant, "get_confirmation_status", {"confirmation_id": card_id})


# -- the person's side -----------------------------------------------------------------------------


def outbox_dir(runtime) -> Path:
    return runtime.settings.data_dir / "outbox"


def signin_link_from_outbox(runtime, email: str, seen: set[Path] | None = None) -> str:
    """The sign-in link of the newest sign-in email to ``email`` in the live server's outbox
    (other emails, such as card notifications, land there too and are passed over)."""
    folder = outbox_dir(runtime)
    links = []
    for path in sorted(folder.glob("*.eml"), key=lambda p: p.stat().st_mtime_ns):
        if seen is not None and path in seen:
            continue
        message = BytesParser(policy=policy.default).parsebytes(path.read_bytes())
        if str(message["To"]).strip().lower() != email.lower():
            continue
        text = message.get_body(preferencelist=("plain",)).get_content()
        found = [w for w in text.split() if "/signin#token=" in w]
        if found:
            assert len(found) == 1, text
            links.append(found[0])
    assert links, f"no sign-in email to {email} in {folder}"
    return links[-1]


def ready(page, view: str | None = None) -> None:
    """Wait until the page is interactive (and, with ``view``, showing that view)."""
    # Locator assertions, not wait_for_function: the page's CSP (rightly) forbids eval.
    from playwright.sync_api import expect

    expect(page.locator("body")).to_have_attribute("data-ready", "1")
    if view is not None:
        expect(page.locator("body")).to_have_attribute("data-view", view)


def sign_in(page, tenant, person=None) -> None:
    """Sign in as the tenant's person through the page's own flow (link → button → POST).

    The link is minted directly rather than emailed so that tests do not spend the sign-in
    request rate limit of 127.0.0.1; test_signin_flow covers the email round trip.
    """
    person = person or tenant.person
    token = mint_signin_token(tenant.store.sessions, person)
    page.goto(f"{tenant.origin}/signin#token={token}")
    ready(page, "signin")
    with page.expect_response("**/api/signin/complete") as answer:
        page.get_by_role("button", name="Sign in").click()
    assert answer.value.status == 200, answer.value.text()
    from playwright.sync_api import expect

    # Lands on /confirm, or on the page the person was sent away from to sign in.
    expect(page.locator("body")).not_to_have_attribute("data-view", "signin")


def card(page, card_id: str):
    return page.locator(f'article.card[data-card-id="{card_id}"]')


def shot(page, name: str, full_page: bool = True) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def wait_for_signin_link(page, runtime, email: str, seen: set[Path] | None = None) -> str:
    """The sign-in link emailed to ``email``: the API sends it after answering (the same answer for
    unknown addresses), so poll the outbox briefly."""
    for _ in range(100):
        try:
            return signin_link_from_outbox(runtime, email, seen)
        except (AssertionError, FileNotFoundError):
            page.wait_for_timeout(50)
    return signin_link_from_outbox(runtime, email, seen)
