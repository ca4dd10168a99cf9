"""Control characters in arguments: refused by name wherever Unicode says a character is one
(general category Cc), tab and line breaks allowed in text, none in an argument's name."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from countersign.toolkit import Arguments
from countersign.toolkit.arguments import ArgumentError, parse_arguments


class Named(Arguments):
    name: str


def _controls() -> list[str]:
    return [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cc"]


def test_every_control_character_is_refused_in_text_but_tab_and_line_breaks():
    controls = _controls()
    for c in controls:
        if c in "\t\n\r":
            assert parse_arguments(Named, {"name": f"a{c}b"}, "t").name == f"a{c}b"
            continue
        with pytest.raises(ArgumentError) as refused:
            parse_arguments(Named, {"name": f"Pay{c}Pal{chr(0x1b)}"}, "t")
        assert refused.value.message == (f"name: contains the control character U+{ord(c):04X}; text may hold tabs "
                                         "and line breaks, but no other control characters.")


def test_no_other_character_is_refused():
    controls = set(_controls())
    others = "".join(chr(c) for c in range(0x3000) if chr(c) not in controls and not 0xD800 <= c < 0xE000)
    others += "\u2028\u2029\u200b\ufeff\U0001f600\U000e0001"  # line separators, format characters, emoji: not Cc
    assert parse_arguments(Named, {"name": others}, "t").name == others


@pytest.mark.parametrize("c", ["\x00", "\t", "\n", "\x7f", "\x9f"])
def test_a_control_character_in_a_name_is_refused(c):
    with pytest.raises(ArgumentError) as refused:
        parse_arguments(Named, {"name": "x", f"na{c}me": "y"}, "t")
    assert refused.value.message.endswith(" arguments: an argument name contains a control character.")
