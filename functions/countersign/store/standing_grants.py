"""The standing grants role: bounded permissions a person gave one of their agent connections to
run one tool without asking each time (docs/policy.md, "Standing grants").

Not OAuth grants (:mod:`.grants`, what Allow gave a client): a *standing grant* says "this
connection may run ``tool`` with these bounds, so many times, until then", and every call it covers
still goes through the gate (planned, fingerprinted, committed once with its card, audited).

:class:`StandingGrantStore` is the interface both stores implement; :class:`StandingGrant` and
:class:`StandingGrantUse` are its records. A grant is made by the commit of the card a person
confirmed (:class:`StandingGrantWrite`, one of the effect's writes), and used by the commit of the
card it runs (:class:`GrantUse` rides in :class:`~.cards.CardCommit`): one conditional write, in the
card's own transaction, that consumes a use only while the grant is unrevoked, unexpired, has a use
left and room under its cap. So of any number of calls racing for its last use, exactly one runs.
The rules every role keeps are stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any

from ..core.canonical import canonical_bytes
from .connections import Connection
from .errors import BadInput

MAX_GRANT_DAYS = 30
MAX_GRANT_USES = 1000
MAX_GRANT_NAME = 60
MAX_LIMITS_BYTES = 16 * 1024
MAX_AMOUNT = 10**15  # thousandths; far beyond any real bound, within both stores' integers


# -- records ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StandingGrant:
    """A person's standing permission for one connection to run one tool within bounds.

    * ``limits`` — per bounded argument, as the tool declares it: ``{"max": thousandths}`` (an
      amount, at most this much a call) or ``{"in": [values]}`` (one of these values).
    * ``terms`` — the same bounds in words, as the person saw them when they granted it.
    * ``cap`` — at most this much in all (thousandths of the tool's amount argument), or None.
    * ``uses``, ``spent`` — how many calls it ran and how much of the amount they used.
    * ``passkey`` — made by a card the workspace's passkey policy required a passkey for.
    """

    id: str
    workspace_id: str
    connection_id: str
    person_id: str
    tool: str
    name: str
    limits: dict[str, Any]
    max_uses: int
    created_at: int
    expires_at: int
    cap: int | None = None
    terms: tuple[str, ...] = ()
    uses: int = 0
    spent: int = 0
    passkey: bool = False
    revoked_at: int | None = None
    revoked_by: str | None = None

    @property
    def uses_left(self) -> int:
        return max(0, self.max_uses - self.uses)

    @property
    def cap_left(self) -> int | None:
        return None if self.cap is None else max(0, self.cap - self.spent)

    def state_at(self, now: int) -> str:
        """``active``, ``revoked``, ``expired`` or ``used up`` at ``now``."""
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= now:
            return "expired"
        if self.uses >= self.max_uses or (self.cap is not None and self.spent >= self.cap):
            return "used up"
        return "active"


@dataclass(frozen=True)
class StandingGrantUse:
    """One call a grant ran: its card (completed, or running), when, and how much of the amount."""

    grant_id: str
    workspace_id: str
    card_id: str
    at: int
    amount: int = 0


@dataclass(frozen=True)
class StandingGrantWrite:
    """Make ``grant`` (it must not exist yet): one of the writes of the card that grants it.

    ``connection``: the grant's connection as the plan read it. Its ``grants_until`` is what the
    write expects to find: the DynamoDB store moves the grant's tool on to the grant's expiry in
    the same transaction, on condition that it is still as read (a grant for the same tool of the
    same connection made meanwhile: :class:`~.errors.Conflict`, and the runner plans again), so a
    connection's hint never says less than its grants (SQLite reads it from the grants)."""

    grant: StandingGrant
    connection: Connection


@dataclass(frozen=True)
class GrantUse:
    """A use of a grant consumed by a card's commit, in the same transaction: only if the grant
    is still the connection's, unrevoked, unexpired at ``at``, has a use left and ``amount`` fits
    under its cap; else :class:`~.errors.GrantUnavailable` and nothing is written."""

    grant_id: str
    workspace_id: str
    connection_id: str
    at: int
    amount: int = 0
    cap: int | None = None  # the grant's cap as read (it never changes): the room checked is cap - amount
    details: dict[str, Any] = field(default_factory=dict, compare=False)  # the grant as read, for replies

    @property
    def room(self) -> int | None:
        """The most the grant may have spent before this use for it to fit (None: no cap)."""
        return None if self.cap is None else self.cap - self.amount


# -- the role ---------------------------------------------------------------------------------------


class StandingGrantStore(abc.ABC):
    """Standing grants: made and used only in a card's commit (:class:`StandingGrantWrite`,
    :class:`GrantUse`), read, listed with their uses, and revoked by one conditional write."""

    @abc.abstractmethod
    def get_standing_grant(self, workspace_id: str, grant_id: str) -> StandingGrant:
        """:class:`~.errors.NotFound` if unknown or in another workspace."""

    @abc.abstractmethod
    def list_standing_grants(self, workspace_id: str, *, person_id: str | None = None,
                             connection_id: str | None = None) -> list[StandingGrant]:
        """The workspace's grants (of one person, or one connection), newest first, whatever their state."""

    @abc.abstractmethod
    def list_standing_grant_uses(self, workspace_id: str, grant_id: str) -> list[StandingGrantUse]:
        """Every use of the grant, oldest first. :class:`~.errors.NotFound` as :meth:`get_standing_grant`."""

    @abc.abstractmethod
    def revoke_standing_grant(self, workspace_id: str, grant_id: str, by: str, now: int) -> StandingGrant:
        """Revoke it (one conditional write: the next call it would have covered is held as any
        other); a grant revoked already is returned as it is. :class:`~.errors.NotFound` as
        :meth:`get_standing_grant`."""


# -- checks -----------------------------------------------------------------------------------------


def check_standing_grant(grant: StandingGrant) -> None:
    """What both stores refuse before writing a grant (:class:`BadInput`, nothing written)."""
    if not isinstance(grant.name, str) or not grant.name.strip() or len(grant.name) > MAX_GRANT_NAME:
        raise BadInput("name", f"a grant's name is 1 to {MAX_GRANT_NAME} characters.")
    if type(grant.max_uses) is not int or not 1 <= grant.max_uses <= MAX_GRANT_USES:
        raise BadInput("uses", f"a grant allows 1 to {MAX_GRANT_USES} uses.")
    if not grant.created_at < grant.expires_at <= grant.created_at + MAX_GRANT_DAYS * 86400:
        raise BadInput("expires_at", f"a grant lasts at most {MAX_GRANT_DAYS} days.")
    if grant.cap is not None and (type(grant.cap) is not int or not 0 < grant.cap <= MAX_AMOUNT):
        raise BadInput("cap", "a grant's cap is a positive amount.")
    if not isinstance(grant.limits, dict) or not grant.limits:
        raise BadInput("limits", "a grant bounds at least one argument.")
    try:
        size = len(canonical_bytes({"limits": grant.limits, "terms": list(grant.terms)}))
    except (TypeError, ValueError) as exc:
        raise BadInput("limits", "must be plain JSON.") from exc
    if size > MAX_LIMITS_BYTES:
        raise BadInput("limits", f"{size} bytes; a grant's limits hold at most {MAX_LIMITS_BYTES}.")


def check_grant_connection(write: StandingGrantWrite) -> None:
    """The connection a grant write carries is the grant's (:class:`BadInput`, nothing written)."""
    grant, connection = write.grant, write.connection
    if (connection.id, connection.workspace_id, connection.person_id) != (
            grant.connection_id, grant.workspace_id, grant.person_id):
        raise BadInput("connection_id", "a grant is written with its own connection, as read.")


def grant_fields(grant: StandingGrant) -> dict[str, Any]:
    """The grant as plain values (its ``terms`` a list), for a store to keep."""
    return {
        "id": grant.id, "workspace_id": grant.workspace_id, "connection_id": grant.connection_id,
        "person_id": grant.person_id, "tool": grant.tool, "name": grant.name, "limits": grant.limits,
        "max_uses": grant.max_uses, "created_at": grant.created_at, "expires_at": grant.expires_at,
        "cap": grant.cap, "terms": list(grant.terms), "uses": grant.uses, "spent": grant.spent,
        "passkey": grant.passkey, "revoked_at": grant.revoked_at, "revoked_by": grant.revoked_by,
    }


def grant_from(values: dict[str, Any]) -> StandingGrant:
    names = StandingGrant.__dataclass_fields__
    kept = {k: v for k, v in values.items() if k in names}
    kept["terms"] = tuple(kept.get("terms") or ())
    kept["passkey"] = bool(kept.get("passkey"))
    return StandingGrant(**kept)
