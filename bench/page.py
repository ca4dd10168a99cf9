"""Page weight of the confirm page: the pending list with 10 cards and with 50, and one card.

Starts its own local server (countersign's local app on a temporary data folder, notes toolset),
files cards through MCP (10, then 40 more), signs in once, then loads each page in headless Debian
chromium (the project's launch arguments: no DNS, loopback only). For each page: one warm-up
navigation, then the median of 3 fresh contexts (empty cache, session cookie only) of

  bytes    sum of CDP Network.loadingFinished encodedDataLength (headers + body as sent)
  requests number of requests the page made
  origins  the origins it contacted
  ready    ms from navigation start to performance.mark('app-ready')

It asserts nothing. Run: .venv/bin/python bench/page.py [--cards N [N ...]] [--runs N] (the
pending list is measured at each number of cards given, 10 and 50 by default).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
import bench_paths  # noqa: E402, F401  (the project first on sys.path, bench/ last)

from countersign import settings as settings_mod  # noqa: E402
from countersign.identity import accounts  # noqa: E402
from countersign.identity.sessions import mint_signin_token  # noqa: E402
from countersign.runtime import build  # noqa: E402
from countersign.store.docs import DocWrite  # noqa: E402
from countersign.surfaces.local.app import build_local  # noqa: E402
from tests.browser.pages import ChromiumMissing, launch, origin_of  # noqa: E402
from tests.support.harness import mcp_client  # noqa: E402
from tests.support.live import LiveServer  # noqa: E402
from tests.support.sample_toolset import TOOLSET as NOTES  # noqa: E402

BUDGET = 30 * 1024


def start(data: Path):
    """(runtime, server, person, the agent's token): a local server with one workspace, no cards yet."""
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(data)})
    runtime = build(settings, toolsets=[NOTES])
    app, _ = build_local(settings, runtime=runtime)
    server = LiveServer(app).start()
    runtime.desk.settings = dataclasses.replace(settings, public_url=server.origin)
    workspace, person = accounts.create_workspace(runtime.store, "Bench workspace", "bench@example.com", "Bea Bench")
    token = accounts.create_connection(runtime.store, workspace.id, person.id, "Claude on laptop").token
    return runtime, server, person, token


def file_cards(runtime, server, person, token: str, first: int, last: int) -> list[str]:
    """Cards ``first``..``last`` (one note each, published through MCP): their ids."""
    runtime.store.docs.write_docs(
        person.workspace_id,
        [
            DocWrite(
                "note",
                f"n{i}",
                {"title": f"Supplier payment #{i:03d}", "text": f"Pay Acme Wholesale invoice {i:03d}"},
                0,
            )
            for i in range(first, last + 1)
        ],
    )

    async def file() -> list[str]:
        ids = []
        async with mcp_client(f"{server.origin}/mcp", token) as client:
            for i in range(first, last + 1):
                text = (f"Pay Acme Wholesale Ltd. invoice INV-2026-{i:04d}\n1,250.00 from Checking (…4821)\n"
                        f"Memo: October stock, order #{7000 + i}")
                result = await client.call_tool("publish_note", {"note_id": f"n{i}", "text": text})
                ids.append(result.structured_content["confirmationId"])
        return ids

    with ThreadPoolExecutor(1) as thread:  # beside playwright's sync API, whose loop runs in this thread
        return thread.submit(asyncio.run, file()).result()


def measure(browser, url: str, state: dict) -> dict:
    from playwright.sync_api import expect

    ctx = browser.new_context(storage_state=state, viewport={"width": 360, "height": 740})
    try:
        page = ctx.new_page()
        cdp = ctx.new_cdp_session(page)
        cdp.send("Network.enable")
        urls: dict[str, str] = {}
        wire: dict[str, int] = {}
        cdp.on("Network.requestWillBeSent", lambda e: urls.__setitem__(e["requestId"], e["request"]["url"]))
        cdp.on("Network.loadingFinished", lambda e: wire.__setitem__(e["requestId"], e["encodedDataLength"]))
        started = time.perf_counter()
        page.goto(url)
        expect(page.locator("body")).to_have_attribute("data-ready", "1")
        page.wait_for_load_state("networkidle")
        wall = (time.perf_counter() - started) * 1000
        ready = page.evaluate(
            "() => { const m = performance.getEntriesByName('app-ready')[0]; return m ? m.startTime : null; }"
        )
        cards = page.locator("article.card").count()
        timing = page.evaluate("""() => {
            const nav = performance.getEntriesByType('navigation')[0];
            const res = performance.getEntriesByType('resource')
                .map(e => [new URL(e.name).pathname, e.startTime, e.responseEnd]);
            return {dcl: nav.domContentLoadedEventEnd, html: nav.responseEnd, res};
        }""")
        return {
            "bytes": sum(wire.values()),
            "requests": len(urls),
            "origins": sorted({origin_of(u) for u in urls.values()}),
            "ready": ready,
            "wall": wall,
            "dcl": timing["dcl"],
            "html": timing["html"],
            "res": timing["res"],
            "cards": cards,
            "by_url": sorted(
                ((urls[r].split("/", 3)[-1], n) for r, n in wire.items() if r in urls), key=lambda x: -x[1]
            ),
        }
    finally:
        ctx.close()


def report(name: str, runs: list[dict]) -> None:
    med = lambda key: statistics.median(r[key] for r in runs if r[key] is not None)  # noqa: E731
    last = runs[-1]
    origins = sorted({o for r in runs for o in r["origins"]})
    print(f"\n{name}")
    print(f"  cards shown     {last['cards']}")
    print(f"  bytes           {med('bytes'):,.0f} B  ({med('bytes') / 1024:.1f} KiB; budget {BUDGET // 1024} KiB: "
          f"{'under' if med('bytes') < BUDGET else 'OVER'})")
    print(f"  requests        {med('requests'):.0f}")
    print(f"  origins         {len(origins)}: {', '.join(origins)}")
    each = ", ".join(f"{r['ready']:.0f}" for r in runs if r["ready"] is not None)
    print(f"  app-ready       {med('ready'):.0f} ms   (runs: {each})")
    print(f"  html / DCL      {med('html'):.0f} / {med('dcl'):.0f} ms")
    print(f"  until idle      {med('wall'):.0f} ms wall")
    print("  timeline of the last run (start → end, ms):")
    for path, begin, end in last["res"]:
        print(f"    {begin:>6.0f} → {end:>6.0f}  {path}")
    print("  bytes per request of the last run:")
    for path, n in last["by_url"]:
        print(f"    {n:>7,} B  /{path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, nargs="+", default=[10, 50])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    logging.disable(logging.INFO)  # the server's and the MCP client's request logs

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="countersign-bench-") as tmp:
        runtime, server, person, token = start(Path(tmp))
        try:
            with sync_playwright() as p:
                try:
                    browser = launch(p)
                except ChromiumMissing as exc:
                    print(exc, file=sys.stderr)
                    return 2
                try:
                    # Sign in once through the page (link → button), keep only the session cookie.
                    login = browser.new_context()
                    page = login.new_page()
                    page.goto(f"{server.origin}/signin#token={mint_signin_token(runtime.store, person)}")
                    page.get_by_role("button", name="Sign in").click()
                    page.wait_for_url(f"{server.origin}/confirm")
                    state = login.storage_state()
                    login.close()

                    print(f"server {server.origin}, chromium {browser.version}, "
                          f"median of {args.runs} fresh contexts after a warm-up")
                    card_ids: list[str] = []
                    for count in sorted(set(args.cards)):
                        card_ids += file_cards(runtime, server, person, token, len(card_ids) + 1, count)
                        pages = [(f"pending list (/confirm, {count} cards)", f"{server.origin}/confirm")]
                        if count == min(args.cards):
                            pages.append(("one card (/confirm?card=…)", f"{server.origin}/confirm?card={card_ids[0]}"))
                        for name, url in pages:
                            measure(browser, url, state)  # warm-up
                            report(name, [measure(browser, url, state) for _ in range(args.runs)])
                finally:
                    browser.close()
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
