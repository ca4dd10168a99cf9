"""An edited quorum card starts a fresh vote, and the people who may approve it are told so as when
a card is filed: a digest check owed to each of its audience, in the edit's own transaction, and
delivered as an email listing the new card (the local outbox sender, as the notification tests use
it). Both stores."""

from __future__ import annotations

from email import message_from_bytes, policy

import pytest

from countersign.core.card_states import CardState
from countersign.gate import clicks, edits
from countersign.notify import CardNotifier, OutboxSender
from countersign.store.outbox import audience_digest_id

from .test_quorum import BIG, held, set_rules, with_quorum

RULE = {"name": "Big budgets", "when": "over:500", "needs": 2, "of": ["owner", "admin"]}


@pytest.fixture
def w(world):
    return with_quorum(world)


def _emails(outbox: OutboxSender, besides: frozenset = frozenset()) -> dict:
    """Each email in the outbox folder (but those named in ``besides``), by its file."""
    return {p.name: message_from_bytes(p.read_bytes(), policy=policy.default) for p in outbox.files()
            if p.name not in besides}


def test_an_edited_quorum_card_tells_each_approver_it_waits_again(w, tmp_path):
    set_rules(w, RULE)
    outbox = OutboxSender(tmp_path / "outbox")
    notifier = CardNotifier(w.store, outbox, w.desk.settings, lambda: w.clock)
    old = w.card(held(w, BIG)["confirmationId"])
    assert set(old.audience) == {w.ana.id, w.bo.id}
    notifier.sweep()
    first = {m["To"] for m in _emails(outbox).values()}
    assert {w.ana.email, w.bo.email} <= first  # told when it was filed

    clicks.confirm_click(w.desk, w.workspace.id, w.ana, old.id)  # Ana's approval of the card as it was
    w.clock += w.desk.settings.email_interval + 1
    new = edits.edit_card(w.desk, w.workspace.id, w.person, old.id, {"amount": "700.00"})
    assert new.state is CardState.PENDING and new.votes == () and set(new.audience) == {w.ana.id, w.bo.id}
    for member in (w.ana, w.bo):  # owed with the edit, as a filed card's are
        told = w.store.outbox.get_notification(audience_digest_id(member.id, new.id))
        assert told is not None and told.person_id == member.id and told.due_at == w.clock

    sent_before = frozenset(_emails(outbox))
    notifier.sweep()
    fresh = {m["To"]: m for m in _emails(outbox, sent_before).values()}
    assert "700.00" in new.title
    for member in (w.ana, w.bo):
        text = fresh[member.email].get_body(("plain",)).get_content()
        assert new.title in text, text
    # Ana's approval of the old card does not count on the new one: she may approve again
    done = clicks.confirm_click(w.desk, w.workspace.id, w.ana, new.id)
    assert done.state is CardState.PENDING and [v["by"] for v in done.votes] == [w.ana.id]
