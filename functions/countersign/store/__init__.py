"""Storage: what countersign persists, as roles, and two stores that implement every role (SQLite,
DynamoDB).

A :class:`Store` is a container of roles, one object each; a caller takes the role it needs
(``store.cards``, ``store.docs``, ...) and is typed against that role's interface. Each role's
interface, records and checks are one module of this package:

* :mod:`.docs` — a toolset's documents (:class:`~.docs.DocReader` is what a toolset sees).
* :mod:`.cards` — cards, their audit trail, their requests and tickets spent.
* :mod:`.signing_keys` — the keys that signed cards which may still be answered.
* :mod:`.outbox` — the notifications filed cards owe (the transactional outbox).
* :mod:`.workspaces` — workspaces and their members (and the rules every role keeps).
* :mod:`.connections` — agents' connections, and when each was last used.
* :mod:`.sessions` — sign-in tokens and the confirm page's sessions.
* :mod:`.limits` — email slots, rate limits, confirmation codes and nonces.
* :mod:`.authorizations` — OAuth clients, authorization requests and codes.
* :mod:`.grants` — OAuth grants and their access and refresh tokens.
* :mod:`.suppressions` — addresses card emails no longer go to.
* :mod:`.passkeys` — persons' passkeys and WebAuthn challenges.
* :mod:`.standing_grants` — bounded permissions a person gave a connection to run a tool without
  asking each time (not OAuth grants), and each use of them.
* :mod:`.webhook_endpoints` — a workspace's webhook endpoints and how their attempts went.
* :mod:`.webhook_deliveries` — the card events owed to webhook endpoints, and each delivery of them.
* :mod:`.slack` — a workspace's Slack app, its members' Slack users, link codes, cards posted.
* :mod:`.push_subscriptions` — the devices a person turned notifications on for (Web Push).
* :mod:`.callers` — a caller's credential with its member, in one read once their ids are known.

Where one role's write must be atomic with another's (a filing writes its notification), it is
one method of one role, implemented over the database or table the store's roles share.
"""

from __future__ import annotations

from dataclasses import dataclass

from .authorizations import AuthorizationStore
from .callers import CallerReads, RoleCallerReads
from .cards import CardStore
from .connections import ConnectionStore
from .docs import DocStore
from .grants import GrantStore
from .limits import LimitStore
from .outbox import OutboxStore
from .passkeys import PasskeyStore
from .push_subscriptions import PushSubscriptionStore
from .sessions import SessionStore
from .signing_keys import SigningKeyStore
from .slack import SlackStore
from .standing_grants import StandingGrantStore
from .suppressions import SuppressionStore
from .webhook_deliveries import WebhookDeliveryStore
from .webhook_endpoints import WebhookEndpointStore
from .workspaces import WorkspaceStore

__all__ = ["Store"]


@dataclass(eq=False)  # a store is one object: compared and hashed by identity
class Store:
    """Everything countersign persists: one object per role. It forwards nothing; its roles share
    only the plumbing their store handed them (a database, a table client). ``callers`` (the reads
    an MCP request's caller needs together) defaults to those reads made from the other roles; an
    adapter may give one that makes them in one round trip."""

    docs: DocStore
    cards: CardStore
    signing_keys: SigningKeyStore
    outbox: OutboxStore
    workspaces: WorkspaceStore
    connections: ConnectionStore
    sessions: SessionStore
    limits: LimitStore
    authorizations: AuthorizationStore
    grants: GrantStore
    suppressions: SuppressionStore
    passkeys: PasskeyStore
    standing_grants: StandingGrantStore
    webhook_endpoints: WebhookEndpointStore
    webhook_deliveries: WebhookDeliveryStore
    slack: SlackStore
    push_subscriptions: PushSubscriptionStore
    callers: CallerReads = None  # type: ignore[assignment]  # filled in by __post_init__

    def __post_init__(self) -> None:
        if self.callers is None:
            self.callers = RoleCallerReads(workspaces=self.workspaces, connections=self.connections,
                                           sessions=self.sessions, grants=self.grants, cards=self.cards,
                                           limits=self.limits)

    def reads_locally(self) -> bool:
        """Whether a read costs no round trip to another machine (an embedded store)."""
        return False

    def write_lock_free(self) -> bool:
        """Whether a write could take the store's write lock at this moment without waiting for
        another writer (a store with no such lock: always)."""
        return True

    def close(self) -> None:
        """Release connections (a store that holds none has nothing to release)."""
