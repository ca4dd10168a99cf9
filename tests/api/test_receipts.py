"""Receipts of completed cards and their offline verification: a passkey receipt (a software
passkey against the real py_webauthn checks) and one confirmed without a passkey (a session click
through the API, an answer in the MCP client). Any changed field fails both kinds; a passkey
receipt cannot be downgraded by removing its assertion."""

from __future__ import annotations

import copy
import json

import pytest

from countersign.cli import main as cli
from countersign.identity.passkeys.receipts import ReceiptError, seal_receipt, verify_receipt
from tests.support.passkey_flows import confirm, file_card, register, set_policy


@pytest.fixture(params=["passkey", "session"])
def receipt(request, signed, tenant):
    if request.param == "passkey":
        soft = register(signed)
        set_policy(tenant, "risky")
        card = file_card(tenant)
        assert confirm(signed, soft, card.id).status_code == 200
    else:
        card = file_card(tenant)
        clicked = signed.post(f"/api/cards/{card.id}/confirm")
        assert clicked.status_code == 200 and clicked.json()["passkeySigned"] is False, clicked.text
    got = signed.get(f"/api/cards/{card.id}/receipt")
    assert got.status_code == 200, got.text
    assert got.headers["content-disposition"] == f'attachment; filename="countersign-receipt-{card.id}.json"'
    return got.json()


def _paths(value, prefix=()):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))
    else:
        yield prefix


def _altered(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value[:-1] + ("B" if value[-1:] != "B" else "C") if value else "x"
    if value is None:
        return {}
    return "changed"


def _resealed(receipt, tenant, change):
    body = {k: v for k, v in copy.deepcopy(receipt).items() if k != "seal"}
    change(body)
    return seal_receipt(body, tenant.runtime.keyring.seal)


def test_receipt_verifies_offline_and_any_change_fails(receipt, tmp_path, capsys):
    report = verify_receipt(receipt, receipt["server_key"])
    assert receipt["v"] == 2 and receipt["card"]["state"] == "completed"
    paths = [p for p in _paths(receipt) if p]
    assert len(paths) > (30 if receipt["passkey"] else 25)
    for path in paths:
        changed = copy.deepcopy(receipt)
        target = changed
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = _altered(target[path[-1]])
        with pytest.raises(ReceiptError):
            verify_receipt(changed)
            print("still verifies after changing", path)
    for key in [k for k in receipt if k != "seal"]:  # and a field taken out
        with pytest.raises(ReceiptError):
            verify_receipt({k: v for k, v in receipt.items() if k != key})
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(receipt))
    tampered = copy.deepcopy(receipt)
    tampered["card"]["arguments"]["text"] = "something else"
    bad.write_text(json.dumps(tampered))
    assert cli(["verify-receipt", str(good)]) == 0
    out = capsys.readouterr().out
    assert "It proves:" in out and "It does not prove:" in out
    if receipt["passkey"]:
        assert any("signed, with user verification" in line for line in report.proves)
        assert "Kind: confirmed with a passkey" in out
    else:
        assert "Kind: confirmed without a passkey (by a click on the confirm page in a signed-in session)" in out
        assert "Which person approved: no passkey signed this card" in out
        assert not any("passkey" in line and "signed" in line for line in report.proves)
    assert cli(["verify-receipt", str(bad)]) == 1
    assert "does not verify" in capsys.readouterr().out


def test_a_session_click_receipt_says_how_it_was_confirmed(signed, tenant):
    card = file_card(tenant, "edit_note")
    assert signed.post(f"/api/cards/{card.id}/confirm").status_code == 200
    receipt = signed.get(f"/api/cards/{card.id}/receipt").json()
    assert receipt["passkey"] is None
    assert receipt["confirmation"] == {"method": "session", "channel": "page", "actor": f"person:{tenant.person.id}",
                                       "at": receipt["audit"][-1]["at"]}
    assert receipt["person"]["id"] == tenant.person.id and receipt["card"]["arguments"]["text"] == "new text"
    assert verify_receipt(receipt).kind.startswith("confirmed without a passkey")


@pytest.mark.anyio
@pytest.mark.parametrize("method", ["client", "code"])
async def test_an_in_client_answer_and_a_code_have_receipts_too(method, signed, tenant, configure):
    from tests.support.harness import accept

    args = {"note_id": "n1", "text": f"by {method}"}
    if method == "client":
        async with tenant.client(answer=accept()) as client:
            done = await client.call_tool("edit_note", args)
    else:
        configure(fallback="code")
        async with tenant.client() as client:
            code = (await client.call_tool("edit_note", args)).structured_content["confirmation"]
            done = await client.call_tool("edit_note", dict(args, confirmation=code))
    assert done.structured_content["status"] == "completed", done.structured_content
    receipt = signed.get(f"/api/cards/{done.structured_content['confirmationId']}/receipt").json()
    assert receipt["confirmation"]["method"] == receipt["confirmation"]["channel"] == method
    assert receipt["confirmation"]["actor"].startswith("connection:") and receipt["passkey"] is None
    report = verify_receipt(receipt)
    assert ("in the MCP client" if method == "client" else "by a confirmation code") in report.kind
    assert any("Which person approved" in line for line in report.does_not_prove)


def test_cards_not_completed_are_refused_naming_their_state(signed, tenant):
    pending, declined = file_card(tenant), file_card(tenant, note="n2")
    assert signed.post(f"/api/cards/{declined.id}/decline", {"reason": "no"}).status_code == 200
    for card, state in ((pending, "pending"), (declined, "declined")):
        got = signed.get(f"/api/cards/{card.id}/receipt")
        assert got.status_code == 409 and got.json()["error"]["code"] == "no_receipt", got.text
        assert got.json()["state"] == state
        assert "only a completed card" in got.json()["error"]["message"]


def test_a_passkey_receipt_cannot_be_downgraded(tenant, signed):
    soft = register(signed)
    set_policy(tenant, "risky")
    card = file_card(tenant)
    assert confirm(signed, soft, card.id).status_code == 200
    receipt = signed.get(f"/api/cards/{card.id}/receipt").json()
    assert receipt["confirmation"]["method"] == "passkey"

    def session(body):
        body["confirmation"]["method"] = "session"

    stripped = [dict(receipt, passkey=None), {k: v for k, v in receipt.items() if k != "passkey"}]
    both = copy.deepcopy(receipt)
    both["passkey"] = None
    session(both)
    for downgraded in (*stripped, both):
        with pytest.raises(ReceiptError, match="seal|malformed"):
            verify_receipt(downgraded)
    # Even re-sealed with the server's own key, an assertion cannot go missing from a receipt that
    # says a passkey signed it, nor can a receipt say "session" when the audit trail says passkey.
    with pytest.raises(ReceiptError, match="no assertion"):
        verify_receipt(_resealed(receipt, tenant, lambda b: b.update(passkey=None)))
    with pytest.raises(ReceiptError, match="no assertion"):
        verify_receipt(_resealed(receipt, tenant, session))
    # Version 1 (passkey receipts only, no "confirmation") still verifies, and only with its assertion.
    legacy = {k: v for k, v in receipt.items() if k != "confirmation"}
    assert verify_receipt(_resealed(legacy, tenant, lambda b: b.update(v=1))).kind.startswith("confirmed with a")
    with pytest.raises(ReceiptError, match="no passkey assertion"):
        verify_receipt(_resealed(legacy, tenant, lambda b: b.update(v=1, passkey=None)))


def test_even_the_server_cannot_forge_what_the_passkey_signed(tenant, signed):
    """Re-sealed by the server's own key, a changed statement, card or assertion still fails:
    the passkey's signature and the statement's digests do not depend on the seal."""
    soft = register(signed)
    set_policy(tenant, "risky")
    card = file_card(tenant)
    assert confirm(signed, soft, card.id).status_code == 200
    receipt = signed.get(f"/api/cards/{card.id}/receipt").json()
    verify_receipt(_resealed(receipt, tenant, lambda b: None))
    for change in (lambda b: b["passkey"].update(statement=b["passkey"]["statement"].replace('"v":1', '"v":1 ')),
                   lambda b: b["passkey"].update(signature=_altered(b["passkey"]["signature"][:-4]) + "AAAA"),
                   lambda b: b["passkey"].update(authenticator_data=b["passkey"]["authenticator_data"][:-2] + "AA"),
                   lambda b: b["passkey"].update(origin="http://evil.example"),
                   lambda b: b["card"].update(title="Something else"),
                   lambda b: b["confirmation"].update(channel="client")):
        with pytest.raises(ReceiptError):
            verify_receipt(_resealed(receipt, tenant, change))
