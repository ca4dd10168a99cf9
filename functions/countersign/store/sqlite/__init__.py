"""The embedded store: one SQLite file (see :mod:`.database`), one object per role."""

from __future__ import annotations

from .. import Store
from .authorizations import SQLiteAuthorizations
from .callers import SQLiteCallerReads
from .cards import SQLiteCards
from .connections import SQLiteConnections
from .database import Database
from .docs import SQLiteDocs
from .grants import SQLiteGrants
from .limits import SQLiteLimits
from .outbox import SQLiteOutbox
from .passkeys import SQLitePasskeys
from .push_subscriptions import SQLitePushSubscriptions
from .sessions import SQLiteSessions
from .signing_keys import SQLiteSigningKeys
from .slack import SQLiteSlack
from .standing_grants import SQLiteStandingGrants
from .suppressions import SQLiteSuppressions
from .webhook_deliveries import SQLiteWebhookDeliveries
from .webhook_endpoints import SQLiteWebhookEndpoints
from .workspaces import SQLiteWorkspaces

__all__ = ["SQLiteStore"]


class SQLiteStore(Store):
    def __init__(self, path: str):
        self.database = db = Database(path)
        cards, workspaces, connections = SQLiteCards(db), SQLiteWorkspaces(db), SQLiteConnections(db)
        sessions, grants, limits = SQLiteSessions(db), SQLiteGrants(db), SQLiteLimits(db)
        super().__init__(
            docs=SQLiteDocs(db), cards=cards, signing_keys=SQLiteSigningKeys(db), outbox=SQLiteOutbox(db),
            workspaces=workspaces, connections=connections, sessions=sessions, limits=limits,
            authorizations=SQLiteAuthorizations(db), grants=grants, suppressions=SQLiteSuppressions(db),
            passkeys=SQLitePasskeys(db), standing_grants=SQLiteStandingGrants(db),
            webhook_endpoints=SQLiteWebhookEndpoints(db), webhook_deliveries=SQLiteWebhookDeliveries(db),
            slack=SQLiteSlack(db), push_subscriptions=SQLitePushSubscriptions(db),
            callers=SQLiteCallerReads(db, workspaces=workspaces, connections=connections, sessions=sessions,
                                      grants=grants, cards=cards, limits=limits),
        )

    @property
    def path(self) -> str:
        return self.database.path

    def reads_locally(self) -> bool:
        return True

    def write_lock_free(self) -> bool:
        return self.database.write_lock_free()

    def close(self) -> None:
        self.database.close()
