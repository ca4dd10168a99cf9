"""Drafting steps (class ``setting:ask_before_drafting``): importing contacts, generating a design
image, polishing copy, rewriting waiting drafts. Preparing a campaign's audience: :mod:`.audience`.
"""

from __future__ import annotations

import hashlib
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ...core.ids import new_id
from ...core.preview import Preview, one_line
from ...toolkit import ActionContext, ActionError, Arguments, Effect, Step, setting
from .action import MailAction, create, put
from .copywriting import polish
from .kinds import KIND_CONTACT, KIND_DESIGN, KIND_LIST
from .preferences import EMAIL_RE
from .snapshot import Mail, has_address
from .text import count, digest, q, recipients_line
from .validation import check_write_count, validate_name

DRAFTING = setting("ask_before_drafting")
MAX_IMPORT = 80  # one atomic write per import


class ContactIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=120)
    email: str = Field(min_length=3, max_length=254)
    company: str | None = Field(default=None, max_length=120)
    line1: str | None = Field(default=None, max_length=120)
    line2: str | None = Field(default=None, max_length=120)
    city: str | None = Field(default=None, max_length=80)
    region: str | None = Field(default=None, max_length=80)
    postal_code: str | None = Field(default=None, max_length=20)
    country: str | None = Field(default=None, min_length=2, max_length=2)


class ImportContactsArgs(Arguments):
    contacts: list[ContactIn] = Field(min_length=1, max_length=MAX_IMPORT,
                                      description=f"Up to {MAX_IMPORT} contacts per call")
    list_id: str | None = Field(default=None, max_length=64, description="Add them to this list")
    new_list_name: str | None = Field(default=None, max_length=120, description="Or create a list with this name")


def contact_data(c: ContactIn, at: str) -> dict:
    """A contact as stored; ``at`` names it in a refusal (``contacts[2]``)."""
    given = {k: one_line(getattr(c, k)) for k in ("line1", "line2", "city", "region", "postal_code", "country")}
    address = {k: v for k, v in given.items() if v}
    if "country" in address:
        address["country"] = address["country"].upper()
    return {
        "name": validate_name(c.name, f"{at}.name"),
        "email": c.email.strip().lower(),
        "company": one_line(c.company),
        "address": address,
        "suppressed": False,
    }


class ImportContacts(MailAction):
    name = "import_contacts"
    title = "Preparing a contact import"
    description = 'Add up to 80 contacts, optionally into a list.'
    arguments = ImportContactsArgs
    gate = DRAFTING
    destructive = False
    drift_message = "The contacts or the list changed between the preview and the answer; nothing was imported."

    def prepare(self, args: ImportContactsArgs, ctx: ActionContext):
        mail = Mail(ctx)
        if args.list_id and args.new_list_name:
            raise ActionError("Give list_id or new_list_name, not both.", field="list_id")
        by_email = {c.data.get("email", "").lower(): c for c in mail.contacts.values()}
        new, existing, seen = [], [], set()
        for i, c in enumerate(args.contacts):
            data = contact_data(c, f"contacts[{i}]")
            if not EMAIL_RE.fullmatch(data["email"]):
                raise ActionError(
                    f"contacts[{i}].email: {c.email!r} is not an email address.", field=f"contacts[{i}].email"
                )
            if data["email"] in seen:
                raise ActionError(f"contacts[{i}].email: {data['email']} appears twice in this import.",
                                  field=f"contacts[{i}].email")
            seen.add(data["email"])
            if data["email"] in by_email:
                existing.append(by_email[data["email"]])
            else:
                new.append(data)
        writes, new_ids = [], []
        for data in new:
            cid = new_id("ct_")
            new_ids.append(cid)
            writes.append(create(KIND_CONTACT, cid, dict(data, created_at=ctx.now)))
        list_subject, list_name, feeds = None, None, []
        if args.list_id or args.new_list_name:
            if args.list_id:
                lst = mail.list(args.list_id)
                members = list(lst.data.get("contact_ids", []))
                list_name = lst.data["name"]
                added_existing = [c.id for c in existing if c.id not in members]
                list_subject = {"list": lst.id, "name": list_name, "size_before": len(members),
                                "add_existing": sorted(added_existing)}
                writes.append(put(lst, dict(lst.data, contact_ids=members + added_existing + new_ids)))
                feeds = mail.campaigns_fed_by(lst.id)
            else:
                list_name = validate_name(args.new_list_name, "new_list_name")
                if any(lst.data.get("name") == list_name for lst in mail.lists.values()):
                    raise ActionError(f"new_list_name: a list called {q(list_name)} exists; pass its list_id.",
                                      field="new_list_name")
                list_subject = {"new_list": list_name, "add_existing": sorted(c.id for c in existing)}
                writes.append(create(KIND_LIST, new_id("ls_"), {
                    "name": list_name, "contact_ids": [c.id for c in existing] + new_ids, "created_at": ctx.now}))
        elif not new:
            raise ActionError("Every contact in this import is already in the workspace, and no list was given.")
        where = f" into list {q(list_name)}" if list_name else ""
        title = (
            f"Import {count(len(args.contacts), 'contact')}{where}: "
            f"{len(new)} new, {len(existing)} already in the workspace"
        )
        lines = []
        for data in new:
            line = f"{data['name']}" + (f", {data['company']}" if data["company"] else "") + f" <{data['email']}>"
            if not has_address(data):
                line += " (no mailing address)"
            lines.append(line)
        for doc in existing:
            lines.append(f"Already here: {doc.data.get('name')} <{doc.data.get('email')}>")
        for camp in feeds:  # what the import means for each: a live campaign enrols only when it resumes
            status = camp.data["status"]
            line = f"List {q(list_name)} feeds campaign {q(camp.data['name'])} ({status})"
            if status == "live":
                line += ": the new contacts are not mailed by it unless it is paused and resumed"
            elif status == "paused":
                line += ": the new contacts are enrolled, and their credits debited, when it resumes"
            lines.append(line)
        subject = {"new_contacts": new, "existing": sorted(c.id for c in existing), "list": list_subject}
        result = {"imported": len(new), "contact_ids": new_ids, "already_present": [c.id for c in existing],
                  "list": list_name}
        return subject, Preview(title, lines), Effect.writes(result, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        into = f" into the list {q(result['list'])}" if result.get("list") else ""
        lines = [f"Imported {count(result['imported'], 'contact')}{into}"]
        if result["already_present"]:
            lines.append(f"{count(len(result['already_present']), 'contact was', 'contacts were')} here already")
        return lines

    def next_steps(self, result, ctx):
        return [Step("list_contacts", "Check the imported contacts."),
                Step("add_list_to_campaign", "Point a campaign at the list.")]


class GenerateImageArgs(Arguments):
    prompt: str = Field(min_length=3, max_length=500, description="What the image should show")
    design_id: str | None = Field(default=None, max_length=64, description="The design to give a new draft version")
    new_design_name: str | None = Field(default=None, max_length=120, description="Or create a design with this name")
    format: Literal["postcard", "letter", "handwritten"] | None = Field(
        default=None, description="Format of a new design"
    )


class GenerateDesignImage(MailAction):
    name = "generate_design_image"
    title = "Preparing a design image"
    description = ('Generate an image into a new draft version of a design (or a new design). The published '
                   'version keeps printing until the draft is approved.')
    arguments = GenerateImageArgs
    gate = DRAFTING
    destructive = False
    drift_message = "The design changed between the preview and the answer; no image was generated."

    def prepare(self, args: GenerateImageArgs, ctx: ActionContext):
        mail = Mail(ctx)
        prompt = validate_name(args.prompt, "prompt", 500, multiline=True)
        image = f"generated://{hashlib.sha256(prompt.encode()).hexdigest()[:16]}.png"
        if (args.design_id is None) == (args.new_design_name is None):
            raise ActionError("Give design_id (a new draft of that design) or new_design_name (a new design).",
                              field="design_id")
        if args.design_id is not None:
            design = mail.design(args.design_id)
            d = design.data
            version = int(d["draft_version"]) + 1
            data = dict(d, draft_version=version, draft=dict(d.get("draft") or {}, image=image, image_prompt=prompt),
                        updated_at=ctx.now)
            lines = [f"Prompt: {prompt}"]
            if d.get("published_version"):
                lines.append(f"Published version {d['published_version']} keeps printing until this draft is approved")
            for camp in mail.live_campaigns_using(design.id):
                lines.append(f"Used by live campaign {q(camp.data['name'])}")
            subject = {
                "design": design.id,
                "name": d["name"],
                "from_version": d["draft_version"],
                "to_version": version,
                "prompt": prompt,
            }
            title = f"Generate a new image for design {q(d['name'])}: draft version {version}"
            return (
                subject,
                Preview(title, lines),
                Effect.writes({"design_id": design.id, "draft_version": version, "image": image}, [put(design, data)]),
            )
        name = validate_name(args.new_design_name, "new_design_name")
        fmt = args.format or (mail.profile.data.get("preferences") or {}).get("default_format") or "postcard"
        did = new_id("ds_")
        data = {"name": name, "format": fmt, "draft_version": 1, "draft": {"image": image, "image_prompt": prompt,
                "brand_kit": mail.profile.data.get("brand_kit") or {}}, "published_version": None, "published": None,
                "created_at": ctx.now, "updated_at": ctx.now}
        subject = {"new_design": name, "format": fmt, "prompt": prompt}
        title = f"Create design {q(name)} ({fmt}) with a generated image: draft version 1"
        return (
            subject,
            Preview(title, [f"Prompt: {prompt}"]),
            Effect.writes({"design_id": did, "draft_version": 1, "image": image}, [create(KIND_DESIGN, did, data)]),
        )

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"A new image is in draft version {result['draft_version']} of the design",
                "It prints only once the draft is approved"]

    def next_steps(self, result, ctx):
        return [Step("approve_design", "Approve the new draft so it can print.", person_must_act=True)]


class CampaignArgs(Arguments):
    campaign_id: str = Field(max_length=64)


class PolishCopywriting(MailAction):
    name = "polish_copywriting"
    title = "Preparing polished copy"
    description = "Tidy a campaign's copy template (spacing, capitals, punctuation)."
    arguments = CampaignArgs
    gate = DRAFTING
    destructive = False
    drift_message = "The campaign's copy changed between the preview and the answer; nothing was rewritten."

    def prepare(self, args: CampaignArgs, ctx: ActionContext):
        mail = Mail(ctx)
        camp = mail.campaign(args.campaign_id)
        c = camp.data
        if c["status"] == "ended":
            raise ActionError(
                f"campaign_id: {q(c['name'])} has ended; its copy can no longer change.", field="campaign_id"
            )
        before = c.get("copy", "")
        after = polish(before)
        if after == before:
            raise ActionError(f"The copy of {q(c['name'])} needs no polishing.", field="campaign_id")
        lines = [f"Before: {before}", f"After: {after}"]
        if c["status"] in ("live", "paused"):
            lines.append("Pieces already drafted keep their copy; people enrolled from now on get the polished copy")
        subject = {"campaign": camp.id, "status": c["status"], "before": before, "after": after}
        title = f"Polish the copy of campaign {q(c['name'])}"
        return (
            subject,
            Preview(title, lines),
            Effect.writes({"campaign_id": camp.id, "copy": after}, [put(camp, dict(c, copy=after))]),
        )

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"New copy: {result['copy']}"]


class RewriteArgs(Arguments):
    campaign_id: str = Field(max_length=64)
    instructions: str = Field(min_length=3, max_length=300, description="How the drafts should change")


class RewriteWaitingDrafts(MailAction):
    name = "rewrite_waiting_drafts"
    title = "Preparing rewritten drafts"
    description = 'Have the model rewrite every draft waiting for review on a campaign; they keep waiting.'
    arguments = RewriteArgs
    gate = DRAFTING
    destructive = False
    drift_message = (
        "The drafts waiting on this campaign changed between the preview and the answer; nothing was rewritten."
    )

    def prepare(self, args: RewriteArgs, ctx: ActionContext):
        mail = Mail(ctx)
        camp = mail.campaign(args.campaign_id)
        if camp.data["status"] == "ended":
            raise ActionError(f"campaign_id: {q(camp.data['name'])} has ended.", field="campaign_id")
        instructions = validate_name(args.instructions, "instructions", 300, multiline=True)
        waiting = [(b, i, p) for b, i, p in mail.pieces(camp.id) if p["status"] == "waiting"]
        if not waiting:
            raise ActionError(f"No drafts are waiting for review on {q(camp.data['name'])}.", field="campaign_id")
        batches: dict[str, tuple] = {}
        for b, i, p in waiting:
            entry = batches.setdefault(b.id, (b, [dict(x) for x in b.data["pieces"]]))
            entry[1][i] = dict(p, copy=f"{polish(p['copy'])}\n\n{instructions}", written_by="model", clean=True,
                               rewritten_at=ctx.now)
        writes = [put(b, dict(b.data, pieces=pieces)) for b, pieces in batches.values()]
        check_write_count(len(writes), "This rewrite")
        pieces = [p for _, _, p in waiting]
        subject = {"campaign": camp.id, "waiting": {"count": len(pieces), "digest": digest(p["id"] for p in pieces)},
                   "instructions": instructions}
        title = f"Rewrite {count(len(pieces), 'waiting draft')} on campaign {q(camp.data['name'])}"
        lines = [f"Instructions: {instructions}", f"Recipients: {recipients_line(pieces)}",
                 "They stay waiting for review; nothing prints"]
        return subject, Preview(title, lines), Effect.writes({"campaign_id": camp.id, "rewritten": len(pieces)}, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"Rewrote {count(result['rewritten'], 'waiting draft')}", "They still wait for review"]

    def next_steps(self, result, ctx):
        return [Step("get_campaign", "Read the rewritten drafts."),
                Step("bulk_approve_messages", "Approve the drafts that are ready.", person_must_act=True)]


ACTIONS = [ImportContacts(), GenerateDesignImage(), PolishCopywriting(), RewriteWaitingDrafts()]
__all__ = ["ACTIONS"]
