"""Store bench: file N cards and confirm them (one commit: the card completed with its effect) on each store.

    .venv/bin/python bench/store.py [N_SQLITE] [N_DYNAMODB]     (defaults: 1000 and 40)

Then, on SQLite, a person's listings as their cards pile up: the pending list (its first page and
its count) beside 100 and 10,000 cards left past their deadline, and the history's first page with
100 and 10,000 cards in it; the ratio is 10,000 ÷ 100, medians of interleaved rounds (flat is
1.0: partial indexes serve both, so lapsed cards are never scanned).

SQLite runs on a temporary file; DynamoDB runs on moto, so its rates measure moto and botocore,
not the service. moto 5.2.5 deep-copies the whole table for every item of every
``TransactWriteItems`` (to roll back), so its rates fall as the table grows: keep N_DYNAMODB small.
For DynamoDB it also counts the requests each step makes, through botocore's ``before-call``
event, and then (``bench/whole_calls.py``) the requests of whole MCP calls and whole clicks on
the stack in miniature. It prints; it asserts nothing.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
import bench_paths  # noqa: E402, F401  (the project first on sys.path, bench/ last)

# moto needs credentials and a region; never let the bench reach real AWS.
os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SECURITY_TOKEN", "AWS_SESSION_TOKEN"):
    os.environ[name] = "testing"
os.environ.pop("AWS_PROFILE", None)

from countersign.core.card_states import CardState  # noqa: E402
from countersign.core.codes import CodeRecord, code_hash, new_code  # noqa: E402
from countersign.core.ids import new_id  # noqa: E402
from countersign.store.cards import AuditEntry, Card, CardCommit  # noqa: E402
from countersign.store.connections import Connection  # noqa: E402
from countersign.store.docs import DocWrite  # noqa: E402
from countersign.store.hashes import secret_hash  # noqa: E402
from countersign.store.workspaces import Person, Workspace  # noqa: E402

DAY = 24 * 3600
T0 = 1_700_000_000


class Counter:
    """Counts DynamoDB API calls by operation name."""

    def __init__(self, client):
        self.calls: collections.Counter[str] = collections.Counter()
        client.meta.events.register("before-call.dynamodb", self._count)

    def _count(self, model, **_):
        self.calls[model.name] += 1

    def during(self, fn):
        self.calls.clear()
        fn()
        return dict(self.calls)


def setup(store):
    ws = Workspace(id=new_id("ws_"), name="Bench", created_at=T0)
    who = Person(id=new_id("p_"), workspace_id=ws.id, email=f"{new_id()}@example.com", role="owner", created_at=T0)
    conn = Connection(id=new_id("c_"), workspace_id=ws.id, person_id=who.id, name="bench",
                      token_hash=secret_hash(new_id("tok_")), created_at=T0)
    store.workspaces.create_workspace(ws)
    store.workspaces.create_person(who)
    store.connections.create_connection(conn)
    return ws, who, conn


def make_card(ws, who, conn, i: int) -> tuple[Card, AuditEntry]:
    cid = new_id("card_")
    card = Card(
        id=cid, workspace_id=ws.id, person_id=who.id, connection_id=conn.id, tool="add_transaction",
        arguments={"account": "acc_1", "amount": -1250 - i, "payee": "Café Ünïcode", "memo": "x" * 200},
        subject={"changes": [{"op": "add", "amount": -1250 - i}]}, title="Add a transaction",
        lines=("Account: Checking", f"Amount: -{12.50 + i / 100:.2f}", "Payee: Café Ünïcode"),
        fingerprint=new_id("fp_"), ticket="ticket." + cid, state=CardState.PENDING,
        created_at=T0 + i, expires_at=T0 + i + DAY, updated_at=T0 + i,
    )
    filed = AuditEntry(card_id=cid, workspace_id=ws.id, at=T0 + i, event="filed",
                       actor=f"connection:{conn.id}", channel="mcp", connection_id=conn.id)
    return card, filed


def entry(card: Card, event: str, at: int) -> AuditEntry:
    return AuditEntry(card_id=card.id, workspace_id=card.workspace_id, at=at, event=event,
                      actor=f"person:{card.person_id}", channel="page", connection_id=card.connection_id)


def click(store, card: Card, at: int) -> None:
    """What a confirm does in the store: read the card, then one commit — the card completed with
    its audit entry, its spent ticket, its request released and the action's effect (one doc)."""
    seen = store.cards.get_card(card.workspace_id, card.id, at)
    effect = (DocWrite("bench_txn", card.id, {"amount": card.arguments["amount"]}, 0),)
    store.cards.commit_card(CardCommit(seen, CardState.COMPLETED, at, (entry(card, "completed", at),), effect,
                                 result={"ok": True}, channel="page"))


def run(store, n: int) -> dict:
    ws, who, conn = setup(store)
    cards = [make_card(ws, who, conn, i) for i in range(n)]
    started = time.perf_counter()
    for card, filed in cards:
        store.cards.file_card(card, filed)
    filed_s = time.perf_counter() - started
    now = T0 + n + 10
    started = time.perf_counter()
    for card, _ in cards:
        click(store, card, now)
    confirmed_s = time.perf_counter() - started
    return {"filed/s": n / filed_s, "confirmed/s": n / confirmed_s, "ws": ws, "who": who, "conn": conn}


def bench_sqlite(n: int) -> dict:
    from countersign.store.sqlite import SQLiteStore

    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteStore(os.path.join(tmp, "bench.db"))
        try:
            return run(store, n)
        finally:
            store.close()


def bench_sqlite_listings(sizes=(100, 10_000), rounds: int = 200) -> dict[str, dict[int, float]]:
    """Median ms of each listing, per number of lapsed cards (see the module's docstring)."""
    from countersign.store.sqlite import SQLiteStore

    with tempfile.TemporaryDirectory() as tmp:
        stores, nows = {}, {}
        for size in sizes:
            store = stores[size] = SQLiteStore(os.path.join(tmp, f"listings{size}.db"))
            ws, who, conn = setup(store)
            for i in range(size + 10):  # the last 10 are still waiting at ``now``
                store.cards.file_card(*make_card(ws, who, conn, i))
            nows[size] = (ws.id, who.id, T0 + size + DAY)
        listings = {
            "pending list (first page of 50)": lambda st, ws, who, now: st.cards.list_pending_cards(ws, who, now),
            "pending count": lambda st, ws, who, now: st.cards.count_pending_cards(ws, who, now),
            "history (first page of 50)": lambda st, ws, who, now: st.cards.list_card_history(ws, who, now),
        }
        times: dict[str, dict[int, list[float]]] = {name: {size: [] for size in sizes} for name in listings}
        for _ in range(rounds):
            for name, listing in listings.items():
                for size in sizes:
                    started = time.perf_counter()
                    listing(stores[size], *nows[size])
                    times[name][size].append(time.perf_counter() - started)
        for store in stores.values():
            store.close()
    return {name: {size: statistics.median(t) * 1000 for size, t in by.items()} for name, by in times.items()}


def print_listings(medians: dict[str, dict[int, float]]) -> None:
    sizes = list(next(iter(medians.values())))
    print("SQLite listings as a person's cards pile up (median ms; ratio: the largest ÷ the smallest)")
    print(f"{'listing':<34}" + "".join(f"{f'{s} lapsed':>14}" for s in sizes) + f"{'ratio':>8}")
    for name, by in medians.items():
        print(f"{name:<34}" + "".join(f"{by[s]:>14.3f}" for s in sizes) + f"{by[sizes[-1]] / by[sizes[0]]:>7.2f}x")
    print()


def bench_dynamodb(n: int) -> tuple[dict, list[tuple[str, dict]]]:
    from moto import mock_aws

    from countersign.store.dynamodb import DynamoDBStore
    from tests.support.aws import boto_session, create_table_from_template

    with mock_aws():
        client = boto_session().client("dynamodb", region_name=os.environ["AWS_DEFAULT_REGION"])
        create_table_from_template(client, "bench")
        store = DynamoDBStore("bench", client=client)
        rates = run(store, n)
        counter = Counter(client)
        ws, who, conn = rates["ws"], rates["who"], rates["conn"]
        now = T0 + n + 20
        steps: list[tuple[str, dict]] = []

        card, filed = make_card(ws, who, conn, n + 1)
        steps.append(("file a card", counter.during(lambda: store.cards.file_card(card, filed))))
        steps.append(("confirm: get_card + one commit (card, effect, audit, ticket, request)",
                      counter.during(lambda: click(store, card, now))))
        card, filed = make_card(ws, who, conn, n + 2)
        store.cards.file_card(card, filed)
        twin, twin_filed = make_card(ws, who, conn, n + 3)
        twin = dataclasses.replace(twin, fingerprint=card.fingerprint)
        steps.append(("file an identical request while one waits (the waiting card is returned)",
                      counter.during(lambda: store.cards.file_card(twin, twin_filed))))
        cold = DynamoDBStore("bench", client=client)

        card, filed = make_card(ws, who, conn, n + 4)
        store.cards.file_card(card, filed)
        store.cards.transition_card(ws.id, card.id, CardState.DECLINED, now, entry(card, "declined", now))
        steps.append(("a refused click (card already declined), cold instance",
                      counter.during(lambda: _refused(cold, card, now))))

        for i in range(60):
            c, f = make_card(ws, who, conn, n + 10 + i)
            store.cards.file_card(c, f)
        steps.append(("list pending (first page of 50)",
                      counter.during(lambda: store.cards.list_pending_cards(ws.id, who.id, now))))
        steps.append(("list history (first page of 50)",
                      counter.during(lambda: store.cards.list_card_history(ws.id, who.id, now))))

        record = CodeRecord(code_hash=code_hash(new_code()), workspace_id=ws.id, fingerprint="fp", expires_at=now + 600)
        store.limits.put_code(record)
        steps.append(("consume a code", counter.during(lambda: store.limits.take_code(record.code_hash, now))))
        steps.append(("use a nonce", counter.during(lambda: store.limits.use_nonce(new_id("n_"), now + 600, now))))
        steps.append(("claim the email slot", counter.during(lambda: store.limits.claim_email_slot(who.id, now, 900))))
        steps.append(("connection by token hash",
                      counter.during(lambda: store.connections.get_connection_by_token_hash(conn.token_hash))))
        return rates, steps


def _refused(store, card: Card, now: int) -> None:
    from countersign.core.card_states import Refusal

    try:
        store.cards.transition_card(card.workspace_id, card.id, CardState.COMPLETED, now, entry(card, "completed", now))
    except Refusal:
        pass


def main() -> None:
    n_sqlite = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    n_ddb = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    print("countersign store bench: N cards filed, then each confirmed (get_card, one commit with its effect)\n")
    results = {}
    try:
        results["sqlite (tmp file)"] = (n_sqlite, bench_sqlite(n_sqlite))
    except ImportError as exc:  # pragma: no cover - the SQLite store may not exist yet
        print(f"sqlite: skipped ({exc})")
    ddb_rates, steps = bench_dynamodb(n_ddb)
    results["dynamodb (moto)"] = (n_ddb, ddb_rates)

    print(f"{'store':<20}{'N':>6}{'cards filed/s':>16}{'cards confirmed/s':>20}")
    for name, (n, r) in results.items():
        print(f"{name:<20}{n:>6}{r['filed/s']:>16.0f}{r['confirmed/s']:>20.0f}")
    print("\n(moto rates measure moto + botocore in process, not DynamoDB latency; moto deep-copies the")
    print(" table for every transaction item, so they drop as the table grows)\n")
    print_listings(bench_sqlite_listings())

    print("DynamoDB requests per step")
    width = max(len(s) for s, _ in steps) + 2
    print(f"{'step':<{width}}{'requests':>9}  detail")
    for step, calls in steps:
        detail = ", ".join(f"{op} x{k}" if k > 1 else op for op, k in sorted(calls.items()))
        print(f"{step:<{width}}{sum(calls.values()):>9}  {detail}")

    print()
    import runpy  # the same counts for whole MCP calls and whole clicks (bench/whole_calls.py)

    runpy.run_path(str(ROOT / "bench" / "whole_calls.py"), run_name="__main__")


if __name__ == "__main__":
    main()
