"""A quorum card's receipt carries every approver's passkey proof, not only the last one's: a 2-of-2
quorum under the passkey policy ``every``, both admins approving with their own (software) passkeys
over real HTTP; the receipt lists both approvals with their assertions, ``verify-receipt`` checks
each, and a tampered earlier proof fails even when the server's own key seals the tampered receipt."""

from __future__ import annotations

import copy
import json

import pytest

from countersign.cli import main as cli
from countersign.core.statement import key_fingerprint
from countersign.identity.passkeys.receipts import ReceiptError, seal_receipt, verify_receipt
from tests.api.test_quorum import admin, big_budget, set_rule
from tests.budget.ledger import seed_small
from tests.support.passkey_flows import confirm, register, set_policy

pytestmark = pytest.mark.anyio


@pytest.fixture
async def approved(tenant):
    """A quorum card both admins approved with their passkeys, and its receipt as each downloads it."""
    seed_small(tenant.store, tenant.workspace_id)
    ana, bo = admin(tenant, "Ana Costa"), admin(tenant, "Bo Li")
    set_rule(tenant)
    keys = {p.id: register(tenant.page(p)) for p in (ana, bo)}
    set_policy(tenant, "every")
    card_id = (await big_budget(tenant))["confirmationId"]
    first = confirm(tenant.page(ana), keys[ana.id], card_id)
    assert first.status_code == 200 and first.json()["state"] == "pending", first.text
    last = confirm(tenant.page(bo), keys[bo.id], card_id)
    assert last.status_code == 200 and last.json()["state"] == "completed", last.text
    receipts = [tenant.page(p).get(f"/api/cards/{card_id}/receipt") for p in (bo, tenant.person)]
    assert all(r.status_code == 200 for r in receipts), receipts[0].text
    return tenant, card_id, [r.json() for r in receipts], (ana, bo)


def _resealed(tenant, receipt, change):
    body = {k: v for k, v in copy.deepcopy(receipt).items() if k != "seal"}
    change(body)
    return seal_receipt(body, tenant.runtime.keyring.seal)


async def test_the_receipt_lists_and_verifies_every_approvers_passkey(approved, tmp_path, capsys):
    tenant, card_id, (by_bo, by_owner), (ana, bo) = approved
    assert by_bo == by_owner  # the request's receipt, whoever downloads it
    receipt = by_bo
    assert receipt["v"] == 3 and receipt["person"]["id"] == tenant.person.id
    assert [(a["by"], a["name"], a["channel"]) for a in receipt["approvals"]] == [
        (ana.id, "Ana Costa", "page"), (bo.id, "Bo Li", "page")]
    proofs = [a["passkey"] for a in receipt["approvals"]]
    assert all(p is not None and p["type"] == "passkey-confirmation" for p in proofs)
    assert proofs[0]["credential_id"] != proofs[1]["credential_id"]
    assert proofs[1] == receipt["passkey"]  # the last approval's is the one that confirmed it
    keys = {p.id: [k.public_key for k in tenant.store.passkeys.list_passkeys(tenant.workspace_id, p.id)]
            for p in (ana, bo)}
    assert [p["public_key_cose"] for p in proofs] == [keys[ana.id][0], keys[bo.id][0]]

    report = verify_receipt(receipt)
    assert report.kind == ("confirmed with a passkey: the approvers' passkeys signed the change, the server sealed "
                           "the record")
    for i, (name, proof) in enumerate(zip(("Ana Costa", "Bo Li"), proofs, strict=True)):
        assert report.proves[i] == (
            f"Approval {i + 1} of 2 ({name}): the passkey with public key fingerprint "
            f"{key_fingerprint(proof['public_key_cose'])} signed, with user verification, on {tenant.origin}, a "
            f"statement naming card {card_id}, its fingerprint {receipt['card']['fingerprint'][:16]}… and the "
            "digest of its preview.")
    path = tmp_path / "receipt.json"
    path.write_text(json.dumps(receipt))
    assert cli(["verify-receipt", str(path)]) == 0
    out = capsys.readouterr().out
    assert all(key_fingerprint(p["public_key_cose"]) in out for p in proofs)
    assert "Approval 1 of 2 (Ana Costa)" in out and "Approval 2 of 2 (Bo Li)" in out


async def test_a_tampered_earlier_proof_fails_verification(approved):
    tenant, card_id, (receipt, _), _ = approved

    def signature(body):
        sig = body["approvals"][0]["passkey"]["signature"]
        body["approvals"][0]["passkey"]["signature"] = sig[:-2] + ("AA" if sig[-2:] != "AA" else "BB")

    def other_statement(body):  # Ana's signature kept, over a statement the server says she signed
        statement = json.loads(body["approvals"][0]["passkey"]["statement"])
        body["approvals"][0]["passkey"]["statement"] = json.dumps({**statement, "card": "c_other"},
                                                                  sort_keys=True, separators=(",", ":"))

    def bos_proof_as_anas(body):
        body["approvals"][0]["passkey"] = copy.deepcopy(body["approvals"][1]["passkey"])

    def anas_proof_dropped(body):
        body["approvals"][0]["passkey"] = None

    with pytest.raises(ReceiptError, match="seal"):  # changed without the server's key
        changed = copy.deepcopy(receipt)
        signature(changed)
        verify_receipt(changed)
    with pytest.raises(ReceiptError, match=r"^approval 1 \(Ana Costa\): the passkey's signature does not verify$"):
        verify_receipt(_resealed(tenant, receipt, signature))
    with pytest.raises(ReceiptError, match=r"^approval 1 \(Ana Costa\): the signed challenge is not SHA-256"):
        verify_receipt(_resealed(tenant, receipt, other_statement))
    with pytest.raises(ReceiptError, match="same passkey"):
        verify_receipt(_resealed(tenant, receipt, bos_proof_as_anas))
    with pytest.raises(ReceiptError, match="which of them signed with a passkey"):
        verify_receipt(_resealed(tenant, receipt, anas_proof_dropped))
    with pytest.raises(ReceiptError, match="lists no approvals"):
        verify_receipt(_resealed(tenant, receipt, lambda b: b.update(approvals=[])))
    with pytest.raises(ReceiptError, match="malformed"):  # taken out
        verify_receipt(_resealed(tenant, receipt, lambda b: b.pop("approvals")))
    with pytest.raises(ReceiptError, match="not the one that confirmed"):
        verify_receipt(_resealed(tenant, receipt, lambda b: b["approvals"].reverse()))
    with pytest.raises(ReceiptError, match="not a countersign receipt of version 1, 2 or 3"):
        verify_receipt(_resealed(tenant, receipt, lambda b: b.update(v=4)))
    assert verify_receipt(receipt).kind.startswith("confirmed with a passkey")  # the receipt itself still verifies


async def test_a_quorum_approved_by_clicks_lists_each_approval_as_the_servers_record(tenant):
    seed_small(tenant.store, tenant.workspace_id)
    ana, bo = admin(tenant, "Ana Costa"), admin(tenant, "Bo Li")
    set_rule(tenant)
    card_id = (await big_budget(tenant))["confirmationId"]
    for person in (ana, bo):
        assert tenant.page(person).post(f"/api/cards/{card_id}/confirm").status_code == 200
    receipt = tenant.page(ana).get(f"/api/cards/{card_id}/receipt").json()
    assert [(a["name"], a["passkey"]) for a in receipt["approvals"]] == [("Ana Costa", None), ("Bo Li", None)]
    report = verify_receipt(receipt)
    assert report.kind.startswith("confirmed without a passkey (by a click on the confirm page")
    assert report.proves[1:3] == ["Approval 1 of 2 (Ana Costa): given without a passkey (page): the server's sealed "
                                  "record only.",
                                  "Approval 2 of 2 (Bo Li): given without a passkey (page): the server's sealed "
                                  "record only."]
