"""Pieces and credits: enrolling contacts on a live campaign (one piece per design, printed at once
or waiting for review), the local print queue, the credit ledger, and cancelling pieces that have not
gone to the mail (their credits back)."""

from __future__ import annotations

from dataclasses import dataclass

from ...core.ids import new_id
from ...toolkit import ActionContext, ActionError, Doc, DocWrite
from .action import create, put
from .copywriting import render_copy
from .kinds import (
    AUTO_APPROVE_AFTER,
    BATCH_SIZE,
    KIND_JOB,
    MAX_RUN_PIECES,
    PRICES,
    REVIEW_CLEAN,
    REVIEW_EVERY,
    batch_name,
    piece_id,
    pieces_kind,
)
from .publishing import printing_version
from .snapshot import Mail
from .text import credits


@dataclass
class Enrolment:
    contacts: list[Doc]
    pieces: list[dict]
    batches: list[DocWrite]
    jobs: list[DocWrite]
    by_format: dict[str, int]
    spend: int
    printed: int
    waiting: int


def enrol(mail: Mail, campaign: Doc, contacts: list[Doc], designs: list[Doc], ctx: ActionContext,
          approved: int | None = None, publishing: bool = True) -> Enrolment:
    """Pieces for ``contacts`` on a campaign that is (or is becoming) live: one per design each.

    Each piece prints at once or waits for review as the campaign's copy-review mode says; every
    piece's credits are debited now (a cancelled piece gives them back). ``publishing``: the card
    publishes the campaign's draft designs first, so pieces print their draft version; otherwise
    pieces print the published version.
    """
    data = campaign.data
    mode = data.get("copy_review", REVIEW_EVERY)
    approved = data.get("approved_count", 0) if approved is None else approved
    pieces: list[dict] = []
    by_format: dict[str, int] = {}
    next_batch = int(data.get("batches", 0))
    for contact in contacts:
        for design in designs:
            fmt = design.data["format"]
            text, clean, written_by = render_copy(data.get("copy", ""), contact.data, bool(data.get("personalize")))
            if mode == REVIEW_CLEAN and clean and (written_by == "template" or approved >= AUTO_APPROVE_AFTER):
                status = "printed"
            else:
                status = "waiting"
            by_format[fmt] = by_format.get(fmt, 0) + 1
            pieces.append(
                {
                    "contact_id": contact.id,
                    "name": contact.data.get("name", ""),
                    "company": contact.data.get("company", ""),
                    "format": fmt,
                    "design_id": design.id,
                    "design_version": printing_version(design) if publishing else design.data.get("published_version"),
                    "copy": text,
                    "written_by": written_by,
                    "clean": clean,
                    "status": status,
                    "credits": PRICES[fmt],
                    "created_at": ctx.now,
                }
            )
    if len(pieces) > MAX_RUN_PIECES:
        raise ActionError(
            f"This would create {len(pieces)} pieces at once; at most {MAX_RUN_PIECES} fit in one step. "
            "Split the audience into smaller lists."
        )
    batches, jobs = [], []
    owner = campaign.id
    for start in range(0, len(pieces), BATCH_SIZE):
        bid = batch_name(next_batch)
        next_batch += 1
        chunk = pieces[start:start + BATCH_SIZE]
        for i, p in enumerate(chunk):
            p["id"] = piece_id(owner, bid, i)
        printed = [p for p in chunk if p["status"] == "printed"]
        if printed:
            job = print_job(mail, printed, ctx, campaign_id=owner, source="enrolment")
            jobs.append(job)
        batches.append(create(pieces_kind(owner), bid, {"campaign_id": owner, "pieces": chunk}))
    return Enrolment(
        contacts=contacts, pieces=pieces, batches=batches, jobs=jobs, by_format=by_format,
        spend=sum(p["credits"] for p in pieces),
        printed=sum(1 for p in pieces if p["status"] == "printed"),
        waiting=sum(1 for p in pieces if p["status"] == "waiting"),
    )


def print_job(mail: Mail, pieces: list[dict], ctx: ActionContext, campaign_id: str, source: str,
              status: str = "printed") -> DocWrite:
    """A new entry in the local print queue; marks ``pieces`` printed (or sent) and points them at it."""
    job_id = new_id("pj_")
    entries = []
    for p in pieces:
        p["status"] = status
        p["printed_at"] = ctx.now
        p["job_id"] = job_id
        contact = mail.contacts.get(p["contact_id"])
        entries.append({
            "piece_id": p["id"], "contact_id": p["contact_id"], "name": p.get("name", ""),
            "company": p.get("company", ""), "address": (contact.data.get("address") if contact else None),
            "format": p["format"], "design_id": p["design_id"], "design_version": p["design_version"],
            "copy": p["copy"], "credits": p["credits"], "status": status,
        })
    data = {
        "at": ctx.now, "source": source, "campaign_id": campaign_id,
        "return_address": mail.profile.data.get("return_address"), "pieces": entries,
    }
    return create(KIND_JOB, job_id, data)


def need_credits(mail: Mail, spend: int, doing: str) -> None:
    balance = mail.balance()
    if spend > balance:
        raise ActionError(
            f"Not enough credits: {doing} needs {credits(spend)}, and the balance is {credits(balance)}. "
            "Buy credits first (buy_credits); nothing was printed or debited.",
            field="credits",
        )


def ledger_after(mail: Mail, *, spend: int = 0, refund: int = 0, bought: int = 0, created: int = 0,
                 printed: int = 0, unprinted: int = 0) -> DocWrite:
    data = dict(mail.ledger.data)
    data["balance"] = int(data.get("balance", 0)) - spend + refund + bought
    if data["balance"] < 0:  # the plan checked; this is the last line of defence
        raise ActionError("Not enough credits; nothing was printed or debited.", field="credits")
    data["spent"] = int(data.get("spent", 0)) + spend
    data["refunded"] = int(data.get("refunded", 0)) + refund
    data["bought"] = int(data.get("bought", 0)) + bought
    data["pieces_created"] = int(data.get("pieces_created", 0)) + created
    data["pieces_printed"] = max(0, int(data.get("pieces_printed", 0)) + printed - unprinted)
    return put(mail.ledger, data)


@dataclass
class Cancellation:
    """Cancelling pieces that have not gone to the mail: batch and print-queue writes, and the refund."""

    batch_writes: list[DocWrite]
    job_writes: list[DocWrite]
    refund: int
    cancelled: list[dict]
    unprinted: int


def cancel_pieces(mail: Mail, targets: list[tuple[Doc, int, dict]], ctx: ActionContext, reason: str) -> Cancellation:
    by_batch: dict[tuple[str, str], tuple[Doc, dict]] = {}
    jobs_touched: dict[str, set[str]] = {}
    refund, unprinted, cancelled = 0, 0, []
    for batch, index, _piece in targets:
        key = (batch.kind, batch.id)
        if key not in by_batch:
            by_batch[key] = (batch, {"campaign_id": batch.data.get("campaign_id"),
                                     "pieces": [dict(p) for p in batch.data.get("pieces", [])]})
        new_piece = by_batch[key][1]["pieces"][index]
        if new_piece["status"] == "printed" and new_piece.get("job_id"):
            jobs_touched.setdefault(new_piece["job_id"], set()).add(new_piece["id"])
            unprinted += 1
        new_piece["status"] = "cancelled"
        new_piece["cancelled_at"] = ctx.now
        new_piece["cancel_reason"] = reason
        refund += int(new_piece.get("credits", 0))
        cancelled.append(new_piece)
    job_writes = []
    for job_id, ids in sorted(jobs_touched.items()):
        job = mail.ctx.store.get_doc(mail.ctx.workspace_id, KIND_JOB, job_id)
        if job is None:
            continue
        data = dict(job.data)
        data["pieces"] = [dict(e, status="cancelled") if e["piece_id"] in ids else e for e in data.get("pieces", [])]
        job_writes.append(put(job, data))
    batch_writes = [put(batch, data) for batch, data in by_batch.values()]
    return Cancellation(batch_writes, job_writes, refund, cancelled, unprinted)
