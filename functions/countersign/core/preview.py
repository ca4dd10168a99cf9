"""Previews: what a person reads before they say yes."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

QUESTION_LINES = 20


# Characters that would let data rearrange what a person reads: bidi overrides and isolates
# (a payee "Coffee \u202e" reverses the amount after it) and line breaks (a fake extra line).
_BIDI_CONTROLS = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"))


def plain_line(text: str) -> str:
    """One line of preview text as a person should see it: no bidi controls, no control characters."""
    text = str(text).translate(_BIDI_CONTROLS)
    return "".join(" " if unicodedata.category(c) == "Cc" or c in "\u2028\u2029" else c for c in text)


@dataclass(frozen=True, init=False)
class Preview:
    title: str
    lines: tuple[str, ...] = field(default_factory=tuple)

    def __init__(self, title: str, lines: Iterable[str] = ()) -> None:
        # Any iterable of lines is kept as a tuple, each line (and the title) made plain.
        object.__setattr__(self, "title", plain_line(title))
        object.__setattr__(self, "lines", tuple(plain_line(line) for line in lines))

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
        return {"title": self.title, "lines": list(self.lines)}

    @classmethod
    def from_dict(cls, data: dict) -> Preview:
        return cls(title=data["title"], lines=tuple(data.get("lines") or ()))


def money(milliunits: int) -> str:
    """Milliunits to the two-decimal text of previews: 150000 -> '150.00', -86400 -> '-86.40'."""
    cents = (abs(milliunits) + 5) // 10
    sign = "-" if milliunits < 0 and cents else ""  # never "-0.00"
    return f"{sign}{cents // 100}.{cents % 100:02d}"
