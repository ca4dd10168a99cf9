"""Each sender on its own: what it delivers, how it fails, what it logs."""

from __future__ import annotations

import logging
import os
import stat

import pytest

from countersign.notify import Email, OutboxSender, SendError, SesSender, SmtpSender

from ._helpers import parts
from .conftest import SES_FROM, free_port, parse, ses_sent

BODY_MARKER = "BODY-MARKER-3c1d"


def an_email(to="pat@example.com", from_address="countersign@localhost") -> Email:
    return Email(
        to=to,
        subject="2 requests wait for your confirmation",
        text=f"plain {BODY_MARKER} Café",
        html=f"<p>html {BODY_MARKER} Café</p>",
        from_address=from_address,
    )


# -- outbox --------------------------------------------------------------------------------------


def test_outbox_writes_one_rfc822_file_per_email(tmp_path, caplog):
    outbox = OutboxSender(tmp_path / "data" / "outbox")
    caplog.set_level(logging.INFO, logger="countersign.notify")
    for i in range(3):
        outbox.send(an_email(to=f"p{i}@example.com"))
    files = outbox.files()
    assert [parse(f.read_bytes())["To"] for f in files] == ["p0@example.com", "p1@example.com", "p2@example.com"]
    assert sorted(os.listdir(outbox.folder)) == [f.name for f in files]  # nothing half-written left behind
    assert all(f.suffix == ".eml" for f in files)
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    text, html = parts(parse(files[0].read_bytes()))
    assert f"plain {BODY_MARKER} Café" in text and f"<p>html {BODY_MARKER} Café</p>" in html
    msg = parse(files[0].read_bytes())
    assert msg["Message-ID"] and msg["Date"]

    lines = [r.getMessage() for r in caplog.records if r.name == "countersign.notify"]
    assert lines[0] == f"email to p0@example.com: 2 requests wait for your confirmation (outbox/{files[0].name})"
    assert all(BODY_MARKER not in line for line in lines)


def test_outbox_failure_is_a_send_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(SendError, match="outbox"):
        OutboxSender(blocker / "outbox").send(an_email())


# -- SMTP ----------------------------------------------------------------------------------------


def test_smtp_delivers_both_parts_to_a_local_server(smtp_server):
    sink, port = smtp_server
    SmtpSender(f"smtp://127.0.0.1:{port}?from=alerts%40example.org").send(an_email(from_address="alerts@example.org"))
    ((mail_from, rcpt, raw),) = sink.received
    assert mail_from == "alerts@example.org" and rcpt == ["pat@example.com"]
    text, html = parts(parse(raw))
    assert BODY_MARKER in text and BODY_MARKER in html


def test_smtp_url_parsing():
    s = SmtpSender("smtps://me%40example.com:p%3Ass@mail.example.com?from=x%40example.com")
    assert (s.ssl, s.host, s.port, s.user, s.password, s.from_address) == (
        True, "mail.example.com", 465, "me@example.com", "p:ss", "x@example.com"
    )
    assert "p:ss" not in repr(s)
    plain = SmtpSender("smtp://relay")
    assert (plain.ssl, plain.port, plain.user, plain.from_address) == (False, 25, None, "countersign@localhost")
    with pytest.raises(ValueError):
        SmtpSender("http://relay")


def test_smtp_closed_port_is_a_send_error():
    with pytest.raises(SendError, match="cannot reach SMTP"):
        SmtpSender(f"smtp://127.0.0.1:{free_port()}", timeout=2).send(an_email())


def test_smtp_never_sends_a_password_without_tls(smtp_server):
    sink, port = smtp_server
    with pytest.raises(SendError, match="STARTTLS"):
        SmtpSender(f"smtp://user:secret@127.0.0.1:{port}", timeout=2).send(an_email())
    assert sink.received == []


def test_smtps_to_a_plain_server_is_a_send_error(smtp_server):
    sink, port = smtp_server
    with pytest.raises(SendError):
        SmtpSender(f"smtps://127.0.0.1:{port}", timeout=2).send(an_email())
    assert sink.received == []


# -- SES (moto) ----------------------------------------------------------------------------------


def test_ses_sends_raw_mime_with_both_parts(ses_client):
    SesSender(SES_FROM, client=ses_client).send(an_email(from_address=SES_FROM))
    (sent,) = ses_sent()
    assert sent.source == SES_FROM
    assert "pat@example.com" in sent.destinations
    text, html = parts(parse(sent.raw_data))
    assert BODY_MARKER in text and BODY_MARKER in html


def test_ses_unverified_sender_is_a_send_error(ses_client):
    with pytest.raises(SendError, match="MessageRejected"):
        SesSender("someone@unverified.test", client=ses_client).send(an_email(from_address="someone@unverified.test"))
    assert ses_sent() == []


def test_ses_needs_an_address():
    with pytest.raises(ValueError):
        SesSender("not-an-address")
