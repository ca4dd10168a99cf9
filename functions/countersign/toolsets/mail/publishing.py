"""Publishing designs: who may, which version pieces print, and the step a launch or send takes to
publish the drafts it prints (committed first, so they stay published if what follows stops)."""

from __future__ import annotations

import copy

from ...toolkit import ActionContext, ActionError, Doc, DocWrite, Phase
from .action import put
from .kinds import PUBLISHERS
from .text import q


def can_publish(ctx: ActionContext) -> bool:
    return ctx.person.role in PUBLISHERS


def is_draft(design: Doc) -> bool:
    d = design.data
    return d.get("published_version") != d.get("draft_version")


def printing_version(design: Doc) -> int:
    """The version pieces print from once any draft on the card is published."""
    return int(design.data["draft_version"] if is_draft(design) else design.data["published_version"])


def drafts_to_publish(ctx: ActionContext, designs: list[Doc], field_name: str) -> list[Doc]:
    """The draft designs a launch or send would publish; :class:`ActionError` (before any card)
    when there is one and the confirming person may not publish."""
    drafts = [d for d in designs if is_draft(d)]
    if drafts and not can_publish(ctx):
        names = ", ".join(f"{q(d.data['name'])} version {d.data['draft_version']}" for d in drafts)
        raise ActionError(
            f"{field_name}: design {names} is still a draft, and you ({ctx.person.role}) cannot publish designs. "
            "An owner, admin or approver has to publish it first (approve_design); nothing was filed.",
            field=field_name,
        )
    return drafts


def publish_subject(drafts: list[Doc]) -> list[dict]:
    return [{"design": d.id, "name": d.data["name"], "version": d.data["draft_version"]} for d in drafts]


def publish_writes(drafts: list[Doc], ctx: ActionContext) -> list[DocWrite]:
    out = []
    for d in drafts:
        data = dict(d.data)
        data["published_version"] = data["draft_version"]
        data["published"] = copy.deepcopy(data.get("draft") or {})
        data["published_at"] = ctx.now
        data["published_by"] = ctx.person.id
        out.append(put(d, data))
    return out


def publish_phases(drafts: list[Doc], ctx: ActionContext) -> list[Phase]:
    """Publishing the drafts a launch or send prints: a step of its own that commits first, so the
    designs stay published if what follows then stops. None when nothing is a draft."""
    if not drafts:
        return []
    names = ", ".join(f"{q(d.data['name'])} version {d.data['draft_version']}" for d in drafts)
    return [Phase(f"publish {names}", tuple(publish_writes(drafts, ctx)))]


def publish_lines(drafts: list[Doc]) -> list[str]:
    return [f"Publishes design {q(d.data['name'])} version {d.data['draft_version']}" for d in drafts]
