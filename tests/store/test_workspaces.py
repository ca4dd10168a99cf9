"""Workspaces, persons, connections, sign-in tokens and sessions."""

from __future__ import annotations

from dataclasses import replace

import pytest

from countersign.core.ids import new_id
from countersign.store.errors import BadInput, Conflict, NotFound
from countersign.store.hashes import secret_hash
from countersign.store.sessions import Session, SignInToken
from countersign.store.workspaces import DEFAULT_WORKSPACE_SETTINGS
from tests.store._factories import World, connection, person, workspace

# -- workspaces -------------------------------------------------------------------------------


def test_workspace_round_trip(store):
    ws = workspace("Acme", created_at=5)
    store.workspaces.create_workspace(ws)
    assert store.workspaces.get_workspace(ws.id) == ws
    assert store.workspaces.get_workspace(ws.id).settings == DEFAULT_WORKSPACE_SETTINGS


def test_unknown_workspace_is_not_found(store):
    with pytest.raises(NotFound):
        store.workspaces.get_workspace(new_id("ws_"))


def test_update_workspace_settings_merges(store):
    ws = workspace()
    store.workspaces.create_workspace(ws)
    updated = store.workspaces.update_workspace_settings(ws.id, {"ask_before_drafting": False})
    expected = dict(DEFAULT_WORKSPACE_SETTINGS, ask_before_drafting=False)
    assert updated.settings == expected
    assert store.workspaces.get_workspace(ws.id).settings == expected
    store.workspaces.update_workspace_settings(ws.id, {"confirm_in_client": False})
    assert store.workspaces.get_workspace(ws.id).settings == dict(expected, confirm_in_client=False)


def test_update_settings_of_unknown_workspace_is_not_found(store):
    with pytest.raises(NotFound):
        store.workspaces.update_workspace_settings(new_id("ws_"), {"ask_before_drafting": False})


def test_rename_workspace_reads_back_stripped_and_keeps_the_rest(store):
    ws = workspace("Acme", created_at=5)
    store.workspaces.create_workspace(ws)
    store.workspaces.update_workspace_settings(ws.id, {"confirm_in_client": False})
    renamed = store.workspaces.rename_workspace(ws.id, "  Acme Mail \t")
    expected = replace(ws, name="Acme Mail", settings=dict(DEFAULT_WORKSPACE_SETTINGS, confirm_in_client=False))
    assert renamed == expected
    assert store.workspaces.get_workspace(ws.id) == expected


def test_rename_workspace_to_exactly_100_characters(store):
    ws = workspace()
    store.workspaces.create_workspace(ws)
    assert store.workspaces.rename_workspace(ws.id, "n" * 100).name == "n" * 100
    assert store.workspaces.get_workspace(ws.id).name == "n" * 100


@pytest.mark.parametrize("bad", ["", "   ", "\t\n", "x" * 101, " " + "é" * 101 + " ",
                                 "Acme\nMail", "Acme\tMail", "Acme\r\nMail", "Acme\u2028Mail", "Acme\x07",
                                 "Acme \u202eevil\u202c Ltd", "Acme\u2066Mail"])
def test_rename_workspace_refuses_bad_names_and_keeps_the_old_one(store, bad):
    ws = workspace("Acme")
    store.workspaces.create_workspace(ws)
    with pytest.raises(BadInput) as refused:
        store.workspaces.rename_workspace(ws.id, bad)
    assert refused.value.field == "name"
    assert store.workspaces.get_workspace(ws.id) == ws


def test_rename_unknown_workspace_is_not_found_like_get(store):
    unknown = new_id("ws_")
    with pytest.raises(NotFound) as renamed:
        store.workspaces.rename_workspace(unknown, "Ghost")
    with pytest.raises(NotFound) as got:
        store.workspaces.get_workspace(unknown)
    assert renamed.value.message == got.value.message
    assert (renamed.value.what, renamed.value.ident) == ("workspace", unknown)
    with pytest.raises(NotFound):
        store.workspaces.get_workspace(unknown)  # the failed rename created nothing


def test_rename_workspace_leaves_other_workspaces_untouched(store):
    a, b = workspace("A"), workspace("B")
    store.workspaces.create_workspace(a)
    store.workspaces.create_workspace(b)
    store.workspaces.rename_workspace(a.id, "A renamed")
    assert store.workspaces.get_workspace(a.id).name == "A renamed"
    assert store.workspaces.get_workspace(b.id) == b


# -- persons ----------------------------------------------------------------------------------


def test_person_round_trip_and_lookup_by_email_ignores_case(store):
    w = World(store)
    p = person(w.ws, email="Alice.Smith@Example.com", role="approver", created_at=10)
    store.workspaces.create_person(p)
    assert store.workspaces.get_person(w.ws.id, p.id) == p
    assert store.workspaces.get_person_by_email("alice.smith@example.COM") == p
    assert store.workspaces.get_person_by_email("nobody@example.com") is None


def test_unknown_person_is_not_found(store):
    w = World(store)
    with pytest.raises(NotFound):
        store.workspaces.get_person(w.ws.id, new_id("p_"))


def test_get_member_reads_the_workspace_and_its_person(store):
    w = World(store)
    assert store.workspaces.get_member(w.ws.id, w.person.id) == (store.workspaces.get_workspace(w.ws.id), w.person)
    other = World(store, "Other")
    with pytest.raises(NotFound):  # a person of another workspace is not a member of this one
        store.workspaces.get_member(w.ws.id, other.person.id)
    with pytest.raises(NotFound):
        store.workspaces.get_member(new_id("ws_"), w.person.id)


def test_list_persons_in_creation_order(store):
    w = World(store)  # its owner was created at 0
    later = w.add_person(created_at=20)
    earlier = w.add_person(created_at=10)
    assert [p.id for p in store.workspaces.list_persons(w.ws.id)] == [w.person.id, earlier.id, later.id]


def test_update_person(store):
    w = World(store)
    p = w.add_person()
    updated = store.workspaces.update_person(w.ws.id, p.id, role="admin", name="Sam", agent_requests_email=False)
    assert (updated.role, updated.name, updated.agent_requests_email) == ("admin", "Sam", False)
    assert store.workspaces.get_person(w.ws.id, p.id) == updated
    assert (updated.id, updated.email, updated.workspace_id) == (p.id, p.email, p.workspace_id)


def test_update_unknown_person_is_not_found(store):
    w = World(store)
    with pytest.raises(NotFound):
        store.workspaces.update_person(w.ws.id, new_id("p_"), name="Sam")


# -- connections ------------------------------------------------------------------------------


def test_connection_round_trip_and_lookup_by_token_hash(store):
    w = World(store)
    assert store.connections.get_connection(w.ws.id, w.conn.id) == w.conn
    assert store.connections.get_connection_by_token_hash(w.conn.token_hash) == w.conn
    assert store.connections.get_connection_by_token_hash(secret_hash("unknown")) is None


def test_unknown_connection_is_not_found(store):
    w = World(store)
    with pytest.raises(NotFound):
        store.connections.get_connection(w.ws.id, new_id("c_"))


def test_list_connections_in_creation_order_and_by_person(store):
    w = World(store)  # w.conn was created at 0
    other = w.add_person()
    c_other = connection(w.ws, other, created_at=30)
    c_late = connection(w.ws, w.person, created_at=20)
    store.connections.create_connection(c_other)
    store.connections.create_connection(c_late)
    assert [c.id for c in store.connections.list_connections(w.ws.id)] == [w.conn.id, c_late.id, c_other.id]
    assert [c.id for c in store.connections.list_connections(w.ws.id, w.person.id)] == [w.conn.id, c_late.id]
    assert [c.id for c in store.connections.list_connections(w.ws.id, other.id)] == [c_other.id]


def test_revoke_connection_is_idempotent_and_still_found_by_hash(store):
    w = World(store)
    revoked = store.connections.revoke_connection(w.ws.id, w.conn.id, now=100)
    assert revoked.revoked and revoked.revoked_at == 100
    again = store.connections.revoke_connection(w.ws.id, w.conn.id, now=200)
    assert again.revoked_at == 100
    assert store.connections.get_connection(w.ws.id, w.conn.id).revoked_at == 100
    by_hash = store.connections.get_connection_by_token_hash(w.conn.token_hash)
    assert by_hash is not None and by_hash.revoked_at == 100


def test_a_revocation_keeps_its_reason_on_both_copies_and_the_first_one_stays(store):
    w = World(store)
    assert w.conn.revoked_reason is None
    revoked = store.connections.revoke_connection(w.ws.id, w.conn.id, now=100, reason="refresh_token_reused")
    assert (revoked.revoked_at, revoked.revoked_reason) == (100, "refresh_token_reused")
    again = store.connections.revoke_connection(w.ws.id, w.conn.id, now=200, reason="person")
    assert (again.revoked_at, again.revoked_reason) == (100, "refresh_token_reused")
    assert store.connections.get_connection(w.ws.id, w.conn.id) == revoked
    assert store.connections.get_connection_by_token_hash(w.conn.token_hash) == revoked
    assert store.connections.list_connections(w.ws.id) == [revoked]
    plain = connection(w.ws, w.person, created_at=5)  # revoked without a reason (as before reasons were kept)
    store.connections.create_connection(plain)
    assert store.connections.revoke_connection(w.ws.id, plain.id, now=300).revoked_reason is None


def test_a_database_of_an_earlier_release_gains_the_revocation_reason_and_keeps_its_connections(tmp_path):
    import sqlite3

    from countersign.store.sqlite import SQLiteStore

    path = str(tmp_path / "earlier.db")
    SQLiteStore(path).close()
    old = sqlite3.connect(path)  # as an earlier release made it: no revoked_reason column
    old.execute("ALTER TABLE connections DROP COLUMN revoked_reason")
    old.execute("INSERT INTO connections (id, workspace_id, person_id, name, token_hash, created_at, revoked_at)"
                " VALUES ('k_old', 'w_1', 'p_1', 'Old agent', 'h', 1, 2)")
    old.commit()
    old.close()
    store = SQLiteStore(path)
    try:
        [earlier] = store.connections.list_connections("w_1")
        assert (earlier.id, earlier.revoked_at, earlier.revoked_reason) == ("k_old", 2, None)
    finally:
        store.close()


def test_revoke_unknown_connection_is_not_found(store):
    w = World(store)
    with pytest.raises(NotFound):
        store.connections.revoke_connection(w.ws.id, new_id("c_"), now=1)


# -- sign-in tokens ---------------------------------------------------------------------------


def _token(w: World, expires_at: int) -> SignInToken:
    return SignInToken(
        token_hash=secret_hash(new_id("t_")), person_id=w.person.id, workspace_id=w.ws.id, expires_at=expires_at
    )


def test_signin_token_is_single_use(store):
    w = World(store)
    token = _token(w, expires_at=900)
    store.sessions.put_signin_token(token)
    assert store.sessions.consume_signin_token(token.token_hash, now=100) == token
    assert store.sessions.consume_signin_token(token.token_hash, now=101) is None


def test_expired_signin_token_reads_as_absent(store):
    w = World(store)
    token = _token(w, expires_at=900)
    store.sessions.put_signin_token(token)
    assert store.sessions.consume_signin_token(token.token_hash, now=900) is None
    assert store.sessions.consume_signin_token(token.token_hash, now=5000) is None


def test_signin_token_just_before_expiry_is_valid(store):
    w = World(store)
    token = _token(w, expires_at=900)
    store.sessions.put_signin_token(token)
    assert store.sessions.consume_signin_token(token.token_hash, now=899) == token


def test_unknown_signin_token_is_none(store):
    assert store.sessions.consume_signin_token(secret_hash("nope"), now=0) is None


# -- sessions ---------------------------------------------------------------------------------


def _session(w: World, created_at: int = 0, expires_at: int = 3600) -> Session:
    return Session(
        session_hash=secret_hash(new_id("s_")),
        person_id=w.person.id,
        workspace_id=w.ws.id,
        csrf_token="csrf-" + new_id(),
        created_at=created_at,
        expires_at=expires_at,
    )


def test_session_round_trip_until_expiry(store):
    w = World(store)
    s = _session(w)
    store.sessions.create_session(s)
    assert store.sessions.get_session(s.session_hash, now=0) == s
    assert store.sessions.get_session(s.session_hash, now=3599) == s
    assert store.sessions.get_session(s.session_hash, now=3600) is None


def test_deleted_session_is_gone(store):
    w = World(store)
    s = _session(w)
    store.sessions.create_session(s)
    store.sessions.delete_session(s.session_hash)
    assert store.sessions.get_session(s.session_hash, now=1) is None
    store.sessions.delete_session(s.session_hash)  # deleting twice is harmless


def test_unknown_session_is_none(store):
    assert store.sessions.get_session(secret_hash("nope"), now=0) is None


# -- duplicates -------------------------------------------------------------------------------


def test_duplicate_workspace_id_conflicts(store):
    ws = workspace("One")
    store.workspaces.create_workspace(ws)
    with pytest.raises(Conflict):
        store.workspaces.create_workspace(replace(ws, name="Two"))
    assert store.workspaces.get_workspace(ws.id).name == "One"


def test_duplicate_person_id_conflicts(store):
    w = World(store)
    with pytest.raises(Conflict):
        store.workspaces.create_person(replace(w.person, email="new@example.com"))
    assert store.workspaces.get_person_by_email("new@example.com") is None


def test_duplicate_email_conflicts_ignoring_case_across_workspaces(store):
    a, b = World(store, "A"), World(store, "B")
    store.workspaces.create_person(person(a.ws, email="Same@Example.com"))
    dup = person(b.ws, email="same@example.COM")
    with pytest.raises(Conflict):
        store.workspaces.create_person(dup)
    with pytest.raises(NotFound):
        store.workspaces.get_person(b.ws.id, dup.id)
    assert [p.id for p in store.workspaces.list_persons(b.ws.id)] == [b.person.id]


def test_duplicate_connection_id_conflicts(store):
    w = World(store)
    with pytest.raises(Conflict):
        store.connections.create_connection(replace(w.conn, name="Other", token_hash=secret_hash("other")))
    assert store.connections.get_connection(w.ws.id, w.conn.id).name == w.conn.name
