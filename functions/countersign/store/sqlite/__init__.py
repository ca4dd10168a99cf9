"""The embedded store: one SQLite file (see :mod:`.database`), one object per role."""

from __future__ import annotations

from ..composed import ComposedStore
from .accounts import SQLiteAccounts
from .callers import SQLiteCallerReads
from .cards import SQLiteCards
from .database import Database
from .docs import SQLiteDocs
from .limits import SQLiteLimits
from .oauth import SQLiteOAuth
from .outbox import SQLiteOutbox
from .passkeys import SQLitePasskeys
from .suppressions import SQLiteSuppressions

__all__ = ["SQLiteStore"]


class SQLiteStore(SQLiteCallerReads, ComposedStore):
    def __init__(self, path: str):
        self.database = Database(path)
        super().__init__(
            docs=SQLiteDocs(self.database), cards=SQLiteCards(self.database), outbox=SQLiteOutbox(self.database),
            accounts=SQLiteAccounts(self.database), limits=SQLiteLimits(self.database),
            oauth=SQLiteOAuth(self.database),
            suppressions=SQLiteSuppressions(self.database), passkeys=SQLitePasskeys(self.database),
        )

    @property
    def path(self) -> str:
        return self.database.path

    def close(self) -> None:
        self.database.close()
