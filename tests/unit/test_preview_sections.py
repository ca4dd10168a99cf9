"""A preview's sections are bound like its lines: the preview digest a ticket and a passkey's
statement carry changes with any text in them, and a preview without sections is bound as before."""

from __future__ import annotations

from types import SimpleNamespace

from countersign.core.canonical import digest, preview_digest
from countersign.core.preview import Preview
from countersign.core.statement import confirm_statement, statement_mismatch

SECTIONS = ({"group": "changed", "heading": "Changed (1)",
             "tools": [{"name": "w", "description": [["", "Write"], ["+", " and mail"]]}]},)


def test_the_digest_binds_every_text_of_the_sections_and_is_unchanged_without_them():
    bound = preview_digest("T", ["a"], SECTIONS)
    edited = ({**SECTIONS[0], "tools": [{"name": "w", "description": [["", "Write"]]}]},)
    assert bound != preview_digest("T", ["a"], edited) != preview_digest("T", ["a"])
    assert preview_digest("T", ["a"]) == preview_digest("T", ["a"], ()) == digest({"title": "T", "lines": ["a"]})


def test_the_sections_texts_are_made_plain_like_the_lines():
    p = Preview("T", ["a\tb"], [{"heading": "Pay\u200bPal", "tools": [{"name": "x\u202ey"}]}])
    assert p.lines == ("a b",)
    assert p.sections == ({"heading": "Pay[U+200B]Pal", "tools": [{"name": "x[U+202E]y"}]},)
    assert Preview.from_dict(p.to_dict()) == p and "sections" not in Preview("T", ["a"]).to_dict()


def test_a_passkey_statement_about_other_sections_does_not_match_the_card():
    card = SimpleNamespace(id="c_1", fingerprint="f" * 64, title="T", lines=("a",), sections=SECTIONS)
    statement = confirm_statement("localhost", card, now=100)
    assert statement_mismatch(statement, card) is None
    card.sections = ()
    assert statement_mismatch(statement, card) == "the passkey signed a different preview"
