"""Card lifetimes: how long a card waits, a reminder before it lapses, and what a lapse means
(docs/policy.md, "Lifetimes, reminders and lapses"). Pure: no store, no clock.

A workspace's rules (the setting ``card_lifetimes``, kept as canonical JSON text) are one entry per
class of card, each setting any of three fields::

    {"default": {"wait": "2h", "remind_before": "30m", "lapse": "expired"},
     "risky": {"wait": "1d", "remind_before": "1h", "lapse": "declined"}}

* the keys are ``default`` and the classes the passkey policy and the standing-grant rules already
  use: ``always``, ``client``, ``setting``, ``when`` (the action's class for the call) and ``risky``
  (spends, sends, grants or cannot be undone: class ``always`` and destructive);
* ``wait``: 5 minutes to 7 days; ``remind_before``: at least a minute, less than the wait, or null
  (no reminder); ``lapse``: ``expired`` (the card just lapses) or ``declined`` (a lapse counts as the
  person's no: the agent asking again within the answer memory gets it, as after a decline).

A card's lifetime is resolved field by field, most specific rule first: ``risky`` (when the card is
risky), then its class, then ``default``, then the deployment's own (``COUNTERSIGN_CARD_TTL``, no
reminder, expired). :func:`resolve` says which rule decided each field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .canonical import canonical_json

SETTING = "card_lifetimes"
CLASSES = ("always", "client", "setting", "when")
KEYS = ("default", *CLASSES, "risky")
FIELDS = ("wait", "remind_before", "lapse")
LAPSES = ("expired", "declined")
MIN_WAIT = 5 * 60
MAX_WAIT = 7 * 86400
MIN_REMIND = 60
BUILT_IN = "built-in"  # the rule name of what the deployment decides when no rule does

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = re.compile(r"^(\d{1,7})\s*([smhd])$")


class LifetimeError(ValueError):
    """A rule that cannot be kept: ``problems`` is every (path, sentence) found."""

    def __init__(self, problems: list[tuple[str, str]]):
        super().__init__("; ".join(f"{path}: {text}" for path, text in problems))
        self.problems = problems


def seconds_of(value: Any) -> int | None:
    """A duration as seconds: an integer, or text such as ``90s``, ``30m``, ``2h``, ``7d``; None
    when it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        found = _DURATION.match(value.strip().lower())
        if found:
            return int(found.group(1)) * _UNITS[found.group(2)]
    return None


def duration_text(seconds: int) -> str:
    """Seconds as the shortest exact text :func:`seconds_of` reads back (``2h``, ``90m``, ``45s``)."""
    for unit in ("d", "h", "m"):
        if seconds % _UNITS[unit] == 0 and seconds:
            return f"{seconds // _UNITS[unit]}{unit}"
    return f"{seconds}s"


def duration_words(seconds: int) -> str:
    """Seconds in words: ``2 hours``, ``1 hour 30 minutes``, ``7 days``, ``45 seconds``."""
    parts = []
    for name, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count} {name}{'' if count == 1 else 's'}")
    return " ".join(parts[:2]) or "0 seconds"


def problems_of(rules: Any, path: str = SETTING) -> list[tuple[str, str]]:
    """Every problem of ``rules`` (as given: durations as text or seconds), each with its path."""
    if not isinstance(rules, dict):
        return [(path, "must be an object with an entry per class: " + ", ".join(KEYS) + ".")]
    found: list[tuple[str, str]] = []
    for key, entry in rules.items():
        where = f"{path}.{str(key)[:40]}"
        if key not in KEYS:
            found.append((where, f"unknown class {str(key)[:40]!r}; the classes are {', '.join(KEYS)}."))
            continue
        if not isinstance(entry, dict):
            found.append((where, "must be an object with any of wait, remind_before, lapse."))
            continue
        for name in entry:
            if name not in FIELDS:
                found.append((f"{where}.{str(name)[:40]}", "unknown field; a rule sets wait, remind_before or lapse."))
        wait = remind = None
        if "wait" in entry:
            wait = seconds_of(entry["wait"])
            if wait is None or not MIN_WAIT <= wait <= MAX_WAIT:
                found.append((f"{where}.wait", "must be from 5 minutes to 7 days, such as 30m, 2h or 7d."))
                wait = None
        if "remind_before" in entry and entry["remind_before"] is not None:
            remind = seconds_of(entry["remind_before"])
            if remind is None or not MIN_REMIND <= remind < MAX_WAIT:
                found.append((f"{where}.remind_before", "must be at least 1 minute and less than 7 days, such as "
                                                        "1h, or null for no reminder."))
                remind = None
        if wait is not None and remind is not None and remind >= wait:
            found.append((f"{where}.remind_before", f"{duration_words(remind)} is not less than the wait of "
                                                    f"{duration_words(wait)}: the reminder would come before the "
                                                    "card is filed."))
        if "lapse" in entry and entry["lapse"] not in LAPSES:
            found.append((f"{where}.lapse", "must be expired or declined."))
    return found


def normal(rules: Any, path: str = SETTING) -> dict[str, dict[str, Any]]:
    """``rules`` checked (:class:`LifetimeError` naming every problem) and as stored: durations in
    seconds, empty entries dropped."""
    found = problems_of(rules, path)
    if found:
        raise LifetimeError(found)
    out: dict[str, dict[str, Any]] = {}
    for key in KEYS:
        entry = rules.get(key)
        if not entry:
            continue
        kept: dict[str, Any] = {}
        if "wait" in entry:
            kept["wait"] = seconds_of(entry["wait"])
        if "remind_before" in entry:
            kept["remind_before"] = None if entry["remind_before"] is None else seconds_of(entry["remind_before"])
        if "lapse" in entry:
            kept["lapse"] = entry["lapse"]
        out[key] = kept
    return out


def as_text(rules: dict[str, Any]) -> str:
    """How the setting is stored: canonical JSON of :func:`normal` rules ("" for none)."""
    kept = normal(rules)
    return canonical_json(kept) if kept else ""


def from_text(text: Any) -> dict[str, dict[str, Any]]:
    """The stored setting's rules ({} for none, or for text that is not rules)."""
    if not isinstance(text, str) or not text:
        return {}
    try:
        return normal(json.loads(text))
    except (ValueError, TypeError):
        return {}


def check_text(text: Any) -> None:
    """What the store checks before keeping the setting: "" or exactly :func:`as_text` of its rules."""
    if text == "":
        return
    if not isinstance(text, str):
        raise LifetimeError([(SETTING, "must be the rules as canonical JSON text.")])
    try:
        rules = json.loads(text)
    except ValueError:
        raise LifetimeError([(SETTING, "must be the rules as canonical JSON text.")]) from None
    if as_text(rules) != text:
        raise LifetimeError([(SETTING, "must be the rules as canonical JSON text, durations in seconds.")])


def exported(rules: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Stored rules as a person writes them: durations as text (``2h``)."""
    out: dict[str, dict[str, Any]] = {}
    for key, entry in rules.items():
        out[key] = {name: (duration_text(value) if name in ("wait", "remind_before") and value is not None
                           else value) for name, value in entry.items()}
    return out


@dataclass(frozen=True)
class Lifetime:
    """A card's lifetime: ``wait`` seconds, a reminder ``remind_before`` its deadline (None: none),
    what a lapse means, and which rule decided each field (``decided``: field → rule name)."""

    wait: int
    remind_before: int | None
    lapse: str
    decided: dict[str, str] = field(default_factory=dict)

    def card_record(self, filed_at: int) -> dict[str, Any]:
        """What a card filed at ``filed_at`` keeps of it (``Card.lifetime``)."""
        record: dict[str, Any] = {"wait": self.wait, "lapse": self.lapse}
        if self.remind_before is not None:
            record["remind_at"] = filed_at + self.wait - self.remind_before
        return record

    def words(self) -> str:
        text = f"waits {duration_words(self.wait)}"
        if self.remind_before is not None:
            text += f", a reminder {duration_words(self.remind_before)} before it lapses"
        else:
            text += ", no reminder"
        return text + ("; unanswered, it counts as declined" if self.lapse == "declined"
                       else "; unanswered, it expires")


def chain(kind: str, risky: bool) -> list[str]:
    """The rules that may decide a card of class ``kind``, most specific first."""
    return [*(["risky"] if risky else []), *([kind] if kind in CLASSES else []), "default"]


def resolve(rules: dict[str, dict[str, Any]], kind: str, risky: bool, default_wait: int) -> Lifetime:
    """The lifetime of a card of class ``kind`` (``risky`` or not) under ``rules``."""
    values: dict[str, Any] = {"wait": default_wait, "remind_before": None, "lapse": "expired"}
    decided = dict.fromkeys(FIELDS, BUILT_IN)
    for name in FIELDS:
        for key in chain(kind, risky):
            entry = rules.get(key) or {}
            if name in entry:
                values[name], decided[name] = entry[name], key
                break
    remind = values["remind_before"]
    if remind is not None and remind >= values["wait"]:
        remind = None  # a reminder no shorter than the wait would come at filing: none
    return Lifetime(values["wait"], remind, values["lapse"], decided)


def describe(rules: dict[str, dict[str, Any]], default_wait: int) -> list[str]:
    """The rules in words, one line per entry (the deployment's default first when none is set)."""
    lines = []
    if "default" not in rules:
        lines.append(f"Every card: {resolve({}, 'default', False, default_wait).words()} (this deployment's default).")
    names = {"default": "Every card", "always": "Cards of class always", "client": "Cards of class client",
             "setting": "Cards of class setting", "when": "Cards of class when",
             "risky": "Cards that spend, send, grant or cannot be undone"}
    for key in KEYS:
        if key in rules:
            kind = key if key in CLASSES else ("always" if key == "risky" else "default")
            lines.append(f"{names[key]}: {resolve(rules, kind, key == 'risky', default_wait).words()}.")
    return lines
