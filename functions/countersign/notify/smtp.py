"""The SMTP sender: ``smtp://[user:password@]host[:port][?from=ADDRESS]`` or ``smtps://...``.

* ``smtps://`` connects over TLS (default port 465), certificate checked.
* ``smtp://`` with a user name upgrades with STARTTLS (certificate checked) before it logs in,
  and refuses to send the password over a connection that offers no STARTTLS.
* ``smtp://`` without a user name sends in the clear (default port 25): a local relay or a
  development mail catcher.
"""

from __future__ import annotations

import smtplib
import ssl
from email.utils import parseaddr
from urllib.parse import parse_qs, unquote, urlsplit

from .interface import DEFAULT_FROM_ADDRESS, Email, SendError
from .message import render

TIMEOUT = 10.0


class SmtpSender:
    def __init__(self, url: str, from_address: str | None = None, timeout: float = TIMEOUT):
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise ValueError(f"expected smtp://HOST[:PORT] or smtps://HOST[:PORT], got {parts.scheme}://...")
        self.ssl = parts.scheme == "smtps"
        self.host = parts.hostname
        try:
            self.port = parts.port or (465 if self.ssl else 25)
        except ValueError:
            raise ValueError(f"the SMTP port in {parts.scheme}://{parts.hostname}:... is not a number") from None
        self.user = unquote(parts.username) if parts.username else None
        self.password = unquote(parts.password) if parts.password else ""
        query_from = parse_qs(parts.query).get("from", [None])[0]
        self.from_address = from_address or query_from or DEFAULT_FROM_ADDRESS
        self.timeout = timeout

    def __repr__(self) -> str:  # never shows the password
        scheme = "smtps" if self.ssl else "smtp"
        user = f"{self.user}:***@" if self.user else ""
        return f"SmtpSender({scheme}://{user}{self.host}:{self.port})"

    def _connect(self) -> smtplib.SMTP:
        context = ssl.create_default_context()
        if self.ssl:
            return smtplib.SMTP_SSL(self.host, self.port, timeout=self.timeout, context=context)
        smtp = smtplib.SMTP(self.host, self.port, timeout=self.timeout)
        if self.user:
            smtp.ehlo()
            if not smtp.has_extn("starttls"):
                smtp.close()
                raise SendError(
                    f"{self.host}:{self.port} offers no STARTTLS; refusing to send the SMTP password in the "
                    "clear (use smtps:// or a server with STARTTLS)"
                )
            smtp.starttls(context=context)
            smtp.ehlo()
        return smtp

    def send(self, email: Email) -> None:
        data = render(email)
        sender = parseaddr(email.from_address)[1] or email.from_address
        where = f"{self.host}:{self.port}"
        try:
            smtp = self._connect()
            try:
                if self.user:
                    smtp.login(self.user, self.password)
                refused = smtp.sendmail(sender, [email.to], data)
            finally:
                try:
                    smtp.quit()
                except (smtplib.SMTPException, OSError):
                    smtp.close()
        except SendError:
            raise
        except smtplib.SMTPException as exc:
            raise SendError(f"SMTP {where} refused the email to {email.to!r}: {exc}") from None
        except OSError as exc:  # refused, unreachable, timed out, TLS failure
            raise SendError(f"cannot reach SMTP {where}: {exc}") from None
        if refused:
            raise SendError(f"SMTP {where} refused the recipient {email.to!r}")
