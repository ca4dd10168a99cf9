"""Suppressing a whole domain (class always): its contacts are never mailed again, and their pieces
that have not gone to the mail are cancelled with their credits returned."""

from __future__ import annotations

from pydantic import Field

from ...core.preview import Preview
from ...toolkit import ALWAYS, ActionContext, ActionError, Arguments, Effect, Step
from .action import MailAction, put
from .kinds import CANCELLABLE
from .printing import cancel_pieces, ledger_after
from .snapshot import Mail
from .text import count, credits, digest, email_domain, q, recipients_line
from .validation import DOMAIN_RE, check_write_count


class SuppressDomainArgs(Arguments):
    domain: str = Field(min_length=3, max_length=253, description="e.g. globex.com")


class SuppressDomain(MailAction):
    name = "suppress_domain"
    title = "Preparing a suppression confirmation"
    description = ("Never mail anyone at a domain again; cancels their pieces that have not gone to the mail and "
                   "returns the credits.")
    arguments = SuppressDomainArgs
    gate = ALWAYS
    irreversible = True  # no tool lifts a suppression
    drift_message = ("The contacts or pieces at this domain changed between the preview and the answer; "
                     "nothing was suppressed.")

    def prepare(self, args: SuppressDomainArgs, ctx: ActionContext):
        mail = Mail(ctx)
        domain = args.domain.strip().lower().lstrip("@")
        if not DOMAIN_RE.fullmatch(domain):
            raise ActionError(f"domain: {args.domain!r} is not a domain name like globex.com.", field="domain")
        sup = mail.suppression
        if domain in sup.data.get("domains", []):
            raise ActionError(f"domain: {domain} is already suppressed.", field="domain")
        contacts = sorted((c for c in mail.contacts.values() if email_domain(c.data.get("email")) == domain),
                          key=lambda c: c.id)
        ids = {c.id for c in contacts}
        targets, campaigns = [], set()
        for camp in mail.campaigns.values():
            for b, i, p in mail.pieces(camp.id):
                if p["contact_id"] in ids and p["status"] in CANCELLABLE:
                    targets.append((b, i, p))
                    campaigns.add(camp.data["name"])
        cancel = cancel_pieces(mail, targets, ctx, reason=f"domain {domain} suppressed")
        new_sup = dict(sup.data, domains=sorted([*sup.data.get("domains", []), domain]))
        writes = [put(sup, new_sup), *cancel.batch_writes, *cancel.job_writes]
        if targets:
            writes.append(ledger_after(mail, refund=cancel.refund, unprinted=cancel.unprinted))
        check_write_count(len(writes), "This suppression")
        title = f"Suppress the domain {domain}: {count(len(contacts), 'contact')} never mailed again"
        if targets:
            title += f"; {count(len(targets), 'piece')} not yet mailed cancelled, {credits(cancel.refund)} returned"
        lines = []
        if contacts:
            lines.append(f"Contacts: {recipients_line([c.data for c in contacts], limit=5)}")
        if campaigns:
            lines.append(f"Campaigns affected: {', '.join(q(n) for n in sorted(campaigns))}")
        lines.append("From now on no address at this domain is mailed: launches, resumes and single pieces "
                     "skip it, and contacts imported later are listed as suppressed")
        subject = {"domain": domain, "contacts": {"count": len(contacts), "digest": digest(ids)},
                   "cancel": {"count": len(targets), "digest": digest(p["id"] for _, _, p in targets)},
                   "refund": cancel.refund}
        return subject, Preview(title, lines), Effect.writes({
            "domain": domain, "contacts": len(contacts), "cancelled": len(targets), "refunded": cancel.refund}, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"No address at {result['domain']} is mailed from now on",
                f"{count(result['contacts'], 'contact')} suppressed · {count(result['cancelled'], 'piece')} "
                f"cancelled · {credits(result['refunded'])} returned"]

    def next_steps(self, result, ctx):
        return [Step("list_contacts", "Check which contacts are suppressed.")]


ACTIONS = [SuppressDomain()]
__all__ = ["ACTIONS"]
