"""The person's email settings over real HTTP: quiet hours (a start, an end and an IANA time zone,
checked; null turns them off) and "send me a test email" (rate limited; says exactly what
happened; the email itself word for word from the local outbox, no secret in it)."""

from __future__ import annotations

import email
import re
from datetime import datetime
from email import policy
from zoneinfo import ZoneInfo

import pytest

from countersign.store.suppressions import Suppression
from countersign.store.workspaces import QuietHours
from tests.api.pages import Page, outbox

pytestmark = pytest.mark.anyio

NIGHTS = {"start": "22:00", "end": "07:00", "zone": "Europe/Berlin"}
ON = ('"Email me when an agent asks" is on: when an agent asks you to confirm something, an email comes here '
      "(at most one every 15 minutes; requests that arrive in between are listed in the next one).")


def berlin(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%d %H:%M").replace(tzinfo=ZoneInfo("Europe/Berlin")).timestamp()


def test_emails(runtime, address: str) -> list[email.message.EmailMessage]:
    found = []
    folder = outbox(runtime)
    for path in sorted(folder.glob("*.eml")) if folder.is_dir() else []:
        message = email.message_from_bytes(path.read_bytes(), policy=policy.default)
        if message["To"] == address and message["Subject"] == "Test email from countersign":
            found.append(message)
    return found


test_emails.__test__ = False  # a helper, not a test


def stored(tenant):
    return tenant.store.workspaces.get_person(tenant.workspace_id, tenant.person.id)


def test_quiet_hours_are_set_shown_and_turned_off(clock, signed, tenant):
    clock.now = berlin("2026-01-15 23:00")
    answer = signed.patch("/api/settings/me", {"quiet_hours": NIGHTS})
    assert answer.status_code == 200, answer.text
    assert answer.json()["me"] == {"agent_requests_email": True, "quiet_hours": NIGHTS,
                                   "quiet_until": "2026-01-16T06:00:00Z", "email_interval": 900,
                                   "channels": {"email": True, "slack": True, "push": True}}
    assert stored(tenant).quiet_hours == QuietHours(**NIGHTS)
    clock.now = berlin("2026-01-16 12:00")
    assert signed.get("/api/settings").json()["me"]["quiet_until"] is None
    # the email setting alone leaves quiet hours as they are
    assert signed.patch("/api/settings/me", {"agent_requests_email": False}).json()["me"]["quiet_hours"] == NIGHTS
    off = signed.patch("/api/settings/me", {"quiet_hours": None})
    assert off.status_code == 200 and off.json()["me"]["quiet_hours"] is None
    assert stored(tenant).quiet_hours is None and stored(tenant).agent_requests_email is False


@pytest.mark.parametrize(("body", "field", "message"), [
    ({"quiet_hours": {**NIGHTS, "zone": "Mars/Olympus"}}, "quiet_hours.zone",
     "quiet_hours.zone: must be an IANA time zone name, such as Europe/Berlin or America/New_York."),
    ({"quiet_hours": {**NIGHTS, "zone": "CET+1"}}, "quiet_hours.zone", None),
    ({"quiet_hours": {**NIGHTS, "end": "22:00"}}, "quiet_hours.end",
     "quiet_hours.end: must differ from the start (quiet hours of no length are none)."),
    ({"quiet_hours": {**NIGHTS, "start": "25:00"}}, "quiet_hours.start", None),
    ({"quiet_hours": {**NIGHTS, "start": "7pm"}}, "quiet_hours.start", None),
    ({"quiet_hours": {"start": "22:00", "end": "07:00"}}, "quiet_hours.zone", None),
    ({"quiet_hours": {**NIGHTS, "sound": "off"}}, "quiet_hours.sound", None),
    ({"quiet_hours": "22:00-07:00"}, "quiet_hours", "quiet_hours: expected a JSON object."),
    ({}, "body", "body: name at least one of agent_requests_email, quiet_hours, channels."),
    ({"agent_requests_email": None}, "agent_requests_email", None),
])
def test_bad_quiet_hours_are_refused_and_nothing_written(signed, tenant, body, field, message):
    assert signed.patch("/api/settings/me", {"quiet_hours": NIGHTS}).status_code == 200
    answer = signed.patch("/api/settings/me", body)
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field
    assert answer.json()["error"]["code"] == "invalid"
    if message is not None:
        assert answer.json()["error"]["message"] == message
    assert stored(tenant).quiet_hours == QuietHours(**NIGHTS) and stored(tenant).agent_requests_email is True


def test_a_test_email_is_sent_word_for_word_and_says_so(clock, signed, tenant):
    runtime, address = tenant.runtime, tenant.person.email
    answer = signed.post("/api/settings/me/test-email")
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"outcome": "sent", "to": address,
                             "message": f"A test email is on its way to {address}. {ON}"}
    [message] = test_emails(runtime, address)
    text = message.get_body(("plain",)).get_content().replace("\r\n", "\n")
    page = f"{runtime.desk.settings.public_url}/confirm"
    assert text.rstrip("\n") == "\n".join([
        "Hello,",
        "",
        "This is the test email you asked for in Settings: countersign's emails reach you at this address.",
        "",
        ON,
        "",
        "The confirm page:",
        page,
        "",
        "-- ",
        'You receive this email because you pressed "Send me a test email" in Settings.',
    ])
    html = message.get_body(("html",)).get_content()
    assert re.findall(r'href="([^"]*)"', html) == [page]
    raw = message.as_string()
    for secret in (tenant.token, signed.csrf, signed.session_id):
        assert secret and secret not in raw


def test_a_test_email_in_quiet_hours_goes_anyway_and_says_what_waits(clock, signed, tenant):
    signed.patch("/api/settings/me", {"quiet_hours": NIGHTS, "agent_requests_email": False})
    clock.now = berlin("2026-01-15 23:00")
    answer = signed.post("/api/settings/me/test-email")
    assert answer.status_code == 200, answer.text
    said = ('"Email me when an agent asks" is off: no email comes when an agent asks. Turn it on in Settings to '
            "get them. Quiet hours: 22:00 to 07:00 (Europe/Berlin). Card emails wait until they end. They run now; "
            "a test email goes out anyway.")
    assert answer.json()["message"] == f"A test email is on its way to {tenant.person.email}. {said}"
    [message] = test_emails(tenant.runtime, tenant.person.email)
    assert "Quiet hours: 22:00 to 07:00 (Europe/Berlin)." in message.get_body(("plain",)).get_content()


def test_test_emails_are_rate_limited(clock, signed, tenant):
    for _ in range(3):
        assert signed.post("/api/settings/me/test-email").json()["outcome"] == "sent"
    clock.advance(60)
    refused = signed.post("/api/settings/me/test-email")
    assert refused.status_code == 429
    wait = int(refused.headers["Retry-After"])
    assert 0 < wait <= 900
    minutes = -(-wait // 60)
    assert refused.json()["error"] == {
        "code": "rate_limited",
        "message": "Nothing was sent: you can ask for 3 test emails every 15 minutes. "
                   f"Try again in {minutes} minute{'' if minutes == 1 else 's'}."}
    assert len(test_emails(tenant.runtime, tenant.person.email)) == 3
    clock.advance(wait)
    assert signed.post("/api/settings/me/test-email").json()["outcome"] == "sent"


def test_a_suppressed_address_gets_no_test_email_and_is_told_why(clock, signed, tenant):
    now = int(clock.now)
    tenant.store.suppressions.suppress_address(Suppression(tenant.person.email.lower(), "bounce", now))
    try:
        answer = signed.post("/api/settings/me/test-email")
    finally:
        tenant.store.suppressions.lift_suppression(tenant.person.email)
    assert answer.status_code == 200
    day = datetime.fromtimestamp(now, ZoneInfo("UTC")).strftime("%Y-%m-%d")
    assert answer.json() == {
        "outcome": "suppressed", "to": tenant.person.email,
        "message": f"Nothing was sent. Card emails to {tenant.person.email} stopped on {day}: the address did not "
                   "accept mail. Cards still wait here. Once the address takes mail again, ask whoever runs "
                   "countersign to send to it again."}
    assert test_emails(tenant.runtime, tenant.person.email) == []


def test_a_test_email_needs_a_session_and_its_csrf_token(live, signed, tenant):
    _, server = live
    anonymous = Page(server.origin)
    try:
        assert anonymous.post("/api/settings/me/test-email").status_code == 401
    finally:
        anonymous.close()
    forged = signed.post("/api/settings/me/test-email", csrf=None)
    assert forged.status_code == 403 and forged.json()["error"]["code"] == "csrf"
    assert test_emails(tenant.runtime, tenant.person.email) == []
