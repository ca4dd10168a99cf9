"""One read snapshot per plan: :class:`Mail` lists each kind of document at most once, and answers
the questions every action asks of the workspace (who is suppressed, who a campaign reaches)."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any

from ...core.canonical import json_copy
from ...toolkit import ActionContext, ActionError, Doc
from .kinds import (
    DEFAULT_LEDGER,
    DEFAULT_PROFILE,
    DEFAULT_SUPPRESSION,
    KIND_CAMPAIGN,
    KIND_CONTACT,
    KIND_DESIGN,
    KIND_LEDGER,
    KIND_LIST,
    KIND_PROFILE,
    KIND_SENDER,
    KIND_SUPPRESSION,
    LEDGER_ID,
    PROFILE_ID,
    SUPPRESSION_ID,
    pieces_kind,
    split_piece_id,
)
from .text import email_domain


def campaign_is_live(ctx: ActionContext, campaign_id: str) -> bool:
    """Whether a campaign is live right now (a cheap single read, for ``gate_class``)."""
    doc = ctx.store.get_doc(ctx.workspace_id, KIND_CAMPAIGN, campaign_id)
    return doc is not None and doc.data.get("status") == "live"


def has_address(contact: dict) -> bool:
    a = contact.get("address") or {}
    return bool(a.get("line1") and a.get("city") and a.get("postal_code") and a.get("country"))


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
                doc = Doc(kind, doc_id, json_copy(default), 0)  # (the defaults are plain JSON)
            else:
                doc = Doc(doc.kind, doc.id, {**json_copy(default), **doc.data}, doc.version)
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
        owner, batch_id, index = split_piece_id(piece_id)
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
