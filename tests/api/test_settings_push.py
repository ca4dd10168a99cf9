"""Push in Settings, on the live local server: a signed-in person turns notifications on for a
device (named from its User-Agent), a card filed for them reaches it (decrypted by the loopback
push service with the device's own keys), the device is listed with when it was last used and can
be removed; an endpoint that is not https is refused with nothing written; nobody removes another
person's device; the answers a notification's buttons send (the same confirm and decline as
the page) are refused without a session or for another person's card; and a device whose session
ended is told only that a request waits until the page, signed in again, renews it (only the
person's own device, with the session and its CSRF token)."""

from __future__ import annotations

import time

import pytest

from countersign.identity.passkeys.receipts import verify_receipt
from countersign.notify.push import application_server_key
from countersign.store.hashes import secret_hash
from countersign.surfaces.api.push import RENEW_LIMIT, RENEW_WINDOW
from tests.api.test_cards import file
from tests.support.push_service import push_service

pytestmark = pytest.mark.anyio

PUSH = "/api/settings/push"
ANDROID_CHROME = ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                  "Chrome/131.0.0.0 Mobile Safari/537.36")


@pytest.fixture
def service():
    with push_service() as s:
        yield s


def devices(page) -> list[dict]:
    return page.get(PUSH).json()["devices"]


async def test_a_device_turned_on_gets_each_card_and_can_be_removed(signed, tenant, configure, service):
    configure(upstream_private=True)  # the push service stand-in is on 127.0.0.1
    shown = signed.get(PUSH).json()
    key_file = tenant.runtime.settings.data_dir / "keys" / "vapid.key"
    assert shown == {"applicationServerKey": application_server_key(key_file.read_text().strip()), "devices": []}
    device = service.device()
    added = signed.post(f"{PUSH}/subscriptions", device.as_json(), headers={"User-Agent": ANDROID_CHROME})
    assert added.status_code == 201, added.text
    view = added.json()
    assert set(view) == {"id", "device", "createdAt", "lastUsedAt"}
    assert (view["device"], view["lastUsedAt"]) == ("Chrome on Android", None)
    assert devices(signed) == [view]

    card_id = await file(tenant)
    [pushed] = service.wait_for(1)
    assert pushed.problem is None and pushed.vapid_key == shown["applicationServerKey"]
    assert pushed.message == {"card": card_id, "title": pushed.message["title"], "body": "Asked by Test agent",
                              "url": f"/confirm?card={card_id}", "answerable": True,
                              "labels": {"confirm": "Confirm", "decline": "Decline"}}
    card = tenant.store.cards.get_card(tenant.workspace_id, card_id, int(time.time()))
    assert pushed.message["title"] == card.title and card.ticket not in pushed.plaintext.decode()
    deadline = time.monotonic() + 10
    while devices(signed)[0]["lastUsedAt"] is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert devices(signed)[0]["lastUsedAt"] is not None

    removed = signed.request("DELETE", f"{PUSH}/subscriptions/{view['id']}")
    assert removed.status_code == 204 and devices(signed) == []
    assert signed.request("DELETE", f"{PUSH}/subscriptions/{view['id']}").status_code == 404
    await file(tenant, note="n2")
    time.sleep(0.3)
    assert len(service.pushes) == 1  # nothing more reaches the removed device


@pytest.mark.parametrize("endpoint", ["http://127.0.0.1:9/push/1", "http://push.example.com/push/1",
                                      "ftp://push.example.com/x", "https://user:pw@push.example.com/x", "nope"])
def test_an_endpoint_that_is_not_https_is_refused_and_nothing_written(signed, service, endpoint):
    body = {**service.device().as_json(), "endpoint": endpoint}
    refused = signed.post(f"{PUSH}/subscriptions", body)
    assert refused.status_code == 422, refused.text
    assert refused.json()["field"] == "endpoint" and refused.json()["error"]["code"] == "invalid"
    assert devices(signed) == []


def test_keys_that_are_not_a_browsers_are_refused(signed, service):
    body = {**service.device().as_json(), "endpoint": "https://push.example.com/x/2"}
    for keys, field in (({**body["keys"], "p256dh": "AAAA"}, "keys.p256dh"),
                        ({**body["keys"], "auth": "AAAA"}, "keys.auth")):
        refused = signed.post(f"{PUSH}/subscriptions", {**body, "keys": keys})
        assert refused.status_code == 422 and refused.json()["field"] == field, refused.text
    assert signed.post(f"{PUSH}/subscriptions", {**body, "extra": 1}).status_code == 422
    assert devices(signed) == []


def test_nobody_else_sees_or_removes_my_device(signed, tenant, page, service):
    device = service.device()
    mine = signed.post(f"{PUSH}/subscriptions", {**device.as_json(), "endpoint": "https://push.example.com/x/1"})
    assert mine.status_code == 201
    colleague = tenant.add_person("approver")
    from tests.support.confirm_page import Page

    other = Page(page.origin).sign_in(tenant.runtime, colleague)
    try:
        assert devices(other) == []
        refused = other.request("DELETE", f"{PUSH}/subscriptions/{mine.json()['id']}")
        assert refused.status_code == 404
    finally:
        other.close()
    assert [d["id"] for d in devices(signed)] == [mine.json()["id"]]


def test_without_a_session_or_csrf_nothing_is_shown_or_written(page, signed, service):
    body = service.device().as_json()
    assert page.get(PUSH, cookie=None).status_code == 401
    assert signed.post(f"{PUSH}/subscriptions", body, csrf="wrong").status_code == 403
    assert signed.post(f"{PUSH}/subscriptions", body, origin="https://evil.example").status_code == 403
    assert devices(signed) == []


async def test_push_actions_without_a_session_or_for_another_persons_card_are_refused(signed, tenant, page):
    """What a notification's Confirm / Decline sends (the service worker's fetch: the session cookie,
    the page's origin, the CSRF token from /api/session) answers only the signed-in person's own card."""
    colleague = tenant.add_person("approver")
    theirs = await file(tenant, token=tenant.connect(colleague, "Colleague's agent"))
    mine = await file(tenant, note="n2")
    for action in ("confirm", "decline"):
        signed_out = signed.post(f"/api/cards/{mine}/{action}", cookie=None, csrf=None)
        assert signed_out.status_code == 401 and signed_out.json()["error"]["code"] == "signed_out"
        not_mine = signed.post(f"/api/cards/{theirs}/{action}")
        assert not_mine.status_code == 403 and not_mine.json()["error"]["code"] == "not_yours"
    now = tenant.runtime.desk.now()
    assert [tenant.store.cards.get_card(tenant.workspace_id, c, now).state.value for c in (mine, theirs)] == [
        "pending", "pending"]
    assert tenant.note("n1")["text"] == "text 1" and tenant.note("n2")["text"] == "text 2"


async def test_an_answer_from_a_notification_is_audited_as_push_and_loosens_nothing(signed, tenant):
    """The service worker says a button's answer came from a notification (``X-Countersign-Via:
    push``): the audit trail and the receipt say so. It is a label only: a card the passkey policy
    covers is refused just the same, nothing runs, and any other value is the page's answer."""
    via_push = {"X-Countersign-Via": "push"}
    confirmed, declined = await file(tenant), await file(tenant, note="n2")
    assert signed.post(f"/api/cards/{confirmed}/confirm", headers=via_push).json()["state"] == "completed"
    assert signed.post(f"/api/cards/{declined}/decline", headers=via_push).json()["state"] == "declined"
    for card_id, event in ((confirmed, "completed"), (declined, "declined")):
        last = tenant.store.cards.audit_trail(tenant.workspace_id, card_id)[-1]
        assert (last.event, last.actor, last.channel) == (event, f"person:{tenant.person.id}", "push")
    receipt = signed.get(f"/api/cards/{confirmed}/receipt").json()
    assert (receipt["confirmation"]["method"], receipt["confirmation"]["channel"]) == ("push", "push")
    assert "push notification" in verify_receipt(receipt).kind

    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"passkey_policy": "every"})
    covered = await file(tenant, text="newer text")
    refused = signed.post(f"/api/cards/{covered}/confirm", headers=via_push)
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "passkey_required", refused.text
    assert tenant.store.cards.get_card(tenant.workspace_id, covered, tenant.runtime.desk.now()).state.value == \
        "pending"
    assert tenant.note("n1")["text"] == "new text"
    last = tenant.store.cards.audit_trail(tenant.workspace_id, covered)[-1]
    assert (last.event, last.channel) == ("refused", "push")

    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"passkey_policy": "never"})
    for label in ("slack", "grant", "client", "PUSH2"):  # no other channel can be claimed: the page's answer
        other = await file(tenant, text=f"by {label}")
        assert signed.post(f"/api/cards/{other}/confirm", headers={"X-Countersign-Via": label}).status_code == 200
        assert tenant.store.cards.audit_trail(tenant.workspace_id, other)[-1].channel == "page"


def test_signing_out_drops_the_device_the_page_names_and_only_the_persons_own(signed, tenant, page, service):
    """The page names its device's subscription when it signs out: it is removed with the session
    (a device left signed out gets none of its person's cards). Without the CSRF token nothing ends
    and nothing is removed; a colleague's device named by someone else stays theirs."""
    colleague = tenant.add_person("approver")
    from tests.support.confirm_page import Page

    other = Page(page.origin).sign_in(tenant.runtime, colleague)
    try:
        mine = {**service.device().as_json(), "endpoint": "https://push.example.com/x/mine"}
        theirs = {**service.device().as_json(), "endpoint": "https://push.example.com/x/theirs"}
        assert signed.post(f"{PUSH}/subscriptions", mine).status_code == 201
        assert other.post(f"{PUSH}/subscriptions", theirs).status_code == 201

        assert signed.post("/api/signout", {"pushEndpoint": mine["endpoint"]}, csrf="wrong").status_code == 403
        assert len(devices(signed)) == 1
        out = signed.post("/api/signout", {"pushEndpoint": theirs["endpoint"]})  # not this person's device
        assert out.status_code == 204 and signed.get("/api/session").status_code == 401
        assert len(devices(other)) == 1

        again = Page(page.origin).sign_in(tenant.runtime, tenant.person)
        try:
            assert len(devices(again)) == 1
            assert again.post("/api/signout", {"pushEndpoint": mine["endpoint"]}).status_code == 204
        finally:
            again.close()
        assert tenant.store.push_subscriptions.list_subscriptions(tenant.workspace_id, tenant.person.id) == []
        assert len(devices(other)) == 1
    finally:
        other.close()


def test_the_test_button_pushes_to_that_device_through_the_push_path_and_is_rate_limited(signed, tenant, configure,
                                                                                          service):
    """Settings' test notification goes to the one device named, encrypted for it and signed as a
    card's push is; it says what the person's pushes do; three per 15 minutes; a device its push
    service no longer knows is removed and said so; another person's device, or none, is 404."""
    configure(upstream_private=True)
    phone, laptop = service.device(), service.device()
    phone_view = signed.post(f"{PUSH}/subscriptions", phone.as_json(), headers={"User-Agent": ANDROID_CHROME}).json()
    laptop_added = signed.post(f"{PUSH}/subscriptions", laptop.as_json())
    assert laptop_added.status_code == 201, laptop_added.text
    laptop_id = laptop_added.json()["id"]

    sent = signed.post(f"{PUSH}/subscriptions/{phone_view['id']}/test")
    assert sent.status_code == 200, sent.text
    assert sent.json() == {"outcome": "sent", "message": "A test notification is on its way to Chrome on Android."}
    [pushed] = service.wait_for(1)
    assert pushed.problem is None and pushed.path == phone.endpoint.removeprefix(service.origin)
    assert pushed.message == {
        "test": True, "title": "Test notification from countersign",
        "body": "Push is on for you: when an agent asks you to confirm something, a notification like this one "
                "shows the request.",
        "url": "/settings/notifications"}
    assert pushed.vapid_key == signed.get(PUSH).json()["applicationServerKey"]

    service.answer(410)  # the laptop's push service forgot it
    gone = signed.post(f"{PUSH}/subscriptions/{laptop_id}/test")
    assert gone.status_code == 409 and gone.json()["error"]["code"] == "device_gone"
    assert [d["id"] for d in devices(signed)] == [phone_view["id"]]

    assert signed.post(f"{PUSH}/subscriptions/{phone_view['id']}/test").status_code == 200
    limited = signed.post(f"{PUSH}/subscriptions/{phone_view['id']}/test")
    assert limited.status_code == 429 and limited.json()["error"]["code"] == "rate_limited"
    assert limited.json()["error"]["message"].startswith(
        "Nothing was sent: you can ask for 3 test notifications every 15 minutes. Try again in ")
    assert len(service.pushes) == 3  # two to the phone, the refused one to the laptop; none after the limit
    assert signed.post(f"{PUSH}/subscriptions/ps_{'0' * 24}/test").status_code == 404
    assert signed.post(f"{PUSH}/subscriptions/{laptop_id}/test").status_code == 404  # removed
    assert signed.post(f"{PUSH}/subscriptions/nope/test").status_code == 404


def test_anothers_device_gets_no_test_and_without_a_session_or_csrf_nothing_is_sent(signed, tenant, page, service,
                                                                                       configure):
    configure(upstream_private=True)
    colleague = tenant.add_person("approver")
    from tests.support.confirm_page import Page

    other = Page(page.origin).sign_in(tenant.runtime, colleague)
    try:
        theirs = other.post(f"{PUSH}/subscriptions", service.device().as_json()).json()["id"]
        assert signed.post(f"{PUSH}/subscriptions/{theirs}/test").status_code == 404
    finally:
        other.close()
    mine = signed.post(f"{PUSH}/subscriptions", service.device().as_json()).json()["id"]
    assert page.post(f"{PUSH}/subscriptions/{mine}/test", cookie=None).status_code == 401
    assert signed.post(f"{PUSH}/subscriptions/{mine}/test", csrf="wrong").status_code == 403
    time.sleep(0.2)
    assert service.pushes == []


RENEW = f"{PUSH}/renew"
SIGN_IN_ONLY = {"signIn": True, "title": "A request is waiting for you",
                "body": "Sign in on this device to see it and answer.", "url": "/confirm"}


def signed_in_until(tenant, person, endpoint: str) -> int | None:
    [record] = [s for s in tenant.store.push_subscriptions.list_subscriptions(tenant.workspace_id, person.id)
                if s.endpoint == endpoint]
    return record.signed_in_until


def session_end(tenant, page) -> int:
    return tenant.store.sessions.get_session(secret_hash(page.session_id), tenant.runtime.desk.now()).expires_at


async def test_a_device_whose_session_ended_gets_no_card_until_it_is_signed_in_again(clock, signed, tenant,
                                                                                      configure, service):
    """Turned on, a device is signed in until its session ends: a card shows there in full. A week
    later the session has ended: the next card's push says only that a request waits (no title, no
    who asked, no buttons). Signed in again, the page renews the device, and cards show again."""
    configure(upstream_private=True)
    device = service.device()
    assert signed.post(f"{PUSH}/subscriptions", device.as_json()).status_code == 201
    assert signed_in_until(tenant, tenant.person, device.endpoint) == session_end(tenant, signed)
    assert session_end(tenant, signed) == int(clock.now) + 7 * 24 * 3600

    first = await file(tenant)
    assert service.wait_for(1)[0].message["card"] == first

    clock.advance(7 * 24 * 3600)  # the session ends; the device keeps its subscription
    assert signed.get("/api/session").status_code == 401
    assert signed.post(RENEW, {"endpoint": device.endpoint}).status_code == 401  # a lapsed session renews nothing
    second = await file(tenant, note="n2")
    pushed = service.wait_for(2)[1]
    assert pushed.problem is None and pushed.message == SIGN_IN_ONLY
    card = tenant.store.cards.get_card(tenant.workspace_id, second, tenant.runtime.desk.now())
    text = pushed.plaintext.decode("utf-8")
    assert card.title not in text and "Test agent" not in text and second not in text

    signed.sign_in(tenant.runtime, tenant.person)  # the person signs in on the device again
    renewed = signed.post(RENEW, {"endpoint": device.endpoint})
    assert renewed.status_code == 204, renewed.text
    assert signed_in_until(tenant, tenant.person, device.endpoint) == session_end(tenant, signed) == \
        int(clock.now) + 7 * 24 * 3600
    third = await file(tenant, text="a third text")
    assert service.wait_for(3)[2].message["card"] == third


def test_renewing_is_refused_signed_out_without_csrf_or_for_someone_elses_device_and_writes_nothing(
        clock, signed, tenant, page, service):
    colleague = tenant.add_person("approver")
    from tests.support.confirm_page import Page

    mine = {**service.device().as_json(), "endpoint": "https://push.example.com/x/mine"}
    theirs = {**service.device().as_json(), "endpoint": "https://push.example.com/x/theirs"}
    assert signed.post(f"{PUSH}/subscriptions", mine).status_code == 201
    other = Page(page.origin).sign_in(tenant.runtime, colleague)
    try:
        assert other.post(f"{PUSH}/subscriptions", theirs).status_code == 201
        before = (signed_in_until(tenant, tenant.person, mine["endpoint"]),
                  signed_in_until(tenant, colleague, theirs["endpoint"]))
        clock.advance(3600)
        signed.sign_in(tenant.runtime, tenant.person)  # a later session: a renewal would move it on

        signed_out = signed.post(RENEW, {"endpoint": mine["endpoint"]}, cookie=None, csrf=None)
        assert signed_out.status_code == 401 and signed_out.json()["error"]["code"] == "signed_out"
        assert signed.post(RENEW, {"endpoint": mine["endpoint"]}, csrf="wrong").status_code == 403
        assert signed.post(RENEW, {"endpoint": mine["endpoint"]}, origin="https://evil.example").status_code == 403
        for endpoint in (theirs["endpoint"], "https://push.example.com/x/nobody"):
            refused = signed.post(RENEW, {"endpoint": endpoint})
            assert refused.status_code == 404 and refused.json()["error"] == {
                "code": "not_found",
                "message": "This device gets none of your notifications: turn them on in Settings, Notifications."}
        assert signed.post(RENEW, {"endpoint": mine["endpoint"], "extra": 1}).status_code == 422
        assert signed.post(RENEW, {}).status_code == 422
        assert (signed_in_until(tenant, tenant.person, mine["endpoint"]),
                signed_in_until(tenant, colleague, theirs["endpoint"])) == before

        assert signed.post(RENEW, {"endpoint": mine["endpoint"]}).status_code == 204  # the person's own: moved on
        assert signed_in_until(tenant, tenant.person, mine["endpoint"]) == before[0] + 3600
        assert signed_in_until(tenant, colleague, theirs["endpoint"]) == before[1]
    finally:
        other.close()


def test_renewing_is_limited_per_session_and_a_refused_renewal_writes_nothing(clock, signed, tenant, page, service):
    """A page says its device is signed in once per load: a session may say so ten times every 15
    minutes (whatever device it names). Past that it is refused (429 with ``Retry-After``, the
    sentence saying nothing was renewed) and the device is left as it was; another session of the
    same person is counted apart, and the next window the first session renews again."""
    from tests.support.confirm_page import Page

    device = {**service.device().as_json(), "endpoint": "https://push.example.com/x/looping"}
    assert signed.post(f"{PUSH}/subscriptions", device).status_code == 201
    before = signed_in_until(tenant, tenant.person, device["endpoint"])
    clock.advance(3600)  # (a whole number of windows: still 5 s into one)
    signed.sign_in(tenant.runtime, tenant.person)  # a later session: a renewal would move it on

    for _ in range(RENEW_LIMIT):  # a page reloading over and over, naming a device nobody turned on
        assert signed.post(RENEW, {"endpoint": "https://push.example.com/x/nobody"}).status_code == 404
    refused = signed.post(RENEW, {"endpoint": device["endpoint"]})
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "895"
    assert refused.json()["error"] == {
        "code": "rate_limited",
        "message": "Nothing was renewed: a signed-in page may say its device is signed in 10 times every 15 "
                   "minutes. Try again in 15 minutes."}
    assert signed_in_until(tenant, tenant.person, device["endpoint"]) == before

    clock.advance(60)
    other = Page(page.origin).sign_in(tenant.runtime, tenant.person)  # the same person, another session
    try:
        assert other.post(RENEW, {"endpoint": device["endpoint"]}).status_code == 204
        assert signed_in_until(tenant, tenant.person, device["endpoint"]) == session_end(tenant, other)
    finally:
        other.close()

    clock.advance(RENEW_WINDOW - 65)  # the next window
    assert signed.post(RENEW, {"endpoint": device["endpoint"]}).status_code == 204
    assert signed_in_until(tenant, tenant.person, device["endpoint"]) == session_end(tenant, signed)
