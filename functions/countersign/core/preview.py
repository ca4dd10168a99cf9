"""Previews: what a person reads before they say yes."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .canonical import map_strings

QUESTION_LINES = 20


# Characters a person cannot see, shown as a visible mark instead (``Pay\u200bPal`` reads
# ``Pay[U+200B]Pal``, not "PayPal"): every format character (Unicode category Cf: zero-width
# spaces and joiners, the byte-order mark, word joiners, bidi overrides and isolates, which would
# also let data rearrange what a person reads, tag characters), and the few invisible letters.
_INVISIBLE_LETTERS = frozenset("\u034f\u115f\u1160\u3164\uffa0")
_JOINERS = frozenset("\u200c\u200d")  # ZWNJ, ZWJ: needed inside some scripts and emoji sequences
_LATIN_END = 0x024F  # the end of Latin Extended-B


def _shown(c: str) -> str:
    return f"[U+{ord(c):04X}]"


def _joins_script(before: str, after: str) -> bool:
    """Whether a joiner between ``before`` and ``after`` does visible work: between two letters,
    marks or symbols outside Latin (Persian, Devanagari, emoji sequences), not inside Latin text."""
    def ok(c: str) -> bool:
        return ord(c) > _LATIN_END and unicodedata.category(c)[0] in "LMS"

    return bool(before) and bool(after) and ok(before) and ok(after)


def one_line(text: str | None) -> str:
    """``text`` as a name is stored: each run of spaces, tabs and line breaks one space, none at
    either end (what a preview then shows of it is :func:`plain_line`)."""
    return " ".join((text or "").split())


def plain_line(text: str) -> str:
    """One line of preview text as a person should see it: control characters and line breaks
    become spaces, and characters nobody can see are shown as ``[U+XXXX]``."""
    text = str(text)
    if text.isprintable() and (text.isascii() or _INVISIBLE_LETTERS.isdisjoint(text)):
        # Nothing to change (the common case, at C speed): a printable string holds no control,
        # format (Cf) or line-separator character, and no joiner (Cf); only the invisible letters
        # above are printable.
        return text
    out = []
    for i, c in enumerate(text):
        category = unicodedata.category(c)
        if category == "Cc" or c in "\u2028\u2029":
            out.append(" ")
        elif c in _JOINERS and _joins_script(text[i - 1] if i else "", text[i + 1] if i + 1 < len(text) else ""):
            out.append(c)
        elif category == "Cf" or c in _INVISIBLE_LETTERS:
            out.append(_shown(c))
        else:
            out.append(c)
    return "".join(out)


def plain_text(text: str) -> str:
    r"""Text of several lines (an outcome, an upstream's answer) as a person should see it: each line
    as :func:`plain_line` shows it (tabs and other control characters as spaces, invisible
    characters as ``[U+XXXX]``), the line breaks kept (``\r\n`` and ``\r`` as ``\n``)."""
    text = str(text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(plain_line(line) for line in text.split("\n"))


@dataclass(frozen=True, init=False)
class Preview:
    """A title and lines, and, for a card whose change has parts (the tools of an upstream), its
    ``sections``: plain JSON (dicts, lists and strings) a page draws as structure. Lines are what
    every channel shows (the page, the in-client question, a receipt); sections are drawn on the
    page only, so a preview with sections says in its lines what they hold in short. Both are bound
    by the card's ticket alike (:func:`~countersign.core.canonical.preview_digest`)."""

    title: str
    lines: tuple[str, ...] = field(default_factory=tuple)
    sections: tuple[dict[str, Any], ...] = field(default_factory=tuple)

    def __init__(self, title: str, lines: Iterable[str] = (), sections: Iterable[dict[str, Any]] = ()) -> None:
        # Any iterable of lines is kept as a tuple, each line (and the title) made plain; every
        # text in the sections, keys included, is made plain the same way.
        object.__setattr__(self, "title", plain_line(title))
        object.__setattr__(self, "lines", tuple(plain_line(line) for line in lines))
        object.__setattr__(self, "sections", tuple(map_strings(dict(s), plain_line) for s in sections))

    def visible_lines(self, limit: int = QUESTION_LINES) -> list[str]:
        """Up to ``limit`` lines, then ``… and N more`` when some were left out."""
        shown = list(self.lines[:limit])
        hidden = len(self.lines) - len(shown)
        if hidden > 0:
            shown.append(f"… and {hidden} more")
        return shown

    def question(self, limit: int = QUESTION_LINES) -> str:
        """The message of an in-client question: the title, then the visible lines."""
        return "\n".join([self.title, *self.visible_lines(limit)])

    def to_dict(self) -> dict:
        shown: dict[str, Any] = {"title": self.title, "lines": list(self.lines)}
        if self.sections:
            shown["sections"] = list(self.sections)
        return shown

    @classmethod
    def from_dict(cls, data: dict) -> Preview:
        return cls(title=data["title"], lines=tuple(data.get("lines") or ()), sections=data.get("sections") or ())


def money(milliunits: int) -> str:
    """Milliunits to the two-decimal text of previews: 150000 -> '150.00', -86400 -> '-86.40'."""
    cents = (abs(milliunits) + 5) // 10
    sign = "-" if milliunits < 0 and cents else ""  # never "-0.00"
    return f"{sign}{cents // 100}.{cents % 100:02d}"
