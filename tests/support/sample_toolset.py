"""A test-only toolset: one action of every gate class and a read, over a tiny notes model.

It uses only the gate's public action API and the store interface, like a real toolset.
"""

from __future__ import annotations

from pydantic import Field

from countersign.core.preview import Preview
from countersign.store.docs import DocWrite
from countersign.toolkit import (
    ALWAYS,
    CLIENT,
    NEVER,
    Action,
    ActionContext,
    ActionError,
    Arguments,
    Effect,
    Plan,
    Read,
    Step,
    Toolset,
    setting,
    when,
)

KIND = "note"


def _note(ctx: ActionContext, note_id: str):
    doc = ctx.store.get_doc(ctx.workspace_id, KIND, note_id)
    if doc is None:
        raise ActionError(f"note_id: no note {note_id!r} in this workspace.", field="note_id")
    return doc


class NoteText(Arguments):
    note_id: str = Field(description="The note to change")
    text: str = Field(max_length=10_000, description="The new text")


class _EditBase(Action):
    arguments = NoteText
    drift_message = "The notes changed between the preview and the answer; nothing was written."

    def plan(self, args: NoteText, ctx: ActionContext) -> Plan:
        doc = _note(ctx, args.note_id)
        subject = {"note": doc.id, "before": doc.data["text"], "after": args.text, "version": doc.version}
        new_lines = args.text.splitlines()
        lines = (f"{doc.data['text']} → {args.text}",) if len(new_lines) <= 1 else tuple(f"+ {x}" for x in new_lines)
        return Plan(subject, Preview(f"Change note ‘{doc.data['title']}’?", lines))

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        s = plan.subject
        doc = _note(ctx, s["note"])
        return Effect.writes({"note": doc.id, "text": s["after"]},
                             [DocWrite(KIND, doc.id, dict(doc.data, text=s["after"]), s["version"])])

    def next_steps(self, result: dict, ctx: ActionContext) -> list[Step]:
        return [Step("list_notes", "Read the notes back to check the change.")]

    def outcome_lines(self, result: dict) -> list[str]:
        return ["The note now reads:", result["text"]]


class EditNote(_EditBase):
    name = "edit_note"
    title = "Preparing a note change"
    description = "Change a note's text (class client)."
    gate = CLIENT


class PublishNote(_EditBase):
    name = "publish_note"
    title = "Preparing a publish confirmation"
    description = "Publish a note's new text (class always)."
    gate = ALWAYS


class DraftNote(_EditBase):
    name = "draft_note"
    description = "Drafting step (class setting:ask_before_drafting)."
    gate = setting("ask_before_drafting")


class RetitleNote(_EditBase):
    name = "retitle_locked"
    description = "Held while any note is locked (class when:locked)."
    gate = when(
        "a note is locked",
        lambda args, ctx: any(d.data.get("locked") for d in ctx.store.list_docs(ctx.workspace_id, KIND)),
    )


class TidyNote(_EditBase):
    name = "tidy_note"
    description = "Runs at once (class never)."
    gate = NEVER
    destructive = False


class ListArgs(Arguments):
    pass


class ListNotes(Read):
    name = "list_notes"
    title = "Listing notes"
    description = "Every note."
    arguments = ListArgs

    def run(self, args, ctx: ActionContext) -> dict:
        return {
            "notes": [dict(d.data, id=d.id, version=d.version) for d in ctx.store.list_docs(ctx.workspace_id, KIND)]
        }


TOOLSET = Toolset(
    name="notes",
    actions=[EditNote(), PublishNote(), DraftNote(), RetitleNote(), TidyNote()],
    reads=[ListNotes()],
)


def seed_notes(store, workspace_id: str, count: int = 2, locked: bool = False) -> list[str]:
    ids = [f"n{i}" for i in range(1, count + 1)]
    store.docs.write_docs(workspace_id, [
        DocWrite(KIND, nid, {"title": f"Note {i}", "text": f"text {i}", "locked": locked and i == 1}, 0)
        for i, nid in enumerate(ids, start=1)
    ])
    return ids
