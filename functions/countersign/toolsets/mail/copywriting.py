"""Copy: a piece's text from the campaign's template (and whether every placeholder resolved), the
local copywriting pass, and how a campaign's copy review reads."""

from __future__ import annotations

import re

from .kinds import AUTO_APPROVE_AFTER, REVIEW_CLEAN
from .text import first_name

PLACEHOLDER_RE = re.compile(r"\{([a-z_]+)\}")


def render_copy(template: str, contact: dict, personalize: bool) -> tuple[str, bool, str]:
    """(text, clean, written_by). A draft is clean when every placeholder resolved."""
    values = {
        "first_name": first_name(contact.get("name", "")),
        "name": contact.get("name", ""),
        "company": contact.get("company", "") or "",
    }
    clean = True

    def sub(m: re.Match) -> str:
        nonlocal clean
        value = values.get(m.group(1))
        if not value:
            clean = False
            return m.group(0) if value is None else ""
        return value

    text = PLACEHOLDER_RE.sub(sub, template or "")
    if not text.strip():
        clean = False
    if personalize:
        # The local stand-in for a model's personal line: deterministic, so tests can read it.
        company = values["company"] or "your team"
        text = f"{text}\n\nP.S. {values['first_name'] or 'Hello'}, I have been following what {company} is building."
        return text, clean, "model"
    return text, clean, "template"


def polish(text: str) -> str:
    """The local copywriting pass: tidy spacing, capitalise sentences and "i", end with punctuation."""
    text = re.sub(r"[ \t]+", " ", text.strip())
    text = re.sub(r"\s+([,.!?;:])", r"\1", text)
    text = re.sub(r"\bi\b", "I", text)
    text = re.sub(r"(^|[.!?]\s+|\n\s*)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    if text and text[-1] not in ".!?":
        text += "."
    return text


def review_line(mode: str, approved: int) -> str:
    if mode == REVIEW_CLEAN:
        return (f"Copy review: clean drafts print without review, while drafts a model writes wait for a person "
                f"until {AUTO_APPROVE_AFTER} pieces on this campaign are approved ({approved} so far)")
    return "Copy review: every draft waits for a person before it prints"
