"""The docs role: a toolset's documents, and the writes an action's effect makes.

A toolset sees only :class:`DocReader`: it reads, and hands its writes to the gate, which commits
them with the card (:meth:`~.cards.CardStore.commit_card`). :class:`DocStore` adds the writes that
need no card. :class:`Doc` and the :data:`Write` kinds are its records; the checks below are made by
both stores before writing. The rules every role keeps are stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.canonical import canonical_bytes
from .errors import BadInput
from .standing_grants import StandingGrantWrite, check_grant_connection, check_standing_grant
from .workspaces import check_role, check_settings, check_workspace_name

MAX_DOC_WRITES = 90  # one transaction; DynamoDB allows 100 items and the card's own items need room


# -- records ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Doc:
    """A toolset's record (an account, a transaction, a campaign...) with its version.

    Toolsets store their model as docs grouped by ``kind``; every write names the version it
    read, so a change that raced another is refused instead of lost.
    """

    kind: str
    id: str
    data: dict[str, Any]
    version: int


@dataclass(frozen=True)
class DocWrite:
    """Put ``data`` at ``kind/id`` if the stored version is still ``expected_version``.

    ``expected_version=0`` means "must not exist yet"; ``data=None`` deletes.
    """

    kind: str
    id: str
    data: dict[str, Any] | None
    expected_version: int


@dataclass(frozen=True)
class SettingWrite:
    """Set the workspace setting ``name`` to ``value`` if it still reads ``expected`` (on/off
    settings take booleans, choice settings one of their
    :data:`~.workspaces.WORKSPACE_CHOICES`, list settings (:data:`~.workspaces.LIST_SETTINGS`) a
    tuple of rules, stored as a list, and rule text settings
    (:data:`~.workspaces.TEXT_SETTINGS`) their JSON text, checked by the setting's own check)."""

    name: str
    expected: bool | str | tuple[str, ...]
    value: bool | str | tuple[str, ...]

    def stored(self) -> bool | str | list[str]:
        """The value as the workspace's settings hold it (a list setting as a list)."""
        return list(self.value) if isinstance(self.value, tuple) else self.value


@dataclass(frozen=True)
class WorkspaceNameWrite:
    """Rename the workspace to ``name`` if it is still called ``expected``."""

    expected: str
    name: str


@dataclass(frozen=True)
class RoleWrite:
    """Give ``person_id`` the role ``role`` if their role is still ``expected``."""

    person_id: str
    expected: str
    role: str


Write = DocWrite | SettingWrite | WorkspaceNameWrite | RoleWrite | StandingGrantWrite
"""What an action's effect writes. Every write names what it expects to find, so a write that
raced another is refused (:class:`~countersign.store.errors.Conflict`), never lost. (A
:class:`~.standing_grants.StandingGrantWrite` expects its grant not to exist yet.)"""


# -- the role ---------------------------------------------------------------------------------------


class DocReader(abc.ABC):
    """What a toolset's plans and reads see: its workspace's documents.

    Ids are ordered by code point (SQLite's binary collation, DynamoDB's UTF-8 byte order), so a
    toolset can make an id whose order means something (a date first) and read a range of it.
    """

    @abc.abstractmethod
    def get_doc(self, workspace_id: str, kind: str, doc_id: str) -> Doc | None: ...

    @abc.abstractmethod
    def get_docs(self, workspace_id: str, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], Doc]:
        """Several docs in one read (``(kind, id)`` → doc; absent ones are left out)."""

    @abc.abstractmethod
    def list_docs(self, workspace_id: str, kind: str, prefix: str = "", *, start: str | None = None,
                  stop: str | None = None, limit: int | None = None, descending: bool = False) -> list[Doc]:
        """Docs of ``kind`` whose id starts with ``prefix`` and lies in ``[start, stop)``, ordered by
        id (``descending``: last first), at most ``limit`` of them. Only those docs are read."""


class DocStore(DocReader):
    @abc.abstractmethod
    def write_docs(self, workspace_id: str, writes: Iterable[Write]) -> None:
        """Apply every write or none: :class:`Conflict` naming the first write whose expectation
        failed (in its message, and as its ``kind`` and ``id`` attributes).

        At most :data:`MAX_DOC_WRITES` writes; each doc put stores ``expected_version + 1``. Used
        for effects that need no card (a call that runs at once), demo data and imports.
        """


# -- checks -----------------------------------------------------------------------------------------


def write_target(w: Write) -> tuple[str, str]:
    """The record a write touches, as (kind, id): a batch touches each record at most once."""
    if isinstance(w, DocWrite):
        return (w.kind, w.id)
    if isinstance(w, RoleWrite):
        return ("person", w.person_id)
    if isinstance(w, StandingGrantWrite):
        return ("standing_grant", w.grant.id)
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
            check_settings({w.name: w.stored()})
        elif isinstance(w, RoleWrite):
            check_role(w.role)
        elif isinstance(w, StandingGrantWrite):
            check_standing_grant(w.grant)
            check_grant_connection(w)
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
    if isinstance(w, StandingGrantWrite):
        return f"A standing grant with id {w.grant.id!r} exists already."
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
