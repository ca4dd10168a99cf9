"""The base of every mail action: a plan carries the effect it prepared from the same reads
(:attr:`Plan.effect`), so the writes the gate commits name the versions read a moment ago; and
the two ways to write a document."""

from __future__ import annotations

from typing import Any

from ...core.preview import Preview
from ...toolkit import Action, ActionContext, ActionError, Conflict, Doc, DocWrite, Effect, Plan
from .text import label


class MailAction(Action):
    """Base of every mail action: ``prepare`` returns (subject, preview, effect)."""

    destructive = True

    def prepare(self, args: Any, ctx: ActionContext) -> tuple[Any, Preview, Effect]:  # pragma: no cover - abstract
        raise NotImplementedError

    def plan(self, args: Any, ctx: ActionContext) -> Plan:
        """The plan carries its effect (:attr:`Plan.effect`), prepared from the same reads: what
        the gate commits for a yes (at the call, or the re-plan at the click) names the versions
        read a moment ago."""
        subject, preview, effect = self.prepare(args, ctx)
        return Plan(subject, preview, effect=effect)

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        if plan.effect is None:
            raise ActionError(f"{self.name}: this plan was not prepared by the mail toolset; call the tool again.")
        return plan.effect

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
