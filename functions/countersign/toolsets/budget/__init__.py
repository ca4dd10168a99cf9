"""The ``budget`` toolset: a budget ledger whose writes wait for a person's yes.

Reads run at once; ``approve_transactions`` runs on the call; every other write is class
``client``: its subject is the exact change and its question is asked in the client when the client
can ask. See :mod:`.model` for how the ledger is stored.
"""

from __future__ import annotations

from ...toolkit import Toolset
from .budgeting import SetCategoryBudget
from .categories import CreateCategory, UpdateCategory
from .categorise import ApplyCategories, ApproveTransactions
from .demo import seed
from .reads import GetMonth, ListAccounts, ListCategories, ListOperations, ListTransactions
from .reconcile import ReconcileAccount
from .transactions import CreateTransactions, SplitTransaction
from .undo import UndoOperation

TOOLSET = Toolset(
    name="budget",
    actions=[
        ApplyCategories(), SetCategoryBudget(), UpdateCategory(), CreateCategory(), CreateTransactions(),
        ReconcileAccount(), SplitTransaction(), UndoOperation(), ApproveTransactions(),
    ],
    reads=[ListAccounts(), ListCategories(), ListTransactions(), GetMonth(), ListOperations()],
    demo=seed,
)

__all__ = ["TOOLSET"]
