"""The OAuth role, on both stores: clients, authorization requests, codes, grants, tokens and
connection use. Expiry applies on every read; every single-use value is spent once."""

from __future__ import annotations

import threading
from dataclasses import replace

from countersign.store.authorizations import IssuedCode, OAuthClientRecord, PendingAuthorization
from countersign.store.grants import ACCESS, REFRESH, IssuedToken, OAuthGrant
from countersign.store.hashes import secret_hash
from countersign.store.sqlite import SQLiteStore

NOW = 1_800_000_000


def pending(n: int = 1, expires_at: int = NOW + 900) -> PendingAuthorization:
    return PendingAuthorization(
        request_hash=secret_hash(f"request-{n}"), client_id="https://client.example/meta.json", client_name="Client",
        redirect_uri="http://127.0.0.1:3000/callback", redirect_uri_provided_explicitly=True,
        code_challenge="c" * 43, resource="https://cs.example/mcp", created_at=NOW, expires_at=expires_at,
        state="xyz", scopes=("mcp",), metadata_document=True,
    )


def code(n: int = 1, expires_at: int = NOW + 300) -> IssuedCode:
    return IssuedCode(
        code_hash=secret_hash(f"code-{n}"), client_id="c1", connection_id="k_1", workspace_id="w_1", person_id="p_1",
        redirect_uri="http://127.0.0.1:3000/callback", redirect_uri_provided_explicitly=True, code_challenge="c" * 43,
        resource="https://cs.example/mcp", expires_at=expires_at, scopes=("mcp",),
    )


def token(name: str, kind: str = REFRESH, expires_at: int = NOW + 3600, connection: str = "k_1") -> IssuedToken:
    return IssuedToken(
        token_hash=secret_hash(name), kind=kind, connection_id=connection, workspace_id="w_1", person_id="p_1",
        client_id="c1", resource="https://cs.example/mcp", created_at=NOW, expires_at=expires_at, scopes=("mcp",),
    )


def test_clients_registered_and_cached(store):
    registered = OAuthClientRecord("c1", {"redirect_uris": ["http://127.0.0.1/cb"], "client_name": "One"}, NOW)
    cached = OAuthClientRecord("https://client.example/meta.json", {"client_name": "Two"}, NOW, expires_at=NOW + 60)
    store.authorizations.put_oauth_client(registered)
    store.authorizations.put_oauth_client(cached)
    assert store.authorizations.get_oauth_client("c1", NOW + 10**8) == registered  # a registered client does not expire
    assert store.authorizations.get_oauth_client(cached.client_id, NOW + 59) == cached
    assert store.authorizations.get_oauth_client(cached.client_id, NOW + 60) is None  # a cached document does
    assert store.authorizations.get_oauth_client("unknown", NOW) is None
    renewed = replace(cached, metadata={"client_name": "Two, renewed"}, expires_at=NOW + 600)
    store.authorizations.put_oauth_client(renewed)
    assert store.authorizations.get_oauth_client(cached.client_id, NOW + 300) == renewed


def test_an_authorization_request_is_answered_once(store):
    request = pending()
    store.authorizations.put_pending_authorization(request)
    assert store.authorizations.get_pending_authorization(request.request_hash, NOW) == request
    assert store.authorizations.get_pending_authorization(request.request_hash,
                                                          NOW + 900) is None  # expired reads as absent
    assert store.authorizations.take_pending_authorization(request.request_hash, NOW + 1) == request
    assert store.authorizations.take_pending_authorization(request.request_hash, NOW + 2) is None
    assert store.authorizations.get_pending_authorization(request.request_hash, NOW + 2) is None


def test_an_expired_authorization_request_cannot_be_taken(store):
    request = pending(2, expires_at=NOW + 5)
    store.authorizations.put_pending_authorization(request)
    assert store.authorizations.take_pending_authorization(request.request_hash, NOW + 5) is None


def test_a_code_is_spent_once_and_remembered_as_spent(store):
    issued = code()
    store.authorizations.put_issued_code(issued)
    assert store.authorizations.get_issued_code(issued.code_hash, NOW) == issued
    assert store.authorizations.spend_issued_code(issued.code_hash, NOW + 1) is True
    assert store.authorizations.spend_issued_code(issued.code_hash, NOW + 2) is False
    assert store.authorizations.get_issued_code(issued.code_hash, NOW + 3) == replace(issued,
                                                                                      used_at=NOW + 1)  # a replay shows
    assert store.authorizations.get_issued_code(issued.code_hash, NOW + 300) is None
    assert store.authorizations.spend_issued_code(secret_hash("never issued"), NOW) is False


def test_an_expired_code_cannot_be_spent(store):
    issued = code(3, expires_at=NOW + 10)
    store.authorizations.put_issued_code(issued)
    assert store.authorizations.spend_issued_code(issued.code_hash, NOW + 10) is False


def test_simultaneous_spends_of_one_code_have_one_winner(tmp_path):
    """On SQLite, from many threads (DynamoDB's conditional writes are its own guarantee; moto's
    are not atomic across threads, so the race is not run there)."""
    store = SQLiteStore(str(tmp_path / "race.db"))
    issued = code(4)
    store.authorizations.put_issued_code(issued)
    results: list[bool] = []
    threads = [threading.Thread(target=lambda: results.append(store.authorizations.spend_issued_code(issued.code_hash,
                                                                                                     NOW)))
               for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 5 + [True]


def test_grants_are_listed_per_workspace_and_person(store):
    first = OAuthGrant("k_1", "w_1", "p_1", "c1", "Client one", "http://127.0.0.1/cb", NOW)
    second = OAuthGrant("k_2", "w_1", "p_2", "c2", "Client two", "https://app.example/cb", NOW + 1)
    elsewhere = OAuthGrant("k_3", "w_2", "p_3", "c1", "Client one", "http://127.0.0.1/cb", NOW)
    for grant in (second, first, elsewhere):
        store.grants.put_oauth_grant(grant)
    assert store.grants.list_oauth_grants("w_1") == [first, second]
    assert store.grants.list_oauth_grants("w_1", "p_2") == [second]
    assert store.grants.list_oauth_grants("w_2") == [elsewhere]
    assert store.grants.list_oauth_grants("w_9") == []


def test_a_grant_keeps_its_codes_hash_until_it_is_known_connected(store):
    waiting = OAuthGrant("k_1", "w_1", "p_1", "c1", "Client one", "http://127.0.0.1/cb", NOW, code_hash="h" * 64)
    other = OAuthGrant("k_2", "w_1", "p_1", "c2", "Client two", "http://127.0.0.1/cb", NOW + 1, code_hash="g" * 64)
    store.grants.put_oauth_grant(waiting)
    store.grants.put_oauth_grant(other)
    assert store.grants.list_oauth_grants("w_1") == [waiting, other]
    store.grants.forget_grant_code("w_1", "k_1")
    assert store.grants.list_oauth_grants("w_1") == [replace(waiting, code_hash=None), other]  # that one only
    store.grants.forget_grant_code("w_1", "k_1")  # again: nothing changes
    store.grants.forget_grant_code("w_2", "k_2")  # another workspace's id: nothing changes
    store.grants.forget_grant_code("w_1", "k_9")  # unknown: nothing is made
    assert store.grants.list_oauth_grants("w_1") == [replace(waiting, code_hash=None), other]


def _grant_json(store, grant: OAuthGrant) -> dict:
    import json

    if isinstance(store, SQLiteStore):
        return json.loads(store.database.one("SELECT data FROM oauth_grants WHERE connection_id = ?",
                                             grant.connection_id)["data"])
    from countersign.store.dynamodb import codec
    from countersign.store.dynamodb.grants import grant_key

    return codec.unJ(store.table.get(grant_key(grant.workspace_id, grant.connection_id))["data"])


def _set_grant_json(store, grant: OAuthGrant, values: dict) -> None:
    from countersign.store.sqlite.schema import to_json

    if isinstance(store, SQLiteStore):
        with store.database.write() as db:
            db.execute("UPDATE oauth_grants SET data = ? WHERE connection_id = ?",
                       (to_json(values), grant.connection_id))
        return
    from countersign.store.dynamodb import codec
    from countersign.store.dynamodb.grants import grant_key

    store.table.client.update_item(
        TableName=store.table.name, Key=grant_key(grant.workspace_id, grant.connection_id),
        UpdateExpression="SET #d = :d", ExpressionAttributeNames={"#d": "data"},
        ExpressionAttributeValues=codec.values({":d": codec.J(values)}))


def test_a_grant_reads_the_same_to_an_older_release_and_a_newer_ones_grant_reads_here(store):
    """Rolling deploys and rollbacks: the code's hash is kept beside the grant's JSON, so a release
    that builds the grant from that JSON alone (as every earlier one did) sees the fields it knows;
    and a grant a later release wrote, with a field this one does not know, still loads."""
    from dataclasses import fields

    waiting = OAuthGrant("k_1", "w_1", "p_1", "c1", "Client one", "http://127.0.0.1/cb", NOW, code_hash="h" * 64)
    store.grants.put_oauth_grant(waiting)
    assert set(_grant_json(store, waiting)) == {f.name for f in fields(OAuthGrant)} - {"code_hash"}
    _set_grant_json(store, waiting, {**_grant_json(store, waiting), "from_a_later_release": [1, 2]})
    assert store.grants.list_oauth_grants("w_1") == [waiting]
    store.grants.forget_grant_code("w_1", "k_1")  # forgetting the code rewrites nothing else of it
    assert _grant_json(store, waiting)["from_a_later_release"] == [1, 2]
    assert store.grants.list_oauth_grants("w_1") == [replace(waiting, code_hash=None)]


def test_a_database_of_an_earlier_release_gains_the_grants_code_column_and_keeps_its_grants(tmp_path):
    import json
    import sqlite3

    path = str(tmp_path / "earlier.db")
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE oauth_grants (connection_id TEXT PRIMARY KEY, workspace_id TEXT NOT NULL,"
                " person_id TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER NOT NULL)")
    earlier = OAuthGrant("k_0", "w_1", "p_1", "c1", "Client one", "http://127.0.0.1/cb", NOW - 5)
    old.execute("INSERT INTO oauth_grants VALUES ('k_0', 'w_1', 'p_1', ?, ?)",
                (json.dumps({"client_id": "c1", "client_name": "Client one", "connection_id": "k_0",
                             "created_at": NOW - 5, "person_id": "p_1", "redirect_uri": "http://127.0.0.1/cb",
                             "workspace_id": "w_1"}), NOW - 5))
    old.commit()
    old.close()
    store = SQLiteStore(path)
    try:
        waiting = OAuthGrant("k_1", "w_1", "p_1", "c1", "Client one", "http://127.0.0.1/cb", NOW, code_hash="h" * 64)
        store.grants.put_oauth_grant(waiting)
        assert store.grants.list_oauth_grants("w_1") == [earlier, waiting]  # the earlier grant reads as connected
    finally:
        store.close()


def test_whether_a_code_was_spent_is_answered_past_its_expiry(store):
    assert store.authorizations.issued_code_spent(secret_hash("never-issued")) is None
    store.authorizations.put_issued_code(code(1))
    store.authorizations.put_issued_code(code(2))
    assert store.authorizations.issued_code_spent(code(1).code_hash) is False
    assert store.authorizations.spend_issued_code(code(1).code_hash, NOW + 10)
    assert store.authorizations.issued_code_spent(code(1).code_hash) is True
    assert store.authorizations.get_issued_code(code(1).code_hash, NOW + 301) is None  # expired: no longer usable ...
    # ... but whether it was spent is still known
    assert store.authorizations.issued_code_spent(code(1).code_hash) is True
    assert store.authorizations.issued_code_spent(code(2).code_hash) is False


def test_tokens_expire_and_a_refresh_token_rotates_once(store):
    access, refresh = token("a1", ACCESS, NOW + 3600), token("r1", REFRESH, NOW + 86400)
    store.grants.put_issued_tokens([access, refresh])
    assert store.grants.get_issued_token(access.token_hash, NOW) == access
    assert store.grants.get_issued_token(access.token_hash, NOW + 3600) is None
    next_pair = [token("a2", ACCESS), token("r2", REFRESH)]
    assert store.grants.rotate_refresh_token(refresh.token_hash, NOW + 5, next_pair) is True
    assert store.grants.get_issued_token(refresh.token_hash, NOW + 6) == replace(refresh, used_at=NOW + 5)
    assert [store.grants.get_issued_token(t.token_hash, NOW + 6) for t in next_pair] == next_pair
    # Presenting the spent one again writes nothing.
    again = [token("a3", ACCESS), token("r3", REFRESH)]
    assert store.grants.rotate_refresh_token(refresh.token_hash, NOW + 7, again) is False
    assert [store.grants.get_issued_token(t.token_hash, NOW + 8) for t in again] == [None, None]


def test_only_a_live_refresh_token_rotates(store):
    access, refresh = token("a4", ACCESS), token("r4", REFRESH, NOW + 10)
    store.grants.put_issued_tokens([access, refresh])
    assert store.grants.rotate_refresh_token(access.token_hash, NOW, [token("x1",
                                                                            ACCESS)]) is False  # not a refresh token
    assert store.grants.rotate_refresh_token(refresh.token_hash, NOW + 10, [token("x2", ACCESS)]) is False  # expired
    assert store.grants.rotate_refresh_token(secret_hash("unknown"), NOW, [token("x3", ACCESS)]) is False
    assert store.grants.get_issued_token(secret_hash("x1"), NOW) is None


def test_simultaneous_rotations_have_one_winner(tmp_path):
    store = SQLiteStore(str(tmp_path / "race.db"))
    refresh = token("r5", REFRESH)
    store.grants.put_issued_tokens([refresh])
    results: list[bool] = []

    def rotate(n: int) -> None:
        results.append(store.grants.rotate_refresh_token(refresh.token_hash, NOW, [token(f"next-{n}", REFRESH)]))

    threads = [threading.Thread(target=rotate, args=(n,)) for n in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 4 + [True]
    assert sum(store.grants.get_issued_token(secret_hash(f"next-{n}"), NOW) is not None for n in range(5)) == 1


def test_connection_use_is_recorded_at_most_once_a_minute(store):
    store.connections.note_connection_use("w_1", "k_1", NOW)
    store.connections.note_connection_use("w_1", "k_1", NOW + 30)  # within the minute: kept as it was
    store.connections.note_connection_use("w_1", "k_2", NOW + 5)
    store.connections.note_connection_use("w_2", "k_3", NOW + 5)
    assert store.connections.connections_last_used("w_1") == {"k_1": NOW, "k_2": NOW + 5}
    store.connections.note_connection_use("w_1", "k_1", NOW + 61)
    assert store.connections.connections_last_used("w_1")["k_1"] == NOW + 61
    store.connections.note_connection_use("w_1", "k_1", NOW + 62, every=0)
    assert store.connections.connections_last_used("w_1")["k_1"] == NOW + 62
    assert store.connections.connections_last_used("w_9") == {}
