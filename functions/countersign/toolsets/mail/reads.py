"""Reads: run at once, write nothing."""

from __future__ import annotations

from pydantic import Field

from ...core.preview import money
from ...toolkit import ActionContext, Arguments, Read
from .kinds import KIND_JOB, PIECE_STATES, PRICES
from .publishing import is_draft
from .snapshot import Mail


class NoArgs(Arguments):
    pass


def _counts(pieces) -> dict[str, int]:
    out = {s: 0 for s in PIECE_STATES}
    for _, _, p in pieces:
        out[p["status"]] = out.get(p["status"], 0) + 1
    return out


def _campaign_summary(mail: Mail, camp) -> dict:
    c = camp.data
    return {
        "id": camp.id,
        "name": c["name"],
        "status": c["status"],
        "lists": [
            {"id": lid, "name": mail.lists[lid].data["name"]} for lid in c.get("list_ids", []) if lid in mail.lists
        ],
        "designs": [
            {"id": did, "name": mail.designs[did].data["name"]}
            for did in c.get("design_ids", [])
            if did in mail.designs
        ],
        "copy_review": c.get("copy_review"),
        "personalize": bool(c.get("personalize")),
        "approved_count": c.get("approved_count", 0),
        "pieces": _counts(mail.pieces(camp.id)),
    }


class ListCampaigns(Read):
    name = "list_campaigns"
    title = "Listing campaigns"
    description = "Every campaign with its state, lists, designs and piece counts."
    arguments = NoArgs

    def run(self, args, ctx: ActionContext) -> dict:
        mail = Mail(ctx)
        return {"campaigns": [_campaign_summary(mail, c) for c in mail.campaigns.values()]}


class GetCampaignArgs(Arguments):
    campaign_id: str = Field(max_length=64)
    status: str | None = Field(default=None, description="Only pieces in this state (waiting, printed, ...)")
    limit: int = Field(default=50, ge=1, le=200)
    offset: int = Field(default=0, ge=0)


class GetCampaign(Read):
    name = "get_campaign"
    title = "Reading a campaign"
    description = "A campaign's details, audience size and pieces (paged)."
    arguments = GetCampaignArgs

    def run(self, args: GetCampaignArgs, ctx: ActionContext) -> dict:
        mail = Mail(ctx)
        camp = mail.campaign(args.campaign_id)
        audience, skipped = mail.audience(camp)
        pieces = [p for _, _, p in mail.pieces(camp.id) if args.status is None or p["status"] == args.status]
        out = _campaign_summary(mail, camp)
        out.update({
            "copy": camp.data.get("copy", ""), "audience": len(audience), "skipped": skipped,
            "piece_list": [{k: p.get(k) for k in ("id", "contact_id", "name", "format", "status", "copy", "written_by",
                                                  "design_id", "design_version")}
                           for p in pieces[args.offset: args.offset + args.limit]],
            "piece_total": len(pieces),
        })
        return out


class ListContactsArgs(Arguments):
    list_id: str | None = Field(default=None, max_length=64)
    limit: int = Field(default=100, ge=1, le=500)
    offset: int = Field(default=0, ge=0)


class ListContacts(Read):
    name = "list_contacts"
    title = "Listing contacts"
    description = "Contacts (of one list, or all), with whether each is suppressed."
    arguments = ListContactsArgs

    def run(self, args: ListContactsArgs, ctx: ActionContext) -> dict:
        mail = Mail(ctx)
        if args.list_id:
            ids = mail.list(args.list_id).data.get("contact_ids", [])
            docs = [mail.contacts[i] for i in ids if i in mail.contacts]
        else:
            docs = list(mail.contacts.values())
        page = docs[args.offset: args.offset + args.limit]
        return {"total": len(docs), "contacts": [
            {"id": c.id, "name": c.data.get("name"), "company": c.data.get("company"), "email": c.data.get("email"),
             "address": c.data.get("address"), "suppressed": mail.suppressed(c)} for c in page]}


class ListLists(Read):
    name = "list_lists"
    title = "Listing lists"
    description = "Every list with its size and the campaigns it feeds."
    arguments = NoArgs

    def run(self, args, ctx: ActionContext) -> dict:
        mail = Mail(ctx)
        return {
            "lists": [
                {
                    "id": lst.id,
                    "name": lst.data["name"],
                    "contacts": len(lst.data.get("contact_ids", [])),
                    "feeds": [
                        {"id": c.id, "name": c.data["name"], "status": c.data["status"]}
                        for c in mail.campaigns_fed_by(lst.id)
                    ],
                }
                for lst in mail.lists.values()
            ]
        }


class ListDesigns(Read):
    name = "list_designs"
    title = "Listing designs"
    description = "Every design with its draft and published versions and the live campaigns that print it."
    arguments = NoArgs

    def run(self, args, ctx: ActionContext) -> dict:
        mail = Mail(ctx)
        return {
            "designs": [
                {
                    "id": d.id,
                    "name": d.data["name"],
                    "format": d.data["format"],
                    "state": "draft" if is_draft(d) else "published",
                    "draft_version": d.data.get("draft_version"),
                    "published_version": d.data.get("published_version"),
                    "draft": d.data.get("draft"),
                    "live_campaigns": [c.id for c in mail.live_campaigns_using(d.id)],
                }
                for d in mail.designs.values()
            ]
        }


class GetCredits(Read):
    name = "get_credits"
    title = "Reading the credit balance"
    description = "The credit balance, prices per piece, and the print queue's size."
    arguments = NoArgs

    def run(self, args, ctx: ActionContext) -> dict:
        mail = Mail(ctx)
        ledger = mail.ledger.data
        jobs = ctx.store.list_docs(ctx.workspace_id, KIND_JOB)
        queued = sum(1 for j in jobs for e in j.data.get("pieces", []) if e.get("status") == "printed")
        return {
            "balance": money(ledger.get("balance", 0)), "balance_milli": ledger.get("balance", 0),
            "spent": money(ledger.get("spent", 0)), "bought": money(ledger.get("bought", 0)),
            "refunded": money(ledger.get("refunded", 0)),
            "prices": {fmt: money(v) for fmt, v in PRICES.items()},
            "print_queue": {"jobs": len(jobs), "pieces_waiting_for_the_mail": queued},
        }


READS = [ListCampaigns(), GetCampaign(), ListContacts(), ListLists(), ListDesigns(), GetCredits()]
__all__ = ["READS"]
