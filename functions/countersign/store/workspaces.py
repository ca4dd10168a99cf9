"""The workspaces role: workspaces, their members (persons) and their settings.

:class:`WorkspaceStore` is the interface both stores implement; :class:`Workspace` and
:class:`Person` are its records; the ``check_*`` functions are the checks both stores make before
writing (bad input raises :class:`~.errors.BadInput` and writes nothing).

Rules every role of the store keeps (the conformance suite in ``tests/store`` checks them):

* Times are integer epoch seconds passed in by the caller (``now``): stores never read a clock,
  so expiry is testable and identical on both stores.
* Expiry is applied on every read (a pending card past ``expires_at`` reads as ``expired``; an
  expired token, session, code or nonce reads as absent) and inside every transition's condition.
* Every transition is one conditional write transaction. Of any number of simultaneous callers
  exactly one wins; the others get a :class:`~countersign.core.card_states.Refusal`.
* Ids of one workspace are not found from another: the error is the same as for an unknown id.
* Bad input (oversized arguments, unknown role...) raises :class:`~.errors.BadInput` and writes nothing.
"""

from __future__ import annotations

import abc
import functools
import json
import re
import unicodedata
import zoneinfo
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core import lifetimes
from .errors import BadInput

ROLES = ("owner", "admin", "approver", "member")
MANAGERS = ("owner", "admin")  # the roles that run the workspace: its settings, members, upstreams

DEFAULT_WORKSPACE_SETTINGS = {
    "ask_before_drafting": True,
    "ask_before_approvals": True,
    "confirm_in_client": True,
}

# Settings with a choice of values rather than on/off, and their values; the first is the default.
WORKSPACE_CHOICES: dict[str, tuple[str, ...]] = {
    # When Confirm needs the person's passkey (countersign.gate.passkey_policy): never, for cards that
    # spend, send, grant or cannot be undone, or for every card. Changed only through a held request.
    "passkey_policy": ("never", "risky", "every"),
}
# Settings holding a list of rules; their default is none. ``standing_grants_never``: what no
# standing grant may cover (countersign.gate.standing_grants), each rule one of ``tool:<name>``,
# ``class:<always|client|setting|when>``, ``risky`` (spends, sends, grants or cannot be undone) or
# ``over:<amount>`` (an amount over it, in the tool's own unit). Changed by the owner only.
LIST_SETTINGS: dict[str, re.Pattern[str]] = {
    "standing_grants_never": re.compile(
        r"tool:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|class:(always|client|setting|when)|risky|over:\d{1,12}(\.\d{1,3})?"),
}
MAX_LIST_SETTING = 50
MAX_RULES_TEXT = 16 * 1024


def _check_rule_list(value: Any) -> None:
    """A document of rules whose words the gate checks: the store checks its shape (a list of objects)."""
    if not isinstance(value, str) or len(value) > MAX_RULES_TEXT:
        raise ValueError(f"must be JSON text of at most {MAX_RULES_TEXT} bytes.")
    try:
        parsed = json.loads(value)
    except ValueError:
        raise ValueError("must be JSON text (a list of rules).") from None
    if not isinstance(parsed, list) or not all(isinstance(rule, dict) for rule in parsed):
        raise ValueError("must be a list of rules, each an object.")


@dataclass(frozen=True)
class TextSetting:
    """A setting holding rules as JSON text, so that a held change can expect the text it read (a
    SettingWrite of str): ``check`` raises ValueError with the sentence of what is wrong with a
    value; ``default`` is what the setting reads before it is written (no rules)."""

    check: Callable[[Any], None]
    default: str


# The settings holding rules as JSON text. Each is changed only through a held request an owner
# confirms. ``card_lifetimes``: how long cards wait, their reminders and what a lapse means, per
# class (countersign.core.lifetimes; the store keeps only its canonical text). ``quorum_rules``: how
# many of whom must approve (countersign.gate.quorum_rules); ``escalation_rules``: who is added to a
# card left unanswered (countersign.gate.escalation): the gate checks what each rule says, the
# store their shape.
TEXT_SETTINGS: dict[str, TextSetting] = {
    lifetimes.SETTING: TextSetting(lifetimes.check_text, ""),
    "quorum_rules": TextSetting(_check_rule_list, "[]"),
    "escalation_rules": TextSetting(_check_rule_list, "[]"),
}
SETTING_DEFAULTS: dict[str, Any] = {**DEFAULT_WORKSPACE_SETTINGS, **{k: v[0] for k, v in WORKSPACE_CHOICES.items()},
                                    **{k: () for k in LIST_SETTINGS},
                                    **{k: text.default for k, text in TEXT_SETTINGS.items()}}

# quiet_hours: a QuietHours or None, checked by check_quiet_hours; channels_off: checked by check_channels_off
PERSON_CHANGES: dict[str, type] = {"role": str, "name": str, "agent_requests_email": bool, "quiet_hours": object,
                                   "channels_off": tuple}
# The channels that tell a person a card waits, each on or off per person (docs/channels.md): email
# is agent_requests_email; the others are on unless named in Person.channels_off.
CHANNELS = ("email", "slack", "push")
SWITCHABLE_CHANNELS = ("slack", "push")
MAX_WORKSPACE_NAME = 100
MAX_PERSON_NAME = 100


# -- records ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Workspace:
    id: str
    name: str
    settings: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_WORKSPACE_SETTINGS))
    created_at: int = 0
    # Whether it has a webhook endpoint, as the store read it with the workspace (DynamoDB counts
    # them on the workspace's item, so a card's filing needs no read of its own to know whether its
    # events are owed); None where a store does not say (SQLite checks inside each card's transaction).
    webhooks: bool | None = field(default=None, compare=False)

    def setting(self, name: str) -> Any:
        return self.settings.get(name, SETTING_DEFAULTS.get(name))


@dataclass(frozen=True)
class QuietHours:
    """When card emails wait for the person: from ``start`` to ``end`` (``"HH:MM"``, 24-hour, their
    local time in ``zone``, an IANA time zone name). An ``end`` before the ``start`` runs past
    midnight (22:00 to 07:00). :func:`check_quiet_hours` checks one before it is stored."""

    start: str
    end: str
    zone: str

    def as_dict(self) -> dict[str, str]:
        return {"start": self.start, "end": self.end, "zone": self.zone}


@dataclass(frozen=True)
class Person:
    id: str
    workspace_id: str
    email: str
    role: str = "member"
    name: str = ""
    agent_requests_email: bool = True
    created_at: int = 0
    quiet_hours: QuietHours | None = None  # when card emails wait (None: never)
    channels_off: tuple[str, ...] = ()  # of SWITCHABLE_CHANNELS: those that do not reach this person

    def reached_by(self, channel: str) -> bool:
        """Whether ``channel`` (one of :data:`CHANNELS`) tells this person of their cards: the
        person's own choice, which every notifier reads before it sends."""
        if channel == "email":
            return self.agent_requests_email
        return channel in SWITCHABLE_CHANNELS and channel not in self.channels_off


Member = tuple[Workspace, Person]


# -- the role ---------------------------------------------------------------------------------------


class WorkspaceStore(abc.ABC):
    """Workspaces and the persons who are their members (emails unique across the service)."""

    # -- workspaces -------------------------------------------------------------------------------

    @abc.abstractmethod
    def create_workspace(self, workspace: Workspace, owner: Person | None = None) -> None:
        """Create, with its first member ``owner`` (a person of this workspace) in the same
        transaction: :class:`Conflict` if the id exists or the owner's email already belongs to a
        member (as :meth:`create_person`), and then nothing is written."""

    @abc.abstractmethod
    def get_workspace(self, workspace_id: str) -> Workspace:
        """:class:`NotFound` if unknown."""

    @abc.abstractmethod
    def rename_workspace(self, workspace_id: str, name: str) -> Workspace:
        """Set the workspace's name and return the workspace as written.

        The name is stripped; empty or over 100 characters raises :class:`BadInput` (field
        ``name``) and writes nothing. :class:`NotFound` (as :meth:`get_workspace`) if unknown.
        One conditional write; settings and every other field are left as they are.
        """

    @abc.abstractmethod
    def update_workspace_settings(self, workspace_id: str, changes: dict[str, Any]) -> Workspace:
        """Merge ``changes`` into the settings (only known setting names, boolean values)."""

    # -- persons ----------------------------------------------------------------------------------

    @abc.abstractmethod
    def create_person(self, person: Person) -> None:
        """Create; emails are unique across the service (case-insensitive): :class:`Conflict`."""

    @abc.abstractmethod
    def get_person(self, workspace_id: str, person_id: str) -> Person:
        """:class:`NotFound` if unknown or in another workspace."""

    def get_member(self, workspace_id: str, person_id: str) -> Member:
        """The workspace and one of its persons, in one read where the store can (every request's
        principal needs both). :class:`NotFound` if either is unknown."""
        return self.get_workspace(workspace_id), self.get_person(workspace_id, person_id)

    @abc.abstractmethod
    def get_person_by_email(self, email: str) -> Person | None:
        """Case-insensitive lookup."""

    @abc.abstractmethod
    def list_persons(self, workspace_id: str) -> list[Person]:
        """Every member, ordered by creation."""

    @abc.abstractmethod
    def update_person(self, workspace_id: str, person_id: str, **changes: Any) -> Person:
        """Change ``role``, ``name``, ``agent_requests_email``, ``quiet_hours`` (a
        :class:`QuietHours`, or None for none) or ``channels_off`` (a tuple of
        :data:`SWITCHABLE_CHANNELS`)."""

    @abc.abstractmethod
    def remove_person(self, workspace_id: str, person_id: str, expected_role: str) -> Person:
        """Delete the person and free their email, in one transaction, if their role still reads
        ``expected_role`` (:class:`Conflict` otherwise: a role changed since it was read);
        :class:`NotFound` if unknown. Their records stay (connections, sessions, passkeys, cards,
        audit), but none acts for them again: every credential resolves its member on every
        request (:class:`~.callers.CallerReads`). Returns the person as they were."""


# -- checks -----------------------------------------------------------------------------------------


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
    if person.quiet_hours is not None:
        check_quiet_hours(person.quiet_hours)
    check_channels_off(person.channels_off)
    if workspace_id is not None and person.workspace_id != workspace_id:
        raise BadInput("owner", "the owner must be a person of the workspace being created.")


def _one_line(text: str) -> bool:
    """No control characters or line breaks, and no formatting characters (bidi overrides and
    isolates, zero-width spaces: a name another reader would see rearranged or other than it is),
    but for the joiners emoji and some scripts need."""
    return not any(unicodedata.category(c) in ("Cc", "Zl", "Zp", "Cf") and c not in "\u200c\u200d" for c in text)


def check_settings(changes: dict[str, Any]) -> None:
    for name, value in changes.items():
        if name in WORKSPACE_CHOICES:
            if value not in WORKSPACE_CHOICES[name] or not isinstance(value, str):
                raise BadInput(name, f"must be one of {', '.join(WORKSPACE_CHOICES[name])}.")
            continue
        if name in LIST_SETTINGS:
            rule = LIST_SETTINGS[name]
            if not isinstance(value, list) or len(value) > MAX_LIST_SETTING:
                raise BadInput(name, f"must be a list of at most {MAX_LIST_SETTING} rules.")
            for item in value:
                if not isinstance(item, str) or not rule.fullmatch(item):
                    raise BadInput(name, f"{str(item)[:60]!r} is not a rule: each is tool:<name>, class:<always, "
                                         "client, setting or when>, risky, or over:<amount>.")
            continue
        if name in TEXT_SETTINGS:
            try:
                TEXT_SETTINGS[name].check(value)
            except ValueError as exc:
                raise BadInput(name, str(exc)) from None
            continue
        if name not in DEFAULT_WORKSPACE_SETTINGS:
            raise BadInput(name, "is not a workspace setting.")
        if not isinstance(value, bool):
            raise BadInput(name, "must be true or false.")


def check_person_changes(changes: dict[str, Any]) -> None:
    for name, value in changes.items():
        if name not in PERSON_CHANGES:
            raise BadInput(name, "cannot be changed; only role, name, agent_requests_email, quiet_hours and "
                                 "channels_off can.")
        if name == "quiet_hours":
            if value is not None:
                check_quiet_hours(value)
            continue
        if name == "channels_off":
            check_channels_off(value)
            continue
        if not isinstance(value, PERSON_CHANGES[name]):
            raise BadInput(name, f"must be a {PERSON_CHANGES[name].__name__}.")
    if "role" in changes:
        check_role(changes["role"])
    if "name" in changes:
        check_person_name(changes["name"])


# -- quiet hours ------------------------------------------------------------------------------------

_CLOCK_TIME = re.compile(r"^([01][0-9]|2[0-3]):[0-5][0-9]$")
MAX_ZONE_NAME = 64


@functools.cache
def known_time_zones() -> frozenset[str]:
    """The IANA time zone names this machine knows (read once)."""
    return frozenset(zoneinfo.available_timezones())


def check_quiet_hours(quiet: Any) -> None:
    """A :class:`QuietHours` to store: two ``"HH:MM"`` times (24-hour) that differ, and a known
    IANA time zone name (``Europe/Berlin``; not an abbreviation or an offset)."""
    if not isinstance(quiet, QuietHours):
        raise BadInput("quiet_hours", "must be quiet hours (a start, an end and a time zone) or none.")
    for name in ("start", "end"):
        value = getattr(quiet, name)
        if not isinstance(value, str) or not _CLOCK_TIME.match(value):
            raise BadInput(f"quiet_hours.{name}", "must be a time of day as HH:MM, 24-hour (00:00 to 23:59).")
    if quiet.start == quiet.end:
        raise BadInput("quiet_hours.end", "must differ from the start (quiet hours of no length are none).")
    zone = quiet.zone
    if not isinstance(zone, str) or len(zone) > MAX_ZONE_NAME or zone not in known_time_zones():
        raise BadInput("quiet_hours.zone", "must be an IANA time zone name, such as Europe/Berlin or "
                                           "America/New_York.")


def quiet_hours_text(quiet: QuietHours | None) -> str | None:
    """How both stores keep quiet hours: JSON text (None for none)."""
    return None if quiet is None else json.dumps(quiet.as_dict(), sort_keys=True, separators=(",", ":"))


def quiet_hours_from_text(text: str | None) -> QuietHours | None:
    if not text:
        return None
    values = json.loads(text)
    return QuietHours(start=values["start"], end=values["end"], zone=values["zone"])


def stored_person_changes(changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` (checked) as the values a store writes: quiet hours as :func:`quiet_hours_text`,
    the channels turned off as :func:`channels_off_text`."""
    text: dict[str, Callable[[Any], str | None]] = {"quiet_hours": quiet_hours_text, "channels_off": channels_off_text}
    return {k: text[k](v) if k in text else v for k, v in changes.items()}


# -- channels ---------------------------------------------------------------------------------------


def check_channels_off(channels: Any) -> None:
    """The channels a person turned off: a tuple of distinct :data:`SWITCHABLE_CHANNELS`."""
    if not isinstance(channels, tuple) or not all(isinstance(c, str) for c in channels):
        raise BadInput("channels_off", f"must be a tuple of channel names ({', '.join(SWITCHABLE_CHANNELS)}).")
    unknown = [c for c in channels if c not in SWITCHABLE_CHANNELS]
    if unknown:
        raise BadInput("channels_off", f"{unknown[0][:20]!r} is no channel that can be turned off; those are "
                                       f"{', '.join(SWITCHABLE_CHANNELS)}.")
    if len(set(channels)) != len(channels):
        raise BadInput("channels_off", "names a channel twice.")


def channels_off_text(channels: tuple[str, ...]) -> str | None:
    """How both stores keep the channels turned off: their names in :data:`SWITCHABLE_CHANNELS`'
    order, comma-separated (None for none)."""
    return ",".join(c for c in SWITCHABLE_CHANNELS if c in channels) or None


def channels_off_from_text(text: str | None) -> tuple[str, ...]:
    return tuple(c for c in (text or "").split(",") if c)
