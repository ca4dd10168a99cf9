"""The DynamoDB store: one table (see :mod:`countersign.store.table`), low-level boto3 client.

Request budget (the bench in ``bench/store.py`` counts them):

* filing a card is one ``TransactWriteItems`` (card + ``filed`` audit entry + latest pointer);
* a transition is one ``TransactWriteItems`` (conditional card update + audit put) when this
  store instance already holds the card in the state the move starts from (it filed, read or
  moved it), otherwise one consistent ``GetItem`` first. A confirm click after the page's
  ``get_card`` is therefore ``GetItem`` + two transactions.

Every card field except the lifecycle ones (state, updated_at, result, decline_reason, refusal,
channel) is immutable, and the lifecycle only moves forward, so a card cached in state ``s``
whose conditional write on ``status = s`` succeeds was exactly the stored card: the card as
written is known without reading it back. Reads (``get_card``, listings) never use that cache.

TTL is lazy: expiry is checked on every read and inside every condition.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Any, Iterable, Iterator

from ..core.codes import CodeRecord
from . import dynamodb_codec as codec
from . import checks  # the store-independent input checks (same BadInput as SQLite)
from .dynamodb_cards import CardMethods
from .errors import Conflict, NotFound, StoreError
from .interface import Store
from .records import (
    Card,
    Connection,
    Doc,
    DocWrite,
    Person,
    Session,
    SignInToken,
    Workspace,
)

S, N = codec.S, codec.N
CARD_RETENTION = 365 * 24 * 3600  # decided cards and their audit trail stay this long after the deadline
CACHE_SIZE = 256


class DynamoDBStore(CardMethods, Store):
    def __init__(self, table_name: str, *, client: Any = None, region_name: str | None = None,
                 card_retention: int | None = CARD_RETENTION):
        if client is None:
            import boto3

            client = boto3.client("dynamodb", region_name=region_name)
            self._own_client = True
        else:
            self._own_client = False
        self.client = client
        self.table = table_name
        self.card_retention = card_retention
        self._seq = codec.Sequence()
        self._cards: OrderedDict[str, Card] = OrderedDict()  # see the module docstring
        self._cards_lock = threading.Lock()
        self._errors = client.exceptions

    # -- plumbing ----------------------------------------------------------------------------

    def _get(self, key: codec.Item) -> codec.Item | None:
        return self.client.get_item(TableName=self.table, Key=key, ConsistentRead=True).get("Item")

    def _query(self, **kwargs: Any) -> Iterator[codec.Item]:
        kwargs.setdefault("TableName", self.table)
        while True:
            page = self.client.query(**kwargs)
            yield from page.get("Items", [])
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def _put_new(self, item: codec.Item) -> bool:
        try:
            self.client.put_item(TableName=self.table, Item=item, ConditionExpression="attribute_not_exists(pk)")
            return True
        except self._errors.ConditionalCheckFailedException:
            return False

    def _transact(self, items: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """Run a transaction; None on success, else the cancellation reasons (one per item)."""
        for op in items:
            next(iter(op.values())).setdefault("TableName", self.table)
        try:
            self.client.transact_write_items(TransactItems=items)
            return None
        except self._errors.TransactionCanceledException as exc:
            return exc.response.get("CancellationReasons") or [{"Code": "Unknown"}] * len(items)

    def _purge_at(self, t: int) -> int | None:
        return None if self.card_retention is None else t + self.card_retention

    def _remember(self, card: Card) -> Card:
        with self._cards_lock:
            self._cards[card.id] = card
            self._cards.move_to_end(card.id)
            while len(self._cards) > CACHE_SIZE:
                self._cards.popitem(last=False)
        return card

    # -- workspaces ------------------------------------------------------------------------------

    def create_workspace(self, workspace: Workspace) -> None:
        if not self._put_new(codec.workspace_item(workspace)):
            raise Conflict(f"A workspace with id {workspace.id!r} already exists.")

    def get_workspace(self, workspace_id: str) -> Workspace:
        item = self._get(codec.workspace_key(workspace_id))
        if item is None:
            raise NotFound("workspace", workspace_id)
        return codec.workspace_from_item(item)

    def rename_workspace(self, workspace_id: str, name: str) -> Workspace:
        name = checks.check_workspace_name(name)
        try:
            out = self.client.update_item(
                TableName=self.table,
                Key=codec.workspace_key(workspace_id),
                UpdateExpression="SET #name = :name",
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames={"#name": "name"},  # NAME is a DynamoDB reserved word
                ExpressionAttributeValues={":name": S(name)},
                ReturnValues="ALL_NEW",
            )
        except self._errors.ConditionalCheckFailedException:
            raise NotFound("workspace", workspace_id) from None
        return codec.workspace_from_item(out["Attributes"])

    def update_workspace_settings(self, workspace_id: str, changes: dict[str, Any]) -> Workspace:
        checks.check_settings(changes)
        if not changes:
            return self.get_workspace(workspace_id)
        names = {f"#k{i}": name for i, name in enumerate(changes)}
        values = {f":v{i}": {"BOOL": value} for i, value in enumerate(changes.values())}
        try:
            out = self.client.update_item(
                TableName=self.table,
                Key=codec.workspace_key(workspace_id),
                UpdateExpression="SET " + ", ".join(f"settings.#k{i} = :v{i}" for i in range(len(changes))),
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames=names,
                ExpressionAttributeValues=values,
                ReturnValues="ALL_NEW",
            )
        except self._errors.ConditionalCheckFailedException:
            raise NotFound("workspace", workspace_id) from None
        return codec.workspace_from_item(out["Attributes"])

    # -- persons ---------------------------------------------------------------------------------

    def create_person(self, person: Person) -> None:
        checks.check_role(person.role)
        email = codec.email_key(person.email)
        reasons = self._transact([
            {"Put": {"Item": codec.person_item(person), "ConditionExpression": "attribute_not_exists(pk)"}},
            {"Put": {"Item": {**email, "workspace_id": S(person.workspace_id), "person_id": S(person.id)},
                     "ConditionExpression": "attribute_not_exists(pk)"}},
        ])
        if reasons is None:
            return
        if reasons[0].get("Code") == "ConditionalCheckFailed":
            raise Conflict(f"A person with id {person.id!r} already exists.")
        if reasons[1].get("Code") == "ConditionalCheckFailed":
            raise Conflict(f"The email {person.email!r} already belongs to a member.")
        raise StoreError(f"Could not create the person: {reasons}")

    def get_person(self, workspace_id: str, person_id: str) -> Person:
        item = self._get(codec.person_key(workspace_id, person_id))
        if item is None:
            raise NotFound("person", person_id)
        return codec.person_from_item(item)

    def get_person_by_email(self, email: str) -> Person | None:
        pointer = self._get(codec.email_key(email))
        if pointer is None:
            return None
        item = self._get(codec.person_key(pointer["workspace_id"]["S"], pointer["person_id"]["S"]))
        return None if item is None else codec.person_from_item(item)

    def _list_in_workspace(self, workspace_id: str, prefix: str) -> list[codec.Item]:
        items = self._query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues={":pk": S(f"WS#{workspace_id}"), ":prefix": S(prefix)},
            ConsistentRead=True,
        )
        return sorted(items, key=lambda i: (int(i["created_at"]["N"]), i["id"]["S"]))

    def list_persons(self, workspace_id: str) -> list[Person]:
        return [codec.person_from_item(i) for i in self._list_in_workspace(workspace_id, "PERSON#")]

    def update_person(self, workspace_id: str, person_id: str, **changes: Any) -> Person:
        checks.check_person_changes(changes)
        if not changes:
            return self.get_person(workspace_id, person_id)
        values = {f":v{i}": codec.av(v) for i, v in enumerate(changes.values())}
        try:
            out = self.client.update_item(
                TableName=self.table,
                Key=codec.person_key(workspace_id, person_id),
                UpdateExpression="SET " + ", ".join(f"#k{i} = :v{i}" for i in range(len(changes))),
                ConditionExpression="attribute_exists(pk)",
                ExpressionAttributeNames={f"#k{i}": k for i, k in enumerate(changes)},
                ExpressionAttributeValues=values,
                ReturnValues="ALL_NEW",
            )
        except self._errors.ConditionalCheckFailedException:
            raise NotFound("person", person_id) from None
        return codec.person_from_item(out["Attributes"])

    # -- connections -----------------------------------------------------------------------------

    def create_connection(self, connection: Connection) -> None:
        item = codec.connection_item(connection)
        pointer = {**item, **codec.token_key(connection.token_hash)}
        reasons = self._transact([
            {"Put": {"Item": item, "ConditionExpression": "attribute_not_exists(pk)"}},
            {"Put": {"Item": pointer, "ConditionExpression": "attribute_not_exists(pk)"}},
        ])
        if reasons is None:
            return
        if reasons[0].get("Code") == "ConditionalCheckFailed":
            raise Conflict(f"A connection with id {connection.id!r} already exists.")
        if reasons[1].get("Code") == "ConditionalCheckFailed":
            raise Conflict("A connection with this token already exists.")
        raise StoreError(f"Could not create the connection: {reasons}")

    def get_connection(self, workspace_id: str, connection_id: str) -> Connection:
        item = self._get(codec.connection_key(workspace_id, connection_id))
        if item is None:
            raise NotFound("connection", connection_id)
        return codec.connection_from_item(item)

    def get_connection_by_token_hash(self, token_hash: str) -> Connection | None:
        item = self._get(codec.token_key(token_hash))  # a full copy of the connection: one read per request
        return None if item is None else codec.connection_from_item(item)

    def list_connections(self, workspace_id: str, person_id: str | None = None) -> list[Connection]:
        found = [codec.connection_from_item(i) for i in self._list_in_workspace(workspace_id, "CONN#")]
        return [c for c in found if person_id is None or c.person_id == person_id]

    def revoke_connection(self, workspace_id: str, connection_id: str, now: int) -> Connection:
        for _ in range(3):
            current = self.get_connection(workspace_id, connection_id)
            if current.revoked:
                return current
            update = {
                "UpdateExpression": "SET revoked_at = :now",
                "ConditionExpression": "attribute_exists(pk) AND attribute_not_exists(revoked_at)",
                "ExpressionAttributeValues": {":now": N(now)},
            }
            reasons = self._transact([
                {"Update": {"Key": codec.connection_key(workspace_id, connection_id), **update}},
                {"Update": {"Key": codec.token_key(current.token_hash), **update}},
            ])
            if reasons is None:
                return replace(current, revoked_at=now)
        raise StoreError(f"Could not revoke connection {connection_id!r}; try again.")

    # -- sign-in tokens and sessions -------------------------------------------------------------

    def put_signin_token(self, token: SignInToken) -> None:
        self.client.put_item(TableName=self.table, Item=codec.signin_item(token))

    def consume_signin_token(self, token_hash: str, now: int) -> SignInToken | None:
        try:
            out = self.client.delete_item(
                TableName=self.table,
                Key=codec.single_key("SIGNIN", token_hash),
                ConditionExpression="expires_at > :now",
                ExpressionAttributeValues={":now": N(now)},
                ReturnValues="ALL_OLD",
            )
        except self._errors.ConditionalCheckFailedException:
            return None
        item = out.get("Attributes")
        return None if not item else codec.signin_from_item(item)

    def create_session(self, session: Session) -> None:
        if not self._put_new(codec.session_item(session)):
            raise Conflict("That session already exists.")

    def get_session(self, session_hash: str, now: int) -> Session | None:
        item = self._get(codec.single_key("SESSION", session_hash))
        if item is None or int(item["expires_at"]["N"]) <= now:
            return None
        return codec.session_from_item(item)

    def delete_session(self, session_hash: str) -> None:
        self.client.delete_item(TableName=self.table, Key=codec.single_key("SESSION", session_hash))

    # -- single-use values -----------------------------------------------------------------------

    def put_code(self, record: CodeRecord) -> None:
        self.client.put_item(TableName=self.table, Item=codec.code_item(record))

    def take_code(self, code_hash: str, now: int) -> CodeRecord | None:
        out = self.client.delete_item(TableName=self.table, Key=codec.single_key("CODE", code_hash), ReturnValues="ALL_OLD")
        item = out.get("Attributes")
        return codec.code_from_item(item) if item else None

    def use_nonce(self, nonce: str, expires_at: int, now: int) -> bool:
        try:
            self.client.put_item(
                TableName=self.table,
                Item={**codec.single_key("NONCE", nonce), "expires_at": N(expires_at)},
                ConditionExpression="attribute_not_exists(pk) OR expires_at <= :now",
                ExpressionAttributeValues={":now": N(now)},
            )
            return True
        except self._errors.ConditionalCheckFailedException:
            return False

    # -- rate limits -----------------------------------------------------------------------------

    def claim_email_slot(self, person_id: str, now: int, interval: int) -> bool:
        try:
            self.client.update_item(
                TableName=self.table,
                Key=codec.email_slot_key(person_id),
                UpdateExpression="SET last_sent = :now, expires_at = :exp",
                ConditionExpression="attribute_not_exists(last_sent) OR last_sent <= :cutoff",
                ExpressionAttributeValues={":now": N(now), ":cutoff": N(now - interval), ":exp": N(now + 2 * interval)},
            )
            return True
        except self._errors.ConditionalCheckFailedException:
            return False

    def release_email_slot(self, person_id: str, claimed_at: int) -> None:
        try:
            self.client.delete_item(
                TableName=self.table,
                Key=codec.email_slot_key(person_id),
                ConditionExpression="last_sent = :mine",
                ExpressionAttributeValues={":mine": N(claimed_at)},
            )
        except self._errors.ConditionalCheckFailedException:
            pass  # a later claim replaced ours (or nothing was claimed): leave it

    def hit_rate_limit(self, key: str, now: int, window: int, limit: int) -> bool:
        start = now - now % window
        try:
            self.client.update_item(
                TableName=self.table,
                Key=codec.limit_key(key, start),
                UpdateExpression="ADD hits :one SET expires_at = :exp",
                ConditionExpression="attribute_not_exists(hits) OR hits < :limit",
                ExpressionAttributeValues={":one": N(1), ":limit": N(limit), ":exp": N(start + 2 * window)},
            )
            return True
        except self._errors.ConditionalCheckFailedException:
            return False

    # -- toolset documents -----------------------------------------------------------------------

    def get_doc(self, workspace_id: str, kind: str, doc_id: str) -> Doc | None:
        item = self._get(codec.doc_key(workspace_id, kind, doc_id))
        return None if item is None else codec.doc_from_item(item)

    def list_docs(self, workspace_id: str, kind: str) -> list[Doc]:
        items = self._query(
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": S(codec.doc_partition(workspace_id, kind))},
            ConsistentRead=True,
        )
        return [codec.doc_from_item(i) for i in items]

    def write_docs(self, workspace_id: str, writes: Iterable[DocWrite]) -> None:
        writes = list(writes)
        checks.check_doc_writes(writes)  # at most MAX_DOC_WRITES, no doc twice, plain JSON
        if not writes:
            return
        ops = []
        for w in writes:
            if w.expected_version == 0:
                cond: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(pk)"}
            else:
                cond = {"ConditionExpression": "version = :v", "ExpressionAttributeValues": {":v": N(w.expected_version)}}
            if w.data is None:
                ops.append({"Delete": {"Key": codec.doc_key(workspace_id, w.kind, w.id), **cond}})
            else:
                item = codec.doc_item(workspace_id, w.kind, w.id, w.data, w.expected_version + 1)
                ops.append({"Put": {"Item": item, **cond}})
        reasons = self._transact(ops)
        if reasons is None:
            return
        for w, reason in zip(writes, reasons):
            if reason.get("Code") == "ConditionalCheckFailed":
                raise Conflict(
                    f"The {w.kind} {w.id!r} changed since it was read (expected version {w.expected_version}).",
                    kind=w.kind, id=w.id,
                )
        raise StoreError(f"The documents could not be written ({[r.get('Code') for r in reasons]}); nothing was written.")

    def close(self) -> None:
        if self._own_client:
            self.client.close()
