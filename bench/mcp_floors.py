"""The floors of ``bench/mcp_calls.py``: what the protocol and the disk cost on a bare ``mcp`` SDK
server with no work at all, and our held call and question measured against them."""

from __future__ import annotations

import contextlib
import random
import statistics
import time

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)

from tests.support.harness import accept, mcp_client


async def floor(pairs: dict[str, tuple], n: int, warmup: int) -> dict[str, tuple[float, float, float, float]]:
    """What the protocol and the disk cost with no work at all, on a bare SDK server: its 2026
    question + answer (``confirm``: asks, then answers the retry) and one durable write
    (``record``: one SQLite commit with fsync, as a held call's filing makes) ÷ its trivial
    ``ping``, the same client, the same round (medians over ``n`` rounds); and the same write
    carrying a held budget change's arguments (``record_budget``: what the protocol adds for
    them). ``pairs``: way → (URL, transport). Returns way → the medians (ms) of its ping, question
    + answer, record and record with arguments."""
    found = {}
    print(f"\nthe floors: a bare MCP SDK server's question + answer, and one durable write, ÷ its ping "
          f"(SDK client, median over {n} rounds)")
    print(f"{'way':<34}{'ping ms':>10}{'ask + answer ms':>17}{'ratio':>8}{'record ms':>11}{'ratio':>8}"
          f"{'with arguments':>16}{'ratio':>8}")
    for name, (url, transport) in pairs.items():
        async with contextlib.AsyncExitStack() as stack:
            plain = await stack.enter_async_context(mcp_client(url, "-", transport=transport))
            asking = await stack.enter_async_context(mcp_client(url, "-", answer=accept(), transport=transport))
            measured: dict[str, list[float]] = {"ping": [], "confirm": [], "record": [], "record_budget": []}
            for i in range(n + warmup):
                for tool in random.Random(i).sample(list(measured), len(measured)):  # as the latency rounds
                    await plain.call_tool("ping", {})  # not measured, as before each call in the latency rounds
                    t0 = time.perf_counter()
                    await _bare_call(plain, asking, tool)
                    if i >= warmup:
                        measured[tool].append(time.perf_counter() - t0)
            pings, asks, records = measured["ping"], measured["confirm"], measured["record"]
            with_args = measured["record_budget"]
        ping, asked, record, record_args = (statistics.median(v) * 1000 for v in (pings, asks, records, with_args))
        found[name] = (ping, asked, record, record_args)
        print(f"{name:<34}{ping:>10.2f}{asked:>17.2f}{_over(asks, pings):>7.2f}x{record:>11.2f}"
              f"{_over(records, pings):>7.2f}x{record_args:>16.2f}{_over(with_args, pings):>7.2f}x")
    return found


# what a held budget change carries (bench/mcp_calls.py's held set_category_budget, its shape)
BUDGET_ARGUMENTS = {"category_id": "cat_groceries", "month": "current", "amount": "1000.00"}

# our way → the bare server's measured the same way (raw HTTP has no bare twin: its client is not the SDK's)
FLOOR_OF = {"SDK client, real HTTP": "bare SDK server, real HTTP",
            "SDK client, in process (ASGI)": "bare SDK server, in process (ASGI)",
            "SDK client, Mangum (Lambda shape)": "bare SDK server, stateless (Lambda)"}


def print_over_floors(results: dict[str, dict[str, float]], reads: dict[str, float],
                      floors: dict[str, tuple[float, float, float, float]]) -> None:
    """A held call and a question ÷ what they would cost here if the gate's only work were the
    disk and the protocol: the lightest read plus what one durable commit adds on the bare server
    (record − ping); for the question, two such reads plus what the bare server's question adds
    over two pings. Above 1.0 is the gate's own work: the plans, the ticket and card, the hop.
    Beside it, the held call ÷ the same floor with the commit carrying the held call's arguments
    (record_budget − ping): what the protocol adds for three arguments is not the gate's work.
    ``results``: our way → call → median ms; ``reads``: our way → its lightest budget read (ms)."""
    print("\nheld and question ÷ their floor here: the lightest budget read + one durable commit's cost on the bare "
          "server (+ a second read and the bare question's extra for the question); medians, ms")
    print(f"{'way':<34}{'held':>8}{'floor':>8}{'ratio':>8}{'question':>10}{'floor':>8}{'ratio':>8}"
          f"{'floor with arguments':>22}{'ratio':>8}")
    for way, bare in FLOOR_OF.items():
        if way not in results or way not in reads or bare not in floors:
            continue
        m, (ping, asked, record, record_args) = results[way], floors[bare]
        read = reads[way]
        held, question = m["held set_category_budget"], m["ask + answer set_category_budget"]
        held_floor = read + (record - ping)
        held_floor_args = read + (record_args - ping)
        question_floor = 2 * read + (asked - 2 * ping) + (record - ping)
        print(f"{way:<34}{held:>8.2f}{held_floor:>8.2f}{held / held_floor:>7.2f}x"
              f"{question:>10.2f}{question_floor:>8.2f}{question / question_floor:>7.2f}x"
              f"{held_floor_args:>22.2f}{held / held_floor_args:>7.2f}x")


async def _bare_call(plain, asking, tool: str) -> None:
    if tool == "confirm":  # asks, then answers the retry
        answered = await asking.call_tool("confirm", {})
        assert not answered.is_error and "completed" in str(answered.content), answered
    else:
        result = await plain.call_tool(tool, BUDGET_ARGUMENTS if tool == "record_budget" else {})
        assert not result.is_error, result


def _over(times: list[float], baseline: list[float]) -> float:
    """The median over rounds of each time ÷ its own round's baseline."""
    return statistics.median(t / b for t, b in zip(times, baseline, strict=True))
