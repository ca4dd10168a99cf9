"""Cards: filing, reading, listing, the lifecycle's transitions, expiry and the audit trail."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.core.card_states import ANSWER_MEMORY_SECONDS, CardState, Refusal, RefusalReason
from countersign.core.ids import new_id
from countersign.store.cards import CardCommit, listed
from countersign.store.errors import NotFound
from tests.store._factories import DAY, World, audit, card, filed

S = CardState
R = RefusalReason

# The path from pending to each reachable state, as (target, extra transition fields).
PATHS: dict[CardState, list[tuple[CardState, dict]]] = {
    S.PENDING: [],
    S.RUNNING: [(S.RUNNING, {"channel": "page"})],
    S.COMPLETED: [(S.RUNNING, {"channel": "page"}), (S.COMPLETED, {"result": {"id": "tx_1", "ok": True}})],
    S.FAILED: [(S.RUNNING, {"channel": "code"}), (S.FAILED, {"refusal": "changed"})],
    S.DECLINED: [(S.DECLINED, {"decline_reason": "not this month", "channel": "page"})],
    S.WITHDRAWN: [(S.WITHDRAWN, {"channel": "mcp"})],
    S.EXPIRED: [(S.EXPIRED, {"channel": "system"})],
    S.EDITED: [(S.EDITED, {"channel": "page"})],
}

LEGAL = {
    S.PENDING: {S.RUNNING, S.COMPLETED, S.FAILED, S.DECLINED, S.WITHDRAWN, S.EXPIRED, S.EDITED},
    S.RUNNING: {S.COMPLETED, S.FAILED},
}

# The reason a move out of each state is refused with (whatever the target).
REFUSED_BECAUSE = {
    S.PENDING: R.ALREADY_ANSWERED,  # pending → pending: not a move the lifecycle has
    S.RUNNING: R.BEING_CONFIRMED,
    S.COMPLETED: R.ALREADY_ANSWERED,
    S.FAILED: R.ALREADY_ANSWERED,
    S.DECLINED: R.ALREADY_ANSWERED,
    S.WITHDRAWN: R.WITHDRAWN,
    S.EXPIRED: R.EXPIRED,
    S.EDITED: R.ALREADY_ANSWERED,  # a person's edit replaced it with a new card
}

ILLEGAL = [(state, target) for state in S for target in S if target not in LEGAL.get(state, set())]


def walk(w: World, state: CardState, created_at: int = 1000):
    """File a card and move it to ``state``, one second per step; returns (card as written, last time)."""
    card = w.file(created_at=created_at)
    now = created_at
    for target, fields in PATHS[state]:
        now += 1
        card = w.move(card, target, now, **fields)
    return card, now


def pages(fetch, limit: int) -> list[list[str]]:
    """Every page of a listing, as card ids, following cursors until there is none."""
    out, cursor = [], None
    while True:
        cards, cursor = fetch(limit=limit, cursor=cursor)
        out.append([c.id for c in cards])
        if cursor is None:
            return out
        assert len(out) < 100, "cursor never ends"


# -- filing and reading -----------------------------------------------------------------------


def test_filed_card_reads_back_exactly_with_its_filed_entry(store):
    w = World(store)
    card = w.file(created_at=1000)
    assert store.cards.get_card(w.ws.id, card.id, now=1001) == card
    assert store.cards.audit_trail(w.ws.id, card.id) == [filed(card)]


def test_unknown_card_is_not_found(store):
    w = World(store)
    with pytest.raises(NotFound):
        store.cards.get_card(w.ws.id, new_id("card_"), now=0)
    with pytest.raises(NotFound):
        store.cards.audit_trail(w.ws.id, new_id("card_"))
    with pytest.raises(NotFound):
        store.cards.transition_card(w.ws.id, new_id("card_"), S.RUNNING, 1, audit(w.file(), "running", 1))


# -- pending list -----------------------------------------------------------------------------


def test_pending_list_is_oldest_first(store):
    w = World(store)
    c3, c1, c2 = w.file(created_at=300), w.file(created_at=100), w.file(created_at=200)
    cards, cursor = store.cards.list_pending_cards(w.ws.id, w.person.id, now=400)
    assert [c.id for c in cards] == [c1.id, c2.id, c3.id]
    assert cursor is None
    assert cards[0] == listed(c1)


def test_a_listed_card_is_what_a_list_shows_and_get_card_gives_the_whole(store):
    """Both stores list cards without what only a decision needs (DynamoDB's index projects no
    more: store/table.py GSI1_ATTRIBUTES); the card read whole has it all."""
    w = World(store)
    card = w.file(created_at=100)
    [shown], _ = store.cards.list_pending_cards(w.ws.id, w.person.id, now=200)
    assert (shown.arguments, shown.subject, shown.ticket, shown.fingerprint, shown.run) == ({}, None, "", "", None)
    assert (shown.id, shown.title, shown.lines, shown.tool, shown.connection_id, shown.version) == (
        card.id, card.title, card.lines, card.tool, card.connection_id, card.version)
    assert store.cards.get_card(w.ws.id, card.id, now=200) == card


def test_a_cards_sections_are_kept_with_its_lines_read_whole_listed_and_moved(store):
    """A card's sections (an upstream's tools) come back exactly as filed, from a read, a listing
    (DynamoDB's index projects them with the lines) and after a move; a card without keeps none."""
    w = World(store)
    sections = ({"group": "changed", "heading": "Changed (1)", "tools": [
        {"name": "write_file", "change": "changed", "description": [["", "Write a file"], ["+", " and mail it"]],
         "arguments": [], "note": "Ünïcode ‘quoted’ \u202e"}]},)
    lines = ("Where: https://mcp.example.com/mcp", "Changed (1): write_file.")
    plain = w.file(created_at=100)
    tools = replace(card(w.ws, w.person, w.conn, created_at=101), lines=lines, sections=sections)
    store.cards.file_card(tools, filed(tools))
    assert store.cards.get_card(w.ws.id, tools.id, now=200) == tools
    listed_cards, _ = store.cards.list_pending_cards(w.ws.id, w.person.id, now=200)
    assert [(c.id, c.lines, c.sections) for c in listed_cards] == [
        (plain.id, plain.lines, ()), (tools.id, lines, sections)]
    moved = w.move(tools, S.DECLINED, 300, decline_reason="not now")
    assert (moved.lines, moved.sections) == (lines, sections)
    [decided], _ = store.cards.list_card_history(w.ws.id, w.person.id, now=400, limit=1)
    assert (decided.id, decided.sections) == (tools.id, sections)
    assert store.cards.get_card(w.ws.id, plain.id, now=200).sections == ()


def test_pending_list_holds_only_pending_unexpired_cards_of_that_person(store):
    w = World(store)
    waiting = w.file(created_at=100)
    walk(w, S.RUNNING, created_at=110)
    walk(w, S.DECLINED, created_at=120)
    w.file(created_at=130, ttl=50)  # expires at 180
    w.file(created_at=140, who=w.add_person())
    cards, cursor = store.cards.list_pending_cards(w.ws.id, w.person.id, now=200)
    assert [c.id for c in cards] == [waiting.id]
    assert cursor is None


def test_pending_count_is_what_the_pending_list_holds_in_all(store):
    w = World(store)
    for i in range(5):
        w.file(created_at=100 + i)
    walk(w, S.DECLINED, created_at=120)
    w.file(created_at=130, ttl=50)  # expires at 180
    w.file(created_at=140, who=w.add_person())
    assert store.cards.count_pending_cards(w.ws.id, w.person.id, now=200) == 5
    assert store.cards.count_pending_cards(w.ws.id, w.person.id, now=170) == 6
    assert store.cards.count_pending_cards(w.ws.id, "nobody", now=200) == 0


def test_pending_list_is_empty_for_a_person_with_nothing_waiting(store):
    w = World(store)
    assert store.cards.list_pending_cards(w.ws.id, w.person.id, now=0) == ([], None)


@pytest.mark.parametrize("count, limit, sizes", [(5, 2, [2, 2, 1]), (4, 2, [2, 2]), (3, 50, [3]), (1, 1, [1])])
def test_pending_list_pages_with_a_cursor(store, count, limit, sizes):
    w = World(store)
    ids = [w.file(created_at=100 + i).id for i in range(count)]
    got = pages(lambda **kw: store.cards.list_pending_cards(w.ws.id, w.person.id, now=500, **kw), limit)
    assert [len(p) for p in got] == sizes
    assert [i for p in got for i in p] == ids


# -- history ----------------------------------------------------------------------------------


def test_history_is_newest_first_and_includes_every_decided_or_lapsed_card(store):
    w = World(store)
    w.file(created_at=100)  # still pending: not history
    declined, _ = walk(w, S.DECLINED, created_at=100)  # updated at 101
    completed, _ = walk(w, S.COMPLETED, created_at=200)  # updated at 202
    walk(w, S.RUNNING, created_at=300)  # being confirmed: not history yet
    lapsed = w.file(created_at=50, ttl=200)  # reads as expired from 250
    cards, cursor = store.cards.list_card_history(w.ws.id, w.person.id, now=400)
    assert [c.id for c in cards] == [lapsed.id, completed.id, declined.id]
    assert [c.state for c in cards] == [S.EXPIRED, S.COMPLETED, S.DECLINED]
    assert cursor is None


def test_history_is_per_person(store):
    w = World(store)
    other = w.add_person()
    mine, _ = walk(w, S.DECLINED)
    theirs = w.move(w.file(who=other), S.WITHDRAWN, 2000)
    assert [c.id for c in store.cards.list_card_history(w.ws.id, w.person.id, now=3000)[0]] == [mine.id]
    assert [c.id for c in store.cards.list_card_history(w.ws.id, other.id, now=3000)[0]] == [theirs.id]


@pytest.mark.parametrize("count, limit, sizes", [(5, 2, [2, 2, 1]), (4, 2, [2, 2]), (3, 50, [3])])
def test_history_pages_with_a_cursor(store, count, limit, sizes):
    w = World(store)
    ids = [walk(w, S.DECLINED, created_at=100 + 10 * i)[0].id for i in range(count)]
    got = pages(lambda **kw: store.cards.list_card_history(w.ws.id, w.person.id, now=500, **kw), limit)
    assert [len(p) for p in got] == sizes
    assert [i for p in got for i in p] == ids[::-1]


# -- legal transitions ------------------------------------------------------------------------


@pytest.mark.parametrize("final", [S.COMPLETED, S.FAILED, S.DECLINED, S.WITHDRAWN, S.EXPIRED])
def test_each_legal_path_is_written_with_its_audit_entries(store, final):
    w = World(store)
    card, now = walk(w, final, created_at=1000)
    assert card.state is final
    assert card.updated_at == now
    assert store.cards.get_card(w.ws.id, card.id, now=now) == card
    trail = store.cards.audit_trail(w.ws.id, card.id)
    assert [e.event for e in trail] == ["filed"] + [t.value for t, _ in PATHS[final]]
    assert trail[1:] == [audit(card, t.value, 1000 + i + 1) for i, (t, _) in enumerate(PATHS[final])]


def test_transition_fields_are_stored(store):
    w = World(store)
    completed, _ = walk(w, S.COMPLETED)
    assert (completed.channel, completed.result) == ("page", {"id": "tx_1", "ok": True})
    failed, _ = walk(w, S.FAILED)
    assert (failed.channel, failed.refusal) == ("code", "changed")
    declined, _ = walk(w, S.DECLINED)
    assert (declined.channel, declined.decline_reason) == ("page", "not this month")


def test_transition_returns_the_card_as_written(store):
    w = World(store)
    card = w.file(created_at=1000)
    moved = w.move(card, S.RUNNING, 1500, channel="client")
    assert moved.state is S.RUNNING and moved.updated_at == 1500 and moved.channel == "client"
    assert (moved.id, moved.arguments, moved.lines, moved.ticket) == (card.id, card.arguments, card.lines, card.ticket)
    assert store.cards.get_card(w.ws.id, card.id, now=1500) == moved


# -- illegal transitions ----------------------------------------------------------------------


@pytest.mark.parametrize("state, target", ILLEGAL, ids=[f"{s.value}->{t.value}" for s, t in ILLEGAL])
def test_illegal_transition_is_refused_with_its_reason_and_writes_nothing(store, state, target):
    w = World(store)
    card, now = walk(w, state)
    trail = store.cards.audit_trail(w.ws.id, card.id)
    with pytest.raises(Refusal) as refused:
        w.move(card, target, now + 1, result={"must": "not be written"}, decline_reason="nope")
    assert refused.value.reason is REFUSED_BECAUSE[state]
    assert store.cards.get_card(w.ws.id, card.id, now=now + 1) == card
    assert store.cards.audit_trail(w.ws.id, card.id) == trail


def test_withdrawing_a_running_card_says_it_is_being_confirmed(store):
    w = World(store)
    card, now = walk(w, S.RUNNING)
    with pytest.raises(Refusal) as refused:
        w.move(card, S.WITHDRAWN, now + 1)
    assert refused.value.reason is R.BEING_CONFIRMED


def test_withdrawing_a_completed_card_says_it_was_already_answered(store):
    w = World(store)
    card, now = walk(w, S.COMPLETED)
    with pytest.raises(Refusal) as refused:
        w.move(card, S.WITHDRAWN, now + 1)
    assert refused.value.reason is R.ALREADY_ANSWERED


# -- expiry -----------------------------------------------------------------------------------


def test_pending_card_past_expiry_reads_as_expired(store):
    w = World(store)
    card = w.file(created_at=1000, ttl=100)
    assert store.cards.get_card(w.ws.id, card.id, now=1099).state is S.PENDING
    lapsed = store.cards.get_card(w.ws.id, card.id, now=1100)
    assert lapsed.state is S.EXPIRED
    assert lapsed == card.at(1100)
    assert store.cards.list_pending_cards(w.ws.id, w.person.id, now=1100) == ([], None)
    assert [c.id for c in store.cards.list_card_history(w.ws.id, w.person.id, now=1100)[0]] == [card.id]
    assert store.cards.list_card_history(w.ws.id, w.person.id, now=1100)[0][0].state is S.EXPIRED
    assert store.cards.list_card_history(w.ws.id, w.person.id, now=1099) == ([], None)


@pytest.mark.parametrize("target", [S.RUNNING, S.DECLINED, S.WITHDRAWN])
def test_leaving_pending_after_expiry_is_refused_as_expired(store, target):
    w = World(store)
    card = w.file(created_at=1000, ttl=100)
    with pytest.raises(Refusal) as refused:
        w.move(card, target, 1100)
    assert refused.value.reason is R.EXPIRED
    assert store.cards.get_card(w.ws.id, card.id, now=1099) == card
    assert store.cards.audit_trail(w.ws.id, card.id) == [filed(card)]


@pytest.mark.parametrize("target", [S.RUNNING, S.DECLINED, S.WITHDRAWN])
def test_leaving_pending_just_before_expiry_is_allowed(store, target):
    w = World(store)
    card = w.file(created_at=1000, ttl=100)
    assert w.move(card, target, 1099).state is target


def test_a_lapsed_card_can_be_marked_expired(store):
    w = World(store)
    card = w.file(created_at=1000, ttl=100)
    expired = w.move(card, S.EXPIRED, 5000)
    assert expired.state is S.EXPIRED and expired.updated_at == 5000
    assert [e.event for e in store.cards.audit_trail(w.ws.id, card.id)] == ["filed", "expired"]
    with pytest.raises(Refusal) as refused:
        w.move(card, S.EXPIRED, 5001)
    assert refused.value.reason is R.EXPIRED


def test_a_running_card_may_finish_after_the_expiry(store):
    w = World(store)
    card = w.file(created_at=1000, ttl=100)
    w.move(card, S.RUNNING, 1050)
    assert store.cards.get_card(w.ws.id, card.id, now=1200).state is S.RUNNING  # past its expiry at 1100
    assert w.move(card, S.COMPLETED, 1200, result={"ok": True}).state is S.COMPLETED


# -- latest card ------------------------------------------------------------------------------


def test_latest_card_is_the_most_recently_filed_identical_request(store):
    w = World(store)
    fp = "fp-" + new_id()
    assert store.cards.latest_card(w.ws.id, w.person.id, "add_transaction", fp, now=0) is None
    first = w.file(created_at=100, fingerprint=fp)
    assert store.cards.latest_card(w.ws.id, w.person.id, "add_transaction", fp, now=150) == first
    w.move(first, S.DECLINED, 160, decline_reason="no")
    # Within the answer memory the request is still the declined card's: filing returns that card.
    early = card(w.ws, w.person, w.conn, created_at=200, fingerprint=fp)
    held = store.cards.file_card(early, filed(early))
    assert held.id == first.id and held.state is S.DECLINED
    second = w.file(created_at=160 + ANSWER_MEMORY_SECONDS, fingerprint=fp)
    assert second.id != first.id and second.state is S.PENDING
    later = 160 + ANSWER_MEMORY_SECONDS + 100
    w.file(created_at=later, fingerprint="fp-other")
    w.file(created_at=later, fingerprint=fp, tool="send_email")
    w.file(created_at=later, fingerprint=fp, who=w.add_person())
    assert store.cards.latest_card(w.ws.id, w.person.id, "add_transaction", fp, now=later + 50) == second


def test_latest_card_reflects_transitions_and_expiry(store):
    w = World(store)
    fp = "fp-" + new_id()
    card = w.file(created_at=100, ttl=100, fingerprint=fp)
    assert store.cards.latest_card(w.ws.id, w.person.id, card.tool, fp, now=200).state is S.EXPIRED
    w.move(card, S.DECLINED, 150, decline_reason="too much")
    latest = store.cards.latest_card(w.ws.id, w.person.id, card.tool, fp, now=200)
    assert (latest.state, latest.decline_reason) == (S.DECLINED, "too much")


# -- audit ------------------------------------------------------------------------------------


def test_audit_trail_is_in_order_with_appended_entries(store):
    w = World(store)
    card = w.file(created_at=1000)
    refused_click = audit(card, "refused", 1001, channel="page", detail="changed")
    store.cards.append_audit(refused_click)
    running = w.move(card, S.RUNNING, 1002, channel="client")
    w.move(running, S.COMPLETED, 1003, result={"ok": True})
    trail = store.cards.audit_trail(w.ws.id, card.id)
    assert trail == [filed(card), refused_click, audit(card, "running", 1002), audit(card, "completed", 1003)]


def test_audit_entry_keeps_every_field(store):
    w = World(store)
    card = w.file(created_at=1000, ttl=DAY)
    entry = audit(card, "refused", 1001, actor="system", channel="system", detail="tampered: ticket")
    entry_without_connection = replace(
        audit(card, "refused", 1002, actor="system", channel="system"), connection_id=None
    )
    store.cards.append_audit(entry)
    store.cards.append_audit(entry_without_connection)
    assert store.cards.audit_trail(w.ws.id, card.id)[1:] == [entry, entry_without_connection]


def test_a_card_left_running_is_listed_for_recovery_once_its_lease_ends(store):
    w = World(store)
    c = w.file(created_at=1000)
    running = store.cards.commit_card(CardCommit(c, S.RUNNING, 1100, (audit(c, "running", 1100),), lease_until=1160,
                                           run={"steps": ["publish", "launch"], "done": 1}, channel="page"))
    assert (running.state, running.lease_until, running.run) == (
        S.RUNNING, 1160, {"steps": ["publish", "launch"], "done": 1})
    assert store.cards.get_card(w.ws.id, c.id, 1500) == running  # a reader sees it running (reported as pending)
    assert store.cards.running_cards(now=1159) == []
    assert [r.id for r in store.cards.running_cards(now=1160)] == [c.id]
    done = store.cards.commit_card(CardCommit(running, S.FAILED, 1200, (audit(c, "failed", 1200),),
                                              result={"error": "x"}))
    assert done.lease_until is None and store.cards.running_cards(now=5000) == []
    assert store.cards.get_card(w.ws.id, c.id, 1201) == done
