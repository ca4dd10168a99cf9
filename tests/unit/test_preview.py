"""Previews: the question a person reads, and money as text."""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from hypothesis import given, settings, strategies as st

from countersign.core.preview import QUESTION_LINES, Preview, money, plain_text


def lines(n: int) -> tuple[str, ...]:
    return tuple(f"line {i}" for i in range(1, n + 1))


def test_question_lines_is_20():
    assert QUESTION_LINES == 20


def test_question_title_only():
    assert Preview("Create category ‘Pets’ in Everyday?").question() == "Create category ‘Pets’ in Everyday?"


def test_question_20_lines_shows_all():
    text = Preview("Title?", lines(20)).question()
    assert text == "\n".join(["Title?", *lines(20)])
    assert "more" not in text


def test_question_21_lines():
    text = Preview("Title?", lines(21)).question()
    assert text == "\n".join(["Title?", *lines(20), "… and 1 more"])
    assert "line 21" not in text


def test_question_45_lines():
    text = Preview("Recategorise 45 transaction(s)?", lines(45)).question()
    assert text.split("\n") == ["Recategorise 45 transaction(s)?", *lines(20), "… and 25 more"]
    assert text.endswith("\u2026 and 25 more")


def test_visible_lines_with_custom_limit():
    assert Preview("T", lines(5)).visible_lines(3) == ["line 1", "line 2", "line 3", "… and 2 more"]
    assert Preview("T", lines(3)).visible_lines(3) == ["line 1", "line 2", "line 3"]


@settings(max_examples=50, deadline=None)
@given(st.integers(0, 100))
def test_question_shape(n):
    shown = Preview("T", lines(n)).question().split("\n")
    assert shown[0] == "T"
    assert shown[1 : 1 + min(n, 20)] == list(lines(min(n, 20)))
    if n > 20:
        assert len(shown) == 22 and shown[-1] == f"… and {n - 20} more"
    else:
        assert len(shown) == 1 + n


def test_preview_round_trip_and_lines_are_a_tuple():
    preview = Preview("T", ["a", "b"])
    assert preview.lines == ("a", "b")
    assert preview.to_dict() == {"title": "T", "lines": ["a", "b"]}
    assert Preview.from_dict(preview.to_dict()) == preview
    assert Preview.from_dict({"title": "T"}) == Preview("T")
    assert Preview.from_dict({"title": "T", "lines": None}).lines == ()


@pytest.mark.parametrize(
    "milliunits, text",
    [
        (150000, "150.00"),
        (-86400, "-86.40"),
        (0, "0.00"),
        (5, "0.01"),  # half-up on the cent
        (4, "0.00"),
        (1, "0.00"),
        (-5, "-0.01"),
        (-4, "0.00"),  # never "-0.00"
        (-1, "0.00"),
        (10, "0.01"),
        (994, "0.99"),
        (995, "1.00"),
        (1000, "1.00"),
        (120000, "120.00"),
        (123456789, "123456.79"),
        (-123456784, "-123456.78"),
    ],
)
def test_money(milliunits, text):
    assert money(milliunits) == text


@settings(max_examples=200, deadline=None)
@given(st.integers(-(10**12), 10**12))
def test_money_matches_decimal_half_up(milliunits):
    from decimal import ROUND_HALF_UP, Decimal

    expected = (Decimal(milliunits) / 1000).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    if expected == 0:
        expected = abs(expected)
    assert money(milliunits) == f"{expected:.2f}"


def test_data_cannot_rearrange_or_add_lines():
    from countersign.core.preview import Preview

    p = Preview("Pay ‘Coffee \u202e’?\nApproved", ("2026-09-01, Coffee \u202e\u2066, -15.00", "a\nb\r\nc\u2028d"))
    assert p.title == "Pay ‘Coffee [U+202E]’? Approved"
    assert p.lines == ("2026-09-01, Coffee [U+202E][U+2066], -15.00", "a b  c d")
    assert p.question().count("\n") == 2
    assert Preview("Café ‘Ünïcode’ 東京", ("tab\tkept? no",)).lines == ("tab kept? no",)
    assert Preview("Café ‘Ünïcode’ 東京").title == "Café ‘Ünïcode’ 東京"


@pytest.mark.parametrize("hidden", ["\u200b", "\u200d", "\u200c", "\u2060", "\ufeff", "\u00ad", "\u180e", "\U000e0041",
                                    "\u3164", "\u200e", "\u061c"])
def test_characters_nobody_can_see_are_shown(hidden):
    from countersign.core.preview import Preview

    p = Preview(f"Pay Pay{hidden}Pal?", (f"Pay{hidden}Pal",))
    mark = f"[U+{ord(hidden):04X}]"
    assert p.title == f"Pay Pay{mark}Pal?" and p.lines == (f"Pay{mark}Pal",)
    assert p.question() == f"Pay Pay{mark}Pal?\nPay{mark}Pal"


def test_joiners_that_shape_a_script_or_an_emoji_stay():
    from countersign.core.preview import Preview

    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # one emoji, joined
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # ZWNJ inside a Persian word
    assert Preview(family).title == family and Preview(persian).title == persian
    assert Preview("a\u200db").title == "a[U+200D]b"  # inside Latin it hides nothing useful


def test_every_code_point_between_latin_letters_and_in_plain_text():
    """Each character is blanked (controls, line and paragraph separators), marked (format
    characters, the invisible letters) or kept, by what it is, whether it stands alone between
    two Latin letters or inside a longer line of plain text."""
    import unicodedata

    from countersign.core.preview import plain_line

    invisible = set("\u034f\u115f\u1160\u3164\uffa0")
    points = itertools.chain(range(0xD800), range(0xE000, 0x10000),  # the whole BMP but surrogates
                             range(0x1D100, 0x1D200), range(0x1F000, 0x1FB00), range(0xE0000, 0xE0200))
    changed = 0
    for cp in points:  # with musical format characters, emoji, tag characters and variation selectors
        c = chr(cp)
        category = unicodedata.category(c)
        if category == "Cc" or c in "\u2028\u2029":
            expected = " "
        elif category == "Cf" or c in invisible:
            expected = f"[U+{cp:04X}]"
        else:
            expected = c
        changed += expected != c
        assert plain_line(f"x{c}y") == f"x{expected}y", hex(cp)
        assert plain_line(f"Plain text x{c}y and more") == f"Plain text x{expected}y and more", hex(cp)
    assert changed > 150


def test_text_of_several_lines_keeps_its_breaks_and_nothing_else_raw():
    """An outcome's text (an upstream's answer): line breaks kept (CR LF and CR as LF), tabs and
    other control characters as spaces, invisible characters shown, line by line."""
    assert plain_text("one\r\ntwo\rthree\n\tfour\x1b[0m\u2028five \u202eexe") == \
        "one\ntwo\nthree\n four [0m five [U+202E]exe"
    assert plain_text("plain") == "plain" and plain_text("") == ""
    assert plain_text("a\n\nb\n") == "a\n\nb\n"


@given(st.text(max_size=40))
def test_plain_text_leaves_only_line_breaks_of_the_control_characters(text):
    shown = plain_text(text)
    left = {unicodedata.category(c) for c in shown if c not in "\n\u200c\u200d"}
    assert not left & {"Cc", "Cf", "Zl", "Zp"}
    assert shown.count("\n") == text.replace("\r\n", "\n").replace("\r", "\n").count("\n")
