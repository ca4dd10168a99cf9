"""MCP call latency and throughput, with real toolsets and the notifier on: prints tables, asserts
nothing. Every figure is a ratio against a baseline measured in the same run, interleaved.

Latency, the median of ``--n`` rounds (three warm-up rounds discarded), each round making every
call below once *every way*, the ways in a rotating order:

  - every no-argument read of the ``budget`` and ``mail`` toolsets (the baseline: the *lightest*
    read of the same toolset, measured the same way);
  - a held call → card: ``set_category_budget`` (budget, class client, from a client that declares
    no elicitation) and ``buy_credits`` (mail, class always);
  - a 2026-07-28 question + answer: ``set_category_budget`` from a client that answers yes
    (the question, then the retry carrying the answer: applied).

Each way makes its calls of a round in an order of its own, shuffled (seeded by the round), and
before each measured call one read it does not measure (``SETTLE``; on the bare server, a
``ping``), so every measured call follows a light read, and each call follows each other step as
often: on this VM a call right after a commit with fsync, or after a heavy read, is slower, and
so is the first call of a way's turn; in a fixed order each call paid for its place. Before the
first round, each data folder gets a full page of operations, so ``list_operations`` reads the
same page in every round.

The ways: the real ``mcp`` SDK client over real HTTP to a real server on 127.0.0.1 (the local
server as ``countersign serve`` runs it, in its own process: the notifier delivers inline after
filing, into ``DATA/outbox``, the file mailer; with the default 15-minute email interval, so after
the first card the email is rate limited, as for an agent filing cards in a row); raw HTTP (plain
JSON-RPC posts with httpx, shaped like the SDK client's own, to the same server); the SDK client
in process (the same local app under httpx's ASGI transport); and the SDK client through the
Mangum handler fed API Gateway REST API (1.0) events (the Lambda shape: delivery is the table stream's job
there, not the call's). The real server and the in-process app each have a data folder of their
own, seeded alike, so each is the only server emailing its person, as a deployment is. Once every
app in this process is built, their heap is frozen, as ``countersign serve`` and each Lambda
function freeze theirs (``countersign.platform.heap``), so a garbage collection here walks what the
requests make, not what the apps and the client built to start.

The floors, on a bare ``mcp`` SDK server (real HTTP, in process, stateless), each measured as one
more way of the same latency rounds, interleaved with ours (so a floor and the calls measured
against it share the machine's minutes; measured apart, after the rounds, a floor moved by up to
a third between runs and the ratios with it): for the question + answer, its two rounds of a
tool that asks and then answers the retry, with no work, ÷ its trivial ``ping`` — no server can
answer a question in two rounds for less than that ratio; for a held call, one tool call whose
only work is one durable write (a SQLite commit with fsync, as the card's filing makes) ÷ the
same ping — what a write that is on disk before the reply costs; and the contract's least held
call (``hold``, ``bench/mcp_contract.py``: the preview's documents read, a ticket signed, the
card filed with its claim, audit entry and notification in one durable commit, the held reply).

Then, for the SDK client's ways, a held call and a question ÷ their floor here
(``bench/mcp_floors.py``): the lightest read plus what one durable commit adds on the bare
server, and for the question a second read plus what the bare server's question adds over two
pings. What is above 1.0 there is the gate's own work and the contract's: beside it, the least
held call ÷ that floor (the contract's part, which no server keeping it avoids) and ours ÷ that
least (the rest).

Throughput and p50/p99 of the lightest budget read of the run (by its latency summed over every
way; it prints which: ``list_accounts`` in every run so far with the shuffled order) at N = 1, 8 and
32 concurrent agents, against
a bare ``mcp`` SDK server with one trivial tool on the same transport, in the same shape (medians
of five interleaved rounds): over real HTTP (both servers in their own process), in process
(local shape) and in process (Lambda shape). Then head-of-line (``bench/mcp_head_of_line.py``).

    .venv/bin/python bench/mcp_calls.py [--n 30] [--ledger 50000 | 0 to skip head-of-line]
                                        [--rounds 5] [--window 480]

``--rounds`` and ``--window`` set the throughput rounds per cell and the calls in each (at least
30 per agent, or the whole window when it is smaller). ``tests/bench`` runs this bench (and three
others) that small to check it still runs end to end; its figures then mean nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import logging
import random
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)
import httpx2
from mcp_floors import BareWay, floors_of, print_over_floors
from mcp_servers import (
    BareStateless,
    Capture,
    RawClient,
    bare_local_app,
    free_port,
    server_process,
    settings_env,
    structured,
)

from countersign import settings as settings_mod
from countersign.identity import accounts
from countersign.platform import heap
from countersign.runtime import build
from countersign.surfaces.local.app import build_local
from countersign.surfaces.mcp.server import build_server
from countersign.surfaces.mcp.transport import lambda_app, lambda_handler
from countersign.toolkit import ActionContext
from tests.support.apigw import LambdaInstance, LambdaTransport
from tests.support.harness import accept, mcp_client

READS = {
    "budget": ("list_accounts", "list_categories", "get_month", "list_transactions", "list_operations"),
    "mail": ("get_credits", "list_campaigns", "list_contacts", "list_lists", "list_designs"),
}
YES = {"action": "accept", "content": {"confirm": True}}
# Called, unmeasured, before every measured call of the latency rounds (and the floors' ping before
# theirs): on this VM a call right after a commit with fsync takes 0.2-0.4 ms longer, whoever made
# the commit, and one right after a heavy read 0.1-0.3 ms, so without it each call paid for what
# its round put before it (the first read of each round, after the last held call, most) and the
# others did not (docs/benchmarks.md, "What comes before a call").
SETTLE = "list_lists"
WARMUP = 3
# A full page of list_operations before the first round: each answered question adds an operation,
# so a log filled by the rounds themselves made list_operations light in the first rounds and
# heavier after (a 9 KB page of 20), and it was taken for the lightest read for rounds it was not.
OPERATIONS_PAGE = 20


def seed(data: Path, port: int) -> str:
    """A workspace with the budget and mail demo data; the agent's connection token."""
    runtime = build(settings_mod.load(settings_env(data, port)))
    workspace, person = accounts.create_workspace(runtime.store.workspaces, "Bench", "bench@example.com", "Bea Bench")
    token = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, workspace.id, person.id,
                                       "bench").token
    ctx = ActionContext.reading(runtime.store.docs, runtime.store.workspaces, workspace, person, None,
                                runtime.desk.now())
    for toolset in runtime.registry.toolsets:
        if toolset.demo is not None:
            toolset.demo(runtime.store.docs, ctx)
    return token


class OurWay:
    """One way our server is called; a round makes each of :meth:`steps` once, each after :meth:`settle`."""

    async def read(self, tool: str) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    async def held(self, tool: str, arguments: dict) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    async def ask(self, tool: str, arguments: dict) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    async def settle(self) -> None:
        await self.read(SETTLE)  # not measured: what comes before each measured call is a read

    def steps(self, cats: list[str], k: int) -> list[tuple[str, Any]]:
        steps = [(f"read {t}", self.read(t)) for toolset in READS.values() for t in toolset]
        held, asked = ({"category_id": cats[c], "month": "current", "amount": f"{base + k}.00"}
                       for c, base in ((0, 1000), (1, 2000)))
        return steps + [
            ("held set_category_budget", self.held("set_category_budget", held)),
            ("ask + answer set_category_budget", self.ask("set_category_budget", asked)),
            ("held buy_credits", self.held("buy_credits", {"credits": 10 + k})),
        ]


class SdkWay(OurWay):
    """The real ``mcp`` SDK client: one that declares no elicitation, one that answers yes."""

    def __init__(self, plain, asking):
        self.plain, self.asking = plain, asking

    async def read(self, tool: str) -> None:
        result = await self.plain.call_tool(tool, {})
        assert not result.is_error, result

    async def held(self, tool: str, arguments: dict) -> None:
        result = await self.plain.call_tool(tool, arguments)
        assert (result.structured_content or {}).get("status") == "pending", result

    async def ask(self, tool: str, arguments: dict) -> None:
        result = await self.asking.call_tool(tool, arguments)
        assert (result.structured_content or {}).get("status") == "completed", result


class RawWay(OurWay):
    def __init__(self, raw: RawClient):
        self.raw = raw

    async def read(self, tool: str) -> None:
        result = await self.raw.call(tool, {})
        assert not result.get("isError"), result

    async def held(self, tool: str, arguments: dict) -> None:
        assert structured(await self.raw.call(tool, arguments)).get("status") == "pending"

    async def ask(self, tool: str, arguments: dict) -> None:
        result = await self.raw.ask_and_answer(tool, arguments, YES)
        assert structured(result).get("status") == "completed", result


async def sdk_way(stack: contextlib.AsyncExitStack, url: str, token: str, transport=None) -> SdkWay:
    plain = await stack.enter_async_context(mcp_client(url, token, transport=transport))
    asking = await stack.enter_async_context(mcp_client(url, token, answer=accept(), transport=transport))
    return SdkWay(plain, asking)


async def categories(way: SdkWay) -> list[str]:
    listed = (await way.plain.call_tool("list_categories", {})).structured_content
    return [c["id"] for g in listed["groups"] if not g["internal"] for c in g["categories"]]


async def fill_operations(way: SdkWay, cats: list[str]) -> None:
    """A full page of list_operations in the way's data folder (:data:`OPERATIONS_PAGE`)."""
    for k in range(OPERATIONS_PAGE):
        await way.ask("set_category_budget", {"category_id": cats[2], "month": "current", "amount": f"{3000 + k}.00"})


Times = dict[str, dict[str, list[float]]]  # way → call → seconds, one per measured round


async def latency(ways: dict[str, OurWay | BareWay], cats: list[str], n: int) -> Times:
    """Every way's calls, ``n`` rounds (after :data:`WARMUP`), the ways in a rotating order: ours
    and the bare servers' that are their floors (:class:`mcp_floors.BareWay`), so a floor is
    measured in the same minutes as the calls it is the floor of."""
    times: dict[str, dict[str, list[float]]] = {w: defaultdict(list) for w in ways}
    count = itertools.count()
    names = list(ways)
    for i in range(n + WARMUP):
        for name in names[i % len(names):] + names[:i % len(names)]:
            way, k = ways[name], next(count)
            steps = way.steps(cats, k) if isinstance(way, OurWay) else way.steps()
            # in an order of its own each round: in a fixed order the first read of each way's turn
            # paid for the ways before it (0.5 ms more) and the question, after the held call of the
            # same tool, ran warm (docs/benchmarks.md, "What comes before a call")
            random.Random(k).shuffle(steps)
            for label, step in steps:
                await way.settle()
                t0 = time.perf_counter()
                await step
                if i >= WARMUP:
                    times[name][label].append(time.perf_counter() - t0)
    return times


def medians(times: Times) -> dict[str, dict[str, float]]:
    return {w: {label: statistics.median(v) * 1000 for label, v in t.items()} for w, t in times.items()}


def lightest(medians: dict[str, float], toolset: str) -> tuple[str, float]:
    return min(((t, medians[f"read {t}"]) for t in READS[toolset]), key=lambda p: p[1])


def ratio(times: dict[str, list[float]], call: str, read: str) -> float:
    """The median over rounds of ``call`` ÷ ``read`` measured in the same round, seconds apart (on a
    busy machine the load moves between rounds; this pairs each call with its own baseline)."""
    return statistics.median(c / r for c, r in zip(times[call], times[f"read {read}"], strict=True))


def print_latency(times: Times, n: int) -> dict[str, dict[str, float]]:
    results = medians(times)
    print(f"MCP call latency, median of {n} interleaved rounds (ms); ratio = median over rounds of the call ÷ "
          "the lightest read of the same toolset (by median), the same way, the same round")
    print(f"{'way':<34}{'budget read':>22}{'held → card':>18}{'2026 ask + answer':>20}{'mail read':>20}"
          f"{'held buy_credits':>20}")
    for way, m in results.items():
        (bt, b), (mt, mr) = lightest(m, "budget"), lightest(m, "mail")
        held, asked = m["held set_category_budget"], m["ask + answer set_category_budget"]
        bought = m["held buy_credits"]
        t = times[way]
        print(f"{way:<34}{bt:>15}{b:>7.2f}{held:>10.2f}{ratio(t, 'held set_category_budget', bt):>7.2f}x"
              f"{asked:>12.2f}{ratio(t, 'ask + answer set_category_budget', bt):>7.2f}x"
              f"{mt:>13}{mr:>7.2f}{bought:>12.2f}{ratio(t, 'held buy_credits', mt):>7.2f}x")
    print("\nevery read (median ms)")
    reads = [t for toolset in READS.values() for t in toolset]
    print(f"{'way':<34}" + "".join(f"{t:>18}" for t in reads))
    for way, m in results.items():
        print(f"{way:<34}" + "".join(f"{m[f'read {t}']:>18.2f}" for t in reads))
    return results


async def _throughput(url: str, token: str, tool: str, agents: int, calls: int, transport=None):
    """(calls per second, p50 ms, p99 ms) of ``agents`` concurrent clients making ``calls`` calls each."""
    times: list[float] = []
    async with contextlib.AsyncExitStack() as stack:
        opened = [await stack.enter_async_context(mcp_client(url, token, transport=transport)) for _ in range(agents)]
        for c in opened:
            await c.list_tools()

        async def agent(c):
            for _ in range(calls):
                t0 = time.perf_counter()
                await c.call_tool(tool, {})
                times.append(time.perf_counter() - t0)
        started = time.perf_counter()
        await asyncio.gather(*(agent(c) for c in opened))
        took = time.perf_counter() - started
    times.sort()
    return agents * calls / took, times[len(times) // 2] * 1000, times[int(len(times) * 0.99) - 1] * 1000


async def throughput(pairs: dict[str, tuple], tool: str, rounds_of: int = 5, window: int = 480) -> None:
    """``pairs``: transport name → ((our URL, our transport), (bare URL, bare transport), token)."""
    print(f"\nthroughput of a light read: countersign {tool} vs a bare MCP SDK server's one trivial tool, same "
          f"transport (medians of {rounds_of} interleaved rounds)")
    print(f"{'transport':<30}{'agents':>7}{'ours calls/s':>14}{'bare calls/s':>14}{'ratio':>7}{'ours p50/p99':>16}"
          f"{'bare p50/p99':>16}{'p99 ratio':>10}")
    for name, ((our_url, ours), (bare_url, bare), token) in pairs.items():
        for agents in (1, 8, 32):
            # windows of ~0.5 s: a 20 ms stall moves one by 4 %, not 20
            calls = max(min(30, window), window // agents)
            rounds = []
            for _ in range(rounds_of):
                rounds.append((await _throughput(our_url, token, tool, agents, calls, ours),
                               await _throughput(bare_url, token, "ping", agents, calls, bare)))
            o, b = (tuple(statistics.median(r[side][k] for r in rounds) for k in range(3)) for side in (0, 1))
            print(f"{name:<30}{agents:>7}{o[0]:>14.0f}{b[0]:>14.0f}{o[0] / b[0]:>7.2f}{o[1]:>8.1f}/{o[2]:<7.1f}"
                  f"{b[1]:>8.1f}/{b[2]:<7.1f}{o[2] / b[2]:>9.2f}x")


async def run(data: Path, local: Path, port: int, bare_port: int, tokens: tuple[str, str], n: int,
              rounds_of: int = 5, window: int = 480) -> None:
    """``data``: the real server's data folder (SDK client and raw HTTP); ``local``: the in-process
    app's and the Lambda shape's, so that each server is the only one delivering its emails, as a
    server is (its notifier then knows the email slot it claimed, as in production)."""
    token, local_token = tokens
    url, bare_url = f"http://127.0.0.1:{port}/mcp", f"http://127.0.0.1:{bare_port}/mcp"
    async with contextlib.AsyncExitStack() as stack:
        capture = Capture(httpx2.AsyncHTTPTransport())
        ways: dict[str, OurWay | BareWay] = {"SDK client, real HTTP": await sdk_way(stack, url, token, capture)}
        cats = await categories(ways["SDK client, real HTTP"])  # type: ignore[arg-type]
        await fill_operations(ways["SDK client, real HTTP"], cats)  # type: ignore[arg-type]  # (Capture sees the answer round)
        raw_http = await stack.enter_async_context(
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30))
        ways["raw HTTP (httpx JSON-RPC)"] = RawWay(RawClient(raw_http, url, capture.templates))

        local_app, _ = build_local(settings_mod.load(settings_env(local, port)))
        await stack.enter_async_context(local_app.router.lifespan_context(local_app))
        in_process = httpx2.ASGITransport(app=local_app)
        ways["SDK client, in process (ASGI)"] = await sdk_way(stack, url, local_token, in_process)

        lam = build(settings_mod.load(settings_env(local, port)), deliver_inline=False, one_request_at_a_time=True)
        instance = LambdaInstance(lambda_handler(build_server(lam.desk, lam.state_keys), lam.store))
        stack.callback(instance.close)
        ways["SDK client, Mangum (Lambda shape)"] = await sdk_way(stack, url, local_token,
                                                                  LambdaTransport([instance]))
        if await categories(ways["SDK client, in process (ASGI)"]) != cats:  # type: ignore[arg-type]
            raise RuntimeError("the two data folders were seeded differently")
        await fill_operations(ways["SDK client, in process (ASGI)"], cats)  # type: ignore[arg-type]
        bare_local = bare_local_app()
        await stack.enter_async_context(bare_local.router.lifespan_context(bare_local))
        bare = {"bare SDK server, real HTTP": (bare_url, None),
                "bare SDK server, in process (ASGI)": (url, httpx2.ASGITransport(app=bare_local)),
                "bare SDK server, stateless (Lambda)": (url, httpx2.ASGITransport(app=BareStateless()))}
        for name, (bare_way_url, transport) in bare.items():  # the floors: ways of the same rounds
            ways[name] = BareWay(await stack.enter_async_context(mcp_client(bare_way_url, "-", transport=transport)),
                                 await stack.enter_async_context(mcp_client(bare_way_url, "-", answer=accept(),
                                                                            transport=transport)))
        heap.settle(collect=True)  # what every app here built, frozen as a server's once it listens

        times = await latency(ways, cats, n)
        results = print_latency({w: t for w, t in times.items() if w not in bare}, n)
        for label, folder in (("real server", data), ("in process", local)):
            print(f"emails written to {label}/outbox: {len(list((folder / 'outbox').glob('*.eml')))}")

        floors = floors_of({w: t for w, t in times.items() if w in bare})
        print_over_floors(results, {way: lightest(m, "budget")[1] for way, m in results.items()}, floors)
        # the app a Lambda instance runs (under Mangum): the work on the loop, one request at a time
        # as far as the work knows (here the agents' calls interleave on the loop, as no instance's do)
        stateless = lambda_app(build_server(lam.desk, lam.state_keys), lam.store)
        # the lightest over every way, whichever it is this run
        tool = min(READS["budget"], key=lambda t: sum(m[f"read {t}"] for m in results.values()))
        await throughput({
            "real HTTP (local server)": ((url, None), (bare_url, None), token),
            "in process (local shape)": ((url, in_process), (url, httpx2.ASGITransport(app=bare_local)), local_token),
            "in process (Lambda shape)": ((url, httpx2.ASGITransport(app=stateless)),
                                          (url, httpx2.ASGITransport(app=BareStateless())), local_token),
        }, tool, rounds_of, window)


def main() -> None:
    logging.disable(logging.INFO)  # per-request INFO lines would dominate what is measured in process
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--ledger", type=int, default=50_000, help="head-of-line ledger size (0: skip)")
    parser.add_argument("--rounds", type=int, default=5, help="throughput rounds per cell")
    parser.add_argument("--window", type=int, default=480,
                        help="throughput calls per round (30 per agent at least, or all of them when fewer)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data, local, port, bare_port = Path(tmp) / "server", Path(tmp) / "local", free_port(), free_port()
        tokens = seed(data, port), seed(local, port)
        with server_process("ours", data, port), server_process("bare", None, bare_port):
            asyncio.run(run(data, local, port, bare_port, tokens, options.n, options.rounds, options.window))
    if options.ledger:
        from mcp_head_of_line import concurrency

        concurrency(options.ledger)


if __name__ == "__main__":
    main()
