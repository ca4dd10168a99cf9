"""The storage interface, split by role. SQLite (embedded default) and DynamoDB implement every role.

* :class:`DocStore` — a toolset's documents. A toolset sees only :class:`DocReader`: it reads,
  and hands its writes to the gate, which commits them with the card (:meth:`CardStore.commit_card`).
* :class:`CardStore` — cards, their audit trail, their requests, tickets spent, and the signing
  keys in use.
* :class:`OutboxStore` — the notifications filed cards owe (the transactional outbox).
* :class:`AccountStore` — workspaces, persons, connections, sign-in tokens, sessions.
* :class:`LimitStore` — email slots, rate limits, confirmation codes and nonces.
* :class:`OAuthStore` — OAuth clients, authorization requests, codes, grants and tokens (hashes
  only), and when each connection was last used (in :mod:`.credential_stores`).
* :class:`SuppressionStore` — addresses card emails no longer go to (bounces, complaints).
* :class:`PasskeyStore` — persons' passkeys and the single-use WebAuthn challenges issued to them
  (in :mod:`.credential_stores`).

Rules every implementation keeps (the conformance suite in ``tests/store`` checks them):

* Times are integer epoch seconds passed in by the caller (``now``): stores never read a clock,
  so expiry is testable and identical on both stores.
* Expiry is applied on every read (a pending card past ``expires_at`` reads as ``expired``; an
  expired token, session, code or nonce reads as absent) and inside every transition's condition.
* Every transition is one conditional write transaction. Of any number of simultaneous callers
  exactly one wins; the others get a :class:`~countersign.core.cards.Refusal`.
* Ids of one workspace are not found from another: the error is the same as for an unknown id.
* Bad input (oversized arguments, unknown role...) raises :class:`BadInput` and writes nothing.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from typing import Any

from ..core.cards import CardState
from ..core.codes import CodeRecord
from .callers import CallerReads
from .credential_stores import OAuthStore, PasskeyStore
from .records import (
    AuditEntry,
    Card,
    CardCommit,
    Connection,
    Doc,
    Notification,
    Person,
    Session,
    SignInToken,
    Suppression,
    Workspace,
    Write,
)

MAX_DOC_WRITES = 90  # one transaction; DynamoDB allows 100 items and the card's own items need room


class DocReader(abc.ABC):
    """What a toolset's plans and reads see: its workspace's documents.

    Ids are ordered by code point (SQLite's binary collation, DynamoDB's UTF-8 byte order), so a
    toolset can make an id whose order means something (a date first) and read a range of it.
    """

    @abc.abstractmethod
    def get_doc(self, workspace_id: str, kind: str, doc_id: str) -> Doc | None: ...

    @abc.abstractmethod
    def get_docs(self, workspace_id: str, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Doc]:
        """Several docs in one read (``(kind, id)`` → doc; absent ones are left out)."""

    @abc.abstractmethod
    def list_docs(self, workspace_id: str, kind: str, prefix: str = "", *, start: str | None = None,
                  stop: str | None = None, limit: int | None = None, descending: bool = False) -> list[Doc]:
        """Docs of ``kind`` whose id starts with ``prefix`` and lies in ``[start, stop)``, ordered by
        id (``descending``: last first), at most ``limit`` of them. Only those docs are read."""


class DocStore(DocReader):
    @abc.abstractmethod
    def write_docs(self, workspace_id: str, writes: Iterable[Write]) -> None:
        """Apply every write or none: :class:`Conflict` naming the first write whose expectation
        failed (in its message, and as its ``kind`` and ``id`` attributes).

        At most :data:`MAX_DOC_WRITES` writes; each doc put stores ``expected_version + 1``. Used
        for effects that need no card (a call that runs at once), demo data and imports.
        """


class AccountStore(abc.ABC):
    # -- workspaces -------------------------------------------------------------------------------

    @abc.abstractmethod
    def create_workspace(self, workspace: Workspace, owner: Person | None = None) -> None:
        """Create, with its first member ``owner`` (a person of this workspace) in the same
        transaction: :class:`Conflict` if the id exists or the owner's email already belongs to a
        member (as :meth:`create_person`), and then nothing is written."""

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

    # -- persons ----------------------------------------------------------------------------------

    @abc.abstractmethod
    def create_person(self, person: Person) -> None:
        """Create; emails are unique across the service (case-insensitive): :class:`Conflict`."""

    @abc.abstractmethod
    def get_person(self, workspace_id: str, person_id: str) -> Person:
        """:class:`NotFound` if unknown or in another workspace."""

    def get_member(self, workspace_id: str, person_id: str) -> tuple[Workspace, Person]:
        """The workspace and one of its persons, in one read where the store can (every request's
        principal needs both). :class:`NotFound` if either is unknown."""
        return self.get_workspace(workspace_id), self.get_person(workspace_id, person_id)

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
    def remove_person(self, workspace_id: str, person_id: str, expected_role: str) -> Person:
        """Delete the person and free their email, in one transaction, if their role still reads
        ``expected_role`` (:class:`Conflict` otherwise: a role changed since it was read);
        :class:`NotFound` if unknown. Their records stay (connections, sessions, passkeys, cards,
        audit), but none acts for them again: every credential resolves its member on every
        request (:class:`~.callers.CallerReads`). Returns the person as they were."""

    # -- connections ------------------------------------------------------------------------------

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

    # -- sign-in tokens and sessions (hashes only) ------------------------------------------------

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


class CardStore(abc.ABC):
    # -- filing and reading -------------------------------------------------------------------------

    @abc.abstractmethod
    def file_card(self, card: Card, audit: AuditEntry, *, notify: bool = True, replacing: str | None = None,
                  signing_key: tuple[str, int] | None = None) -> Card:
        """File ``card`` (pending) as the live card of its request, in one transaction with its
        ``filed`` audit entry and (``notify``) the :class:`Notification` it owes its person, and
        (``signing_key``: key id, until) :meth:`note_signing_key` for the key that signed its ticket.

        If another card holds the same request (live: pending before its deadline, or running; or
        declined or completed within the answer memory), nothing is written and that card is
        returned instead, read by the store only in that case: of any number of identical filings,
        across processes, exactly one files. The caller compares ids to tell.
        :class:`BadInput` if the arguments exceed 64 KiB; :class:`Conflict` if the id exists.
        """

    @abc.abstractmethod
    def get_card(self, workspace_id: str, card_id: str, now: int) -> Card:
        """The card with expiry applied; :class:`NotFound` if unknown or in another workspace."""

    @abc.abstractmethod
    def latest_card(self, workspace_id: str, person_id: str, tool: str, fingerprint: str, now: int) -> Card | None:
        """The most recently filed card of this request (expiry applied), if any."""

    @abc.abstractmethod
    def list_pending_cards(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        """Pending, unexpired cards waiting on ``person_id``, oldest first; returns a next cursor.

        Listed cards (:func:`~countersign.store.records.listed`) have no arguments, subject, ticket,
        fingerprint or run: :meth:`get_card` a card before acting on it."""

    def count_pending_cards(self, workspace_id: str, person_id: str, now: int) -> int:
        """How many cards :meth:`list_pending_cards` would list in all (stores count without reading them)."""
        total, cursor = 0, None
        while True:
            cards, cursor = self.list_pending_cards(workspace_id, person_id, now, limit=1000, cursor=cursor)
            total += len(cards)
            if cursor is None:
                return total

    @abc.abstractmethod
    def list_card_history(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        """Cards of ``person_id`` that are decided or lapsed (not pending, not running), newest
        first; listed as :meth:`list_pending_cards` lists them."""

    @abc.abstractmethod
    def running_cards(self, now: int, limit: int = 50) -> list[Card]:
        """Cards left ``running`` whose lease ended before ``now`` (their runner died), whole, as
        read now: recovery's work."""

    # -- transitions ------------------------------------------------------------------------------

    @abc.abstractmethod
    def commit_card(self, commit: CardCommit) -> Card:
        """One transaction: the card's move (conditional on the version read, and out of
        ``pending`` on its deadline), the effect's writes, the ticket spent, the audit entries, and
        the request released or held. Returns the card as written.

        Raises :class:`~countersign.core.cards.Refusal` when the card moved first (the refusal for
        the state it lost to), or its ticket is already spent; :class:`Conflict` when a write's
        expectation failed (nothing written: re-read and re-stage); for a ``new`` card whose
        request is held by a live card, :class:`~countersign.store.errors.Taken` with that card
        (also when ``asked_at`` is set and the request's card was decided at or after it);
        :class:`~countersign.store.errors.Replayed` when its ``nonce`` was spent already (checked
        first: nothing else is reported then).
        """

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
        """Read the card and move it to ``target`` with nothing else written (a decline, a
        withdrawal): :meth:`commit_card` on the card as read now."""
        card = self.get_card(workspace_id, card_id, now)
        return self.commit_card(CardCommit(
            card=card, target=CardState(target), now=now, audit=(audit,), result=result,
            decline_reason=decline_reason, refusal=refusal, channel=channel,
        ))

    @abc.abstractmethod
    def append_audit(self, entry: AuditEntry) -> None:
        """An audit entry that is not a transition (for example a click refused as tampered)."""

    @abc.abstractmethod
    def audit_trail(self, workspace_id: str, card_id: str) -> list[AuditEntry]:
        """Every entry of a card, in order. :class:`NotFound` if the card is not in the workspace."""

    # -- signing keys in use ------------------------------------------------------------------------

    @abc.abstractmethod
    def note_signing_key(self, key_id: str, until: int) -> None:
        """Record that tickets signed by ``key_id`` may be spent until ``until`` (never lowers it)."""

    @abc.abstractmethod
    def signing_keys_in_use(self, now: int) -> dict[str, int]:
        """Key id → until, for every key that signed a card that may still be answered."""

    @abc.abstractmethod
    def forget_signing_key(self, key_id: str) -> None:
        """Drop a key from the record (its cards will be refused as tampered if clicked)."""


class OutboxStore(abc.ABC):
    """The notifications filed cards owe (the transactional outbox): written with the card by
    :meth:`CardStore.file_card`, delivered at least once by whoever leases them."""

    @abc.abstractmethod
    def get_notification(self, card_id: str) -> Notification | None: ...

    @abc.abstractmethod
    def lease_notification(self, card_id: str, now: int, lease_seconds: int) -> Notification | None:
        """Take the notification to deliver it: ``pending`` (due) or ``sending`` with a lapsed
        lease becomes ``sending`` until ``now + lease_seconds``. None if it is done, not due, or
        another sender holds it. One conditional write."""

    @abc.abstractmethod
    def finish_notification(self, card_id: str, now: int, outcome: str) -> None:
        """``sending → done`` with its outcome (sent, rate limited, disabled, nothing pending...)."""

    @abc.abstractmethod
    def retry_notification(self, card_id: str, now: int, due_at: int) -> None:
        """``sending → pending`` after a failed send, due again at ``due_at`` (one more attempt counted)."""

    @abc.abstractmethod
    def due_notifications(self, now: int, limit: int = 50) -> list[Notification]:
        """Notifications not done that may be tried at ``now`` (due, or with a lapsed lease), oldest first."""


class LimitStore(abc.ABC):
    """Counters and single-use values: email slots, rate limits, confirmation codes, nonces."""

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

    @abc.abstractmethod
    def claim_email_slot(self, person_id: str, now: int, interval: int, claimer: str | None = None) -> bool:
        """One conditional write: True if no email went to this person in the last ``interval`` s —
        or if the last claim was ``claimer``'s own (its sender died before finishing: it may try
        again, and the others stay limited)."""

    @abc.abstractmethod
    def release_email_slot(self, person_id: str, claimed_at: int) -> None:
        """Undo a claim made at ``claimed_at`` (a failed send), unless a later claim replaced it."""

    @abc.abstractmethod
    def hit_rate_limit(self, key: str, now: int, window: int, limit: int) -> bool:
        """Count one hit on ``key`` in the fixed window containing ``now``; False once over ``limit``."""


class SuppressionStore(abc.ABC):
    """Addresses card emails no longer go to. Keyed by the lower-cased address, across workspaces
    (a person's address is unique in the service); one write or one read each."""

    @abc.abstractmethod
    def suppress_address(self, suppression: Suppression) -> None:
        """Record (or replace) the suppression of ``suppression.email`` (lower-cased by the caller:
        :class:`BadInput` otherwise, or for a reason not in ``SUPPRESSION_REASONS``)."""

    @abc.abstractmethod
    def address_suppression(self, email: str) -> Suppression | None:
        """The suppression of ``email`` (any case), if any."""

    @abc.abstractmethod
    def lift_suppression(self, email: str) -> None:
        """Card emails go to ``email`` again (nothing happens if it was not suppressed)."""


class Store(CallerReads, DocStore, CardStore, OutboxStore, AccountStore, LimitStore, OAuthStore, SuppressionStore,
            PasskeyStore):
    """Everything countersign persists: the roles in one object, and a caller's credential with its
    member in one read (:mod:`.callers`)."""

    def close(self) -> None:  # pragma: no cover - optional
        """Release connections."""
