"""Passkeys in Settings and sign-in, over real HTTP with a software authenticator and the real
py_webauthn verification."""

from __future__ import annotations

from tests.api.pages import Page, session_cookie
from tests.support.passkey_flows import register, soft_for


def test_register_list_rename_and_remove_with_a_fresh_sign_in(signed, tenant):
    soft = register(signed, "Laptop")
    listed = signed.get("/api/passkeys").json()
    assert [p["name"] for p in listed["passkeys"]] == ["Laptop"] and listed["policy"] == "never"
    assert listed["passkeys"][0]["id"] == soft.id and listed["rpId"] == "localhost"
    renamed = signed.patch(f"/api/passkeys/{soft.id}", {"name": "Work laptop"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "Work laptop"
    assert signed.patch(f"/api/passkeys/{soft.id}", {"name": " "}).status_code == 422
    # The same authenticator cannot register twice (its id is in excludeCredentials, and the store refuses it).
    options = signed.post("/api/passkeys/register/options").json()
    assert [c["id"] for c in options["excludeCredentials"]] == [soft.id]
    assert options["authenticatorSelection"]["userVerification"] == "required"
    assert signed.post("/api/passkeys/" + soft.id + "/remove").status_code == 204  # signed in a moment ago
    assert signed.get("/api/passkeys").json()["passkeys"] == []


def test_a_passkey_name_is_kept_as_one_line_and_refused_with_hidden_characters(signed, tenant):
    soft = soft_for(signed)
    for bad in ("\u202eexe.gnp", "red\x1b[31m", "nul\x00", "zero\u200bwidth"):
        options = signed.post("/api/passkeys/register/options").json()
        refused = signed.post("/api/passkeys", {"credential": soft.register(options), "name": bad})
        assert refused.status_code == 422, bad
        assert refused.json()["field"] == "name"
        assert refused.json()["error"]["message"].startswith("name: a passkey name has no control or formatting")
    # the challenge of a refused name is not spent: the same answer registers with a good name
    made = signed.post("/api/passkeys", {"credential": soft.register(options), "name": "  Work \n laptop  "})
    assert made.status_code == 201 and made.json()["name"] == "Work laptop"  # answered as it is kept
    assert [p["name"] for p in signed.get("/api/passkeys").json()["passkeys"]] == ["Work laptop"]
    renamed = signed.patch(f"/api/passkeys/{soft.id}", {"name": "\u202eexe.gnp"})
    assert renamed.status_code == 422
    assert renamed.json()["error"]["message"].startswith("name: a passkey name has no control")  # said once
    assert [p["name"] for p in signed.get("/api/passkeys").json()["passkeys"]] == ["Work laptop"]  # not renamed
    emoji = "Bea\u2019s \U0001F469\u200d\U0001F4BB"  # a joiner inside an emoji sequence is kept
    assert signed.patch(f"/api/passkeys/{soft.id}", {"name": emoji}).json()["name"] == emoji


def test_transports_that_are_not_a_list_are_not_kept(signed, tenant):
    for transports in (5, True, "internal", {"usb": 1}, None):
        soft = soft_for(signed)
        options = signed.post("/api/passkeys/register/options").json()
        credential = soft.register(options)
        credential["response"]["transports"] = transports
        made = signed.post("/api/passkeys", {"credential": credential, "name": "Key"})
        assert made.status_code == 201, (transports, made.text)
        assert tenant.store.passkeys.get_passkey(soft.id).transports == ()


def test_removing_later_needs_a_fresh_assertion(clock, signed, tenant):
    soft = register(signed)
    keep = register(signed, "Phone")
    clock.advance(601)
    stale = signed.post(f"/api/passkeys/{soft.id}/remove")
    assert stale.status_code == 403 and stale.json()["error"]["code"] == "fresh_proof_needed"
    options = signed.post("/api/passkeys/remove/options").json()
    proof = keep.assert_(options)
    assert signed.post(f"/api/passkeys/{soft.id}/remove", {"credential": proof}).status_code == 204
    assert signed.post(f"/api/passkeys/{keep.id}/remove", {"credential": proof}).status_code == 400  # replayed
    assert [p["id"] for p in signed.get("/api/passkeys").json()["passkeys"]] == [keep.id]


def _sign_in(page_origin: str, soft, **knobs):
    page = Page(page_origin)
    options = page.post("/api/signin/passkey/options", csrf=None).json()
    assert options["allowCredentials"] == [] and options["userVerification"] == "required"
    response = page.post("/api/signin/passkey", {"credential": soft.assert_(options, **knobs)}, csrf=None)
    return page, response


def test_sign_in_with_a_discoverable_passkey(signed, tenant):
    soft = register(signed)
    page, response = _sign_in(signed.origin, soft)
    assert response.status_code == 200, response.text
    page.session_id, page.csrf = session_cookie(response), response.json()["csrfToken"]
    assert page.get("/api/session").json()["person"]["id"] == tenant.person.id
    assert tenant.store.passkeys.get_passkey(soft.id).last_used_at is not None
    page.close()


def test_sign_in_refusals(signed, tenant):
    soft = register(signed)
    for knobs in ({"uv": False}, {"origin": "http://evil.example"}, {"rp_id": "evil.example"},
                  {"cross_origin": True}, {"user_handle": b"someone else"}, {"challenge": "AAAA"}):
        page, response = _sign_in(signed.origin, soft, **knobs)
        assert response.status_code in (400, 403), (knobs, response.text)
        assert "set-cookie" not in response.headers, knobs
        page.close()
    stranger = soft_for(signed)  # never registered
    stranger.user_handle = b"x"
    page, response = _sign_in(signed.origin, stranger)
    assert response.status_code == 400 and "not registered" in response.json()["error"]["message"]
    page.close()
    assert signed.post(f"/api/passkeys/{soft.id}/remove").status_code == 204
    page, response = _sign_in(signed.origin, soft)  # a removed passkey signs in no more
    assert response.status_code == 400
    page.close()


def test_signin_needs_the_pages_origin(page):
    assert page.post("/api/signin/passkey/options", csrf=None, origin="http://evil.example").status_code == 403
