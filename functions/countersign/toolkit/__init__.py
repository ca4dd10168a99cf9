"""The toolset API: everything a toolset may import (docs/writing-a-toolset.md).

A toolset (``countersign.toolsets.<name>``) imports this package, :mod:`countersign.core` (pure
helpers: previews, ids, canonical JSON, times) and its own modules — nothing of the gate
(:mod:`countersign.gate`), a concrete store or a surface. The gate imports this package, never
the reverse.

* Actions and reads: :class:`Action` (a write: ``plan`` then ``apply``), :class:`Read`,
  :class:`Arguments` (strictly checked, :mod:`.arguments`), :class:`Plan`, :class:`Step`,
  :class:`Toolset`.
* When a call is held: the gate classes :data:`ALWAYS`, :data:`CLIENT`, :data:`NEVER`,
  :func:`setting`, :func:`when` (:class:`GateClass`).
* What ``apply`` returns: :class:`Effect`, in :class:`Phase` steps, with an :class:`Outside` call.
* What a person's standing grant may bound: :class:`AmountBound`, :class:`ChoiceBound`
  (:attr:`Action.grantable`, :mod:`.grantable`).
* What a person may change on a card before confirming it: :class:`Editable`
  (:attr:`Action.editable`, :mod:`.editable`).
* Who calls, on what: :class:`ActionContext`.
* Errors reported to the agent: :class:`ActionError`, and :class:`Unavailable` for an outside
  dependency that could not be reached.
* The workspace's documents and the writes an effect may carry (from :mod:`countersign.store`):
  :class:`DocReader`, :class:`DocStore` (for demo data), :class:`Doc`, :class:`DocWrite`,
  :class:`SettingWrite`, :class:`WorkspaceNameWrite`, :class:`RoleWrite`, :data:`Write`,
  :class:`Conflict` (a write whose expectation failed), :data:`MAX_DOC_WRITES`,
  :data:`MAX_WORKSPACE_NAME` and :data:`MANAGERS` (the roles that run a workspace).
* What the process holds: :class:`Settings` (handed to :attr:`Toolset.bind`), and
  :func:`hold_secret` to keep a credential (each part of :data:`MIN_HELD` characters or more) out
  of every log line.
"""

from __future__ import annotations

from ..logs.redaction import MIN_HELD, hold_secret
from ..settings import Settings
from ..store.docs import (
    MAX_DOC_WRITES,
    Doc,
    DocReader,
    DocStore,
    DocWrite,
    RoleWrite,
    SettingWrite,
    WorkspaceNameWrite,
    Write,
)
from ..store.errors import Conflict
from ..store.workspaces import MANAGERS, MAX_WORKSPACE_NAME
from .actions import (
    ALWAYS,
    CLIENT,
    NEVER,
    Action,
    ActionError,
    Arguments,
    GateClass,
    Plan,
    Read,
    Step,
    Toolset,
    Unavailable,
    setting,
    when,
)
from .context import ActionContext
from .editable import Editable
from .effects import Effect, Outside, Phase
from .grantable import AmountBound, Bound, BoundError, ChoiceBound

__all__ = [
    "ALWAYS", "CLIENT", "MANAGERS", "MAX_DOC_WRITES", "MAX_WORKSPACE_NAME", "MIN_HELD", "NEVER", "Action",
    "ActionContext", "ActionError", "AmountBound", "Arguments", "Bound", "BoundError", "ChoiceBound", "Conflict",
    "Doc", "DocReader", "DocStore", "DocWrite", "Editable", "Effect",
    "GateClass", "Outside", "Phase", "Plan", "Read", "RoleWrite", "SettingWrite", "Settings", "Step", "Toolset",
    "Unavailable", "WorkspaceNameWrite", "Write", "hold_secret", "setting", "when",
]
