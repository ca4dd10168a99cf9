"""A credential with its member in one read, given whose it is (``countersign.store.callers``).

Each read by owner must answer exactly what the separate reads answer (the records as they are
now: a revoked connection, a changed role), and None whenever anything is amiss — unknown, expired
or deleted, or the credential is not that owner's — so the caller takes the long way.
"""

from __future__ import annotations

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.store.callers import Owner, Owners
from countersign.store.grants import ACCESS, REFRESH, IssuedToken
from countersign.store.hashes import secret_hash
from countersign.store.sessions import Session
from tests.store._factories import World, connection

NOW = 1_000


def _session(w: World, expires_at: int = NOW + 3600) -> Session:
    s = Session(session_hash=secret_hash(new_id("s_")), person_id=w.person.id, workspace_id=w.ws.id,
                csrf_token="csrf-" + new_id(), created_at=0, expires_at=expires_at)
    w.store.sessions.create_session(s)
    return s


def _access(w: World, kind: str = ACCESS, expires_at: int = NOW + 3600, conn=None) -> IssuedToken:
    conn = conn or w.conn
    token = IssuedToken(token_hash=secret_hash(new_id("csa_")), kind=kind, connection_id=conn.id,
                        workspace_id=w.ws.id, person_id=conn.person_id, client_id="client-1",
                        resource="https://cs.example/mcp", created_at=0, expires_at=expires_at, scopes=("mcp",))
    w.store.grants.put_issued_tokens([token])
    return token


def _owner(w: World, conn=None) -> Owner:
    return Owner(w.ws.id, w.person.id, conn.id if conn else "")


def test_a_connection_token_reads_with_its_member(store):
    w = World(store)
    assert store.callers.get_connection_as(w.conn.token_hash, _owner(w)) == (w.conn,
                                                                             *store.workspaces.get_member(w.ws.id,
                                                                                                          w.person.id))


def test_a_connection_token_read_by_owner_shows_the_records_as_they_are_now(store):
    w = World(store)
    store.workspaces.update_person(w.ws.id, w.person.id, role="member")
    store.workspaces.update_workspace_settings(w.ws.id, {"confirm_in_client": False})
    revoked = store.connections.revoke_connection(w.ws.id, w.conn.id, NOW)
    connection_now, workspace, person = store.callers.get_connection_as(w.conn.token_hash, _owner(w))
    assert connection_now == revoked and connection_now.revoked
    assert person.role == "member" and workspace.settings["confirm_in_client"] is False


def test_a_connection_token_of_someone_else_or_unknown_reads_as_none(store):
    w, other = World(store), World(store, "Other")
    colleague = w.add_person()
    theirs = connection(w.ws, colleague)
    store.connections.create_connection(theirs)
    assert store.callers.get_connection_as(secret_hash("unknown"), _owner(w)) is None
    assert store.callers.get_connection_as(w.conn.token_hash, _owner(other)) is None  # another workspace's member
    assert store.callers.get_connection_as(theirs.token_hash, _owner(w)) is None  # the colleague's token, not mine
    assert store.callers.get_connection_as(w.conn.token_hash, Owner(w.ws.id, "p_unknown")) is None
    assert store.callers.get_connection_as(w.conn.token_hash, Owner("w_unknown", w.person.id)) is None
    assert store.callers.get_connection_as(w.conn.token_hash, _owner(w, w.conn)) is None  # an access token's owner


def test_a_session_reads_with_its_member_while_it_lives(store):
    w = World(store)
    s = _session(w)
    member = store.workspaces.get_member(w.ws.id, w.person.id)
    assert store.callers.get_session_as(s.session_hash, _owner(w), NOW) == (s, *member)
    assert store.callers.get_session_as(s.session_hash, _owner(w), s.expires_at - 1) == (s, *member)
    assert store.callers.get_session_as(s.session_hash, _owner(w), s.expires_at) is None


def test_a_deleted_unknown_or_someone_elses_session_reads_as_none(store):
    w, other = World(store), World(store, "Other")
    s = _session(w)
    assert store.callers.get_session_as(s.session_hash, _owner(other), NOW) is None
    assert store.callers.get_session_as(s.session_hash, Owner(w.ws.id, w.add_person().id), NOW) is None
    assert store.callers.get_session_as(secret_hash("unknown"), _owner(w), NOW) is None
    store.sessions.delete_session(s.session_hash)
    assert store.callers.get_session_as(s.session_hash, _owner(w), NOW) is None


def test_a_session_reads_with_its_member_and_the_card_a_click_names(store):
    w = World(store)
    s, mine = _session(w), w.file(created_at=NOW - 10, ttl=100)
    member = store.workspaces.get_member(w.ws.id, w.person.id)
    assert store.callers.get_session_and_card(s.session_hash, _owner(w), NOW, mine.id) == (
        s, *member, store.cards.get_card(w.ws.id, mine.id, NOW))
    # the card as it stands at that moment: past its deadline, expired
    later = mine.expires_at + 1
    _, _, _, lapsed = store.callers.get_session_and_card(s.session_hash, _owner(w), later, mine.id)
    assert lapsed == store.cards.get_card(w.ws.id, mine.id, later) and lapsed.state is CardState.EXPIRED
    # a card that moved is read as it is now
    declined = w.move(mine, CardState.DECLINED, NOW + 1)
    assert store.callers.get_session_and_card(s.session_hash, _owner(w), NOW + 2, mine.id)[3] == declined


def test_the_card_beside_a_session_is_none_unless_it_is_in_the_sessions_workspace(store):
    w, other = World(store), World(store, "Other")
    s = _session(w)
    theirs = other.file(created_at=NOW)
    member = store.workspaces.get_member(w.ws.id, w.person.id)
    assert store.callers.get_session_and_card(s.session_hash, _owner(w), NOW, theirs.id) == (s, *member, None)
    assert store.callers.get_session_and_card(s.session_hash, _owner(w), NOW, "c_unknown") == (s, *member, None)
    # a colleague's card of the same workspace is read: the desk refuses it as not theirs
    colleague = w.add_person()
    colleagues = w.file(who=colleague)
    assert store.callers.get_session_and_card(s.session_hash, _owner(w), NOW, colleagues.id)[3] == store.cards.get_card(
        w.ws.id, colleagues.id, NOW)


def test_a_session_that_reads_as_none_alone_reads_as_none_with_a_card(store):
    w, other = World(store), World(store, "Other")
    s, mine = _session(w, expires_at=NOW + 50), w.file(created_at=NOW)
    assert store.callers.get_session_and_card(s.session_hash, _owner(w), NOW + 50, mine.id) is None  # expired
    assert store.callers.get_session_and_card(s.session_hash, _owner(other), NOW, mine.id) is None
    assert store.callers.get_session_and_card(secret_hash("unknown"), _owner(w), NOW, mine.id) is None
    store.sessions.delete_session(s.session_hash)
    assert store.callers.get_session_and_card(s.session_hash, _owner(w), NOW, mine.id) is None


def test_an_access_token_reads_with_its_connection_and_member(store):
    w = World(store)
    token = _access(w)
    found = store.callers.get_access_as(token.token_hash, _owner(w, w.conn), NOW)
    assert found == (store.grants.get_issued_token(token.token_hash, NOW), w.conn,
                     *store.workspaces.get_member(w.ws.id, w.person.id))
    revoked = store.connections.revoke_connection(w.ws.id, w.conn.id, NOW)
    assert store.callers.get_access_as(token.token_hash, _owner(w, w.conn), NOW)[1] == revoked  # the caller refuses it


def test_an_access_token_read_by_owner_gives_its_kind_for_the_caller_to_check(store):
    w = World(store)
    refresh = _access(w, kind=REFRESH)
    assert store.callers.get_access_as(refresh.token_hash, _owner(w, w.conn), NOW)[0].kind == REFRESH


def test_an_expired_unknown_or_someone_elses_access_token_reads_as_none(store):
    w, other = World(store), World(store, "Other")
    token, expired = _access(w), _access(w, expires_at=NOW)
    second = connection(w.ws, w.person, name="Second")
    store.connections.create_connection(second)
    assert store.callers.get_access_as(expired.token_hash, _owner(w, w.conn), NOW) is None
    assert store.callers.get_access_as(secret_hash("unknown"), _owner(w, w.conn), NOW) is None
    assert store.callers.get_access_as(token.token_hash, _owner(w, second), NOW) is None  # another connection's
    assert store.callers.get_access_as(token.token_hash, _owner(w), NOW) is None  # no connection named
    assert store.callers.get_access_as(token.token_hash, Owner(other.ws.id, w.person.id, w.conn.id), NOW) is None
    assert store.callers.get_access_as(token.token_hash, Owner(w.ws.id, w.person.id, "k_unknown"), NOW) is None


def test_an_access_token_whose_connection_names_another_person_reads_as_none(store):
    w = World(store)
    colleague = w.add_person()
    theirs = connection(w.ws, colleague)
    store.connections.create_connection(theirs)
    forged = IssuedToken(token_hash=secret_hash("forged"), kind=ACCESS, connection_id=theirs.id, workspace_id=w.ws.id,
                         person_id=w.person.id, client_id="client-1", resource="https://cs.example/mcp",
                         created_at=0, expires_at=NOW + 60)
    store.grants.put_issued_tokens([forged])
    assert store.callers.get_access_as(forged.token_hash, Owner(w.ws.id, w.person.id, theirs.id), NOW) is None


def test_owners_remembers_ids_and_forgets_them_all_when_full():
    owners = Owners(most=2)
    owners.remember("h1", Owner("w", "p1"))
    owners.remember("h2", Owner("w", "p2"))
    owners.remember("h2", Owner("w", "p2"))  # known already: nothing is forgotten
    assert owners.get("h1") == Owner("w", "p1")
    owners.remember("h3", Owner("w", "p3"))
    assert (owners.get("h1"), owners.get("h2"), owners.get("h3")) == (None, None, Owner("w", "p3"))
