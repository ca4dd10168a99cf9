"""The local sender: one RFC 822 file per email in ``DATA/outbox/``, and one log line.

File names sort by the time they were written (``<ns since epoch>-<random>.eml``). Each file is
written under a hidden temporary name and renamed into place, so a reader never sees half an
email. The log line names the recipient, the subject and the file; never the body.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from pathlib import Path

from .interface import DEFAULT_FROM_ADDRESS, Email, SendError
from .message import render

log = logging.getLogger("countersign.notify")


class OutboxSender:
    def __init__(self, folder: str | os.PathLike[str], from_address: str = DEFAULT_FROM_ADDRESS):
        self.folder = Path(folder)
        self.from_address = from_address

    def send(self, email: Email) -> None:
        data = render(email)
        name = f"{time.time_ns():020d}-{secrets.token_hex(4)}.eml"
        tmp = self.folder / f".{name}.tmp"
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # emails hold sign-in links
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.folder / name)
        except OSError as exc:
            try:
                tmp.unlink(missing_ok=True)
            except OSError:
                pass
            raise SendError(f"cannot write to the outbox {str(self.folder)!r}: {exc.strerror or exc}") from None
        log.info("email to %s: %s (outbox/%s)", email.to, email.subject, name)

    def files(self) -> list[Path]:
        """Every email in the outbox, oldest first."""
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if p.suffix == ".eml" and not p.name.startswith("."))
