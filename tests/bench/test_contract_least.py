"""The contract's least held call (``bench/mcp_contract.py``), which ``bench/mcp.py`` measures as the
floor of the held call's ratio, does the contract's work and no less: its card is filed once per
request (a retry finds it), with the claim, the audit entry and the notification in the same
commit, and a ticket that verifies over the card's claims."""

from __future__ import annotations

import base64
import importlib.util
import json
from pathlib import Path

from nacl.signing import VerifyKey

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _contract():
    spec = importlib.util.spec_from_file_location("mcp_contract", BENCH / "mcp_contract.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def test_the_least_held_call_files_one_card_per_request_with_its_claim_audit_notification_and_ticket():
    contract = _contract()
    first = contract.hold("cat_groceries", "current", "150.00")
    again = contract.hold("cat_groceries", "current", "150.00")  # a retry: the same request
    other = contract.hold("cat_groceries", "current", "175.00")
    assert first["status"] == "pending" and first["title"].startswith("Budget Groceries for ")
    assert "100.00 → 150.00?" in first["title"]
    assert again["confirmationId"] == first["confirmationId"] != other["confirmationId"]
    db = contract._store()
    count = {table: db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
             for table in ("requests", "cards", "audit", "notifications")}
    assert count == {"requests": 2, "cards": 2, "audit": 2, "notifications": 2}
    (ticket,) = db.execute("SELECT ticket FROM cards WHERE id = ?", (first["confirmationId"],)).fetchone()
    payload, signature = ticket.split(".")
    VerifyKey(bytes(contract._key().verify_key)).verify(_unb64(payload), _unb64(signature))
    claims = json.loads(_unb64(payload))
    assert claims["card_id"] == first["confirmationId"] and claims["tool"] == "set_category_budget"
    assert first["instructions"] == contract.HELD_INSTRUCTIONS
