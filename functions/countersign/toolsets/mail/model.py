"""The mail workspace as versioned store documents, and the rules every action shares.

Documents (kind / id):

* ``mail_profile/workspace`` — brand kit, preferences, return address, setup state. (The workspace
  name lives on the workspace record, see :meth:`Store.rename_workspace`; a ``name`` here is not read.)
* ``mail_credits/ledger`` — the credit balance (milliunits) and counters (pieces created, printed).
* ``mail_contact/<id>`` — name, company, email, address, suppressed.
* ``mail_list/<id>`` — name and contact ids; which campaigns a list feeds is read from the campaigns.
* ``mail_design/<id>`` — a draft (``draft_version``) and the published version that prints.
* ``mail_campaign/<id>`` — state (draft, live, paused, ended), lists, designs, copy, copy-review mode.
* ``mail_pieces.<campaign id | direct>/<batch>`` — up to 100 pieces each (a piece is one mail item
  to one contact: waiting, approved, printed, sent, cancelled). Batches keep a launch of hundreds of
  pieces inside one atomic write.
* ``mail_print_job/<id>`` — the local print queue: what was "printed" or "sent", with the address
  and copy snapshot. Nothing outside the store is ever called.
* ``mail_suppression/list`` — suppressed domains and contacts.
* ``mail_sender/<id>`` — senders (name, email, meeting link, default).

Plans read through :class:`Mail` (one snapshot per plan) and prepare their effect: versioned
writes the gate commits with the card (in phases when publishing must stand on its own). Every
write names the version the plan read, so a change that raced the card is refused, never lost,
and credits never go negative.
"""

from __future__ import annotations

import builtins
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from ...core.ids import new_id
from ...core.preview import Preview, money
from ...gate.actions import Action, ActionContext, ActionError, Effect, Phase, Plan
from ...store.errors import Conflict
from ...store.interface import MAX_DOC_WRITES
from ...store.records import Doc, DocWrite

# -- kinds and constants ---------------------------------------------------------------------------

KIND_PROFILE, PROFILE_ID = "mail_profile", "workspace"
KIND_LEDGER, LEDGER_ID = "mail_credits", "ledger"
KIND_SUPPRESSION, SUPPRESSION_ID = "mail_suppression", "list"
KIND_CONTACT = "mail_contact"
KIND_LIST = "mail_list"
KIND_DESIGN = "mail_design"
KIND_CAMPAIGN = "mail_campaign"
KIND_SENDER = "mail_sender"
KIND_JOB = "mail_print_job"
PIECES_PREFIX = "mail_pieces."
DIRECT = "direct"

FORMATS = ("postcard", "letter", "handwritten")
PRICES = {"postcard": 2000, "letter": 3500, "handwritten": 6000}  # credits, in milliunits
NOUN = {"postcard": "postcard", "letter": "letter", "handwritten": "handwritten note"}
SINGULAR = {"postcard": "a postcard", "letter": "a letter", "handwritten": "a handwritten note"}

PUBLISHERS = ("owner", "admin", "approver")  # may publish a draft design
MANAGERS = ("owner", "admin")  # may change roles and the drafting setting

CAMPAIGN_STATES = ("draft", "live", "paused", "ended")
PIECE_STATES = ("waiting", "approved", "printed", "sent", "cancelled")
CANCELLABLE = ("waiting", "approved", "printed")  # not yet handed to the mail
GONE_OUT = ("printed", "sent")

REVIEW_EVERY: Final = "every_draft"
REVIEW_CLEAN: Final = "clean_auto"
REVIEW_MODES = (REVIEW_EVERY, REVIEW_CLEAN)
AUTO_APPROVE_AFTER = 10  # clean_auto: model-written drafts wait until this many pieces are approved

BATCH_SIZE = 100
MAX_RUN_PIECES = 4000  # one launch, resume or list addition (keeps the write inside one transaction)

DEFAULT_PROFILE = {
    "name": None,
    "brand_kit": {},
    "preferences": {"timezone": "UTC", "signature": "", "default_format": "postcard"},
    "return_address": None,
    "setup_finished": False,
}
DEFAULT_LEDGER = {"balance": 0, "bought": 0, "spent": 0, "refunded": 0, "pieces_created": 0, "pieces_printed": 0}
DEFAULT_SUPPRESSION: dict[str, list[str]] = {"domains": [], "contacts": []}

DOMAIN_RE = re.compile(r"^(?=.{3,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
PLACEHOLDER_RE = re.compile(r"\{([a-z_]+)\}")


def pieces_kind(owner: str) -> str:
    return PIECES_PREFIX + owner


def q(name: Any) -> str:
    """A name as previews quote it: ‘Q4 outreach’."""
    return f"‘{name}’"


def credits(milli: int) -> str:
    return f"{money(milli)} credits"


def count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def digest(values: Iterable[str]) -> str:
    h = hashlib.sha256()
    for v in sorted(values):
        h.update(v.encode("utf-8") + b"\0")
    return h.hexdigest()[:32]


def format_counts(by_format: dict[str, int]) -> str:
    parts = [count(n, NOUN[fmt]) for fmt, n in sorted(by_format.items()) if n]
    return ", ".join(parts) if parts else "no pieces"


def address_line(address: dict | None) -> str:
    if not address:
        return "(none)"
    region_postal = " ".join(p for p in (address.get("region"), address.get("postal_code")) if p)
    parts = [address.get("name"), address.get("line1"), address.get("line2"), address.get("city"), region_postal,
             address.get("country")]
    return ", ".join(p for p in parts if p)


def campaign_is_live(ctx: ActionContext, campaign_id: str) -> bool:
    """Whether a campaign is live right now (a cheap single read, for ``gate_class``)."""
    doc = ctx.store.get_doc(ctx.workspace_id, KIND_CAMPAIGN, campaign_id)
    return doc is not None and doc.data.get("status") == "live"


def has_address(contact: dict) -> bool:
    a = contact.get("address") or {}
    return bool(a.get("line1") and a.get("city") and a.get("postal_code") and a.get("country"))


def email_domain(email: str | None) -> str:
    return (email or "").rpartition("@")[2].strip().lower()


def first_name(name: str) -> str:
    return (name or "").strip().split(" ")[0] if name else ""


# -- plans that carry their prepared effect --------------------------------------------------------


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


def label(kind: str, data: dict) -> str:
    name = data.get("name")
    return {
        KIND_CAMPAIGN: f"the campaign {q(name)}",
        KIND_DESIGN: f"the design {q(name)}",
        KIND_CONTACT: f"the contact {q(name)}",
        KIND_LIST: f"the list {q(name)}",
        KIND_SENDER: f"the sender {q(name)}",
        KIND_LEDGER: "the credit balance",
        KIND_PROFILE: "the workspace profile",
        KIND_SUPPRESSION: "the suppression list",
        KIND_JOB: "the print queue",
    }.get(kind, "the pieces of a campaign" if kind.startswith(PIECES_PREFIX) else kind)


def put(doc: Doc, data: dict) -> DocWrite:
    return DocWrite(doc.kind, doc.id, data, doc.version)


def create(kind: str, doc_id: str, data: dict) -> DocWrite:
    return DocWrite(kind, doc_id, data, 0)


def check_write_count(writes: int, what: str) -> None:
    if writes > MAX_DOC_WRITES:
        raise ActionError(f"{what} touches too many records at once ({writes}); split it into smaller steps.")


# -- one read snapshot per plan ---------------------------------------------------------------------


class Mail:
    """The workspace as one plan reads it (each kind is listed at most once)."""

    def __init__(self, ctx: ActionContext):
        self.ctx = ctx
        self._kinds: dict[str, dict[str, Doc]] = {}
        self._single: dict[str, Doc] = {}

    # generic access
    def docs(self, kind: str) -> dict[str, Doc]:
        if kind not in self._kinds:
            self._kinds[kind] = {d.id: d for d in self.ctx.store.list_docs(self.ctx.workspace_id, kind)}
        return self._kinds[kind]

    def _one(self, kind: str, doc_id: str, default: dict) -> Doc:
        key = f"{kind}/{doc_id}"
        if key not in self._single:
            doc = self.ctx.store.get_doc(self.ctx.workspace_id, kind, doc_id)
            if doc is None:
                doc = Doc(kind, doc_id, _deep_copy(default), 0)
            else:
                doc = Doc(doc.kind, doc.id, {**_deep_copy(default), **doc.data}, doc.version)
            self._single[key] = doc
        return self._single[key]

    def _need(self, kind: str, doc_id: Any, field_name: str, what: str) -> Doc:
        if not isinstance(doc_id, str) or not doc_id:
            raise ActionError(f"{field_name}: give the id of a {what}.", field=field_name)
        doc = self.docs(kind).get(doc_id)
        if doc is None:
            raise ActionError(f"{field_name}: no {what} with id {doc_id!r} in this workspace.", field=field_name)
        return doc

    # single documents
    @property
    def profile(self) -> Doc:
        return self._one(KIND_PROFILE, PROFILE_ID, DEFAULT_PROFILE)

    @property
    def ledger(self) -> Doc:
        return self._one(KIND_LEDGER, LEDGER_ID, DEFAULT_LEDGER)

    @property
    def suppression(self) -> Doc:
        return self._one(KIND_SUPPRESSION, SUPPRESSION_ID, DEFAULT_SUPPRESSION)

    def workspace_name(self) -> str:
        """The workspace record's name: the one confirm pages, emails and every toolset show
        (``set_workspace_name`` renames the record; the profile's ``name`` is not read)."""
        return self.ctx.workspace.name

    # collections
    @property
    def contacts(self) -> dict[str, Doc]:
        return self.docs(KIND_CONTACT)

    @property
    def lists(self) -> dict[str, Doc]:
        return self.docs(KIND_LIST)

    @property
    def designs(self) -> dict[str, Doc]:
        return self.docs(KIND_DESIGN)

    @property
    def campaigns(self) -> dict[str, Doc]:
        return self.docs(KIND_CAMPAIGN)

    @property
    def senders(self) -> dict[str, Doc]:
        return self.docs(KIND_SENDER)

    def campaign(self, cid: Any, field_name: str = "campaign_id") -> Doc:
        return self._need(KIND_CAMPAIGN, cid, field_name, "campaign")

    def design(self, did: Any, field_name: str = "design_id") -> Doc:
        return self._need(KIND_DESIGN, did, field_name, "design")

    def contact(self, cid: Any, field_name: str = "contact_id") -> Doc:
        return self._need(KIND_CONTACT, cid, field_name, "contact")

    def list(self, lid: Any, field_name: str = "list_id") -> Doc:
        return self._need(KIND_LIST, lid, field_name, "list")

    def sender(self, sid: Any, field_name: str = "sender_id") -> Doc:
        return self._need(KIND_SENDER, sid, field_name, "sender")

    # pieces
    def batches(self, owner: str) -> dict[str, Doc]:
        return self.docs(pieces_kind(owner))

    def pieces(self, owner: str) -> builtins.list[tuple[Doc, int, dict]]:
        out = []
        for batch in self.batches(owner).values():
            for i, piece in enumerate(batch.data.get("pieces", [])):
                out.append((batch, i, piece))
        return out

    def piece(self, piece_id: Any, field_name: str = "piece_id") -> tuple[Doc, int, dict]:
        owner, batch_id, index = _split_piece_id(piece_id)
        if owner is None:
            raise ActionError(f"{field_name}: no piece with id {piece_id!r} in this workspace.", field=field_name)
        batch = self.batches(owner).get(batch_id)
        pieces = batch.data.get("pieces", []) if batch else []
        if batch is None or index >= len(pieces) or pieces[index].get("id") != piece_id:
            raise ActionError(f"{field_name}: no piece with id {piece_id!r} in this workspace.", field=field_name)
        return batch, index, pieces[index]

    # state questions
    def anything_mailable_exists(self) -> bool:
        """A campaign or a piece exists: the return address is printed (or will be)."""
        return bool(self.campaigns) or self.ledger.data.get("pieces_created", 0) > 0

    def mail_has_gone_out(self) -> bool:
        return self.ledger.data.get("pieces_printed", 0) > 0

    def suppressed(self, contact: Doc) -> bool:
        s = self.suppression.data
        return (
            bool(contact.data.get("suppressed"))
            or contact.id in s.get("contacts", [])
            or email_domain(contact.data.get("email")) in s.get("domains", [])
        )

    def campaigns_fed_by(self, list_id: str) -> builtins.list[Doc]:
        return [c for c in self.campaigns.values() if list_id in c.data.get("list_ids", [])]

    def live_campaigns_using(self, design_id: str) -> builtins.list[Doc]:
        return [c for c in self.campaigns.values()
                if c.data.get("status") == "live" and design_id in c.data.get("design_ids", [])]

    def audience(
        self, campaign: Doc, extra_list_ids: Iterable[str] = ()
    ) -> tuple[builtins.list[Doc], dict[str, int]]:
        """Contacts of the campaign's lists (deduplicated, ordered by id) that can be mailed, and
        how many were skipped and why."""
        ids: set[str] = set()
        for lid in [*campaign.data.get("list_ids", []), *extra_list_ids]:
            lst = self.lists.get(lid)
            if lst is not None:
                ids.update(lst.data.get("contact_ids", []))
        eligible, skipped = [], {"suppressed": 0, "no mailing address": 0}
        for cid in sorted(ids):
            contact = self.contacts.get(cid)
            if contact is None:
                continue
            if self.suppressed(contact):
                skipped["suppressed"] += 1
            elif not has_address(contact.data):
                skipped["no mailing address"] += 1
            else:
                eligible.append(contact)
        return eligible, skipped

    def enrolled(self, campaign_id: str) -> set[str]:
        return {p["contact_id"] for _, _, p in self.pieces(campaign_id)}

    def balance(self) -> int:
        return int(self.ledger.data.get("balance", 0))


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


def _split_piece_id(piece_id: Any) -> tuple[str | None, str, int]:
    if not isinstance(piece_id, str) or piece_id.count(".") < 2:
        return None, "", 0
    owner, batch_id, index = piece_id.rsplit(".", 2)
    if not owner or not batch_id or not index.isdigit():
        return None, "", 0
    return owner, batch_id, int(index)


def piece_id(owner: str, batch_id: str, index: int) -> str:
    return f"{owner}.{batch_id}.{index:03d}"


def batch_name(n: int) -> str:
    return f"b{n:04d}"


# -- roles -----------------------------------------------------------------------------------------


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
        data["published"] = _deep_copy(data.get("draft") or {})
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


def review_line(mode: str, approved: int) -> str:
    if mode == REVIEW_CLEAN:
        return (f"Copy review: clean drafts print without review, while drafts a model writes wait for a person "
                f"until {AUTO_APPROVE_AFTER} pieces on this campaign are approved ({approved} so far)")
    return "Copy review: every draft waits for a person before it prints"


# -- copy ----------------------------------------------------------------------------------------


def render_copy(template: str, contact: dict, personalize: bool) -> tuple[str, bool, str]:
    """(text, clean, written_by). A draft is clean when every placeholder resolved."""
    values = {
        "first_name": first_name(contact.get("name", "")),
        "name": contact.get("name", ""),
        "company": contact.get("company", "") or "",
    }
    clean = True

    def sub(m: re.Match) -> str:
        nonlocal clean
        value = values.get(m.group(1))
        if not value:
            clean = False
            return m.group(0) if value is None else ""
        return value

    text = PLACEHOLDER_RE.sub(sub, template or "")
    if not text.strip():
        clean = False
    if personalize:
        # The local stand-in for a model's personal line: deterministic, so tests can read it.
        company = values["company"] or "your team"
        text = f"{text}\n\nP.S. {values['first_name'] or 'Hello'}, I have been following what {company} is building."
        return text, clean, "model"
    return text, clean, "template"


def polish(text: str) -> str:
    """The local copywriting pass: tidy spacing, capitalise sentences and "i", end with punctuation."""
    text = re.sub(r"[ \t]+", " ", text.strip())
    text = re.sub(r"\s+([,.!?;:])", r"\1", text)
    text = re.sub(r"\bi\b", "I", text)
    text = re.sub(r"(^|[.!?]\s+|\n\s*)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    if text and text[-1] not in ".!?":
        text += "."
    return text


# -- enrolment and printing ----------------------------------------------------------------------


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


def validate_name(value: str | None, field_name: str, limit: int = 120) -> str:
    value = (value or "").strip()
    if not value:
        raise ActionError(f"{field_name}: must not be empty.", field=field_name)
    if len(value) > limit:
        raise ActionError(f"{field_name}: at most {limit} characters.", field=field_name)
    if any(ord(c) < 32 and c not in "\n\t" for c in value):
        raise ActionError(f"{field_name}: contains control characters.", field=field_name)
    return value


def recipients_line(pieces: list[dict], limit: int = 3) -> str:
    names = sorted({p.get("name", "") for p in pieces})
    shown = ", ".join(names[:limit])
    more = len(names) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def person_label(person) -> str:
    return f"{person.name} ({person.email})" if getattr(person, "name", "") else person.email
