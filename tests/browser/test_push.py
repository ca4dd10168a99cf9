"""Push to the installed page, in chromium with the page's real service worker: a person turns
notifications on in Settings → Notifications (the browser's subscribe stubbed with a subscription
whose keys the loopback push service holds: chromium cannot subscribe offline), a card filed for
them is pushed by the server (decrypted by the stand-in), that message delivered to the worker
through CDP shows as a notification with the card's title, who asked, and Confirm / Decline, and
its Confirm answers the card through the API (the card completes, its note changes). A card that
needs a passkey shows no buttons, and a forged Confirm for it is refused. The device can be removed.
A device whose session ended shows only that a request waits until signing in there renews it; a page
reloaded past the renewals' limit is refused them without a word."""

from __future__ import annotations

import json
import time

import pytest
from playwright.sync_api import expect

from countersign.notify.push import waiting_message
from countersign.store.hashes import secret_hash
from countersign.surfaces.api.push import RENEW_LIMIT, RENEW_WINDOW
from tests.browser import scene as scenes
from tests.browser.pages import file_cards, new_context, ready, sign_in, status_of
from tests.support.push_service import push_service

PHONE = {"viewport": {"width": 412, "height": 823}, "is_mobile": True, "has_touch": True,
         "user_agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
                       "Chrome/156.0.0.0 Mobile Safari/537.36"}


@pytest.fixture
def service():
    with push_service() as s:
        yield s


@pytest.fixture
def private(live):
    """The stand-in push service is on 127.0.0.1 (plain http): allowed for this test only."""
    import dataclasses

    runtime, _ = live
    original = runtime.desk.settings
    runtime.desk.settings = dataclasses.replace(original, upstream_private=True)
    yield
    runtime.desk.settings = original


def stub_subscribe(ctx, subscription: dict) -> None:
    """PushManager.subscribe resolves to ``subscription`` (what toJSON() gives) and records the key it
    was given; getSubscription gives it back until it is unsubscribed (kept in localStorage, so
    across the page's loads), and its unsubscribe is recorded."""
    ctx.add_init_script("const SUBSCRIPTION = " + json.dumps(subscription) + ";\n" + """(() => {
      const sub = SUBSCRIPTION;
      const made = () => ({ endpoint: sub.endpoint, toJSON: () => sub, unsubscribe: async () => {
        localStorage.removeItem('__subscribed');
        localStorage.setItem('__unsubscribed', sub.endpoint);
        return true;
      } });
      PushManager.prototype.subscribe = async function (options) {
        const key = new Uint8Array(options.applicationServerKey instanceof ArrayBuffer
          ? options.applicationServerKey : options.applicationServerKey.buffer || []);
        window.__subscribedWith = typeof options.applicationServerKey === 'string'
          ? options.applicationServerKey : btoa(String.fromCharCode(...key));
        window.__userVisibleOnly = options.userVisibleOnly;
        localStorage.setItem('__subscribed', '1');
        return made();
      };
      PushManager.prototype.getSubscription = async function () {
        return localStorage.getItem('__subscribed') ? made() : null;
      };
    })();""")


def phone(browser, watch, tenant, device):
    """A phone's browser context whose push subscription is ``device``'s, notifications allowed."""
    ctx = new_context(browser, watch, **PHONE)
    stub_subscribe(ctx, device.as_json())
    ctx.grant_permissions(["notifications"], origin=tenant.origin)
    return ctx


def worker_registration(ctx, page, origin: str):
    """The CDP session and the page's service worker registration id (notes: channels-and-page.md §1)."""
    cdp = ctx.new_cdp_session(page)
    registrations: dict = {}
    cdp.on("ServiceWorker.workerRegistrationUpdated",
           lambda e: registrations.update({r["scopeURL"]: r for r in e["registrations"]}))
    cdp.send("ServiceWorker.enable")
    assert page.evaluate("() => navigator.serviceWorker.ready.then((r) => r.active !== null)")
    deadline = time.monotonic() + 5
    while origin + "/" not in registrations and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    return cdp, registrations[origin + "/"]["registrationId"]


def notifications(page) -> list[dict]:
    return page.evaluate("""() => navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((ns) =>
        ns.map((n) => ({title: n.title, body: n.body, tag: n.tag, data: n.data,
                        actions: n.actions.map((a) => [a.action, a.title])})))""")


def deliver(page, cdp, origin: str, registration: str, data: str) -> list[dict]:
    """Deliver one push message to the worker and return the notifications it shows. CDP's
    deliverPushMessage answers before the worker runs and reports nothing when a message does not
    arrive (seen under load with both workers busy): it is delivered again until shown (a card's
    notification has one tag, so a second delivery replaces the first rather than adding one)."""
    for _ in range(4):
        cdp.send("ServiceWorker.deliverPushMessage", {"origin": origin, "registrationId": registration, "data": data})
        try:
            return wait_notifications(page, 1, seconds=5)
        except AssertionError:
            continue
    raise AssertionError(f"no notification after 4 deliveries: {notifications(page)}")


def wait_notifications(page, count: int, seconds: float = 10) -> list[dict]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        shown = notifications(page)
        if len(shown) >= count:
            return shown
        page.wait_for_timeout(50)
    raise AssertionError(f"expected {count} notifications, got {notifications(page)}")


def test_a_pushed_card_shows_as_a_notification_and_its_confirm_answers_it(live, tenant, browser, watch, service,
                                                                           private):
    device = service.device()
    ctx = phone(browser, watch, tenant, device)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        ready(page, "confirm")
        page.goto(f"{tenant.origin}/settings/notifications")
        ready(page, "settings")
        panel = page.locator("[data-push-settings]")
        expect(panel.locator("[data-push-devices]")).to_have_text("No device yet.")
        with page.expect_response("**/api/settings/push/subscriptions") as answer:
            panel.get_by_role("button", name="Turn on notifications on this device").click()
        assert answer.value.status == 201
        expect(panel.locator(".push-answer")).to_have_text("Notifications are on for this device.")
        [listed] = panel.locator("[data-push-device]").all()
        expect(listed).to_contain_text("Chrome on Android")
        expect(listed).to_contain_text("not notified yet")
        key = page.evaluate("() => window.__subscribedWith")
        assert page.evaluate("() => window.__userVisibleOnly") is True
        assert key == page.evaluate("() => fetch('/api/settings/push').then((r) => r.json())")[
            "applicationServerKey"]

        (filed,) = file_cards(tenant, [("n1", "Pay Acme 1,250.00")])
        card_id = filed["confirmationId"]
        [pushed] = service.wait_for(1)
        assert pushed.problem is None and pushed.vapid_key == key
        assert pushed.message["card"] == card_id and pushed.message["answerable"] is True

        cdp, registration = worker_registration(ctx, page, tenant.origin)
        [shown] = deliver(page, cdp, tenant.origin, registration, pushed.plaintext.decode("utf-8"))
        assert shown == {"title": pushed.message["title"], "body": "Asked by Test agent", "tag": f"card-{card_id}",
                         "data": {"card": card_id, "url": f"/confirm?card={card_id}", "answerable": True},
                         "actions": [["confirm", "Confirm"], ["decline", "Decline"]]}
        assert shown["title"] == tenant.store.cards.get_card(tenant.workspace_id, card_id,
                                                             tenant.runtime.desk.now()).title

        # Its Confirm (no CDP command clicks a notification: the listener's own function, with its data)
        worker = ctx.service_workers[0]
        assert worker.evaluate("(data) => self.handleAction('confirm', data)", shown["data"]) == 200
        assert status_of(tenant, card_id)["status"] == "completed"
        assert tenant.note("n1")["text"] == "Pay Acme 1,250.00"
        answered = tenant.store.cards.audit_trail(tenant.workspace_id, card_id)[-1]
        assert (answered.event, answered.channel) == ("completed", "push")  # "from a notification"

        # the device shows when it was last notified, and is removed
        page.reload()
        ready(page, "settings")
        expect(panel.locator("[data-push-device]")).to_contain_text("last notified")
        panel.get_by_role("button", name="Remove").click()
        expect(panel.locator(".push-answer")).to_have_text("Removed.")
        expect(panel.locator("[data-push-devices]")).to_have_text("No device yet.")
        assert tenant.store.push_subscriptions.list_subscriptions(tenant.workspace_id, tenant.person.id) == []
    finally:
        ctx.close()
    assert watch.errors == []


def test_a_card_that_needs_a_passkey_has_no_buttons_and_a_forged_confirm_is_refused(live, tenant, browser, watch,
                                                                                     service, private):
    tenant.store.workspaces.update_workspace_settings(tenant.workspace_id, {"passkey_policy": "every"})
    ctx = new_context(browser, watch, **PHONE)
    ctx.grant_permissions(["notifications"], origin=tenant.origin)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        ready(page, "confirm")
        device = service.device()
        assert page.evaluate("(sub) => fetch('/api/session').then((r) => r.json()).then((s) => "
                             "fetch('/api/settings/push/subscriptions', {method: 'POST', headers: "
                             "{'Content-Type': 'application/json', 'X-CSRF-Token': s.csrfToken}, "
                             "body: JSON.stringify(sub)})).then((r) => r.status)", device.as_json()) == 201
        (filed,) = file_cards(tenant, [("n1", "Pay Acme 1,250.00")])
        card_id = filed["confirmationId"]
        [pushed] = service.wait_for(1)
        assert pushed.message["answerable"] is False

        cdp, registration = worker_registration(ctx, page, tenant.origin)
        [shown] = deliver(page, cdp, tenant.origin, registration, pushed.plaintext.decode("utf-8"))
        assert shown["actions"] == [] and shown["data"]["answerable"] is False

        worker = ctx.service_workers[0]
        # the worker never answers it: a Confirm opens the card instead
        assert worker.evaluate("(data) => self.handleAction('confirm', data).then(() => 'opened')",
                               shown["data"]) == "opened"
        # and a forged one that claims it may is refused by the server: nothing ran
        forged = {**shown["data"], "answerable": True}
        assert worker.evaluate("(data) => self.handleAction('confirm', data).then((s) => s === 200)", forged) is False
        assert status_of(tenant, card_id)["status"] == "pending"
        assert tenant.note("n1")["text"] == "text 1"
    finally:
        ctx.close()


def turn_on(page, tenant) -> None:
    """Settings → Notifications → Turn on notifications on this device (the subscribe stubbed)."""
    page.goto(f"{tenant.origin}/settings/notifications")
    ready(page, "settings")
    panel = page.locator("[data-push-settings]")
    with page.expect_response("**/api/settings/push/subscriptions") as answer:
        panel.get_by_role("button", name="Turn on notifications on this device").click()
    assert answer.value.status == 201
    expect(panel.locator(".push-answer")).to_have_text("Notifications are on for this device.")


def test_signing_out_removes_this_devices_subscription(live, tenant, browser, watch, service, private):
    """Sign out names this device's subscription: the server drops it with the session, and the
    page unsubscribes it too. A card filed afterwards reaches no device."""
    device = service.device()
    ctx = phone(browser, watch, tenant, device)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        ready(page, "confirm")
        turn_on(page, tenant)
        [listed] = tenant.store.push_subscriptions.list_subscriptions(tenant.workspace_id, tenant.person.id)
        assert listed.endpoint == device.endpoint

        page.goto(f"{tenant.origin}/settings")
        ready(page, "settings")
        with page.expect_request("**/api/signout") as sent:
            page.get_by_role("button", name="Sign out").click()
        assert json.loads(sent.value.post_data or "{}") == {"pushEndpoint": device.endpoint}
        expect(page.locator("body")).to_have_attribute("data-view", "signin")
        assert tenant.store.push_subscriptions.list_subscriptions(tenant.workspace_id, tenant.person.id) == []
        page.wait_for_function("() => localStorage.getItem('__unsubscribed') !== null")
        assert page.evaluate("() => localStorage.getItem('__unsubscribed')") == device.endpoint

        file_cards(tenant, [("n1", "Pay Acme 1,250.00")])
        time.sleep(0.3)
        assert service.pushes == []
    finally:
        ctx.close()
    assert watch.errors == []


def test_a_changed_subscription_is_handed_to_the_api_with_the_session(live, tenant, browser, watch, service,
                                                                      private):
    """The push service replaced the subscription (``pushsubscriptionchange``): the worker subscribes
    again with the server's key, hands the new one to the API and removes the old one. Signed out,
    it hands nothing over (the old one is dropped when its push service answers 404/410)."""
    old, new, later = service.device(), service.device(), service.device()
    ctx = new_context(browser, watch, **PHONE)
    ctx.grant_permissions(["notifications"], origin=tenant.origin)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        ready(page, "confirm")
        add = ("(sub) => fetch('/api/session').then((r) => r.json()).then((s) => "
               "fetch('/api/settings/push/subscriptions', {method: 'POST', headers: "
               "{'Content-Type': 'application/json', 'X-CSRF-Token': s.csrfToken}, "
               "body: JSON.stringify(sub)})).then((r) => r.status)")
        assert page.evaluate(add, old.as_json()) == 201
        worker_registration(ctx, page, tenant.origin)
        worker = ctx.service_workers[0]
        # the worker's subscribe is stubbed in the worker itself (init scripts run only in pages)
        stub = """(sub) => { PushManager.prototype.subscribe = async function (options) {
            self.__subscribedWith = options.applicationServerKey; self.__userVisibleOnly = options.userVisibleOnly;
            return { endpoint: sub.endpoint, toJSON: () => sub }; }; return true; }"""
        assert worker.evaluate(stub, new.as_json()) is True
        worker.evaluate("""(endpoint) => { const e = new ExtendableEvent('pushsubscriptionchange');
            Object.defineProperty(e, 'oldSubscription', { value: { endpoint } });
            self.dispatchEvent(e); }""", old.endpoint)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            listed = tenant.store.push_subscriptions.list_subscriptions(tenant.workspace_id, tenant.person.id)
            if [s.endpoint for s in listed] == [new.endpoint]:
                break
            page.wait_for_timeout(50)
        assert [s.endpoint for s in listed] == [new.endpoint]  # the new one in, the old one out
        key = page.evaluate("() => fetch('/api/settings/push').then((r) => r.json())")["applicationServerKey"]
        assert worker.evaluate("() => [self.__subscribedWith, self.__userVisibleOnly]") == [key, True]

        assert page.evaluate("() => fetch('/api/session').then((r) => r.json()).then((s) => fetch('/api/signout', "
                             "{method: 'POST', headers: {'X-CSRF-Token': s.csrfToken}})).then((r) => r.status)") == 204
        assert worker.evaluate(stub, later.as_json()) is True
        assert worker.evaluate("(endpoint) => self.renewSubscription({ endpoint }, null)", new.endpoint) is None
        assert [s.endpoint for s in tenant.store.push_subscriptions.list_subscriptions(
            tenant.workspace_id, tenant.person.id)] == [new.endpoint]
    finally:
        ctx.close()
    assert watch.errors == []


def test_the_test_button_beside_a_device_shows_a_test_notification_from_the_worker(live, tenant, browser, watch,
                                                                                   service, private):
    """Settings → Notifications → Send a test, beside this device: the server pushes a test through
    the card push's path (the stand-in decrypts it with the device's keys), the answer says so, and
    that message delivered to the real worker shows as a notification with no buttons whose tap
    opens Settings → Notifications."""
    device = service.device()
    ctx = phone(browser, watch, tenant, device)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        ready(page, "confirm")
        turn_on(page, tenant)
        panel = page.locator("[data-push-settings]")
        [listed] = panel.locator("[data-push-device]").all()
        with page.expect_response("**/test") as answer:
            listed.get_by_role("button", name="Send a test").click()
        assert answer.value.status == 200
        expect(panel.locator(".push-answer")).to_have_text("A test notification is on its way to Chrome on Android.")
        [pushed] = service.wait_for(1)
        assert pushed.problem is None and pushed.message["test"] is True

        cdp, registration = worker_registration(ctx, page, tenant.origin)
        [shown] = deliver(page, cdp, tenant.origin, registration, pushed.plaintext.decode("utf-8"))
        assert shown == {"title": "Test notification from countersign",
                         "body": "Push is on for you: when an agent asks you to confirm something, a notification "
                                 "like this one shows the request.",
                         "tag": "test", "data": {"open": "/settings/notifications"}, "actions": []}
        worker = ctx.service_workers[0]
        worker.evaluate("(data) => self.handleAction('', data)", shown["data"])
        page.wait_for_url(f"{tenant.origin}/settings/notifications")
        # a message whose path leaves the page's origin opens the page's own instead
        forged = json.dumps({"test": True, "title": "Test", "body": "", "url": "//evil.example/x"})
        cdp.send("ServiceWorker.deliverPushMessage", {"origin": tenant.origin, "registrationId": registration,
                                                      "data": forged})
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            tests = [n for n in notifications(page) if n["tag"] == "test"]
            if tests and tests[0]["title"] == "Test":
                break
            page.wait_for_timeout(50)
        assert [n["data"] for n in notifications(page) if n["tag"] == "test"] == [{"open": "/settings/notifications"}]
    finally:
        ctx.close()
    assert watch.errors == []


def test_the_push_after_quiet_hours_shows_how_many_wait_and_opens_the_list(live, tenant, browser, watch, service,
                                                                          private):
    """The one push for several cards held while quiet hours ran, as the server sends it (its
    JSON, push.waiting_message), shows how many wait and their first titles, no buttons, and its
    tap opens the waiting list."""
    ctx = new_context(browser, watch, **PHONE)
    ctx.grant_permissions(["notifications"], origin=tenant.origin)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        ready(page, "confirm")
        cdp, registration = worker_registration(ctx, page, tenant.origin)
        message = waiting_message(["Pay Acme 1,250.00", "Send the report"], "/confirm")
        [shown] = deliver(page, cdp, tenant.origin, registration, message)
        assert shown == {"title": "2 requests are waiting for your answer",
                         "body": "Pay Acme 1,250.00\nSend the report", "tag": "waiting", "data": {"open": "/confirm"},
                         "actions": []}
        page.goto(f"{tenant.origin}/settings")
        ready(page, "settings")
        ctx.service_workers[0].evaluate("(data) => self.handleAction('', data)", shown["data"])
        page.wait_for_url(f"{tenant.origin}/confirm")
    finally:
        ctx.close()
    assert watch.errors == []


def session_hash_of(ctx) -> str:
    [cookie] = [c for c in ctx.cookies() if c["name"] == "__Host-cs_session"]
    return secret_hash(cookie["value"])


def signed_in_until(tenant) -> int | None:
    [device] = tenant.store.push_subscriptions.list_subscriptions(tenant.workspace_id, tenant.person.id)
    return device.signed_in_until


def test_a_device_whose_session_ended_shows_only_that_a_request_waits_until_signed_in_again(
        live, tenant, browser, watch, service, private):
    """Its page session over, the device keeps its subscription, and a card's push there says only
    that a request waits: the real worker shows it with no title of the card, no who asked, no
    buttons, and its tap opens the page, which asks to sign in. Signing in on the device, the page
    renews it (POST /api/settings/push/renew), and the next card shows in full with its buttons."""
    device = service.device()
    ctx = phone(browser, watch, tenant, device)
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        ready(page, "confirm")
        turn_on(page, tenant)
        first_session = tenant.store.sessions.get_session(session_hash_of(ctx), tenant.runtime.desk.now())
        assert signed_in_until(tenant) == first_session.expires_at
        [record] = tenant.store.push_subscriptions.list_subscriptions(tenant.workspace_id, tenant.person.id)

        def lapse() -> None:
            tenant.store.push_subscriptions.renew_subscription(tenant.workspace_id, tenant.person.id, record.id,
                                                               tenant.runtime.desk.now())

        lapse()  # a page that loads signed in says so again
        with page.expect_request("**/api/settings/push/renew"):
            page.reload()
        deadline = time.monotonic() + 10
        while signed_in_until(tenant) != first_session.expires_at and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        assert signed_in_until(tenant) == first_session.expires_at

        # The session ends (as a week passing ends it): the server's record of the device says so.
        tenant.store.sessions.delete_session(first_session.session_hash)
        lapse()
        (filed,) = file_cards(tenant, [("n1", "Pay Acme 1,250.00")])
        [pushed] = service.wait_for(1)
        assert pushed.problem is None
        assert pushed.message == {"signIn": True, "title": "A request is waiting for you",
                                  "body": "Sign in on this device to see it and answer.", "url": "/confirm"}
        text = pushed.plaintext.decode("utf-8")
        assert "Pay Acme" not in text and "Test agent" not in text and filed["confirmationId"] not in text

        cdp, registration = worker_registration(ctx, page, tenant.origin)
        [shown] = deliver(page, cdp, tenant.origin, registration, text)
        assert shown == {"title": "A request is waiting for you",
                         "body": "Sign in on this device to see it and answer.",
                         "tag": "sign-in", "data": {"open": "/confirm"}, "actions": []}
        page.goto(f"{tenant.origin}/settings")  # the tap: the page opens, and asks to sign in
        ctx.service_workers[0].evaluate("(data) => self.handleAction('', data)", shown["data"])
        page.wait_for_url(f"{tenant.origin}/confirm")
        ready(page, "signin")

        with page.expect_request("**/api/settings/push/renew") as renewal:
            sign_in(page, tenant)
        assert json.loads(renewal.value.post_data or "{}") == {"endpoint": device.endpoint}
        second_session = tenant.store.sessions.get_session(session_hash_of(ctx), tenant.runtime.desk.now())
        deadline = time.monotonic() + 10
        while signed_in_until(tenant) != second_session.expires_at and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        assert signed_in_until(tenant) == second_session.expires_at

        (again,) = file_cards(tenant, [("n2", "Send the report")])
        full = service.wait_for(2)[1]
        assert full.message["card"] == again["confirmationId"] and full.message["labels"] == {
            "confirm": "Confirm", "decline": "Decline"}
        page.evaluate("() => navigator.serviceWorker.ready.then((r) => r.getNotifications()).then((ns) => "
                      "ns.forEach((n) => n.close()))")
        [card_shown] = deliver(page, cdp, tenant.origin, registration, full.plaintext.decode("utf-8"))
        assert card_shown["title"] == full.message["title"] and card_shown["body"] == "Asked by Test agent"
        assert card_shown["actions"] == [["confirm", "Confirm"], ["decline", "Decline"]]
    finally:
        ctx.close()
    assert watch.errors == []


def test_a_page_reloaded_over_and_over_is_refused_its_renewals_and_says_nothing_of_it(live, tenant, browser, watch,
                                                                                      service, private):
    """Each load signed in says the device is signed in (POST /api/settings/push/renew). A session
    reloading past the limit is refused (429) — silently: the page loads as ever, with no error shown
    or logged, and the device stays signed in until the session ends."""
    device = service.device()
    ctx = phone(browser, watch, tenant, device)
    runtime = tenant.runtime
    thaw = scenes.frozen(runtime, (runtime.desk.now() // RENEW_WINDOW + 1) * RENEW_WINDOW + 5)  # one whole window
    try:
        page = ctx.new_page()
        sign_in(page, tenant)
        ready(page, "confirm")
        turn_on(page, tenant)
        session = tenant.store.sessions.get_session(session_hash_of(ctx), runtime.desk.now())
        renewals: list[int] = []
        page.on("response", lambda r: renewals.append(r.status) if r.url.endswith("/api/settings/push/renew") else None)
        for _ in range(RENEW_LIMIT + 2):
            with page.expect_response("**/api/settings/push/renew"):
                page.reload()
            ready(page, "settings")
        assert renewals == [204] * RENEW_LIMIT + [429, 429]
        expect(page.locator("[data-push-settings]")).to_be_visible()
        expect(page.locator("[role=alert]:visible, .error:visible")).to_have_count(0)  # (the hidden email notice aside)
        assert signed_in_until(tenant) == session.expires_at
    finally:
        thaw()
        ctx.close()
    assert watch.errors == [] and watch.dialogs == []
