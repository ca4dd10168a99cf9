"""The public API a toolset writes against: actions, reads, plans and gate classes.

A toolset is a folder with one module per group of actions. Each action declares its
arguments (a pydantic model), its class (when it is held) and two functions:

* ``plan(args, ctx) -> Plan`` reads the workspace through ``ctx`` and writes nothing. The plan's
  ``subject`` is the exact change as data; its ``preview`` is what a person reads.
* ``apply(plan, ctx) -> Effect`` writes nothing either: it returns the :class:`Effect` — the
  result the agent sees and the writes that make it true — and the gate commits those writes in
  one transaction with the card (see :mod:`countersign.toolkit.effects`). It always receives the very
  ``Plan`` object that ``plan`` just returned for the same ``ctx`` (the gate re-plans at every
  answer, never applies a stored plan), so a subclass of ``Plan`` may carry prepared work in
  fields declared with ``compare=False``. Every write names the version (or value) it read, so a
  write that raced another is refused and re-planned, never lost.

The gate (``countersign.gate.ask``) decides, from the class and the client, whether a call runs at
once, asks in the client, or files a card; toolsets never decide that themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ..core.preview import Preview
from ..store.docs import DocStore
from ..store.errors import Conflict
from .arguments import ArgumentError, parse_arguments
from .context import ActionContext
from .editable import Editable
from .effects import Effect, Outside, Phase
from .grantable import Bound

__all__ = [
    "ALWAYS", "CLIENT", "NEVER", "Action", "ActionContext", "ActionError", "Arguments", "Effect", "GateClass",
    "Outside", "Phase", "Plan", "Read", "Step", "Toolset", "Unavailable", "setting", "when",
]

DEFAULT_DRIFT_MESSAGE = (
    "What this request would change moved between the preview and the answer; nothing was written. "
    "Call the tool again to get a new preview."
)


class ActionError(Exception):
    """Bad input or an impossible request, reported to the agent; nothing is written.

    ``field`` names the argument at fault when there is one.
    """

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field


class Unavailable(ActionError):
    """Something outside countersign that a plan must read (an upstream server) could not be reached.

    Narrower than any other planning error: it says nothing about the subject. At an answer it is
    therefore no drift — nothing ran, the card still waits and can be confirmed once the
    dependency is back (:mod:`countersign.gate.runner`). ``code`` is the stable name the API
    answers with (503). Raise it only for a failure to reach; an answer that differs is drift.
    """

    def __init__(self, message: str, field: str | None = None, code: str = "unavailable"):
        super().__init__(message, field)
        self.code = code


class Arguments(BaseModel):
    """Base for action arguments: unknown fields are refused, not ignored, and values are checked
    strictly (``"true"`` is not a boolean; see :mod:`.arguments`)."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class Plan:
    subject: Any
    preview: Preview
    # The effect, when planning already staged it (to size it, say): the gate commits it as it is
    # instead of calling ``apply`` again on the same state. Not part of the subject.
    effect: Effect | None = field(default=None, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class Step:
    """One of the ``next`` steps a completed card suggests."""

    tool: str
    description: str
    person_must_act: bool = False

    def to_dict(self) -> dict:
        return {"tool": self.tool, "description": self.description, "personMustAct": self.person_must_act}


# -- gate classes (docs/how-a-held-write-travels.md, "Classes and assurance") ---------------------


@dataclass(frozen=True)
class GateClass:
    """When a call is held, and whether an in-client answer is enough.

    ``kind`` is one of ``always``, ``setting``, ``when``, ``client``, ``never``.
    """

    kind: str
    setting: str | None = None
    predicate: Callable[[Any, ActionContext], bool] | None = field(default=None, compare=False)
    label: str | None = None

    @property
    def name(self) -> str:
        if self.kind == "setting":
            return f"setting:{self.setting}"
        if self.kind == "when":
            return f"when:{self.label}"
        return self.kind

    def holds(self, args: Any, ctx: ActionContext) -> bool:
        if self.kind in ("always", "client"):
            return True
        if self.kind == "never":
            return False
        if self.kind == "setting":
            assert self.setting is not None
            return bool(ctx.workspace.setting(self.setting))
        assert self.predicate is not None
        return bool(self.predicate(args, ctx))

    def allows_in_client(self, ctx: ActionContext) -> bool:
        """Assurance: only class ``client`` accepts an answer given in the MCP client."""
        return self.kind == "client" and bool(ctx.workspace.setting("confirm_in_client"))


ALWAYS = GateClass("always")
CLIENT = GateClass("client")
NEVER = GateClass("never")


def setting(name: str) -> GateClass:
    return GateClass("setting", setting=name)


def when(label: str, predicate: Callable[[Any, ActionContext], bool]) -> GateClass:
    return GateClass("when", predicate=predicate, label=label)


# -- actions and reads ----------------------------------------------------------------------------


class Action:
    """A write. Subclass and set the class attributes; override ``plan`` and ``apply``."""

    name: ClassVar[str]
    title: ClassVar[str] = ""
    description: ClassVar[str] = ""
    arguments: ClassVar[type[Arguments]] = Arguments
    gate: ClassVar[GateClass] = ALWAYS
    destructive: ClassVar[bool] = True
    # True when nothing takes it back once it ran: no tool of the deployment undoes it, and what it
    # did stays done (mail that left, money charged, a campaign ended for good, a split). The confirm
    # page marks its cards "Can't be undone". Not MCP's destructiveHint (``destructive``): most
    # destructive writes can be undone.
    irreversible: ClassVar[bool] = False
    drift_message: ClassVar[str] = DEFAULT_DRIFT_MESSAGE
    # When the class depends on the arguments or the state (``gate_class`` overridden), say in
    # words when the call waits: the agent reads it in the tool's description.
    hold_rule: ClassVar[str] = ""
    # False: no MCP tool (a request filed by the CLI or the Settings page, such as a gateway change).
    agent_tool: ClassVar[bool] = True
    # What a person's standing grant may bound, so that calls within it run without asking each
    # time (:mod:`.grantable`; docs/policy.md). None declared: no grant can cover this action.
    grantable: ClassVar[tuple[Bound, ...]] = ()
    # What a person may change on a card of this action before confirming it (:mod:`.editable`;
    # docs/policy.md, "Edit, then approve"). None declared: a card is confirmed or declined as asked.
    editable: ClassVar[tuple[Editable, ...]] = ()

    def gate_class(self, args: Any, ctx: ActionContext) -> GateClass:
        """The class for this call; override when it depends on the arguments."""
        return self.gate

    def plan(self, args: Any, ctx: ActionContext) -> Plan:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:  # pragma: no cover - abstract
        raise NotImplementedError

    def next_steps(self, result: dict, ctx: ActionContext) -> list[Step]:
        return []

    def outcome_lines(self, result: dict) -> list[str]:
        """How ``result`` (what :meth:`apply` returned, with what an outside call added) reads to a
        person on the confirm page once the card completed: short sentences, amounts as money,
        names rather than ids, never a field name. A line may hold line breaks (an upstream's
        text); the page keeps them.

        The default says only that it ran. Override it beside the action whenever its result has
        fields (tests/unit/test_outcome_lines.py runs every action of every toolset and holds each
        to that). It reads nothing: a card's outcome is drawn from its stored result alone, long
        after the run."""
        return ["Done."]

    def moved(self, conflict: Conflict, ctx: ActionContext) -> str | None:
        """Name, for a person, the record whose write was refused because it moved (a step of a
        multi-step effect that could not commit); None to say nothing more than the failure."""
        return None

    def parse(self, raw: dict) -> Any:
        """Validate raw arguments into the model; :class:`ActionError` naming the field."""
        return _parse_arguments(self.arguments, raw, self.name, " Nothing was written.")


class Read:
    """A read: runs at once, never held, writes nothing."""

    name: ClassVar[str]
    title: ClassVar[str] = ""
    description: ClassVar[str] = ""
    arguments: ClassVar[type[Arguments]] = Arguments

    def run(self, args: Any, ctx: ActionContext) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def parse(self, raw: dict) -> Any:
        """Validate raw arguments into the model; :class:`ActionError` naming the field."""
        return _parse_arguments(self.arguments, raw, self.name)


def _parse_arguments(model: type[Arguments], raw: dict, tool: str, after: str = "") -> Any:
    """``raw`` validated strictly into ``model``; :class:`ActionError` naming every bad field
    (:mod:`.arguments`)."""
    try:
        return parse_arguments(model, raw, tool)
    except ArgumentError as exc:
        raise ActionError(exc.message + after, field=exc.field) from None


@dataclass
class Toolset:
    """A named group of actions and reads, plus optional demo data (written straight to the
    document store: seeding a new workspace is no held request)."""

    name: str
    actions: list[Action] = field(default_factory=list)
    reads: list[Read] = field(default_factory=list)
    demo: Callable[[DocStore, ActionContext], None] | None = None
    # Tools whose names are not known in advance (the gateway's ``server__tool``): an action for a
    # name, or None. Resolved after the named actions and reads.
    resolve: Callable[[str], Action | None] | None = None
    # Called once by the runtime with what the process holds (request-state keys, settings); returns
    # the toolset to serve (the gateway seals upstream credentials with those keys).
    bind: Callable[[list[bytes], Any], Toolset] | None = None
