"""What is redacted from a log line: anything that looks like a bearer token, ticket, confirmation
code, sign-in token, session id or key, and every secret this process was told it holds in the
clear (an upstream's credential, once unsealed: a short API key looks like nothing above).

Pure text: :mod:`.filters` applies it to ``logging`` records, :mod:`countersign.platform.telemetry`
to Powertools' JSON lines.
"""

from __future__ import annotations

import re
import threading

REDACTED = "[redacted]"
_B64 = r"[A-Za-z0-9_\-]"
_SECRET_NAMES = (
    r"authorization|cookie|token|ticket|secret|password|passwd|session(?:_?id)?|csrf|"
    r"signature|state_?keys?|signing_?key|api_?key|private_?key"
)
_VALUE = r"(?!\[redacted\])(?!(?i:bearer|basic)\s)[^\s\"',;&{}\[\]\\]+"
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # "Bearer <token>" anywhere (headers, reprs, messages); Basic credentials after "authorization".
    (re.compile(r"(?i)\b(bearer)(\s+)(?!\[redacted\])[^\s\"',;]+"), r"\1\2" + REDACTED),
    (re.compile(r"(?i)(authorization\W{1,4}basic)(\s+)(?!\[redacted\])[^\s\"',;]+"), r"\1\2" + REDACTED),
    # A ticket: base64url payload "." base64url Ed25519 signature (86 characters).
    (re.compile(rf"{_B64}{{16,}}\.{_B64}{{40,}}"), REDACTED),
    # name=value / "name": "value" / name: value where the name says it is secret
    # (token=..., #token=..., ticket: ..., "csrfToken": "...", __Host-cs_session=...).
    (
        re.compile(rf"(?i)(?<![:/\w-])([\w-]*(?:{_SECRET_NAMES})[\w-]*)(\"?'?\s*[:=]\s*\"?'?){_VALUE}"),
        r"\1\2" + REDACTED,
    ),
    # A confirmation code (11 URL-safe characters) as a value (code=..., "code": "...") or in
    # prose ("code Ab3_xY9-kLm"); other "code" values (status codes, error codes) stay.
    (re.compile(rf"(?i)(\b\w*codes?\b\"?'?\s*[:=]?\s*\"?'?){_B64}{{11}}(?![A-Za-z0-9_\-])"), r"\1" + REDACTED),
)
# Anything else that looks like a key or token: 32+ URL-safe characters, not all hex (digests,
# key ids, fingerprints, X-Ray ids and UUIDs are hex and stay readable).
_LONG = re.compile(rf"(?<![A-Za-z0-9_\-]){_B64}{{32,}}(?![A-Za-z0-9_\-])")
_HEXISH = re.compile(r"[0-9a-fA-F\-]+")


def _long(match: re.Match[str]) -> str:
    text = match.group(0)
    return text if _HEXISH.fullmatch(text) else REDACTED


# Secrets this process holds in the clear whatever their shape (an upstream's credential, once
# unsealed: a short API key looks like nothing above), redacted from every line by value.
# A plain substring scan, not a regular expression: a new value costs a sort of at most MAX_HELD
# strings, and a line with none of them costs MAX_HELD ``in`` tests in C.
_HELD: dict[str, None] = {}  # in order of last use: the least recently held is dropped first
_HELD_LOCK = threading.Lock()
_held_longest_first: tuple[str, ...] = ()
MAX_HELD = 256  # the most recently used; an older one is dropped (and has mostly left the process)
MIN_HELD = 8  # shorter parts would redact ordinary words


def hold_secret(*values: str) -> None:
    """From now on, redact each of ``values`` (8 characters or more) wherever it appears in a log
    line of this process, whatever its shape: an upstream that echoes its credential must not put
    it in a library's DEBUG line either. Holding a value again marks it recently used."""
    global _held_longest_first
    values = tuple(v for v in values if len(v) >= MIN_HELD)
    if not values:
        return
    with _HELD_LOCK:
        changed = False
        for value in values:
            if value in _HELD:
                del _HELD[value]  # moved to the end: the most recently used
            else:
                changed = True
            _HELD[value] = None
        while len(_HELD) > MAX_HELD:
            del _HELD[next(iter(_HELD))]
        if changed:
            _held_longest_first = tuple(sorted(_HELD, key=len, reverse=True))


def redact(text: str) -> str:
    """``text`` with everything that looks like a bearer token, ticket, code or key replaced, and
    every secret this process was told it holds (:func:`hold_secret`)."""
    if not text:
        return text
    for value in _held_longest_first:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return _LONG.sub(_long, text)
