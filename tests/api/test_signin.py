"""Sign-in by email link, sessions and sign-out, over real HTTP against the live server."""

from __future__ import annotations

import time

from countersign.core.ids import new_id
from countersign.identity.sessions import mint_signin_token
from countersign.store.hashes import secret_hash
from tests.api.pages import COOKIE, Page, link_token, session_cookie, signin_emails, wait_for_signin_email

SIGNIN_MESSAGE = "If that address belongs to a member, a sign-in link is on its way."


def ask(page: Page, address: str):
    return page.post("/api/signin/request", {"email": address}, csrf=None, cookie=None)


def test_request_never_reveals_whether_an_email_is_known(page, tenant, clock):
    runtime = tenant.runtime
    unknown = f"{new_id('nobody')}@example.com"
    known = ask(page, tenant.person.email)
    stranger = ask(page, unknown)
    assert known.status_code == stranger.status_code == 202
    assert known.content == stranger.content
    assert known.json() == {"message": SIGNIN_MESSAGE}
    assert known.headers["content-type"] == stranger.headers["content-type"]
    message = wait_for_signin_email(runtime, tenant.person.email)
    assert f"{page.origin}/signin#token=" in message.get_body(("plain",)).get_content()
    assert message.get_body(("html",)) is not None
    assert signin_emails(runtime, unknown) == []


def test_the_answer_leaves_before_the_lookup_and_the_email(tenant):
    """Timing cannot tell a known address: the 202 is sent before the member lookup, the token and
    the email happen (shown with a sender that blocks until the answer has arrived)."""
    import threading

    import httpx2

    from countersign.surfaces.api.app import create_api
    from tests.support.live import LiveServer

    release, sent = threading.Event(), []

    class BlockingSender:
        from_address = "countersign@localhost"

        def send(self, email) -> None:
            release.wait(10)
            sent.append(email.to)

    server = LiveServer(create_api(tenant.runtime, BlockingSender(), signin_floor=0), lifespan="off").start()
    try:
        origin = tenant.runtime.desk.settings.public_url
        answer = httpx2.post(f"http://127.0.0.1:{server.port}/api/signin/request", json={"email": tenant.person.email},
                             headers={"Origin": origin}, timeout=5)
        assert answer.status_code == 202 and answer.json() == {"message": SIGNIN_MESSAGE}
        assert sent == []  # answered while the email was still waiting to go
        release.set()
        for _ in range(200):
            if sent:
                break
            time.sleep(0.01)
        assert sent == [tenant.person.email]
    finally:
        release.set()
        server.stop()


def test_the_link_signs_in_once(page, tenant, clock):
    assert ask(page, tenant.person.email).status_code == 202
    token = link_token(wait_for_signin_email(tenant.runtime, tenant.person.email))
    first = page.complete(token)
    assert first.status_code == 200, first.text
    body = first.json()
    assert body["person"] == {"id": tenant.person.id, "email": tenant.person.email, "name": tenant.person.name,
                              "role": "owner"}
    assert body["workspace"] == {"id": tenant.workspace_id, "name": "Acme"}
    assert len(body["csrfToken"]) >= 32
    again = Page(page.origin).complete(token)
    assert again.status_code == 400
    assert again.json() == {
        "error": {
            "code": "signin_invalid",
            "message": "This sign-in link is invalid, expired or already used. Ask for a new one.",
        }
    }
    assert "set-cookie" not in again.headers


def test_session_cookie_attributes_and_hash_only(page, tenant, clock):
    response = page.complete(mint_signin_token(tenant.store.sessions, tenant.person, now=tenant.runtime.desk.now()))
    (cookie,) = [v for k, v in response.headers.multi_items() if k.lower() == "set-cookie"]
    session_id = session_cookie(response)
    assert cookie == f"{COOKIE}={session_id}; Path=/; Secure; HttpOnly; SameSite=Lax"
    assert len(session_id) >= 43
    now = tenant.runtime.desk.now()
    stored = tenant.store.sessions.get_session(secret_hash(session_id), now)
    assert stored is not None and stored.person_id == tenant.person.id
    assert tenant.store.sessions.get_session(session_id, now) is None  # only the hash is a key


def test_expired_link_is_refused(page, tenant, clock):
    token = mint_signin_token(tenant.store.sessions, tenant.person, now=tenant.runtime.desk.now())
    clock.advance(15 * 60 + 1)
    response = page.complete(token)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "signin_invalid"


def test_link_just_before_expiry_works(page, tenant, clock):
    token = mint_signin_token(tenant.store.sessions, tenant.person, now=tenant.runtime.desk.now())
    clock.advance(15 * 60 - 2)
    assert page.complete(token).status_code == 200


def test_forged_and_malformed_tokens(page, tenant, clock):
    for token in ("", "x", "A" * 43, "cs_" + "b" * 40):
        response = page.complete(token)
        assert response.status_code == 400, token
        assert response.json()["error"]["code"] == "signin_invalid"
    wrong_type = page.post("/api/signin/complete", {"token": 12345}, csrf=None, cookie=None)
    assert wrong_type.status_code == 422
    assert "token" in wrong_type.json()["error"]["message"]


def test_rate_limit_per_email(page, tenant, clock):
    for _ in range(5):
        assert ask(page, tenant.person.email).status_code == 202
    limited = ask(page, tenant.person.email.upper())
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "rate_limited"
    assert "15 minutes" in limited.json()["error"]["message"]
    assert int(limited.headers["retry-after"]) <= 900
    unknown = f"{new_id('x')}@example.com"
    for _ in range(5):
        assert ask(page, unknown).status_code == 202
    assert ask(page, unknown).status_code == 429  # same answer for an unknown address
    clock.advance(900)
    assert ask(page, tenant.person.email).status_code == 202


def test_rate_limit_per_client_address(page, tenant, clock):
    for i in range(20):
        assert ask(page, f"{new_id('x')}@example.com").status_code == 202, i
    limited = ask(page, f"{new_id('x')}@example.com")
    assert limited.status_code == 429
    assert limited.json()["error"]["code"] == "rate_limited"


def test_signin_needs_the_page_origin(page, tenant, clock):
    token = mint_signin_token(tenant.store.sessions, tenant.person, now=tenant.runtime.desk.now())
    for origin in ("https://evil.example", "null"):
        response = page.post("/api/signin/complete", {"token": token}, origin=origin, csrf=None, cookie=None)
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "csrf"
        assert "set-cookie" not in response.headers
    missing = page.post("/api/signin/complete", {"token": token}, origin=None, csrf=None, cookie=None)
    assert missing.status_code == 403
    asked = page.post("/api/signin/request", {"email": tenant.person.email}, origin="https://evil.example",
                      csrf=None, cookie=None)
    assert asked.status_code == 403
    assert page.complete(token).status_code == 200  # the refused attempts did not spend it


def test_bad_email_shapes(page, clock):
    for body in ({"email": "not-an-email"}, {"email": 5}, {}, {"email": "a@b.c", "extra": 1}, {"email": "x" * 300}):
        response = page.post("/api/signin/request", body, csrf=None, cookie=None)
        assert response.status_code == 422, body
        assert response.json()["error"]["code"] == "invalid"


def test_session_and_signout(signed, tenant):
    session = signed.get("/api/session")
    assert session.status_code == 200
    assert session.json()["person"]["id"] == tenant.person.id
    assert session.json()["csrfToken"] == signed.csrf

    refused = signed.post("/api/signout", csrf=None)
    assert refused.status_code == 403
    assert signed.get("/api/session").status_code == 200

    out = signed.post("/api/signout")
    assert out.status_code == 204
    assert out.content == b""
    (cookie,) = [v for k, v in out.headers.multi_items() if k.lower() == "set-cookie"]
    assert cookie == f"{COOKIE}=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0"
    gone = signed.get("/api/session")
    assert gone.status_code == 401
    assert gone.json()["error"]["code"] == "signed_out"
    assert signed.post("/api/signout").status_code == 204  # already signed out: fine


def test_signed_out_requests(page):
    for path in ("/api/session", "/api/cards", "/api/history", "/api/settings", "/api/connections", "/api/cards/c_x"):
        response = page.get(path)
        assert response.status_code == 401, path
        assert response.json()["error"]["code"] == "signed_out"
    bogus = page.get("/api/session", cookie="forged-session-id")
    assert bogus.status_code == 401


def test_a_new_signin_ends_the_previous_session(signed, tenant):
    old = signed.session_id
    signed.sign_in(tenant.runtime, tenant.person)
    assert signed.session_id != old
    assert signed.get("/api/session", cookie=old).status_code == 401
    assert signed.get("/api/session").status_code == 200


def test_the_page_says_when_card_emails_to_the_person_stopped(signed, tenant):
    from countersign.store.suppressions import Suppression

    assert signed.get("/api/session").json()["emailNotice"] is None
    email = tenant.person.email.lower()
    tenant.runtime.store.suppressions.suppress_address(Suppression(email, "complaint", 1_800_000_000, "abuse"))
    try:
        notice = signed.get("/api/session").json()["emailNotice"]
        assert notice["reason"] == "complaint" and notice["since"].startswith("2027-01-15")
        assert tenant.person.email in notice["message"] and "reported as spam" in notice["message"]
    finally:
        tenant.runtime.store.suppressions.lift_suppression(email)
    assert signed.get("/api/session").json()["emailNotice"] is None
