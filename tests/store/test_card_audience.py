"""A card more than one person may answer (``Card.audience``), on both stores: it waits in each
member's list beside their own cards, leaves every list with its move out of pending, and changes
while it waits only by :meth:`~countersign.store.cards.CardStore.amend_card` — one conditional
write on the version read (a vote, a wider audience, an escalation step), refused and writing
nothing when the card moved.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from countersign.core.card_states import CardState, Refusal
from countersign.store.cards import MAX_AUDIENCE, CardCommit
from countersign.store.errors import BadInput, Moved
from countersign.store.outbox import audience_digest_id
from tests.store._factories import DAY, World, audit, card, filed
from tests.support.serial_moto import serialized_transactions

NOW = 5000


def _shared(w: World, *members, created_at: int = 1000, **kwargs):
    c = replace(card(w.ws, w.person, w.conn, created_at=created_at, **kwargs), audience=tuple(m.id for m in members),
                quorum={"rule": "q_1", "needs": 2, "eligible": [w.person.id, *(m.id for m in members)]})
    w.store.cards.file_card(c, filed(c))
    return c


def _waiting(store, w: World, who, now: int = NOW) -> list[str]:
    return [c.id for c in store.cards.list_pending_cards(w.ws.id, who.id, now)[0]]


def test_a_shared_card_waits_on_its_person_and_each_of_its_audience(store):
    w = World(store)
    ana, bo, outsider = w.add_person("admin"), w.add_person("admin"), w.add_person()
    own = w.file(created_at=900)  # a card of the person's alone, filed first: it expires first
    shared = _shared(w, ana, bo)
    assert _waiting(store, w, w.person) == [own.id, shared.id]
    assert _waiting(store, w, ana) == [shared.id] == _waiting(store, w, bo)
    assert _waiting(store, w, outsider) == []
    assert store.cards.count_pending_cards(w.ws.id, ana.id, NOW) == 1
    listed_card = store.cards.list_pending_cards(w.ws.id, ana.id, NOW)[0][0]
    # a listing shows who else may answer, the quorum and the votes (DynamoDB reads a shared card whole)
    assert listed_card.audience == (ana.id, bo.id) and listed_card.quorum["needs"] == 2
    assert listed_card.arguments == {} and listed_card.ticket == ""  # and, as every listing, no more
    whole = store.cards.get_card(w.ws.id, shared.id, NOW)
    assert whole.audience == (ana.id, bo.id) and whole.may_answer(bo.id) and not whole.may_answer(outsider.id)


def test_each_member_is_told_by_a_digest_check_filed_with_the_card(store):
    w = World(store)
    ana = w.add_person("admin")
    shared = _shared(w, ana)
    told = store.outbox.get_notification(audience_digest_id(ana.id, shared.id))
    assert told is not None and told.person_id == ana.id and told.due_at == shared.created_at
    assert store.outbox.get_notification(shared.id).person_id == w.person.id  # its person's, as ever


def test_members_pages_merge_in_deadline_order(store):
    w = World(store)
    ana = w.add_person("admin")
    mine = [w.file(created_at=1000 + i, who=ana) for i in range(0, 6, 2)]
    theirs = [_shared(w, ana, created_at=1001 + i) for i in range(0, 6, 2)]
    expected = [c.id for c in sorted([*mine, *theirs], key=lambda c: c.expires_at)]
    seen, cursor = [], None
    while True:
        page, cursor = store.cards.list_pending_cards(w.ws.id, ana.id, NOW, limit=2, cursor=cursor)
        seen += [c.id for c in page]
        if cursor is None:
            break
    assert seen == expected


def test_the_move_out_of_pending_takes_it_off_every_list(store):
    w = World(store)
    ana = w.add_person("admin")
    shared = _shared(w, ana)
    w.move(shared, CardState.DECLINED, NOW)
    assert _waiting(store, w, ana) == [] and store.cards.count_pending_cards(w.ws.id, ana.id, NOW) == 0
    assert _waiting(store, w, w.person) == []
    # the history is the person's own (a member of its audience sees what waits on them, not all they saw)
    assert [c.id for c in store.cards.list_card_history(w.ws.id, w.person.id, NOW)[0]] == [shared.id]
    assert store.cards.list_card_history(w.ws.id, ana.id, NOW)[0] == []


def test_a_lapsed_shared_card_leaves_the_lists_and_no_history_of_the_audience(store):
    w = World(store)
    ana = w.add_person("admin")
    _shared(w, ana, created_at=1000, ttl=100)
    assert _waiting(store, w, ana, now=1200) == []
    assert store.cards.count_pending_cards(w.ws.id, ana.id, 1200) == 0
    assert store.cards.list_card_history(w.ws.id, ana.id, 1200)[0] == []


def test_a_vote_is_one_conditional_write_on_the_version_read(store):
    w = World(store)
    ana = w.add_person("admin")
    shared = _shared(w, ana)
    vote = {"by": ana.id, "vote": "yes", "at": NOW}
    after = store.cards.amend_card(shared, NOW, (audit(shared, "approved", NOW, actor=f"person:{ana.id}"),),
                                   votes=(vote,))
    assert after.version == shared.version + 1 and after.votes == (vote,)
    stored = store.cards.get_card(w.ws.id, shared.id, NOW)
    assert stored.votes == (vote,) and stored.state is CardState.PENDING and stored.version == after.version
    assert [e.event for e in store.cards.audit_trail(w.ws.id, shared.id)] == ["filed", "approved"]
    # a second write on the version read first: refused, nothing written
    with pytest.raises(Moved):
        store.cards.amend_card(shared, NOW, (audit(shared, "approved", NOW),), votes=(vote, {"by": "x"}))
    assert store.cards.get_card(w.ws.id, shared.id, NOW).votes == (vote,)
    assert len(store.cards.audit_trail(w.ws.id, shared.id)) == 2
    # the card still waits: its ticket was not spent, a Confirm (the last vote) moves it
    done = store.cards.commit_card(CardCommit(
        stored, CardState.COMPLETED, NOW + 1, (audit(stored, "completed", NOW + 1),),
        votes=(vote, {"by": w.person.id, "vote": "yes", "at": NOW + 1})))
    assert [v["by"] for v in store.cards.get_card(w.ws.id, done.id, NOW + 2).votes] == [ana.id, w.person.id]


def test_a_card_that_no_longer_waits_is_refused(store):
    w = World(store)
    ana = w.add_person("admin")
    shared = _shared(w, ana)
    declined = w.move(shared, CardState.DECLINED, NOW)
    with pytest.raises(Refusal):
        store.cards.amend_card(declined, NOW, (), votes=({"by": ana.id},))
    lapsed = _shared(w, ana, created_at=1000, ttl=100)
    with pytest.raises(Refusal):
        store.cards.amend_card(lapsed, NOW, (), votes=({"by": ana.id},))
    assert store.cards.get_card(w.ws.id, lapsed.id, NOW).votes == ()


def test_widening_the_audience_lists_it_for_the_new_member_and_tells_them(store):
    w = World(store)
    ana, cy = w.add_person("admin"), w.add_person("approver")
    plain = w.file()  # a card of one person: an escalation gives it its first audience
    wider = store.cards.amend_card(plain, NOW, (audit(plain, "escalated", NOW, actor="system"),),
                                   audience=(cy.id,), notify=(cy.id,))
    assert _waiting(store, w, cy) == [plain.id]
    assert store.cards.list_pending_cards(w.ws.id, cy.id, NOW)[0][0].audience == (cy.id,)
    assert store.outbox.get_notification(audience_digest_id(cy.id, plain.id)).due_at == NOW
    wider = store.cards.amend_card(wider, NOW, (), audience=(cy.id, ana.id))
    assert _waiting(store, w, ana) == [plain.id] == _waiting(store, w, cy)
    # then it is answered: it leaves every list
    w.move(wider, CardState.DECLINED, NOW + 1)
    assert _waiting(store, w, ana) == [] == _waiting(store, w, cy)


@pytest.mark.parametrize("audience, why", [
    (("{person}",), "never the person"),
    (("{ana}", "{ana}"), "each person once"),
    ((), "no one is taken off"),
    (tuple(f"p_{i}" for i in range(MAX_AUDIENCE + 1)), "at most"),
])
def test_an_audience_that_is_not_one_is_refused_and_nothing_written(store, audience, why):
    w = World(store)
    ana = w.add_person("admin")
    shared = _shared(w, ana)
    names = {"person": w.person.id, "ana": ana.id}
    audience = tuple(p.format(**names) for p in audience)
    with pytest.raises(BadInput, match=why):
        store.cards.amend_card(shared, NOW, (), audience=audience)
    assert store.cards.get_card(w.ws.id, shared.id, NOW).version == shared.version


def test_escalations_due_are_found_soonest_first_while_the_card_waits(store):
    w = World(store)
    later = replace(card(w.ws, w.person, w.conn, created_at=1000), escalate_at=1000 + 1200,
                    escalation={"steps": [{"rule": "e_1", "at": 2200, "add": []}], "done": 0})
    sooner = replace(card(w.ws, w.person, w.conn, created_at=1000), escalate_at=1000 + 600,
                     escalation={"steps": [{"rule": "e_1", "at": 1600, "add": []}], "done": 0})
    for c in (later, sooner):
        store.cards.file_card(c, filed(c))
    w.file()  # no escalation
    assert [c.id for c in store.cards.escalations_due(1500)] == []
    assert [c.id for c in store.cards.escalations_due(2500)] == [sooner.id, later.id]
    assert store.cards.escalations_due(2500)[0].escalation["steps"][0]["rule"] == "e_1"
    # a step done: the next is due later (or none: it leaves the list)
    store.cards.amend_card(sooner, 2500, (), escalation={"steps": sooner.escalation["steps"], "done": 1},
                           escalate_at=None)
    assert [c.id for c in store.cards.escalations_due(2500)] == [later.id]
    w.move(later, CardState.DECLINED, 2500)  # answered: nothing is due
    assert store.cards.escalations_due(2600) == []
    assert store.cards.escalations_due(DAY * 3) == []


THREADS = 12


@pytest.fixture(params=["sqlite", "dynamodb"])
def racing_store(request, tmp_path):
    if request.param == "sqlite":
        from countersign.store.sqlite import SQLiteStore

        s = SQLiteStore(str(tmp_path / "votes.db"))
        yield s
        s.close()
        return
    from tests.support.aws import moto_dynamodb_store

    with moto_dynamodb_store() as s, serialized_transactions():
        yield s


def test_votes_racing_on_one_version_exactly_one_is_written(racing_store):
    w = World(racing_store)
    members = [w.add_person("admin") for _ in range(3)]
    shared = _shared(w, *members)
    barrier = threading.Barrier(THREADS)

    def vote(i: int):
        barrier.wait()
        try:
            return racing_store.cards.amend_card(shared, NOW, (audit(shared, "approved", NOW),),
                                                 votes=({"by": f"p_{i}", "vote": "yes", "at": NOW},))
        except Exception as exc:  # noqa: BLE001 - the outcome under test
            return exc

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        outcomes = list(pool.map(vote, range(THREADS)))
    won = [o for o in outcomes if not isinstance(o, Exception)]
    assert len(won) == 1 and all(isinstance(o, Moved) for o in outcomes if isinstance(o, Exception)), outcomes
    stored = racing_store.cards.get_card(w.ws.id, shared.id, NOW)
    assert stored.votes == won[0].votes and stored.version == shared.version + 1
    assert [e.event for e in racing_store.cards.audit_trail(w.ws.id, shared.id)] == ["filed", "approved"]
