"""What the gateway's actions need from the process: the sealer of credentials and the settings
(upstream timeout, private addresses, stdio), bound once when the runtime is built."""

from __future__ import annotations

import base64
import binascii
import contextlib
import re
from dataclasses import dataclass
from typing import Any

from ...core.canonical import map_strings
from ...toolkit import MIN_HELD, ActionError, Settings, hold_secret
from .config import Upstream
from .seal import Sealer, SealError

REDACTED = "[credential]"


def credential_parts(value: str) -> set[str]:
    """``value`` whole, its words, the values of ``name=value`` pairs in it, and a Basic
    credential's ``user:password`` and password."""
    parts = {value.strip(), *value.split()}
    for word in list(parts):
        for pair in re.split(r"[;,]", word):
            parts.add(pair.strip())
            parts.add(pair.partition("=")[2].strip())
    words = value.split()
    if len(words) == 2 and words[0].lower() == "basic":
        with contextlib.suppress(binascii.Error, UnicodeDecodeError):
            decoded = base64.b64decode(words[1], validate=True).decode("utf-8")
            parts |= {decoded, decoded.partition(":")[2]}
    return parts


# Standard headers whose values are never secret (content negotiation, the client's name). Every
# other header an upstream is given is sealed as a credential and treated as one.
PLAIN_HEADERS = frozenset({"accept", "accept-encoding", "accept-language", "content-type", "user-agent",
                           "mcp-protocol-version"})


@dataclass(frozen=True)
class Link:
    """Where an upstream is and how to reach it (credentials unsealed, in memory only)."""

    name: str
    url: str | None
    command: tuple[str, ...]
    headers: dict[str, str]
    timeout: float

    def __repr__(self) -> str:  # never the headers
        return f"Link({self.name!r}, {self.url or ' '.join(self.command)!r})"

    def secrets(self) -> list[str]:
        """Each credential value whole and each part of 8 characters or more (``Bearer sk-…``'s key,
        a cookie's values, a Basic credential decoded and its password), longest first. Every
        header is a credential (it was given to be sealed) except the standard ones in
        :data:`PLAIN_HEADERS`: ``Accept: application/json`` sent with a key is not blanked from
        every answer and log line."""
        found = set()
        for name, value in self.headers.items():
            if name.strip().lower() not in PLAIN_HEADERS:
                found.update(credential_parts(value))
        return sorted((p for p in found if len(p) >= MIN_HELD), key=len, reverse=True)

    def redact(self, value: Any) -> Any:
        """``value`` (an upstream's answer, plain JSON, or its words for a failure) with every
        credential of this link replaced by ``[credential]``: an upstream that echoes the request's
        headers back must not hand them to the agent, the card or the page. A header's value is
        looked for whole and, for ``Bearer sk-…``, each part of 8 characters or more."""
        secrets = self.secrets()
        if not secrets:
            return value

        def scrub(text: str) -> str:
            for secret in secrets:
                if secret in text:
                    text = text.replace(secret, REDACTED)
            return text

        return map_strings(value, scrub)


@dataclass(frozen=True)
class GatewayEnv:
    sealer: Sealer
    settings: Settings

    def link(self, upstream: Upstream) -> Link:
        """How to reach ``upstream`` now, its credential unsealed (in memory only)."""
        if upstream.command and not self.settings.upstream_stdio:
            raise ActionError(f"{upstream.name} is a stdio command, and this server runs none "
                              "(COUNTERSIGN_UPSTREAM_STDIO is off; on Lambda only HTTP upstreams run).")
        headers: dict[str, str] = {}
        if upstream.sealed:
            try:
                headers = self.sealer.unseal(upstream.workspace_id, upstream.name, upstream.sealed)
            except SealError as exc:
                raise ActionError(f"{upstream.name}: {exc}; add the upstream again with its credential.") from None
        link = Link(upstream.name, upstream.url, upstream.command, headers, float(self.settings.upstream_timeout))
        hold_secret(*link.secrets())  # and out of every log line of this process (the MCP SDK's DEBUG too)
        return link
