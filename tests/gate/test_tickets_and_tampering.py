"""A ticket covers what the person was shown, and a spent ticket never runs again (both stores)."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.gate import ask as gate_ask
from tests.store.test_commit import roll_back

S = CardState


def edit_lines(store, card, lines: list[str]) -> None:
    """What someone with write access to the store could do: change what the page shows."""
    if hasattr(store, "database"):
        from countersign.store.sqlite.schema import to_json

        store.database.connection().execute("UPDATE cards SET lines = ? WHERE id = ?", (to_json(lines), card))
    else:
        from countersign.store.dynamodb import codec

        store.client.update_item(TableName=store.table.name, Key=codec.card_key(card), UpdateExpression="SET #l = :l",
                                 ExpressionAttributeNames={"#l": "lines"},
                                 ExpressionAttributeValues={":l": codec.av(lines)})


def test_a_preview_edited_in_the_store_is_refused_as_tampered(world):
    held = world.held()
    edit_lines(world.store, held["confirmationId"], ["2026-09-18, Bakery, -0.05, Uncategorised"])
    with pytest.raises(Refusal) as refused:
        world.click(held["confirmationId"])
    assert refused.value.reason is RefusalReason.TAMPERED
    assert "the card's preview_digest no longer match its ticket" in refused.value.message
    assert world.bakeries() == 0 and world.card(held["confirmationId"]).state is S.PENDING
    assert world.events(held["confirmationId"]) == ["filed", "refused"]


def test_an_in_client_yes_to_a_tampered_card_is_refused_too(world):
    form = world.question()
    held = world.held()
    edit_lines(world.store, held["confirmationId"], ["something else"])
    with pytest.raises(Refusal) as refused:
        world.answer(form)
    assert refused.value.reason is RefusalReason.TAMPERED
    assert world.bakeries() == 0 and world.card(held["confirmationId"]).state is S.PENDING
    assert world.events(held["confirmationId"]) == ["filed", "refused"]
    refusal = world.store.cards.audit_trail(world.workspace.id, held["confirmationId"])[-1]
    assert (refusal.channel, refusal.detail) == ("client", "tampered")  # the answer's channel, not the page's


@pytest.mark.parametrize("answer", ["click", "client"])
def test_a_spent_ticket_does_not_run_again_when_its_card_is_set_back(world, answer):
    held = world.held()
    card_id = held["confirmationId"]
    if answer == "click":
        world.click(card_id)
    else:
        world.answer(_ask_then_answer(world))
    assert world.bakeries() == 1
    roll_back(world.store, world.card(card_id))
    assert world.card(card_id).state is S.PENDING
    with pytest.raises(Refusal) as refused:
        world.click(card_id)
    assert refused.value.reason is RefusalReason.ALREADY_ANSWERED and "spent" in refused.value.message
    assert world.bakeries() == 1


def _ask_then_answer(world) -> gate_ask.AskForm:
    """A 2026 question for the request whose card waits: its answer confirms that card."""
    world.clock += 1
    return gate_ask.AskForm("", {"k": "form", "fp": world.pending()[0].fingerprint, "n": "nonce-" + str(world.clock),
                                 "t": world.clock})
