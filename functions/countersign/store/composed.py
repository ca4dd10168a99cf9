"""A :class:`Store` assembled by composition: one object per role, each method forwarded.

Both adapters build one (:class:`~countersign.store.sqlite.SQLiteStore`,
:class:`~countersign.store.dynamodb.DynamoDBStore`) from role objects that share only the
plumbing they are handed (a database, a table client); no role reaches into another.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..core.codes import CodeRecord
from .interface import (
    AccountStore,
    CardStore,
    DocStore,
    LimitStore,
    OAuthStore,
    OutboxStore,
    PasskeyStore,
    Store,
    SuppressionStore,
)
from .oauth_records import IssuedCode, IssuedToken, OAuthClientRecord, OAuthGrant, PendingAuthorization
from .records import (
    AuditEntry,
    Card,
    CardCommit,
    Connection,
    Doc,
    Notification,
    Passkey,
    PasskeyChallenge,
    Person,
    Session,
    SignInToken,
    Suppression,
    Workspace,
    Write,
)


class ComposedStore(Store):
    def __init__(self, *, docs: DocStore, cards: CardStore, outbox: OutboxStore, accounts: AccountStore,
                 limits: LimitStore, oauth: OAuthStore, suppressions: SuppressionStore, passkeys: PasskeyStore):
        self._docs = docs
        self._cards = cards
        self._outbox = outbox
        self._accounts = accounts
        self._limits = limits
        self._oauth = oauth
        self._suppressions = suppressions
        self._passkeys = passkeys

    # -- DocReader (docs) -------------------------------------------------------

    def get_doc(self, workspace_id: str, kind: str, doc_id: str) -> Doc | None:
        return self._docs.get_doc(workspace_id, kind, doc_id)

    def get_docs(self, workspace_id: str, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Doc]:
        return self._docs.get_docs(workspace_id, keys)

    def list_docs(self, workspace_id: str, kind: str, prefix: str = "", *, start: str | None = None,
                  stop: str | None = None, limit: int | None = None, descending: bool = False) -> list[Doc]:
        return self._docs.list_docs(workspace_id, kind, prefix, start=start, stop=stop, limit=limit,
                                    descending=descending)

    # -- DocStore (docs) --------------------------------------------------------

    def write_docs(self, workspace_id: str, writes: Iterable[Write]) -> None:
        return self._docs.write_docs(workspace_id, writes)

    # -- AccountStore (accounts) ------------------------------------------------

    def create_workspace(self, workspace: Workspace, owner: Person | None = None) -> None:
        return self._accounts.create_workspace(workspace, owner)

    def get_workspace(self, workspace_id: str) -> Workspace:
        return self._accounts.get_workspace(workspace_id)

    def rename_workspace(self, workspace_id: str, name: str) -> Workspace:
        return self._accounts.rename_workspace(workspace_id, name)

    def update_workspace_settings(self, workspace_id: str, changes: dict[str, Any]) -> Workspace:
        return self._accounts.update_workspace_settings(workspace_id, changes)

    def create_person(self, person: Person) -> None:
        return self._accounts.create_person(person)

    def get_person(self, workspace_id: str, person_id: str) -> Person:
        return self._accounts.get_person(workspace_id, person_id)

    def get_member(self, workspace_id: str, person_id: str) -> tuple[Workspace, Person]:
        return self._accounts.get_member(workspace_id, person_id)

    def get_person_by_email(self, email: str) -> Person | None:
        return self._accounts.get_person_by_email(email)

    def list_persons(self, workspace_id: str) -> list[Person]:
        return self._accounts.list_persons(workspace_id)

    def update_person(self, workspace_id: str, person_id: str, **changes: Any) -> Person:
        return self._accounts.update_person(workspace_id, person_id, **changes)

    def remove_person(self, workspace_id: str, person_id: str, expected_role: str) -> Person:
        return self._accounts.remove_person(workspace_id, person_id, expected_role)

    def create_connection(self, connection: Connection) -> None:
        return self._accounts.create_connection(connection)

    def get_connection(self, workspace_id: str, connection_id: str) -> Connection:
        return self._accounts.get_connection(workspace_id, connection_id)

    def get_connection_by_token_hash(self, token_hash: str) -> Connection | None:
        return self._accounts.get_connection_by_token_hash(token_hash)

    def list_connections(self, workspace_id: str, person_id: str | None = None) -> list[Connection]:
        return self._accounts.list_connections(workspace_id, person_id)

    def revoke_connection(self, workspace_id: str, connection_id: str, now: int) -> Connection:
        return self._accounts.revoke_connection(workspace_id, connection_id, now)

    def put_signin_token(self, token: SignInToken) -> None:
        return self._accounts.put_signin_token(token)

    def consume_signin_token(self, token_hash: str, now: int) -> SignInToken | None:
        return self._accounts.consume_signin_token(token_hash, now)

    def create_session(self, session: Session) -> None:
        return self._accounts.create_session(session)

    def get_session(self, session_hash: str, now: int) -> Session | None:
        return self._accounts.get_session(session_hash, now)

    def delete_session(self, session_hash: str) -> None:
        return self._accounts.delete_session(session_hash)

    # -- CardStore (cards) ------------------------------------------------------

    def file_card(self, card: Card, audit: AuditEntry, *, notify: bool = True, replacing: str | None = None,
                  signing_key: tuple[str, int] | None = None) -> Card:
        return self._cards.file_card(card, audit, notify=notify, replacing=replacing, signing_key=signing_key)

    def get_card(self, workspace_id: str, card_id: str, now: int) -> Card:
        return self._cards.get_card(workspace_id, card_id, now)

    def latest_card(self, workspace_id: str, person_id: str, tool: str, fingerprint: str, now: int) -> Card | None:
        return self._cards.latest_card(workspace_id, person_id, tool, fingerprint, now)

    def list_pending_cards(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        return self._cards.list_pending_cards(workspace_id, person_id, now, limit, cursor)

    def count_pending_cards(self, workspace_id: str, person_id: str, now: int) -> int:
        return self._cards.count_pending_cards(workspace_id, person_id, now)

    def list_card_history(
        self, workspace_id: str, person_id: str, now: int, limit: int = 50, cursor: str | None = None
    ) -> tuple[list[Card], str | None]:
        return self._cards.list_card_history(workspace_id, person_id, now, limit, cursor)

    def running_cards(self, now: int, limit: int = 50) -> list[Card]:
        return self._cards.running_cards(now, limit)

    def commit_card(self, commit: CardCommit) -> Card:
        return self._cards.commit_card(commit)

    def append_audit(self, entry: AuditEntry) -> None:
        return self._cards.append_audit(entry)

    def audit_trail(self, workspace_id: str, card_id: str) -> list[AuditEntry]:
        return self._cards.audit_trail(workspace_id, card_id)

    def note_signing_key(self, key_id: str, until: int) -> None:
        return self._cards.note_signing_key(key_id, until)

    def signing_keys_in_use(self, now: int) -> dict[str, int]:
        return self._cards.signing_keys_in_use(now)

    def forget_signing_key(self, key_id: str) -> None:
        return self._cards.forget_signing_key(key_id)

    # -- OutboxStore (outbox) ---------------------------------------------------

    def get_notification(self, card_id: str) -> Notification | None:
        return self._outbox.get_notification(card_id)

    def lease_notification(self, card_id: str, now: int, lease_seconds: int) -> Notification | None:
        return self._outbox.lease_notification(card_id, now, lease_seconds)

    def finish_notification(self, card_id: str, now: int, outcome: str) -> None:
        return self._outbox.finish_notification(card_id, now, outcome)

    def retry_notification(self, card_id: str, now: int, due_at: int) -> None:
        return self._outbox.retry_notification(card_id, now, due_at)

    def due_notifications(self, now: int, limit: int = 50) -> list[Notification]:
        return self._outbox.due_notifications(now, limit)

    # -- LimitStore (limits) ----------------------------------------------------

    def put_code(self, record: CodeRecord) -> None:
        return self._limits.put_code(record)

    def take_code(self, code_hash: str, now: int) -> CodeRecord | None:
        return self._limits.take_code(code_hash, now)

    def use_nonce(self, nonce: str, expires_at: int, now: int) -> bool:
        return self._limits.use_nonce(nonce, expires_at, now)

    def claim_email_slot(self, person_id: str, now: int, interval: int, claimer: str | None = None) -> bool:
        return self._limits.claim_email_slot(person_id, now, interval, claimer)

    def release_email_slot(self, person_id: str, claimed_at: int) -> None:
        return self._limits.release_email_slot(person_id, claimed_at)

    def hit_rate_limit(self, key: str, now: int, window: int, limit: int) -> bool:
        return self._limits.hit_rate_limit(key, now, window, limit)

    # -- OAuthStore (oauth) -----------------------------------------------------

    def put_oauth_client(self, client: OAuthClientRecord) -> None:
        return self._oauth.put_oauth_client(client)

    def get_oauth_client(self, client_id: str, now: int) -> OAuthClientRecord | None:
        return self._oauth.get_oauth_client(client_id, now)

    def put_pending_authorization(self, pending: PendingAuthorization) -> None:
        return self._oauth.put_pending_authorization(pending)

    def get_pending_authorization(self, request_hash: str, now: int) -> PendingAuthorization | None:
        return self._oauth.get_pending_authorization(request_hash, now)

    def take_pending_authorization(self, request_hash: str, now: int) -> PendingAuthorization | None:
        return self._oauth.take_pending_authorization(request_hash, now)

    def put_issued_code(self, code: IssuedCode) -> None:
        return self._oauth.put_issued_code(code)

    def get_issued_code(self, code_hash: str, now: int) -> IssuedCode | None:
        return self._oauth.get_issued_code(code_hash, now)

    def spend_issued_code(self, code_hash: str, now: int) -> bool:
        return self._oauth.spend_issued_code(code_hash, now)

    def issued_code_spent(self, code_hash: str) -> bool | None:
        return self._oauth.issued_code_spent(code_hash)

    def put_oauth_grant(self, grant: OAuthGrant) -> None:
        return self._oauth.put_oauth_grant(grant)

    def list_oauth_grants(self, workspace_id: str, person_id: str | None = None) -> list[OAuthGrant]:
        return self._oauth.list_oauth_grants(workspace_id, person_id)

    def forget_grant_code(self, workspace_id: str, connection_id: str) -> None:
        return self._oauth.forget_grant_code(workspace_id, connection_id)

    def put_issued_tokens(self, tokens: Sequence[IssuedToken]) -> None:
        return self._oauth.put_issued_tokens(tokens)

    def get_issued_token(self, token_hash: str, now: int) -> IssuedToken | None:
        return self._oauth.get_issued_token(token_hash, now)

    def rotate_refresh_token(self, token_hash: str, now: int, replacements: Sequence[IssuedToken]) -> bool:
        return self._oauth.rotate_refresh_token(token_hash, now, replacements)

    def note_connection_use(self, workspace_id: str, connection_id: str, now: int, every: int = 60) -> None:
        return self._oauth.note_connection_use(workspace_id, connection_id, now, every)

    def connections_last_used(self, workspace_id: str) -> dict[str, int]:
        return self._oauth.connections_last_used(workspace_id)
    # -- SuppressionStore (suppressions) ----------------------------------------

    def suppress_address(self, suppression: Suppression) -> None:
        return self._suppressions.suppress_address(suppression)

    def address_suppression(self, email: str) -> Suppression | None:
        return self._suppressions.address_suppression(email)

    def lift_suppression(self, email: str) -> None:
        return self._suppressions.lift_suppression(email)

    # -- PasskeyStore (passkeys) ------------------------------------------------

    def put_passkey(self, passkey: Passkey) -> None:
        return self._passkeys.put_passkey(passkey)

    def get_passkey(self, credential_id: str) -> Passkey | None:
        return self._passkeys.get_passkey(credential_id)

    def list_passkeys(self, workspace_id: str, person_id: str) -> list[Passkey]:
        return self._passkeys.list_passkeys(workspace_id, person_id)

    def rename_passkey(self, workspace_id: str, person_id: str, credential_id: str, name: str) -> Passkey:
        return self._passkeys.rename_passkey(workspace_id, person_id, credential_id, name)

    def remove_passkey(self, workspace_id: str, person_id: str, credential_id: str) -> None:
        return self._passkeys.remove_passkey(workspace_id, person_id, credential_id)

    def note_passkey_use(self, credential_id: str, sign_count: int, now: int) -> None:
        return self._passkeys.note_passkey_use(credential_id, sign_count, now)

    def put_passkey_challenge(self, challenge: PasskeyChallenge) -> None:
        return self._passkeys.put_passkey_challenge(challenge)

    def take_passkey_challenge(self, challenge_hash: str, now: int) -> PasskeyChallenge | None:
        return self._passkeys.take_passkey_challenge(challenge_hash, now)
