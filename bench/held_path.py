"""Held-path bench: the steps a held call takes through the package, from the MCP tool call to
the store's commit, as a reader following it would (docs/architecture.md lists them).

    .venv/bin/python bench/held_path.py [yes|card] [--quiet]

``yes`` (the default): a 2026-07-28 client's retry that brings the person's yes, from
``surfaces/mcp/actions.py`` (``run``, the tool's handler) to ``commit_card`` of the SQLite store,
which commits the card filed already decided with the effect. ``card``: a client that cannot ask,
from the same handler to ``file_card``, which files the hosted card.

A step is a call of a function of the package. What the action itself runs (its toolset, the
toolkit a toolset imports) and the pure helpers of ``core/`` are the action's work, not the path,
and are left out with everything they call; so are comprehensions (part of the step that runs
them) and the event loop's other work while the call waits on a worker thread. Each step is
printed as ``file:function``, indented by depth; then the count of steps, of files, of returns,
and how many times each file is entered (called into from another file). It prints; it asserts
nothing (``tests/bench/test_benches_run.py`` checks the counts against the issue's goal).
"""

from __future__ import annotations

import asyncio
import collections
import dis
import os
import sys
import tempfile
import threading
from pathlib import Path

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)

import countersign

ROOT = Path(__file__).resolve().parents[1]

PACKAGE = str(Path(countersign.__file__).parent) + os.sep
SUPPORT = str(ROOT / "tests" / "support") + os.sep  # the sample toolset the bench files
ACTION_WORK = ("core/", "toolkit/", "toolsets/")
LAYERS_IN_FRONT = ("surfaces/http/", "surfaces/local/")  # body limits, origins: before the tool's handler
GENERATOR = 0x20 | 0x80 | 0x100 | 0x200  # generator, coroutine, iterable coroutine, async generator
YIELDS = {dis.opmap["YIELD_VALUE"]}
HANDLER = ("surfaces/mcp/actions.py", "run")
COMMITS = {"yes": "commit_card", "card": "file_card"}


class Path_:
    """The trace of one call: steps between the handler's start and the store's commit."""

    def __init__(self, scenario: str, armed_at: int):
        self.commit = COMMITS[scenario]
        self.armed_at = armed_at  # the handler's nth run is traced (the retry, for a yes)
        self.runs = 0
        self.events: list[tuple[str, str, str]] = []
        self.on = self.done = False
        self.loop_thread: int | None = None
        self.hopped = False
        self.suspended: set[int] = set()  # coroutine frames seen: a resume is no new step
        self.left_out = threading.local()
        self.lock = threading.Lock()

    def __call__(self, frame, event, arg):
        if event not in ("call", "return"):
            return
        path = frame.f_code.co_filename
        toolset = path.startswith(SUPPORT)
        if not path.startswith(PACKAGE) and not toolset:
            return
        where = "tests/support/" + path[len(SUPPORT):] if toolset else path[len(PACKAGE):]
        name, generator = frame.f_code.co_name, frame.f_code.co_flags & GENERATOR
        with self.lock:
            if self.done:
                return
            if generator and event == "call" and id(frame) in self.suspended:
                return  # resumed
            if generator and event == "return" and frame.f_code.co_code[frame.f_lasti] in YIELDS:
                self.suspended.add(id(frame))
                return  # suspended, not returned
            if generator and event == "return":
                self.suspended.discard(id(frame))
            if event == "call" and (where, name) == HANDLER:
                self.runs += 1
                if self.runs == self.armed_at:
                    self.on, self.loop_thread = True, threading.get_ident()
            if not self.on:
                return
            thread = threading.get_ident()
            if thread != self.loop_thread:
                self.hopped = True
            elif self.hopped:
                return  # the loop's other work while the call waits on a worker thread
            if name.startswith("<") and name != "<lambda>":
                return  # a comprehension: part of the step that runs it
            if generator and where.startswith(LAYERS_IN_FRONT):
                return
            if not generator:
                depth = getattr(self.left_out, "depth", 0)
                if event == "call" and (depth or toolset or where.startswith(ACTION_WORK + LAYERS_IN_FRONT)):
                    self.left_out.depth = depth + 1
                    return
                if event == "return" and depth:
                    self.left_out.depth = depth - 1
                    return
            self.events.append((event, where, name))
            if event == "call" and where.startswith("store/sqlite/") and name == self.commit:
                self.done = True


async def _serve(scenario: str) -> None:
    import httpx2

    from countersign import settings as settings_mod
    from countersign.identity import accounts
    from countersign.runtime import build
    from countersign.surfaces.local.app import build_local
    from tests.support.harness import accept, mcp_client
    from tests.support.sample_toolset import TOOLSET as NOTES, seed_notes

    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_mod.load({"COUNTERSIGN_DATA": tmp, "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com"})
        runtime = build(settings, toolsets=[NOTES])
        app, _ = build_local(settings, runtime=runtime)
        workspace, person = accounts.create_workspace(runtime.store.workspaces, "Acme", "owner@example.com")
        token = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, workspace.id,
                                           person.id, "bench").token
        seed_notes(runtime.store, workspace.id)
        transport = httpx2.ASGITransport(app=app)
        async with app.router.lifespan_context(app), mcp_client(
                "https://confirm.example.com/mcp", token, transport=transport,
                answer=accept() if scenario == "yes" else None) as client:
            result = await client.call_tool("edit_note", {"note_id": "n1", "text": "new text"})
        runtime.store.close()
    want = "completed" if scenario == "yes" else "pending"
    if result.structured_content.get("status") != want:
        raise SystemExit(f"the call ended {result.structured_content.get('status')}, not {want}")


def trace(scenario: str) -> Path_:
    path = Path_(scenario, armed_at=2 if scenario == "yes" else 1)
    threading.setprofile(path)
    sys.setprofile(path)
    try:
        asyncio.run(_serve(scenario))
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return path


def report(path: Path_, quiet: bool = False) -> dict:
    steps = [e for e in path.events if e[0] == "call"]
    entered: collections.Counter[str] = collections.Counter()
    stack: list[str] = []
    for event, where, name in path.events:
        if event == "call":
            if not stack or stack[-1] != where:
                entered[where] += 1
            if not quiet:
                print(f"{'  ' * len(stack)}{where}:{name}")
            stack.append(where)
        elif stack:
            stack.pop()
    returns = sum(1 for e in path.events if e[0] == "return")
    print(f"steps: {len(steps)}; files: {len(entered)}; returns: {returns}")
    print("entered: " + ", ".join(f"{where} {n}" for where, n in entered.most_common()))
    return {"steps": len(steps), "files": len(entered), "entered": dict(entered)}


def main() -> None:
    scenario = next((a for a in sys.argv[1:] if not a.startswith("-")), "yes")
    if scenario not in COMMITS:
        raise SystemExit(f"scenario: one of {', '.join(COMMITS)}")
    print(f"the held path ({scenario}): from {':'.join(HANDLER)} to the store's {COMMITS[scenario]}")
    report(trace(scenario), quiet="--quiet" in sys.argv)


if __name__ == "__main__":
    main()
