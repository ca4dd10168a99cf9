"""Two server processes on one SQLite file, sent the same request at the same moment, twenty
rounds in a row: one card each time (the request's claim is a conditional write in the file)."""

from __future__ import annotations

import asyncio

from tests.support.harness import mcp_client

from .harness import ServerProcess, free_port

ROUNDS = 20


def test_identical_requests_to_two_servers_at_once_file_one_card(crash):
    first = crash.start()
    second = ServerProcess(crash.data, free_port(), {})
    try:
        async def rounds() -> list[list[str]]:
            async with mcp_client(f"{first.origin}/mcp", crash.token) as a, \
                    mcp_client(f"{second.origin}/mcp", crash.token) as b:
                out = []
                for i in range(ROUNDS):
                    args = {"account_id": "acc_checking",
                            "transactions": [{"date": "2026-09-18", "payee": f"Round {i}", "amount": "-1.00"}]}
                    replies = await asyncio.gather(a.call_tool("create_transactions", args),
                                                   b.call_tool("create_transactions", args))
                    out.append([r.structured_content["confirmationId"] for r in replies])
                return out

        for i, ids in enumerate(asyncio.run(rounds())):
            assert ids[0] == ids[1], f"round {i}: two cards {ids}"
        pending, _ = crash.store.cards.list_pending_cards(crash.workspace.id, crash.person.id, crash.now(), limit=100)
        assert len(pending) == ROUNDS
    finally:
        second.stop()
