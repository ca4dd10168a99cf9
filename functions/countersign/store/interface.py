"""The one storage interface. SQLite (embedded default) and DynamoDB implement it.

Rules every implementation keeps (the conformance suite in ``tests/store`` checks them):

* Times are integer epoch seconds passed in by the caller (``now``): stores never read a clock,
  so expiry is testable and identical on both stores.
* Expiry is applied on every read (a pending card past ``expires_at`` reads as ``expired``; an
  expired token, session, code or nonce reads as absent) and inside every transition's condition.
* Every transition is one conditional write (plus its audit entry in the same transaction). Of
  any number of simultaneous callers exactly one wins; the others get a :class:`Refusal`.
* Ids of one workspace are not found from another: the error is the same as for an unknown id.
* Bad input (oversized arguments, unknown role...) raises :class:`BadInput` and writes nothing.
"""

from __future__ import annotations

import abc
from typing import Any, Iterable

from ..core.cards import CardState
from ..core.codes import CodeRecord
from .records import (
    AuditEntry,
    Card,
    Connection,
    Doc,
    DocWrite,
    Person,
    Session,
    SignInToken,
    Workspace,
)

MAX_DOC_WRITES = 90  # one transaction; DynamoDB allows 100 items and the card + audit need room


class Store(abc.ABC):
    """Everything countersign persists."""

    # -- workspaces, persons, connections ------------------------------------------------------

    @abc.abstractmethod
    def create_workspace(self, workspace: Workspace) -> None:
        """Create; :class:`Conflict` if the id exists."""

    @abc.abstractmethod
    def get_workspace(self, workspace_id: str) -> Workspace:
        """:class:`NotFound` if unknown."""

    @abc.abstractmethod
    def rename_workspace(self, workspace_id: str, name: str) -> Workspace:
        """Set the workspace's name and return the workspace as written.

        The name is stripped; empty or over 100 characters raises :class:`BadInput` (field
        ``name``) and writes nothing. :class:`NotFound` (as :meth:`get_workspace`) if unknown.
        One conditional write; settings and every other field are left as they are.
        """

    @abc.abstractmethod
    def update_workspace_settings(self, workspace_id: str, changes: dict[str, Any]) -> Workspace:
        """Merge ``changes`` into the settings (only known setting names, boolean values)."""

    @abc.abstractmethod
    def create_person(self, person: Person) -> None:
        """Create; emails are unique across the service (case-insensitive): :class:`Conflict`."""

    @abc.abstractmethod
    def get_person(self, workspace_id: str, person_id: str) -> Person:
        """:class:`NotFound` if unknown or in another workspace."""

    @abc.abstractmethod
    def get_person_by_email(self, email: str) -> Person | None:
        """Case-insensitive lookup."""

    @abc.abstractmethod
    def list_persons(self, workspace_id: str) -> list[Person]:
        """Every member, ordered by creation."""

    @abc.abstractmethod
    def update_person(self, workspace_id: str, person_id: str, **changes: Any) -> Person:
        """Change ``role``, ``name`` or ``agent_requests_email``."""

    @abc.abstractmethod
    def create_connection(self, connection: Connection) -> None:
        """Store a connection (its token only as ``token_hash``)."""

    @abc.abstractmethod
    def get_connection(self, workspace_id: str, connection_id: str) -> Connection:
        """:class:`NotFound` if unknown or in another workspace."""

    @abc.abstractmethod
    def get_connection_by_token_hash(self, token_hash: str) -> Connection | None:
        """The connection whose token hashes to ``token_hash`` (revoked ones included)."""

    @abc.abstractmethod
    def list_connections(self, workspace_id: str, person_id: str | None = None) -> list[Connection]:
        """Connections of a workspace (or of one person in it), ordered by creation."""

    @abc.abstractmethod
    def revoke_connection(self, workspace_id: str, connection_id: str, now: int) -> Connection:
        """Mark revoked (idempotent: a second revoke keeps the first time)."""

    # -- sign-in tokens and sessions (hashes only) ---------------------------------------------

    @abc.abstractmethod
    def put_signin_token(self, token: SignInToken) -> None: ...

    @abc.abstractmethod
    def consume_signin_token(self, token_hash: str, now: int) -> SignInToken | None:
        """Spend a sign-in token: the first call before expiry gets it, every later call None."""

    @abc.abstractmethod
    def create_session(self, session: Session) -> None: ...

    @abc.abstractmethod
    def get_session(self, session_hash: str, now: int) -> Session | None:
        """None when unknown, deleted or expired."""

    @abc.abstractmethod
    def delete_session(self, session_hash: str) -> None: ...

    # -- cards -----------------------------------------------------------------------------------

    @abc.abstractmethod
    def file_card(self, card: Card, audit: AuditEntry) -> None:
        """Store a new pending card and its ``filed`` audit entry in one transaction.

        Also records the card as the latest for ``(workspace, person, tool, fingerprint)``.
        :class:`BadInput` if the arguments exceed 64 KiB; :class:`Conflict` if the id exists.
        """

    @abc.abstractmethod
    def get_card(self, workspace_id: str, card_id: str, now: int) -> Card:
        """The card with expiry applied; :class:`NotFound` if unknown or in another workspace."""

    @abc.abstractmethod
    def latest_card(self, workspace_id: str, person_id: str, tool: str, fingerprint: str, now: int) -> Card | None:
        """The most recently filed card for this exact request (expiry applied), if any."""

    @abc.abstractmethod
    def list_pending_cards(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        """Pending, unexpired cards waiting on ``person_id``, oldest first; returns a next cursor."""

    @abc.abstractmethod
    def list_card_history(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        """Cards of ``person_id`` that are no longer pending (expired ones included), newest first."""

    @abc.abstractmethod
    def transition_card(
        self,
        workspace_id: str,
        card_id: str,
        target: CardState,
        now: int,
        audit: AuditEntry,
        *,
        result: Any = None,
        decline_reason: str | None = None,
        refusal: str | None = None,
        channel: str | None = None,
    ) -> Card:
        """Move a card to ``target`` if :func:`countersign.core.cards.check_move` allows it.

        One conditional write on the state that was read (and, out of ``pending``, on
        ``expires_at > now`` except when the target is ``expired``), with ``audit`` in the same
        transaction. The loser of a race, or any illegal move, gets the :class:`Refusal` for the
        state it lost to. Returns the card as written.
        """

    @abc.abstractmethod
    def append_audit(self, entry: AuditEntry) -> None:
        """An audit entry that is not a transition (for example a click refused as changed)."""

    @abc.abstractmethod
    def audit_trail(self, workspace_id: str, card_id: str) -> list[AuditEntry]:
        """Every entry of a card, in order. :class:`NotFound` if the card is not in the workspace."""

    # -- single-use values -----------------------------------------------------------------------

    @abc.abstractmethod
    def put_code(self, record: CodeRecord) -> None: ...

    @abc.abstractmethod
    def take_code(self, code_hash: str, now: int) -> CodeRecord | None:
        """Delete and return the code record: the first use spends it, matching or not.

        Returns the record even if expired (the caller checks); None if unknown or spent.
        """

    @abc.abstractmethod
    def use_nonce(self, nonce: str, expires_at: int, now: int) -> bool:
        """True the first time ``nonce`` is used (until ``expires_at``), False ever after."""

    # -- rate limits -----------------------------------------------------------------------------

    @abc.abstractmethod
    def claim_email_slot(self, person_id: str, now: int, interval: int) -> bool:
        """One conditional write: True if no email went to this person in the last ``interval`` s."""

    @abc.abstractmethod
    def release_email_slot(self, person_id: str, claimed_at: int) -> None:
        """Undo a claim made at ``claimed_at`` (a failed send), unless a later claim replaced it."""

    @abc.abstractmethod
    def hit_rate_limit(self, key: str, now: int, window: int, limit: int) -> bool:
        """Count one hit on ``key`` in the fixed window containing ``now``; False once over ``limit``."""

    # -- toolset documents -----------------------------------------------------------------------

    @abc.abstractmethod
    def get_doc(self, workspace_id: str, kind: str, doc_id: str) -> Doc | None: ...

    @abc.abstractmethod
    def list_docs(self, workspace_id: str, kind: str) -> list[Doc]:
        """Every doc of ``kind`` in the workspace, ordered by id."""

    @abc.abstractmethod
    def write_docs(self, workspace_id: str, writes: Iterable[DocWrite]) -> None:
        """Apply every write or none: :class:`Conflict` naming the first doc whose version moved
        (in its message, and as its ``kind`` and ``id`` attributes).

        At most :data:`MAX_DOC_WRITES` writes; each put stores ``expected_version + 1``.
        """

    def close(self) -> None:  # pragma: no cover - optional
        """Release connections."""
