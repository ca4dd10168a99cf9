"""Passkeys in Debian chromium with the CDP virtual authenticator: register in Settings, sign in
with the passkey (discoverable, and the autofill), confirm a card the policy covers, download and
verify its receipt, remove the passkey. Real py_webauthn verification on the server."""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect

from countersign.identity.passkeys.receipts import verify_receipt
from tests.browser.pages import card, ready, sign_in
from tests.support.passkey_flows import file_card, set_policy

PASSKEY_RECEIPT = ("Download the receipt — proof, signed by this workspace and by your passkey, that you confirmed "
                   "exactly this")
SESSION_RECEIPT = "Download the receipt — a record, signed by this workspace, of exactly what was confirmed"


def authenticator(page) -> tuple[object, str]:
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable", {"enableUI": False})
    auth = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})["authenticatorId"]
    return cdp, auth


def test_register_sign_in_confirm_receipt_remove(live, tenant, page, context, tmp_path):
    _, server = live
    cdp, auth = authenticator(page)
    sign_in(page, tenant)
    page.goto(f"{server.origin}/settings/passkeys")
    ready(page, "settings")
    page.locator("#passkey-name").fill("Test laptop")
    with page.expect_response("**/api/passkeys") as made:
        page.get_by_role("button", name="Add a passkey").click()
    assert made.value.status == 201, made.value.text()
    creds = cdp.send("WebAuthn.getCredentials", {"authenticatorId": auth})["credentials"]
    assert len(creds) == 1 and creds[0]["isResidentCredential"] and creds[0]["rpId"] == "localhost"
    expect(page.locator('[data-section="passkeys"] li')).to_have_count(1)
    fingerprint = page.locator('[data-section="passkeys"] li [data-fingerprint]')
    expect(fingerprint).to_have_text(re.compile(r"^([0-9a-f]{4} ){7}[0-9a-f]{4}$"))
    listed = fingerprint.inner_text()

    # Signed out, the sign-in page's autofill (conditional mediation) signs in with the passkey.
    # (Its email field's autocomplete is read below, where no autofill can take the page away first.)
    context.clear_cookies()
    page.goto(f"{server.origin}/signin")
    expect(page.locator("body")).not_to_have_attribute("data-view", "signin")
    # And the button does too (a discoverable credential: no address asked). In a browser that offers
    # no autofill: with one, the pending autofill request could sign in by itself before the click.
    context.clear_cookies()
    page.add_init_script("PublicKeyCredential.isConditionalMediationAvailable = async () => false;")
    page.goto(f"{server.origin}/signin")
    ready(page, "signin")
    assert page.locator("#email").get_attribute("autocomplete") == "username webauthn"
    with page.expect_response("**/api/signin/passkey") as signed:
        page.get_by_role("button", name="Sign in with a passkey").click()
    assert signed.value.status == 200, signed.value.text()
    expect(page.locator("body")).not_to_have_attribute("data-view", "signin")

    set_policy(tenant, "risky")
    held = file_card(tenant)
    page.goto(f"{server.origin}/confirm?card={held.id}")
    ready(page)
    button = card(page, held.id).get_by_role("button", name="Confirm with passkey")
    with page.expect_response("**/passkey/confirm") as done:
        button.click()
    assert done.value.status == 200, done.value.text()
    expect(card(page, held.id)).to_have_attribute("data-state", "completed")
    expect(card(page, held.id).locator("[data-signed-with]")).to_have_text("Signed with your passkey ‘Test laptop’")
    with page.expect_download() as download:
        card(page, held.id).get_by_role("link", name=PASSKEY_RECEIPT).click()
    path = tmp_path / "receipt.json"
    download.value.save_as(path)
    receipt = json.loads(path.read_text())
    assert verify_receipt(receipt).proves and receipt["passkey"]["credential_id"] == creds[0]["credentialId"] \
        .replace("+", "-").replace("/", "_").rstrip("=")
    assert tenant.note("n1")["text"] == "new text"
    # Settings lists the very fingerprint verify-receipt prints for the passkey that signed.
    assert any(f"public key fingerprint {listed} signed" in line for line in verify_receipt(receipt).proves)

    # Cancelling at the device's prompt runs nothing and says so; the button stays usable.
    other = file_card(tenant, note="n2")
    cdp.send("WebAuthn.setUserVerified", {"authenticatorId": auth, "isUserVerified": False})
    page.goto(f"{server.origin}/confirm?card={other.id}")
    ready(page)
    card(page, other.id).get_by_role("button", name="Confirm with passkey").click()
    expect(card(page, other.id).locator(".error")).to_contain_text("passkey was not used")
    expect(card(page, other.id).get_by_role("button", name="Confirm with passkey")).to_be_enabled()
    cdp.send("WebAuthn.setUserVerified", {"authenticatorId": auth, "isUserVerified": True})

    # Under `every`, a card `risky` leaves to a click (edit_note: class client, not always) asks for
    # the passkey too, with no plain Confirm beside it; under `never`, the plain Confirm runs it.
    set_policy(tenant, "every")
    edit = file_card(tenant, "edit_note", text="edited with a passkey", note="n2")
    page.goto(f"{server.origin}/confirm?card={edit.id}")
    ready(page)
    expect(card(page, edit.id).get_by_role("button", name="Confirm with passkey")).to_be_enabled()
    expect(card(page, edit.id).get_by_role("button", name="Confirm", exact=True)).to_have_count(0)
    with page.expect_response("**/passkey/confirm") as done:
        card(page, edit.id).get_by_role("button", name="Confirm with passkey").click()
    assert done.value.status == 200, done.value.text()
    expect(card(page, edit.id)).to_have_attribute("data-state", "completed")
    expect(card(page, edit.id).get_by_role("link", name=PASSKEY_RECEIPT)).to_be_visible()
    assert tenant.note("n2")["text"] == "edited with a passkey"
    set_policy(tenant, "never")
    plain = file_card(tenant, "edit_note", text="edited with a click", note="n1")
    page.goto(f"{server.origin}/confirm?card={plain.id}")
    ready(page)
    expect(card(page, plain.id).get_by_role("button", name="Confirm with passkey")).to_have_count(0)
    with page.expect_response(f"**/api/cards/{plain.id}/confirm") as done:
        card(page, plain.id).get_by_role("button", name="Confirm", exact=True).click()
    assert done.value.status == 200, done.value.text()
    expect(card(page, plain.id)).to_have_attribute("data-state", "completed")
    assert tenant.note("n1")["text"] == "edited with a click"

    page.goto(f"{server.origin}/settings/passkeys")
    ready(page, "settings")
    with page.expect_response("**/remove") as removed:
        page.get_by_role("button", name="Remove").click()
    assert removed.value.status == 204
    expect(page.locator('[data-section="passkeys"]')).to_contain_text("No passkeys yet")


def test_without_webauthn_the_page_explains(live, tenant, page):
    _, server = live
    page.add_init_script("delete window.PublicKeyCredential")
    set_policy(tenant, "every")
    held = file_card(tenant, "edit_note")
    sign_in(page, tenant)
    page.goto(f"{server.origin}/confirm?card={held.id}")
    ready(page)
    expect(card(page, held.id)).to_contain_text("This browser cannot use passkeys")
    page.goto(f"{server.origin}/settings/passkeys")
    ready(page, "settings")
    expect(page.locator('[data-section="passkeys"]')).to_contain_text("ask the workspace owner")
    set_policy(tenant, "never")


def test_a_card_confirmed_without_a_passkey_offers_its_receipt(live, tenant, page, tmp_path):
    """A session click on the card view shows the download at once; History offers it too."""
    _, server = live
    held, waiting = file_card(tenant, "edit_note"), file_card(tenant, "edit_note", note="n2")
    sign_in(page, tenant)
    page.goto(f"{server.origin}/confirm?card={held.id}")
    ready(page)
    with page.expect_response(f"**/api/cards/{held.id}/confirm") as done:
        card(page, held.id).get_by_role("button", name="Confirm").click()
    assert done.value.status == 200, done.value.text()
    link = card(page, held.id).get_by_role("link", name=SESSION_RECEIPT)
    expect(link).to_be_visible()
    expect(card(page, held.id).locator("[data-signed-with]")).to_have_count(0)
    expect(card(page, held.id)).not_to_contain_text("verify-receipt")
    page.goto(f"{server.origin}/history")
    ready(page, "history")
    with page.expect_download() as download:
        card(page, held.id).get_by_role("link", name=SESSION_RECEIPT).click()
    path = tmp_path / "receipt.json"
    download.value.save_as(path)
    report = verify_receipt(json.loads(path.read_text()))
    assert report.kind.startswith("confirmed without a passkey (by a click on the confirm page")
    page.goto(f"{server.origin}/confirm?card={waiting.id}")
    ready(page)
    expect(card(page, waiting.id).get_by_role("link", name="Download the receipt")).to_have_count(0)
