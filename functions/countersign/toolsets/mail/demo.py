"""Demo data for ``countersign serve --demo``: a set-up workspace with contacts, a list, a draft
design, a draft campaign that uses both, and some credits."""

from __future__ import annotations

from ...core.ids import new_id
from ...toolkit import MAX_DOC_WRITES, ActionContext, DocStore
from .action import create
from .kinds import (
    DEFAULT_LEDGER,
    DEFAULT_PROFILE,
    KIND_CAMPAIGN,
    KIND_CONTACT,
    KIND_DESIGN,
    KIND_LEDGER,
    KIND_LIST,
    KIND_PROFILE,
    KIND_SENDER,
    LEDGER_ID,
    PROFILE_ID,
    REVIEW_EVERY,
)

DEMO_CONTACTS = [
    (
        "Ada Lovelace",
        "Analytical Engines",
        "ada@analytical.example",
        "12 St James's Square",
        "London",
        "SW1Y 4JH",
        "GB",
    ),
    ("Grace Hopper", "Cobol Works", "grace@cobol.example", "1 Navy Way", "Arlington", "22202", "US"),
    ("Alan Turing", "Bletchley Labs", "alan@bletchley.example", "Sherwood Drive", "Milton Keynes", "MK3 6EB", "GB"),
    ("Katherine Johnson", "Orbital Math", "katherine@orbital.example", "21 NASA Road", "Hampton", "23666", "US"),
    ("Edsger Dijkstra", "Shortest Path BV", "edsger@paths.example", "Prinsengracht 263", "Amsterdam", "1016 GV", "NL"),
    ("Margaret Hamilton", "Apollo Software", "margaret@apollo.example", "75 Vassar St", "Cambridge", "02139", "US"),
]

DEMO_COPY = ("Hi {first_name}, thanks for a great conversation this quarter. We'd love to show the team at {company} "
             "what is new before the holidays.")


def seed(store: DocStore, ctx: ActionContext, credits: int = 100, contacts=DEMO_CONTACTS) -> dict:
    """Write the demo workspace; returns the ids it created."""
    contact_ids, writes = [], []
    for name, company, email, line1, city, postal, country in contacts:
        cid = new_id("ct_")
        contact_ids.append(cid)
        writes.append(create(KIND_CONTACT, cid, {
            "name": name, "company": company, "email": email, "suppressed": False, "created_at": ctx.now,
            "address": {"line1": line1, "city": city, "postal_code": postal, "country": country}}))
    list_id, design_id, campaign_id, sender_id = new_id("ls_"), new_id("ds_"), new_id("cp_"), new_id("sd_")
    writes += [
        create(KIND_PROFILE, PROFILE_ID, dict(DEFAULT_PROFILE, name=ctx.workspace.name, return_address={
            "name": ctx.workspace.name, "line1": "500 Market Street", "city": "San Francisco", "region": "CA",
            "postal_code": "94105", "country": "US"}, setup_finished=True,
            brand_kit={"primary_color": "#1f3a5f", "accent_color": "#f2a541", "font": "Inter"})),
        create(KIND_SENDER, sender_id, {"name": ctx.person.name or "Demo sender", "email": ctx.person.email,
                                        "meeting_link": "https://meet.example/demo", "default": True}),
        create(KIND_LEDGER, LEDGER_ID, dict(DEFAULT_LEDGER, balance=credits * 1000, bought=credits * 1000)),
        create(KIND_LIST, list_id, {"name": "Q4 prospects", "contact_ids": contact_ids, "created_at": ctx.now}),
        create(KIND_DESIGN, design_id, {
            "name": "Autumn postcard", "format": "postcard", "draft_version": 1,
            "draft": {"headline": "See what is new this season", "image": "generated://autumn-leaves.png"},
            "published_version": None, "published": None, "created_at": ctx.now, "updated_at": ctx.now}),
        create(KIND_CAMPAIGN, campaign_id, {
            "name": "Q4 outreach", "status": "draft", "list_ids": [list_id], "design_ids": [design_id],
            "copy": DEMO_COPY, "copy_review": REVIEW_EVERY, "personalize": False, "approved_count": 0, "batches": 0,
            "created_at": ctx.now}),
    ]
    for start in range(0, len(writes), MAX_DOC_WRITES):  # demo data only: not one transaction
        store.write_docs(ctx.workspace_id, writes[start:start + MAX_DOC_WRITES])
    return {"contact_ids": contact_ids, "list_id": list_id, "design_id": design_id, "campaign_id": campaign_id,
            "sender_id": sender_id}


def demo(store: DocStore, ctx: ActionContext) -> None:
    seed(store, ctx)
