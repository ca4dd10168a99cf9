"""Single pieces (class always): sending one piece now, cancelling one that has not gone out.

A send card, like a launch card, lists the draft design it publishes (name and version) when the
confirming person may publish; publishing runs first.
"""

from __future__ import annotations

from pydantic import Field

from ...core.ids import new_id
from ...core.preview import Preview
from ...toolkit import ALWAYS, ActionContext, ActionError, Arguments, ChoiceBound, Effect, Phase, Step
from .action import MailAction, create
from .kinds import DIRECT, KIND_LIST, NOUN, PRICES, SINGULAR, piece_id, pieces_kind
from .printing import cancel_pieces, ledger_after, need_credits, print_job
from .publishing import drafts_to_publish, printing_version, publish_lines, publish_phases, publish_subject
from .snapshot import Mail, has_address
from .text import address_line, credits, email_domain, published_lines, q


class SendPieceArgs(Arguments):
    contact_id: str = Field(max_length=64, description="The recipient")
    design_id: str = Field(max_length=64, description="The design (its format sets the price)")
    message: str = Field(min_length=1, max_length=2000, description="The copy printed on the piece")


def _lists_of(subject: dict, ctx: ActionContext) -> list[str]:
    """The lists the piece's recipient is on (read now: a grant names lists, a send names a contact)."""
    return [d.id for d in ctx.store.list_docs(ctx.workspace_id, KIND_LIST)
            if subject["contact"] in d.data.get("contact_ids", [])]


def _lists(ctx: ActionContext) -> list[tuple[str, str]]:
    return sorted(((d.id, d.data.get("name", d.id)) for d in ctx.store.list_docs(ctx.workspace_id, KIND_LIST)),
                  key=lambda pair: pair[1])


class SendPiece(MailAction):
    name = "send_piece"
    title = "Preparing a send confirmation"
    description = "Print and send one piece to one contact now, debiting its credits (publishes a draft design first)."
    arguments = SendPieceArgs
    gate = ALWAYS
    irreversible = True  # a sent piece has left: cancel_piece refuses it
    drift_message = ("The recipient, the design or the credits changed between the preview and the answer; "
                     "nothing was sent.")
    grantable = (ChoiceBound("contact_id", values=_lists_of, choices=_lists, label="to contacts on these lists",
                             any_of=True),)

    def prepare(self, args: SendPieceArgs, ctx: ActionContext):
        mail = Mail(ctx)
        contact = mail.contact(args.contact_id)
        design = mail.design(args.design_id)
        cd = contact.data
        if mail.suppressed(contact):
            domain = email_domain(cd.get("email"))
            why = f"the domain {domain} is suppressed" if domain in mail.suppression.data.get("domains", []) else \
                "the contact is suppressed"
            raise ActionError(
                f"contact_id: {cd['name']} cannot be mailed: {why}. Nothing was sent.", field="contact_id"
            )
        if not has_address(cd):
            raise ActionError(f"contact_id: {cd['name']} has no complete mailing address.", field="contact_id")
        return_address = mail.profile.data.get("return_address")
        if not return_address:
            raise ActionError("The workspace has no return address yet; set one first (set_return_address).")
        message = args.message.strip()
        if not message:
            raise ActionError("message: must not be empty.", field="message")
        drafts = drafts_to_publish(ctx, [design], "design_id")
        fmt = design.data["format"]
        price = PRICES[fmt]
        need_credits(mail, price, f"sending {SINGULAR[fmt]}")
        batch = new_id("b")
        piece = {"id": piece_id(DIRECT, batch, 0), "contact_id": contact.id, "name": cd["name"],
                 "company": cd.get("company", ""), "format": fmt, "design_id": design.id,
                 "design_version": printing_version(design), "copy": message, "written_by": "person", "clean": True,
                 "status": "sent", "credits": price, "created_at": ctx.now, "sent_by": ctx.person.id}
        job = print_job(mail, [piece], ctx, campaign_id=DIRECT, source="send_piece", status="sent")
        writes = [create(pieces_kind(DIRECT), batch, {"campaign_id": DIRECT, "pieces": [piece]}), job,
                  ledger_after(mail, spend=price, created=1, printed=1)]
        kept = " (the design it published stays published)" if drafts else ""
        phases = publish_phases(drafts, ctx) + [
            Phase(f"send to {cd['name']}", tuple(writes),
                  failure=f"The credits changed between the preview and the answer; nothing was sent{kept}."),
        ]
        published = publish_subject(drafts)
        subject = {"contact": contact.id, "name": cd["name"], "address": cd.get("address"), "design": design.id,
                   "version": printing_version(design), "publish": published, "format": fmt, "message": message,
                   "spend": price, "return_address": return_address}
        who = cd["name"] + (f" ({cd['company']})" if cd.get("company") else "")
        title = f"Send {SINGULAR[fmt]} to {who}: {credits(price)}"
        lines = [f"To: {address_line(cd.get('address'))}", *publish_lines(drafts)]
        if not drafts:
            lines.append(f"Design {q(design.data['name'])} version {design.data['published_version']}")
        lines += [f"Message: {message}", f"Return address: {address_line(return_address)}"]
        result = {"piece_id": piece["id"], "status": "sent", "spent": price, "published": published}
        return subject, Preview(title, lines), Effect(result, tuple(phases))

    def outcome_lines(self, result: dict) -> list[str]:
        return [*published_lines(result.get("published")), f"Sent · {credits(result['spent'])} spent"]

    def next_steps(self, result, ctx):
        return [Step("get_credits", "Check the remaining balance.")]


class PieceArgs(Arguments):
    piece_id: str = Field(max_length=120)


class CancelPiece(MailAction):
    name = "cancel_piece"
    title = "Preparing a cancellation confirmation"
    description = (
        "Cancel a piece that has not gone to the mail (waiting, approved, or in the print queue); "
        "its credits come back."
    )
    arguments = PieceArgs
    gate = ALWAYS
    drift_message = "The piece changed between the preview and the answer; nothing was cancelled."

    def prepare(self, args: PieceArgs, ctx: ActionContext):
        mail = Mail(ctx)
        batch, index, piece = mail.piece(args.piece_id)
        status = piece["status"]
        if status == "sent":
            raise ActionError(f"piece_id: the {NOUN[piece['format']]} to {piece['name']} was already sent; mail that "
                              "has left cannot be called back.", field="piece_id")
        if status == "cancelled":
            raise ActionError(f"piece_id: the {NOUN[piece['format']]} to {piece['name']} is already cancelled.",
                              field="piece_id")
        owner = args.piece_id.rsplit(".", 2)[0]
        camp = mail.campaigns.get(owner)
        on = f" on {q(camp.data['name'])}" if camp else ""
        cancel = cancel_pieces(mail, [(batch, index, piece)], ctx, reason="cancelled")
        writes = [*cancel.batch_writes, *cancel.job_writes, ledger_after(mail, refund=cancel.refund,
                                                                        unprinted=cancel.unprinted)]
        where = {"waiting": "It was waiting for review", "approved": "It was approved and not yet printed",
                 "printed": "It is in the print queue; it is pulled before the mail run"}[status]
        subject = {"piece": piece["id"], "status": status, "refund": cancel.refund}
        title = f"Cancel the {NOUN[piece['format']]} to {piece['name']}{on}: {credits(cancel.refund)} returned"
        return subject, Preview(title, [where]), Effect.writes({
            "piece_id": piece["id"], "status": "cancelled", "refunded": cancel.refund}, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"Cancelled · {credits(result['refunded'])} returned"]

    def next_steps(self, result, ctx):
        return [Step("get_credits", "Check the balance after the refund.")]


ACTIONS = [SendPiece(), CancelPiece()]
__all__ = ["ACTIONS"]
