"""Checks both stores make before writing anything: bad input raises :class:`BadInput`."""

from __future__ import annotations

import unicodedata
from typing import Any

from ..core.canonical import canonical_bytes
from .errors import BadInput
from .interface import MAX_DOC_WRITES
from .records import (
    DEFAULT_WORKSPACE_SETTINGS,
    MAX_ARGUMENTS_BYTES,
    ROLES,
    DocWrite,
    Person,
    RoleWrite,
    SettingWrite,
    Write,
)

PERSON_CHANGES = {"role": str, "name": str, "agent_requests_email": bool}
MAX_WORKSPACE_NAME = 100
MAX_PERSON_NAME = 100


def email_key(email: str) -> str:
    """Emails are unique and looked up case-insensitively."""
    return email.lower()


def check_role(role: Any) -> None:
    if role not in ROLES:
        raise BadInput("role", f"unknown role {role!r}; expected one of {', '.join(ROLES)}.")


def check_workspace_name(name: Any) -> str:
    """The name as stored: stripped, 1 to :data:`MAX_WORKSPACE_NAME` characters, one line (it heads
    confirm pages and emails)."""
    if not isinstance(name, str):
        raise BadInput("name", "must be a string.")
    name = name.strip()
    if not name:
        raise BadInput("name", "a workspace needs a name; it must not be empty.")
    if len(name) > MAX_WORKSPACE_NAME:
        raise BadInput("name", f"{len(name)} characters; a workspace name has at most {MAX_WORKSPACE_NAME}.")
    if not _one_line(name):
        raise BadInput("name", "a workspace name is one line, without tabs, line breaks, control characters or "
                               "formatting characters (such as right-to-left overrides).")
    return name


def check_person_name(name: Any) -> None:
    """A member's name (it greets them in emails and names them on the page): at most
    :data:`MAX_PERSON_NAME` characters on one line; empty is allowed (no name given)."""
    if not isinstance(name, str):
        raise BadInput("name", "must be a string.")
    if len(name) > MAX_PERSON_NAME:
        raise BadInput("name", f"{len(name)} characters; a member's name has at most {MAX_PERSON_NAME}.")
    if not _one_line(name) or name != name.strip():
        raise BadInput("name", "a member's name is one line, without tabs, line breaks, control or formatting "
                               "characters (such as right-to-left overrides) or spaces around it.")


def check_new_person(person: Person, workspace_id: str | None = None) -> None:
    """A person about to be created (``workspace_id``: the new workspace it is to be the owner of)."""
    check_role(person.role)
    check_person_name(person.name)
    if workspace_id is not None and person.workspace_id != workspace_id:
        raise BadInput("owner", "the owner must be a person of the workspace being created.")


def _one_line(text: str) -> bool:
    """No control characters or line breaks, and no formatting characters (bidi overrides and
    isolates, zero-width spaces: a name another reader would see rearranged or other than it is),
    but for the joiners emoji and some scripts need."""
    return not any(unicodedata.category(c) in ("Cc", "Zl", "Zp", "Cf") and c not in "\u200c\u200d" for c in text)


def check_settings(changes: dict[str, Any]) -> None:
    from .records import WORKSPACE_CHOICES

    for name, value in changes.items():
        if name in WORKSPACE_CHOICES:
            if value not in WORKSPACE_CHOICES[name] or not isinstance(value, str):
                raise BadInput(name, f"must be one of {', '.join(WORKSPACE_CHOICES[name])}.")
            continue
        if name not in DEFAULT_WORKSPACE_SETTINGS:
            raise BadInput(name, "is not a workspace setting.")
        if not isinstance(value, bool):
            raise BadInput(name, "must be true or false.")


def check_person_changes(changes: dict[str, Any]) -> None:
    for name, value in changes.items():
        if name not in PERSON_CHANGES:
            raise BadInput(name, "cannot be changed; only role, name and agent_requests_email can.")
        if not isinstance(value, PERSON_CHANGES[name]):
            raise BadInput(name, f"must be a {PERSON_CHANGES[name].__name__}.")
    if "role" in changes:
        check_role(changes["role"])
    if "name" in changes:
        check_person_name(changes["name"])


def check_arguments(arguments: Any) -> None:
    try:
        size = len(canonical_bytes(arguments))
    except (TypeError, ValueError) as exc:
        raise BadInput("arguments", "must be plain JSON (objects, arrays, strings, numbers, booleans, null).") from exc
    if size > MAX_ARGUMENTS_BYTES:
        raise BadInput("arguments", f"{size} bytes as canonical JSON; the limit is {MAX_ARGUMENTS_BYTES} (64 KiB).")


def write_target(w: Write) -> tuple[str, str]:
    """The record a write touches, as (kind, id): a batch touches each record at most once."""
    if isinstance(w, DocWrite):
        return (w.kind, w.id)
    if isinstance(w, RoleWrite):
        return ("person", w.person_id)
    return ("workspace", "")


def check_doc_writes(writes: list[Write]) -> None:
    if len(writes) > MAX_DOC_WRITES:
        raise BadInput("writes", f"{len(writes)} writes in one batch; the limit is {MAX_DOC_WRITES}.")
    if len({write_target(w) for w in writes}) != len(writes):
        raise BadInput("writes", "a batch names the same record twice.")
    for w in writes:
        if isinstance(w, DocWrite):
            if not (isinstance(w.kind, str) and isinstance(w.id, str) and storable_doc_key(w.kind, w.id)):
                raise BadInput("writes", f"a doc's kind is 1 to {MAX_DOC_KIND} characters and its id 1 to "
                                         f"{MAX_DOC_ID_BYTES} bytes of text; not {w.kind!r} {str(w.id)[:40]!r}.")
            if w.data is not None:
                try:
                    canonical_bytes(w.data)
                except (TypeError, ValueError) as exc:
                    raise BadInput("writes", f"the data of {w.kind} {w.id!r} is not plain JSON.") from exc
        elif isinstance(w, SettingWrite):
            check_settings({w.name: w.value})
        elif isinstance(w, RoleWrite):
            check_role(w.role)
        else:
            check_workspace_name(w.name)


def moved(w: Write) -> str:
    """The sentence of a :class:`Conflict` for a write whose expectation failed."""
    if isinstance(w, DocWrite):
        return f"The {w.kind} {w.id!r} changed since it was read (expected version {w.expected_version})."
    if isinstance(w, SettingWrite):
        return f"The workspace setting {w.name} changed since it was read (expected {w.expected})."
    if isinstance(w, RoleWrite):
        return f"The role of person {w.person_id!r} changed since it was read (expected {w.expected})."
    return f"The workspace name changed since it was read (expected {w.expected!r})."


MAX_DOC_READS = 100  # keys of one get_docs call (one DynamoDB BatchGetItem)


def _after_prefix(prefix: str) -> str | None:
    """The smallest id above every id that starts with ``prefix`` (None: no bound)."""
    for cut in range(len(prefix), 0, -1):
        code = ord(prefix[cut - 1]) + 1
        if code == 0xD800:  # surrogates are not characters: skip them
            code = 0xE000
        if code <= 0x10FFFF:
            return prefix[: cut - 1] + chr(code)
    return None


def id_range(prefix: str, start: str | None, stop: str | None, limit: int | None) -> tuple[str, str | None]:
    """``list_docs``'s bounds as one half-open range ``[low, high)`` of ids (``high`` None: open),
    after checking them: :class:`BadInput` for a bound that is not text or a bad limit."""
    if not isinstance(prefix, str):
        raise BadInput("prefix", "must be text.")
    for name, value in (("start", start), ("stop", stop)):
        if value is not None and not isinstance(value, str):
            raise BadInput(name, "must be text.")
    if limit is not None and (type(limit) is not int or limit < 1):
        raise BadInput("limit", "must be a positive whole number.")
    low = max(prefix, start or "")
    highs = [h for h in (_after_prefix(prefix) if prefix else None, stop) if h is not None]
    return low, min(highs) if highs else None


MAX_DOC_ID_BYTES = 1000  # DynamoDB's sort key holds 1,024 bytes
MAX_DOC_KIND = 100


def storable_doc_key(kind: str, doc_id: str) -> bool:
    """Whether a doc could be stored as (``kind``, ``doc_id``) on both stores: a kind of 1 to
    :data:`MAX_DOC_KIND` characters, an id of 1 to :data:`MAX_DOC_ID_BYTES` UTF-8 bytes. A read of
    any other key finds nothing; a write of one is refused (:func:`check_doc_writes`)."""
    return 0 < len(kind) <= MAX_DOC_KIND and 0 < len(doc_id) and len(doc_id.encode("utf-8")) <= MAX_DOC_ID_BYTES


def check_doc_keys(keys: list[tuple[str, str]]) -> None:
    if len(keys) > MAX_DOC_READS:
        raise BadInput("keys", f"{len(keys)} docs; get_docs reads at most {MAX_DOC_READS} at once.")
    for key in keys:
        if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(k, str) for k in key)):
            raise BadInput("keys", "each key is a (kind, id) pair of text.")


def check_suppression(suppression: Any) -> None:
    from .records import SUPPRESSION_REASONS

    if suppression.reason not in SUPPRESSION_REASONS:
        raise BadInput("reason", f"unknown reason {suppression.reason!r}; expected one of "
                                 f"{', '.join(SUPPRESSION_REASONS)}.")
    email = suppression.email
    if not isinstance(email, str) or "@" not in email or email != email_key(email) or len(email) > 320:
        raise BadInput("email", "expected a lower-cased email address of at most 320 characters.")
