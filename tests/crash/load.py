"""The exactly-once load test: many agents filing and reading, two people confirming and declining,
some requests and clicks contested, and the server killed with SIGKILL several times meanwhile.

Agents are real MCP clients over HTTP; people are the confirm API over HTTP; the server is a real
process on a SQLite file. Afterwards the file is read and every promise counted (:class:`Counts`).
``bench/exactly_once.py`` runs it at full size and prints the counts; ``test_load.py`` runs it in
the suite.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx2

from countersign.core.card_states import CardState
from countersign.store.outbox import NOTIFY_DONE, is_digest
from tests.support.harness import mcp_client

from .harness import Crashable


@dataclass
class Load:
    agents: int = 32
    rounds: int = 6  # requests per agent
    contested: float = 0.08  # share of requests two agents make at once, and of cards two people click at once
    kills: int = 4
    confirm: float = 0.85  # a person confirms this share of cards, declines the rest
    seed: int = 7


@dataclass
class Counts:
    requests: int = 0
    held_replies: int = 0
    cards: int = 0
    completed: int = 0
    declined: int = 0
    kills: int = 0
    lost_cards: int = 0
    double_effects: int = 0
    missing_effects: int = 0
    twin_live_cards: int = 0
    false_drift: int = 0
    left_running: int = 0
    left_pending: int = 0
    emails_owed: int = 0
    emails_sent: int = 0
    notifications: dict[str, int] = field(default_factory=dict)

    def problems(self) -> dict[str, int]:
        bad = ("lost_cards", "double_effects", "missing_effects", "twin_live_cards", "false_drift", "left_running",
               "left_pending", "emails_owed")
        return {k: getattr(self, k) for k in bad if getattr(self, k)}

    def as_dict(self) -> dict:
        return asdict(self)


BAKERY = "acc_checking"


def _args(payee: str) -> dict:
    return {"account_id": BAKERY, "transactions": [{"date": "2026-09-18", "payee": payee, "amount": "-1.00"}]}


class Run:
    def __init__(self, data: Path, load: Load):
        self.load = load
        self.rng = random.Random(load.seed)
        self.crash = Crashable(data)
        self.seen: dict[str, set[str]] = defaultdict(set)  # payee -> card ids the agents were given
        self.requests = 0
        self.calls = 0  # what the agents will call, a shared request once per agent (set at once)
        self.answered = 0  # calls an agent has had its reply to
        self.up = threading.Event()
        self.agents_done = threading.Event()
        self.lock = threading.Lock()

    # -- the server --------------------------------------------------------------------------------

    def start(self) -> None:
        self.crash.start(countersign_run_lease="2", countersign_sweep_interval="1")
        self.up.set()

    def killer(self, kills: list[int]) -> None:
        """Kill the server ``kills`` times while the agents work: once each further share of
        their calls is answered (a fifth, two fifths… for 4), a random moment after, so every
        kill lands under load however fast the machine runs them."""
        rng = random.Random(self.load.seed + 100)
        for n in range(1, self.load.kills + 1):
            while not self.agents_done.is_set() and (
                    not self.calls or self.answered < self.calls * n / (self.load.kills + 1)):
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.3))
            if self.agents_done.is_set():
                break
            self.up.clear()
            self.crash.server.kill()
            kills.append(1)
            self.start()

    # -- agents ------------------------------------------------------------------------------------

    async def agent(self, index: int, plan: list[str]) -> None:
        for payee in plan:
            while True:
                if not self.up.is_set():
                    await asyncio.sleep(0.2)
                    continue
                try:
                    async with mcp_client(f"{self.crash.server.origin}/mcp", self.crash.token) as client:
                        held = (await client.call_tool("create_transactions", _args(payee))).structured_content
                        await client.call_tool("list_accounts", {})
                    with self.lock:
                        if held and held.get("confirmationId"):
                            self.seen[payee].add(held["confirmationId"])
                        self.answered += 1
                    break
                except Exception:  # noqa: BLE001 - the server died under this call: call again, as an agent would
                    await asyncio.sleep(0.3)

    async def agents(self) -> None:
        plans: list[list[str]] = [[] for _ in range(self.load.agents)]
        for index in range(self.load.agents):
            for r in range(self.load.rounds):
                if self.rng.random() < self.load.contested:  # the same request from two agents at once
                    other = self.rng.randrange(self.load.agents)
                    payee = f"Shared {index}-{r}"
                    plans[other].append(payee)
                else:
                    payee = f"Payee {index}-{r}"
                plans[index].append(payee)
                self.requests += 1
        self.calls = sum(len(plan) for plan in plans)  # a shared request is two agents' calls
        await asyncio.gather(*(self.agent(i, plan) for i, plan in enumerate(plans)))

    # -- people ------------------------------------------------------------------------------------

    def person(self, index: int) -> None:
        rng = random.Random(self.load.seed + index + 1)
        page = None
        while True:
            if not self.up.is_set():
                time.sleep(0.2)
                continue
            try:
                page = page or self.crash.page()
                cards = page.get("/api/cards?limit=50").json()["cards"]
                if not cards:
                    if self.agents_done.is_set():
                        return
                    time.sleep(0.1)
                    continue
                # each person takes cards from their own end; some they both click at once
                card = cards[0] if index == 0 or rng.random() < self.load.contested else cards[-1]
                verb = "confirm" if rng.random() < self.load.confirm else "decline"
                page.post(f"/api/cards/{card['id']}/{verb}")
            except (httpx2.TransportError, KeyError, ValueError):
                page = None
                time.sleep(0.3)

    # -- the whole run -----------------------------------------------------------------------------

    def run(self) -> Counts:
        self.start()
        kills: list[int] = []
        killer = threading.Thread(target=self.killer, args=(kills,))
        people = [threading.Thread(target=self.person, args=(i,)) for i in range(2)]
        killer.start()
        for p in people:
            p.start()
        asyncio.run(self.agents())
        self.agents_done.set()
        killer.join()
        for p in people:
            p.join(timeout=120)
        self.crash.wait_for(self._settled, timeout=60, what="the upkeep to deliver every email")
        counts = self.count()
        counts.kills = len(kills)
        self.crash.close()
        return counts

    def _settled(self) -> bool:
        store, now = self.crash.store, int(time.time())
        # Every card's email delivered; the digest checks those emails left wait for their interval's end.
        owed = [n for n in store.outbox.due_notifications(now + 3600) if not is_digest(n.card_id)]
        return not owed and not store.cards.running_cards(now + 3600)

    def count(self) -> Counts:
        store, ws, person = self.crash.store, self.crash.workspace.id, self.crash.person
        now = int(time.time())
        cards = []
        cursor = None
        while True:
            page, cursor = store.cards.list_card_history(ws, person.id, now, limit=200, cursor=cursor)
            cards += page
            if cursor is None:
                break
        pending, _ = store.cards.list_pending_cards(ws, person.id, now, limit=1000)
        cards += pending
        cards = [store.cards.get_card(ws, c.id, now) for c in cards]  # whole: a listing carries no arguments
        payee_of = {c.id: c.arguments["transactions"][0]["payee"] for c in cards}
        txns = Counter(t["payee"] for d in store.docs.list_docs(ws, "budget_txns") for t in d.data["transactions"])
        c = Counts(requests=self.requests, held_replies=sum(len(v) for v in self.seen.values()), cards=len(cards))
        known = set(payee_of)
        c.lost_cards = sum(1 for ids in self.seen.values() for i in ids if i not in known)
        by_payee: dict[str, list] = defaultdict(list)
        for card in cards:
            by_payee[payee_of[card.id]].append(card)
        for payee, mine in by_payee.items():
            done = sum(1 for x in mine if x.state is CardState.COMPLETED)
            c.double_effects += max(0, txns[payee] - done)
            c.missing_effects += max(0, done - txns[payee])
            ordered = sorted(mine, key=lambda x: x.created_at)
            for a, b in zip(ordered, ordered[1:], strict=False):  # a later card of a request while the earlier was live
                if a.state in (CardState.PENDING, CardState.RUNNING) or a.updated_at > b.created_at:
                    c.twin_live_cards += 1
        c.completed = sum(1 for x in cards if x.state is CardState.COMPLETED)
        c.declined = sum(1 for x in cards if x.state is CardState.DECLINED)
        c.false_drift = sum(1 for x in cards if x.refusal)  # these requests' subjects cannot move
        c.left_running = sum(1 for x in cards if x.state is CardState.RUNNING)
        c.left_pending = len(pending)
        outcomes: Counter[str] = Counter()
        for card in cards:
            n = store.outbox.get_notification(card.id)
            if n is None:
                continue
            outcomes[n.outcome or n.state] += 1
            c.emails_owed += n.state != NOTIFY_DONE
        c.notifications = dict(outcomes)
        c.emails_sent = len(self.crash.emails())
        return c


def run(data: Path, load: Load | None = None) -> Counts:
    return Run(data, load or Load()).run()
