"""Previews: what a person reads before they say yes."""

from __future__ import annotations

from dataclasses import dataclass, field

QUESTION_LINES = 20


@dataclass(frozen=True)
class Preview:
    title: str
    lines: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        object.__setattr__(self, "lines", tuple(self.lines))

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
    def from_dict(cls, data: dict) -> "Preview":
        return cls(title=data["title"], lines=tuple(data.get("lines") or ()))


def money(milliunits: int) -> str:
    """Milliunits to the two-decimal text of previews: 150000 -> '150.00', -86400 -> '-86.40'."""
    cents = (abs(milliunits) + 5) // 10
    sign = "-" if milliunits < 0 and cents else ""  # never "-0.00"
    return f"{sign}{cents // 100}.{cents % 100:02d}"
