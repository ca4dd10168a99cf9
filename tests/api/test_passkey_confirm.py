"""Confirming with a passkey under the workspace policy, and every refusal (nothing runs, an audit
entry). Receipts and their offline verification: tests/api/test_receipts.py."""

from __future__ import annotations

import json

import pytest

from countersign.store.docs import DocWrite
from tests.support.passkey_flows import confirm, confirm_options, file_card, register, set_policy


def _refused_with_audit(tenant, card, response, code="passkey_refused"):
    assert response.status_code in (400, 403, 409), response.text
    assert response.json()["error"]["code"] == code, response.text
    assert tenant.note("n1")["text"] != "new text"
    assert tenant.store.cards.get_card(tenant.workspace_id, card.id, tenant.runtime.desk.now()).state.value == "pending"
    assert tenant.store.cards.audit_trail(tenant.workspace_id, card.id)[-1].event == "refused"


def test_risky_card_needs_the_passkey_and_records_it(signed, tenant):
    soft = register(signed)
    set_policy(tenant, "risky")
    safe = file_card(tenant, "edit_note", "safe text", note="n2")  # class client: not risky
    card = file_card(tenant)
    view = signed.get(f"/api/cards/{card.id}").json()
    assert view["passkeyRequired"] is True
    listed = signed.get("/api/cards").json()["cards"]  # a list leaves out a false passkeyRequired
    assert {c["id"]: c.get("passkeyRequired", False) for c in listed} == {safe.id: False, card.id: True}
    click = signed.post(f"/api/cards/{card.id}/confirm")
    _refused_with_audit(tenant, card, click, "passkey_required")
    assert "passkey" in click.json()["error"]["message"]
    options = confirm_options(signed, card.id)
    statement = json.loads(options["statement"])
    assert (statement["card"], statement["fp"], statement["rp"]) == (card.id, card.fingerprint, "localhost")
    assert [c["id"] for c in options["publicKey"]["allowCredentials"]] == [soft.id]
    done = confirm(signed, soft, card.id, options)
    assert done.status_code == 200 and done.json()["state"] == "completed", done.text
    assert done.json()["passkeySigned"] is True and tenant.note("n1")["text"] == "new text"
    stored = tenant.store.cards.get_card(tenant.workspace_id, card.id, tenant.runtime.desk.now())
    assert stored.passkey["statement"] == options["statement"]
    assert signed.post(f"/api/cards/{safe.id}/confirm").status_code == 200  # not covered by "risky"


def test_every_card_and_back_to_never(signed, tenant):
    register(signed)
    set_policy(tenant, "every")
    card = file_card(tenant, "edit_note")
    _refused_with_audit(tenant, card, signed.post(f"/api/cards/{card.id}/confirm"), "passkey_required")
    set_policy(tenant, "never")
    assert signed.post(f"/api/cards/{card.id}/confirm").status_code == 200


def test_refusals(clock, signed, tenant):
    soft = register(signed)
    set_policy(tenant, "every")
    card, other = file_card(tenant), file_card(tenant, note="n2")
    for knobs in ({"uv": False}, {"origin": "http://evil.example"}, {"rp_id": "evil.example"},
                  {"cross_origin": True}):
        _refused_with_audit(tenant, card, confirm(signed, soft, card.id, **knobs))
    # An assertion made for another card.
    made_for_other = soft.assert_(confirm_options(signed, other.id)["publicKey"])
    _refused_with_audit(tenant, card, signed.post(f"/api/cards/{card.id}/passkey/confirm",
                                                  {"credential": made_for_other}))
    # A replayed assertion: its challenge is spent.
    options = confirm_options(signed, card.id)
    assertion = soft.assert_(options["publicKey"])
    signed.post(f"/api/cards/{card.id}/passkey/confirm", {"credential": soft.assert_(options["publicKey"])})
    assert tenant.note("n1")["text"] == "new text"
    note = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
    tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("note", "n1", {**note.data, "text": "old"},
                                                                note.version)])
    card2 = file_card(tenant, text="again")
    _refused_with_audit(tenant, card2, signed.post(f"/api/cards/{card2.id}/passkey/confirm",
                                                   {"credential": assertion}))
    # An expired nonce.
    options = confirm_options(signed, card2.id)
    clock.advance(121)
    _refused_with_audit(tenant, card2, confirm(signed, soft, card2.id, options))


def test_a_card_keeps_its_first_twenty_refusals_and_still_runs_once_when_confirmed(signed, tenant, caplog):
    from countersign.gate.refusals import LAST_KEPT, MAX_REFUSALS

    soft = register(signed)
    set_policy(tenant, "every")
    card = file_card(tenant)
    for i in range(MAX_REFUSALS + 5):  # junk answers and plain clicks, as a script would send them
        if i % 2:
            response = signed.post(f"/api/cards/{card.id}/passkey/confirm", {"credential": {"id": "x", "response": {}}})
            assert response.status_code == 400 and response.json()["error"]["code"] == "passkey_refused"
        else:
            response = signed.post(f"/api/cards/{card.id}/confirm")
            assert response.status_code == 409 and response.json()["error"]["code"] == "passkey_required"
    refused = [e for e in tenant.store.cards.audit_trail(tenant.workspace_id, card.id) if e.event == "refused"]
    assert len(refused) == MAX_REFUSALS
    assert refused[-1].detail.endswith(LAST_KEPT) and not any(e.detail.endswith(LAST_KEPT) for e in refused[:-1])
    assert sum("not recorded" in r.getMessage() for r in caplog.records) == 5
    done = confirm(signed, soft, card.id, confirm_options(signed, card.id))  # the person's own answer still works
    assert done.status_code == 200 and done.json()["state"] == "completed", done.text
    trail = tenant.store.cards.audit_trail(tenant.workspace_id, card.id)
    assert [e.event for e in trail].count("completed") == 1 and trail[-1].event == "completed"
    assert tenant.note("n1")["text"] == "new text"


def test_another_persons_passkey_and_a_removed_one(signed, tenant):
    set_policy(tenant, "every")
    mine = register(signed)
    colleague = tenant.add_person("admin")
    theirs = register(tenant.page(colleague))
    card = file_card(tenant)
    options = confirm_options(signed, card.id)
    foreign = theirs.assert_(options["publicKey"])
    response = signed.post(f"/api/cards/{card.id}/passkey/confirm", {"credential": foreign})
    _refused_with_audit(tenant, card, response, "passkey_not_yours")
    assert signed.post(f"/api/passkeys/{mine.id}/remove").status_code == 204
    assert signed.post(f"/api/cards/{card.id}/passkey/options").json()["error"]["code"] == "no_passkey"


def test_a_preview_that_moved_after_the_options_runs_nothing(signed, tenant):
    soft = register(signed)
    set_policy(tenant, "every")
    card = file_card(tenant)
    options = confirm_options(signed, card.id)
    note = tenant.store.docs.get_doc(tenant.workspace_id, "note", "n1")
    tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("note", "n1", {**note.data, "text": "moved"},
                                                                note.version)])
    response = confirm(signed, soft, card.id, options)
    assert response.status_code == 409 and response.json()["error"]["code"] == "changed"
    assert tenant.note("n1")["text"] == "moved"


@pytest.mark.anyio
async def test_in_client_and_code_answers_are_refused_under_the_policy(signed, tenant, configure):
    from tests.support.harness import accept

    set_policy(tenant, "every")
    async with tenant.client(answer=accept()) as client:
        held = await client.call_tool("edit_note", {"note_id": "n1", "text": "from the client"})
    reply = held.structured_content
    assert reply["status"] == "pending" and reply["passkeyRequired"] is True and "passkey" in reply["instructions"]
    assert tenant.note("n1")["text"] != "from the client"
    configure(fallback="code")
    async with tenant.client() as client:
        coded = await client.call_tool("edit_note", {"note_id": "n2", "text": "by code"})
    assert coded.is_error and "passkey" in coded.content[0].text
    async with tenant.client() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert "passkey" in tools["publish_note"].description


def test_the_policy_change_is_itself_a_held_request(signed, tenant):
    soft = register(signed)
    filed = signed.post("/api/settings/passkey-policy", {"policy": "risky"})
    assert filed.status_code == 201 and filed.json()["tool"] == "set_passkey_policy", filed.text
    assert tenant.store.workspaces.get_workspace(tenant.workspace_id).setting("passkey_policy") == "never"
    assert signed.post(f"/api/cards/{filed.json()['id']}/confirm").status_code == 200
    assert tenant.store.workspaces.get_workspace(tenant.workspace_id).setting("passkey_policy") == "risky"
    back = signed.post("/api/settings/passkey-policy", {"policy": "never"}).json()
    assert signed.post(f"/api/cards/{back['id']}/confirm").json()["error"]["code"] == "passkey_required"
    assert confirm(signed, soft, back["id"]).status_code == 200
    assert tenant.store.workspaces.get_workspace(tenant.workspace_id).setting("passkey_policy") == "never"
    member = tenant.add_person("admin")
    refused = tenant.page(member).post("/api/settings/passkey-policy", {"policy": "every"})
    assert refused.status_code == 422 and "owner" in refused.json()["error"]["message"]


@pytest.mark.parametrize("route", ["passkey/options", "passkey/confirm"])
def test_a_card_no_longer_waiting_is_refused_with_its_reason_and_the_card_as_a_click_is(clock, signed, tenant,
                                                                                      route):
    soft = register(signed)
    set_policy(tenant, "every")
    desk = tenant.runtime.desk
    withdrawn = file_card(tenant, note="n2")
    desk.withdraw(withdrawn, desk.now(), f"connection:{tenant.connection_id}")
    late = file_card(tenant, "edit_note", note="n2")
    clock.advance(desk.settings.card_ttl + 1)
    body = {} if route == "passkey/options" else {"credential": soft.assert_({"challenge": "AAAA"})}
    for card, code in ((withdrawn, "withdrawn"), (late, "expired")):
        refused = signed.post(f"/api/cards/{card.id}/{route}", body)
        plain = signed.post(f"/api/cards/{card.id}/confirm")
        assert refused.status_code == plain.status_code == 409, refused.text
        assert refused.json()["error"] == plain.json()["error"] and refused.json()["error"]["code"] == code
        assert refused.json()["card"]["state"] == code and refused.json()["card"]["id"] == card.id
