"""The restore procedure of docs/operations.md ("Restoring the table on AWS"), walked through on moto
as far as it can be offline: a table built from template.yaml with point-in-time recovery, cards
and accounts written by the store, a restore into a new table, the loss, infra/restore_table.py
copying back, and the store reading what it needs. (moto's point-in-time restore copies the table
as it is at the call; the time a real restore goes back to cannot be rehearsed here.)"""

from __future__ import annotations

import importlib.util
import time

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.store.dynamodb import DynamoDBStore, codec
from countersign.store.errors import NotFound
from tests.store._factories import World
from tests.support.aws import REPO_ROOT, boto_session, create_table_from_template

LIVE, RESTORED = "countersign-Table-LIVE", "countersign-restored"


def restore_script():
    spec = importlib.util.spec_from_file_location("restore_table", REPO_ROOT / "infra" / "restore_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def aws():
    from moto import mock_aws

    with mock_aws():
        client = boto_session().client("dynamodb", region_name="eu-west-1")
        create_table_from_template(client, LIVE)
        # What the template's PointInTimeRecoverySpecification turns on.
        client.update_continuous_backups(TableName=LIVE, PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": True})
        yield client


def test_restore_into_a_new_table_and_copy_back_what_was_lost(aws, capsys):
    store = DynamoDBStore(LIVE, client=aws)
    now = int(time.time())
    world = World(store)
    waiting, answered = world.file(created_at=now), world.file(created_at=now + 1)
    pitr = aws.describe_continuous_backups(TableName=LIVE)["ContinuousBackupsDescription"]
    assert pitr["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"

    # 1. Restore the point in time into a new table (the stack never uses it directly).
    aws.restore_table_to_point_in_time(SourceTableName=LIVE, TargetTableName=RESTORED, UseLatestRestorableTime=True)
    restored = aws.describe_table(TableName=RESTORED)["Table"]
    assert [g["IndexName"] for g in restored["GlobalSecondaryIndexes"]] == ["gsi1"]
    # 2. Look before copying: the restored table reads like the live one.
    assert DynamoDBStore(RESTORED, client=aws).cards.get_card(world.ws.id, waiting.id, now).state is CardState.PENDING

    # After the restore point: a card is answered, then the loss (items deleted by mistake).
    world.move(answered, CardState.DECLINED, now + 5)
    for key in (codec.workspace_key(world.ws.id), codec.card_key(waiting.id)):
        aws.delete_item(TableName=LIVE, Key=key)
    with pytest.raises(NotFound):
        store.workspaces.get_workspace(world.ws.id)

    # 3. A dry run says what would come back; the copy brings back only what is missing.
    script = restore_script()
    assert script.main([RESTORED, LIVE, "--dry-run"], client=aws) == 0
    assert "would copy 2" in capsys.readouterr().out
    assert script.main([RESTORED, LIVE], client=aws) == 0
    assert "copied 2" in capsys.readouterr().out
    assert store.workspaces.get_workspace(world.ws.id).name == "Acme"
    assert store.cards.get_card(world.ws.id, waiting.id, now + 6).state is CardState.PENDING
    # What happened since the restore point stands: the answered card stays declined.
    assert store.cards.get_card(world.ws.id, answered.id, now + 6).state is CardState.DECLINED
    [shown], _ = store.cards.list_pending_cards(world.ws.id, world.person.id, now + 6)
    assert shown.id == waiting.id  # the index entry came back with the item
    assert store.connections.get_connection_by_token_hash(world.conn.token_hash).id == world.conn.id


def test_overwrite_rolls_items_back_and_a_spent_ticket_still_refuses(aws, capsys):
    store = DynamoDBStore(LIVE, client=aws)
    now = int(time.time())
    world = World(store)
    answered = world.file(created_at=now)
    aws.restore_table_to_point_in_time(SourceTableName=LIVE, TargetTableName=RESTORED, UseLatestRestorableTime=True)
    world.move(answered, CardState.DECLINED, now + 5)

    assert restore_script().main([RESTORED, LIVE, "--overwrite"], client=aws) == 0
    assert "left 0" in capsys.readouterr().out
    # The card reads as it was at the restore point (waiting) ...
    assert store.cards.get_card(world.ws.id, answered.id, now + 6).state is CardState.PENDING
    # ... but its ticket was spent after it, and that record was not in the backup: no second answer.
    with pytest.raises(Refusal) as refused:
        world.move(answered, CardState.DECLINED, now + 7)
    assert refused.value.reason is RefusalReason.ALREADY_ANSWERED


def test_the_script_refuses_to_copy_a_table_onto_itself(aws):
    with pytest.raises(SystemExit):
        restore_script().main([LIVE, LIVE], client=aws)


def test_what_ended_by_its_deletion_is_not_brought_back_unless_asked(aws, capsys):
    """A sign-out, a used sign-in link and a removed member end by deletion: a copy back of the
    table as it was must not undo them (a restore is for what was lost, not for what was ended)."""
    from countersign.identity import accounts
    from countersign.identity.sessions import mint_signin_token
    from countersign.store.hashes import secret_hash
    from countersign.store.sessions import Session

    store = DynamoDBStore(LIVE, client=aws)
    now = int(time.time())
    world = World(store)
    colleague = accounts.add_person(store.workspaces, world.ws.id, "colleague@example.com", "member")
    store.sessions.create_session(Session(session_hash="s" * 64, person_id=world.person.id, workspace_id=world.ws.id,
                                 csrf_token="c" * 43, created_at=now, expires_at=now + 3600))
    link = mint_signin_token(store.sessions, world.person, now=now)
    aws.restore_table_to_point_in_time(SourceTableName=LIVE, TargetTableName=RESTORED, UseLatestRestorableTime=True)
    # after the restore point: signed out, the link used, the colleague removed, and a card lost
    store.sessions.delete_session("s" * 64)
    assert store.sessions.consume_signin_token(secret_hash(link), now) is not None
    store.workspaces.remove_person(world.ws.id, colleague.id, "member")
    lost = world.file(created_at=now)
    aws.restore_table_to_point_in_time(SourceTableName=LIVE, TargetTableName=RESTORED + "-2",
                                       UseLatestRestorableTime=True)
    aws.delete_item(TableName=LIVE, Key=codec.card_key(lost.id))

    script = restore_script()
    assert script.main([RESTORED + "-2", LIVE], client=aws) == 0  # the card only: nothing else is missing
    assert store.cards.get_card(world.ws.id, lost.id, now).state is CardState.PENDING
    assert script.main([RESTORED, LIVE], client=aws) == 0
    said = capsys.readouterr().out
    # the session, the sign-in link, the member and the pointer from their email
    assert "left out 4 that ended by their deletion" in said.splitlines()[-1]
    assert store.sessions.get_session("s" * 64, now) is None
    with pytest.raises(NotFound):
        store.workspaces.get_person(world.ws.id, colleague.id)
    assert script.main([RESTORED, LIVE, "--include-ended"], client=aws) == 0
    assert store.workspaces.get_person(world.ws.id, colleague.id).email == "colleague@example.com"  # asked for: back
