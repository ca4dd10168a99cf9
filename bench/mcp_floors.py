"""The floors of ``bench/mcp_calls.py``: what the protocol and the disk cost on a bare ``mcp`` SDK
server with no work at all (measured as ways of the latency rounds, interleaved with our calls),
and our held call and question measured against them."""

from __future__ import annotations

import itertools
import statistics
from typing import Any

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)


class BareWay:
    """A bare SDK server's calls, measured as one more way of the latency rounds
    (``bench/mcp_calls.py``), interleaved with ours: what the protocol and the disk cost with no work
    at all, in the same minutes as the calls they are the floor of. Its calls: ``ping``;
    ``confirm`` (its 2026 question + answer: asks, then answers the retry); ``record`` (one durable
    write: one SQLite commit with fsync, as a held call's filing makes); ``record_budget`` (the same
    write carrying a held budget change's arguments: what the protocol adds for them); ``hold``
    (the least a server keeping the contract does for a held budget change, ``bench/mcp_contract.py``:
    its card filed). Before each, unmeasured, a ``ping``, as a read comes before each of ours."""

    def __init__(self, plain, asking):
        self.plain, self.asking = plain, asking

    async def settle(self) -> None:
        await self.plain.call_tool("ping", {})

    def steps(self) -> list[tuple[str, Any]]:
        return [(tool, _bare_call(self.plain, self.asking, tool)) for tool in BARE_CALLS]


BARE_CALLS = ("ping", "confirm", "record", "record_budget", "hold")


def floors_of(times: dict[str, dict[str, list[float]]]) -> dict[str, tuple[float, float, float, float, float]]:
    """Prints the floors, measured in the latency rounds (``times``: a bare way → call → seconds
    per round): each bare server's question + answer, and one durable write, ÷ its ``ping`` of the
    same round. Returns bare way → the medians (ms) of its ping, question + answer, record, record
    with arguments, and the contract's least held call (``hold``)."""
    found = {}
    rounds = len(next(iter(times.values()))["ping"]) if times else 0
    print(f"\nthe floors: a bare MCP SDK server's question + answer, and one durable write, ÷ its ping "
          f"(SDK client, median over {rounds} rounds, measured in the latency rounds beside our calls)")
    print(f"{'way':<34}{'ping ms':>10}{'ask + answer ms':>17}{'ratio':>8}{'record ms':>11}{'ratio':>8}"
          f"{'with arguments':>16}{'ratio':>8}{'hold':>8}{'ratio':>8}")
    for name, measured in times.items():
        pings, asks, records = measured["ping"], measured["confirm"], measured["record"]
        with_args, holds = measured["record_budget"], measured["hold"]
        ping, asked, record, record_args, hold = (statistics.median(v) * 1000
                                                  for v in (pings, asks, records, with_args, holds))
        found[name] = (ping, asked, record, record_args, hold)
        print(f"{name:<34}{ping:>10.2f}{asked:>17.2f}{_over(asks, pings):>7.2f}x{record:>11.2f}"
              f"{_over(records, pings):>7.2f}x{record_args:>16.2f}{_over(with_args, pings):>7.2f}x"
              f"{hold:>8.2f}{_over(holds, pings):>7.2f}x")
    return found


# what a held budget change carries (bench/mcp_calls.py's held set_category_budget, its shape)
BUDGET_ARGUMENTS = {"category_id": "cat_groceries", "month": "current", "amount": "1000.00"}

# our way → the bare server's measured the same way (raw HTTP has no bare twin: its client is not the SDK's)
FLOOR_OF = {"SDK client, real HTTP": "bare SDK server, real HTTP",
            "SDK client, in process (ASGI)": "bare SDK server, in process (ASGI)",
            "SDK client, Mangum (Lambda shape)": "bare SDK server, stateless (Lambda)"}


def print_over_floors(results: dict[str, dict[str, float]], reads: dict[str, float],
                      floors: dict[str, tuple[float, float, float, float, float]]) -> None:
    """A held call and a question ÷ what they would cost here if the gate's only work were the
    disk and the protocol: the lightest read plus what one durable commit adds on the bare server
    (record − ping); for the question, two such reads plus what the bare server's question adds
    over two pings. Above 1.0 is the gate's own work: the plans, the ticket and card, the hop.
    Beside it, the held call ÷ the same floor with the commit carrying the held call's arguments
    (record_budget − ping): what the protocol adds for three arguments is not the gate's work.
    Last, the least a held call can cost here: the read plus what the contract's least held call
    adds on the bare server (hold − ping, ``bench/mcp_contract.py``), and its ratio to the floor:
    the floor of the held call's ratio; and ours ÷ that least.
    ``results``: our way → call → median ms; ``reads``: our way → its lightest budget read (ms)."""
    print("\nheld and question ÷ their floor here: the lightest budget read + one durable commit's cost on the bare "
          "server (+ a second read and the bare question's extra for the question); medians, ms")
    print(f"{'way':<34}{'held':>8}{'floor':>8}{'ratio':>8}{'question':>10}{'floor':>8}{'ratio':>8}"
          f"{'floor with arguments':>22}{'ratio':>8}{'least held':>12}{'÷ floor':>9}{'held ÷ least':>14}")
    for way, bare in FLOOR_OF.items():
        if way not in results or way not in reads or bare not in floors:
            continue
        m, (ping, asked, record, record_args, hold) = results[way], floors[bare]
        read = reads[way]
        held, question = m["held set_category_budget"], m["ask + answer set_category_budget"]
        held_floor = read + (record - ping)
        held_floor_args = read + (record_args - ping)
        question_floor = 2 * read + (asked - 2 * ping) + (record - ping)
        least = read + (hold - ping)
        print(f"{way:<34}{held:>8.2f}{held_floor:>8.2f}{held / held_floor:>7.2f}x"
              f"{question:>10.2f}{question_floor:>8.2f}{question / question_floor:>7.2f}x"
              f"{held_floor_args:>22.2f}{held / held_floor_args:>7.2f}x{least:>12.2f}{least / held_floor:>8.2f}x"
              f"{held / least:>13.2f}x")


async def _bare_call(plain, asking, tool: str) -> None:
    if tool == "confirm":  # asks, then answers the retry
        answered = await asking.call_tool("confirm", {})
        assert not answered.is_error and "completed" in str(answered.content), answered
    elif tool == "hold":  # a new amount each time: a new request, a new card (not a retry's)
        result = await plain.call_tool(tool, dict(BUDGET_ARGUMENTS, amount=f"{next(_AMOUNTS)}.00"))
        assert not result.is_error and '"pending"' in str(result.content), result
    else:
        result = await plain.call_tool(tool, BUDGET_ARGUMENTS if tool == "record_budget" else {})
        assert not result.is_error, result


_AMOUNTS = itertools.count(2000)


def _over(times: list[float], baseline: list[float]) -> float:
    """The median over rounds of each time ÷ its own round's baseline."""
    return statistics.median(t / b for t, b in zip(times, baseline, strict=True))
