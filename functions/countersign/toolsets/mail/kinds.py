"""The mail workspace as versioned store documents: their kinds, ids, defaults, prices and limits.

Documents (kind / id):

* ``mail_profile/workspace`` — brand kit, preferences, return address, setup state. (The workspace
  name lives on the workspace record, see
  :meth:`~countersign.store.workspaces.WorkspaceStore.rename_workspace`; a ``name`` here is not read.)
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

Plans read them through :class:`~.snapshot.Mail` (one snapshot per plan) and prepare their
effect (:mod:`.action`): versioned writes the gate commits with the card (in phases when
publishing must stand on its own). Every write names the version the plan read, so a change that
raced the card is refused, never lost, and credits never go negative.
"""

from __future__ import annotations

from typing import Any, Final

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

PRICES = {"postcard": 2000, "letter": 3500, "handwritten": 6000}  # credits, in milliunits
NOUN = {"postcard": "postcard", "letter": "letter", "handwritten": "handwritten note"}
SINGULAR = {"postcard": "a postcard", "letter": "a letter", "handwritten": "a handwritten note"}
PUBLISHERS = ("owner", "admin", "approver")  # may publish a draft design

PIECE_STATES = ("waiting", "approved", "printed", "sent", "cancelled")

CANCELLABLE = ("waiting", "approved", "printed")  # not yet handed to the mail
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


def pieces_kind(owner: str) -> str:
    return PIECES_PREFIX + owner


def piece_id(owner: str, batch_id: str, index: int) -> str:
    return f"{owner}.{batch_id}.{index:03d}"


def split_piece_id(piece_id: Any) -> tuple[str | None, str, int]:
    """(owner, batch id, index) of a piece id; (None, "", 0) when it is not one."""
    if not isinstance(piece_id, str) or piece_id.count(".") < 2:
        return None, "", 0
    owner, batch_id, index = piece_id.rsplit(".", 2)
    if not owner or not batch_id or not index.isdigit():
        return None, "", 0
    return owner, batch_id, int(index)


def batch_name(n: int) -> str:
    return f"b{n:04d}"
