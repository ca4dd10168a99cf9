"""What a completed card says to the person, over real HTTP: the tool's own lines (``outcome``),
line breaks kept end to end and nothing else raw; the result and next steps still there for
"What the agent is told"; the passkey that signed it, by name (or that it was removed since); and
each passkey's fingerprint in Settings, the very string ``countersign verify-receipt`` prints."""

from __future__ import annotations

import json
import re

import pytest

from countersign.cli import main as cli
from countersign.core.statement import key_fingerprint
from countersign.toolkit import ActionContext
from countersign.toolsets.mail.demo import seed
from tests.api.test_cards import assert_card_view, file
from tests.support.harness import mcp_client
from tests.support.passkey_flows import confirm, file_card, register, set_policy

pytestmark = pytest.mark.anyio

WRITTEN = "line one\n\tline two\r\nthree \u202etxt.exe"  # (arguments refuse other control characters)
SHOWN = "line one\n line two\nthree [U+202E]txt.exe"


async def test_an_outcome_keeps_its_line_breaks_and_nothing_else_raw(signed, tenant):
    card_id = await file(tenant, "n1", WRITTEN)
    assert signed.get(f"/api/cards/{card_id}").json()["outcome"] is None  # nothing happened yet
    done = signed.post(f"/api/cards/{card_id}/confirm").json()
    assert_card_view(done)
    assert done["outcome"] == ["The note now reads:", SHOWN]
    assert done["result"] == {"note": "n1", "text": SHOWN}  # what the agent is told: its lines kept too
    assert done["next"] == [{"tool": "list_notes", "description": "Read the notes back to check the change.",
                             "personMustAct": False}]
    assert done["signedWith"] is None
    again = signed.get(f"/api/cards/{card_id}")
    assert again.json()["outcome"] == done["outcome"] and "\u202e" not in again.text
    listed = signed.get("/api/history").json()["cards"][0]
    assert listed["id"] == card_id and listed["outcome"] == ["The note now reads:", SHOWN]
    assert tenant.note("n1")["text"] == WRITTEN  # what ran is what was asked


async def test_a_purchase_reads_as_money_not_as_its_fields(signed, tenant):
    ctx = ActionContext(tenant.store.docs, tenant.store.workspaces.get_workspace(tenant.workspace_id), tenant.person,
                        None, 0)
    seed(tenant.store.docs, ctx)
    async with mcp_client(tenant.url, tenant.token) as client:
        held = (await client.call_tool("buy_credits", {"credits": 250})).structured_content
    assert held["status"] == "pending"
    done = signed.post(f"/api/cards/{held['confirmationId']}/confirm").json()
    assert done["state"] == "completed"
    assert done["outcome"] == ["Bought 250.00 credits · balance 350.00 credits",
                               "Charged 250.00 USD to the workspace's payment method"]
    assert done["result"]["bought_milli"] == 250_000  # kept for "What the agent is told"


def test_a_passkey_confirmation_names_the_passkey_until_it_is_removed(signed, tenant):
    soft = register(signed, "Work laptop")
    set_policy(tenant, "every")
    card = file_card(tenant)
    done = confirm(signed, soft, card.id)
    assert done.status_code == 200, done.text
    assert done.json()["signedWith"] == "Signed with your passkey ‘Work laptop’"
    assert signed.patch(f"/api/passkeys/{soft.id}", {"name": "Old laptop"}).status_code == 200
    assert signed.get(f"/api/cards/{card.id}").json()["signedWith"] == "Signed with your passkey ‘Old laptop’"
    assert signed.post(f"/api/passkeys/{soft.id}/remove").status_code == 204
    gone = "Signed with a passkey that has since been removed"
    assert signed.get(f"/api/cards/{card.id}").json()["signedWith"] == gone
    assert signed.get("/api/history").json()["cards"][0]["signedWith"] == gone


def test_settings_lists_the_fingerprint_verify_receipt_prints(signed, tenant, tmp_path, capsys):
    soft = register(signed, "Phone")
    set_policy(tenant, "every")
    card = file_card(tenant)
    assert confirm(signed, soft, card.id).status_code == 200
    (listed,) = signed.get("/api/passkeys").json()["passkeys"]
    assert re.fullmatch(r"([0-9a-f]{4} ){7}[0-9a-f]{4}", listed["fingerprint"])
    stored = tenant.store.passkeys.get_passkey(soft.id)
    assert listed["fingerprint"] == key_fingerprint(stored.public_key)
    receipt = tmp_path / "receipt.json"
    receipt.write_text(json.dumps(signed.get(f"/api/cards/{card.id}/receipt").json()))
    assert cli(["verify-receipt", str(receipt)]) == 0
    out = capsys.readouterr().out
    assert f"The passkey with public key fingerprint {listed['fingerprint']} signed" in out
    assert "compare its public key fingerprint with the one Settings lists under each of their passkeys" in out
