"""The base of every mail action: a plan carries the effect it prepared from the same reads, so the
writes the gate commits name the versions read a moment ago; and the two ways to write a document."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...core.preview import Preview
from ...gate.actions import Action, ActionContext, ActionError, Effect, Plan
from ...store.errors import Conflict
from ...store.records import Doc, DocWrite
from .text import label


@dataclass(frozen=True)
class MailPlan(Plan):
    """A plan whose effect is prepared from the same reads: the gate hands apply the plan it just
    made (at the call, or the re-plan at the click), so every write carries the versions read a
    moment ago."""

    work: Effect | None = field(default=None, compare=False, repr=False)


class MailAction(Action):
    """Base of every mail action: ``prepare`` returns (subject, preview, effect)."""

    destructive = True

    def prepare(self, args: Any, ctx: ActionContext) -> tuple[Any, Preview, Effect]:  # pragma: no cover - abstract
        raise NotImplementedError

    def plan(self, args: Any, ctx: ActionContext) -> Plan:
        subject, preview, work = self.prepare(args, ctx)
        return MailPlan(subject, preview, work)

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        work = getattr(plan, "work", None)
        if work is None:
            raise ActionError(f"{self.name}: this plan was not prepared by the mail toolset; call the tool again.")
        return work

    def moved(self, conflict: Conflict, ctx: ActionContext) -> str | None:
        """Name the document whose version moved (read once for its current name)."""
        if conflict.kind is None or conflict.id is None:
            return None
        doc = ctx.store.get_doc(ctx.workspace_id, conflict.kind, conflict.id)
        return label(conflict.kind, doc.data if doc is not None else {"name": conflict.id})


def put(doc: Doc, data: dict) -> DocWrite:
    return DocWrite(doc.kind, doc.id, data, doc.version)


def create(kind: str, doc_id: str, data: dict) -> DocWrite:
    return DocWrite(kind, doc_id, data, 0)
