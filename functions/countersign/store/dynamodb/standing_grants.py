"""Standing grants and their uses on DynamoDB.

A grant is the item ``WS#<ws>``/``SGRANT#<id>``: what its conditions read as attributes
(``connection_id``, ``max_uses``, ``cap``, ``grant_expires_at``, ``uses``, ``spent``,
``revoked_at``), the rest as canonical JSON in ``data``. It has no TTL: an ended grant stays listed.
Each use is ``WS#<ws>``/``SGRANTUSE#<grant id>#<at:012d>#<card id>``.

A grant is put by the transaction of the card that made it (:func:`grant_put`, one of the effect's
items, with :func:`hint_items` moving its connection's ``grants_until`` on) and used by the
transaction of a card it runs (:func:`use_items`): an Update whose condition expression holds
every rule (the connection's, unrevoked, unexpired, a use left, room under the cap) and adds one
use, with the use's own Put, in the card's ``TransactWriteItems``. Neither a use nor a revocation
touches the hint: a held reply still names such a grant until a day past its expiry.
"""

from __future__ import annotations

from typing import Any

from ..connections import Connection
from ..errors import NotFound
from ..standing_grants import GrantUse, StandingGrant, StandingGrantStore, StandingGrantUse, grant_fields, grant_from
from . import codec
from .client import Table
from .codec import GRANTS_UNTIL

ATTRIBUTES = ("connection_id", "person_id", "max_uses", "cap", "uses", "spent", "revoked_at", "revoked_by")


def grant_key(workspace_id: str, grant_id: str) -> codec.Item:
    return codec.key(f"WS#{workspace_id}", f"SGRANT#{grant_id}")


def grant_put(grant: StandingGrant) -> dict[str, Any]:
    """The transaction item that makes ``grant`` (only if it does not exist yet)."""
    fields = grant_fields(grant)
    data = {k: v for k, v in fields.items() if k not in ATTRIBUTES}
    values = {k: fields[k] for k in ATTRIBUTES}
    values.update(id=grant.id, workspace_id=grant.workspace_id, grant_expires_at=grant.expires_at,
                  created_at=grant.created_at, data=codec.J(data))
    return {"Put": {"Item": {**grant_key(grant.workspace_id, grant.id), **codec.item(values)},
                    "ConditionExpression": "attribute_not_exists(pk)"}}


def hint_items(grant: StandingGrant, connection: Connection) -> list[dict[str, Any]]:
    """What making ``grant`` does to its connection's ``grants_until``, on both of the
    connection's items (its own and its token's, a full copy): the grant's tool moved on to the
    grant's expiry, on condition that it is still as ``connection`` was read (no item when it
    says as much already: the hint only ever grows). A connection read without a hint (made
    before it was kept) is left without one: both items lose it, if they had one after all, so
    the connection says it does not know rather than less than its grants."""
    was = connection.grants_until
    keys = [codec.connection_key(connection.workspace_id, connection.id), codec.token_key(connection.token_hash)]
    if was is None:
        return [{"Update": {"Key": key, "UpdateExpression": f"REMOVE {GRANTS_UNTIL}",
                            "ConditionExpression": "attribute_exists(pk)"}} for key in keys]
    before = was.get(grant.tool)
    if before is not None and before >= grant.expires_at:
        return []
    vals: dict[str, Any] = {":until": grant.expires_at}
    condition = f"attribute_exists({GRANTS_UNTIL}) AND "
    if before is None:
        condition += f"attribute_not_exists({GRANTS_UNTIL}.#tool)"
    else:
        condition += f"{GRANTS_UNTIL}.#tool = :before"
        vals[":before"] = before
    update = {"UpdateExpression": f"SET {GRANTS_UNTIL}.#tool = :until", "ConditionExpression": condition,
              "ExpressionAttributeNames": {"#tool": grant.tool}, "ExpressionAttributeValues": codec.values(vals)}
    return [{"Update": {"Key": key, **update}} for key in keys]


def use_items(use: GrantUse, card_id: str) -> list[dict[str, Any]]:
    """The conditional Update that takes the use, and the use's record."""
    condition = ("attribute_exists(pk) AND connection_id = :conn AND attribute_not_exists(revoked_at)"
                 " AND grant_expires_at > :at AND uses < max_uses")
    vals: dict[str, Any] = {":conn": use.connection_id, ":at": use.at, ":one": 1, ":amount": use.amount}
    if use.room is not None:
        condition += " AND spent <= :room"
        vals[":room"] = use.room
    record = {"grant_id": use.grant_id, "workspace_id": use.workspace_id, "card_id": card_id, "at": use.at,
              "amount": use.amount}
    return [
        {"Update": {
            "Key": grant_key(use.workspace_id, use.grant_id),
            "UpdateExpression": "SET uses = uses + :one, spent = spent + :amount",
            "ConditionExpression": condition,
            "ExpressionAttributeValues": codec.values(vals),
        }},
        {"Put": {"Item": {**codec.key(f"WS#{use.workspace_id}",
                                      f"SGRANTUSE#{use.grant_id}#{use.at:012d}#{card_id}"),
                          **codec.item(record)},
                 "ConditionExpression": "attribute_not_exists(pk)"}},
    ]


def _grant(found: dict[str, Any]) -> StandingGrant:
    values = codec.unJ(found["data"])
    values.update({k: found.get(k) for k in ATTRIBUTES})
    values.update(id=found["id"], workspace_id=found["workspace_id"], expires_at=found["grant_expires_at"],
                  created_at=found["created_at"])
    return grant_from(values)


class DynamoStandingGrants(StandingGrantStore):
    def __init__(self, table: Table):
        self.table = table

    def get_standing_grant(self, workspace_id: str, grant_id: str) -> StandingGrant:
        found = self.table.get(grant_key(workspace_id, grant_id))
        if found is None:
            raise NotFound("standing grant", grant_id)
        return _grant(found)

    def list_standing_grants(self, workspace_id: str, *, person_id: str | None = None,
                             connection_id: str | None = None) -> list[StandingGrant]:
        found = self.table.workspace_records(workspace_id, "SGRANT#")
        grants = [_grant(v) for v in found]
        grants = [g for g in grants if (person_id is None or g.person_id == person_id)
                  and (connection_id is None or g.connection_id == connection_id)]
        return sorted(grants, key=lambda g: (g.created_at, g.id), reverse=True)

    def list_standing_grant_uses(self, workspace_id: str, grant_id: str) -> list[StandingGrantUse]:
        self.get_standing_grant(workspace_id, grant_id)
        found = self.table.query(
            KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
            ExpressionAttributeValues=codec.values({":pk": f"WS#{workspace_id}", ":prefix": f"SGRANTUSE#{grant_id}#"}),
            ConsistentRead=True,
        )
        return [StandingGrantUse(v["grant_id"], v["workspace_id"], v["card_id"], v["at"], v["amount"]) for v in found]

    def revoke_standing_grant(self, workspace_id: str, grant_id: str, by: str, now: int) -> StandingGrant:
        self.table.update(
            grant_key(workspace_id, grant_id),
            UpdateExpression="SET revoked_at = :now, revoked_by = :by",
            ConditionExpression="attribute_exists(pk) AND attribute_not_exists(revoked_at)",
            ExpressionAttributeValues=codec.values({":now": now, ":by": by}),
        )
        return self.get_standing_grant(workspace_id, grant_id)
