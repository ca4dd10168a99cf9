"""The confirm page's passkey calls over HTTP, driven by a software passkey (tests/support/authenticator.py)."""

from __future__ import annotations

from countersign.gate.question import Question
from countersign.store.cards import Card
from tests.support.authenticator import SoftPasskey
from tests.support.confirm_page import Page


def soft_for(page: Page) -> SoftPasskey:
    return SoftPasskey(rp_id="localhost", origin=page.origin)


def register(page: Page, name: str = "Laptop") -> SoftPasskey:
    soft = soft_for(page)
    options = page.post("/api/passkeys/register/options").json()
    response = page.post("/api/passkeys", {"credential": soft.register(options), "name": name})
    assert response.status_code == 201, response.text
    return soft


def file_card(tenant, tool: str = "publish_note", text: str = "new text", note: str = "n1", person=None) -> Card:
    desk = tenant.runtime.desk
    person = person or tenant.person
    ctx = desk.context(tenant.workspace_id, person, tenant.connection_id, desk.now())
    card, _ = desk.file(Question.of(desk.registry.action(tool), {"note_id": note, "text": text}, ctx), "page")
    return card


def set_policy(tenant, policy: str) -> None:
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"passkey_policy": policy})


def confirm_options(page: Page, card_id: str) -> dict:
    response = page.post(f"/api/cards/{card_id}/passkey/options")
    assert response.status_code == 200, response.text
    return response.json()


def confirm(page: Page, soft: SoftPasskey, card_id: str, options: dict | None = None, **knobs):
    options = options or confirm_options(page, card_id)
    credential = soft.assert_(options["publicKey"], **knobs)
    return page.post(f"/api/cards/{card_id}/passkey/confirm", {"credential": credential})
