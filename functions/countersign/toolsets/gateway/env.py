"""What the gateway's actions need from the process: the sealer of credentials and the settings
(upstream timeout, private addresses, stdio), bound once when the runtime is built."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ...core.canonical import map_strings
from ...gate.actions import ActionError
from ...observability import hold_secret
from ...settings import Settings
from .config import Upstream
from .seal import Sealer, SealError

REDACTED = "[credential]"
CREDENTIAL_HEADER = re.compile(r"(?i)auth|key|token|secret|cookie|session|pass|signature|credential|bearer")


def token_like(part: str) -> bool:
    """Whether ``part`` reads as a token rather than as words: it has a digit or an underscore, or
    capitals after its first letter mixed with small letters (``sk_live_…``, ``AbC9xYz…``)."""
    return (any(c.isdigit() or c == "_" for c in part)
            or (any(c.isupper() for c in part[1:]) and any(c.islower() for c in part)))


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
        """Each credential value whole and, for ``Bearer sk-…``, each part of 8 characters or more,
        longest first. A header is a credential when its name says so (Authorization, X-Api-Key,
        Cookie…); any other header's value counts only where it reads as a token, not as words
        (``Accept: application/json`` and ``X-Env: production`` are not blanked wherever they occur)."""
        found = set()
        for name, value in self.headers.items():
            parts = {part for part in (value.strip(), *value.split()) if len(part) >= 8}
            found |= parts if CREDENTIAL_HEADER.search(name) else {p for p in parts if token_like(p)}
        return sorted(found, key=len, reverse=True)

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
