"""Every text the page shows comes from its strings files (web/strings.js, web/strings-on-demand.js),
so a translation is a file, not a code change: no other module of web/ writes a visible English
literal. A static scan, pragmatic rather than complete: the children of each el(...) call (what
becomes text), what is assigned to textContent, title or placeholder, and what is announced or
thrown as a message. Literals without a letter (' · ', ' → ') pass, and so do the few technical
values a person may see but nobody translates (a header's name)."""

from __future__ import annotations

import re

from countersign.surfaces.local.page import WEB_DIR

STRINGS_FILES = {"strings.js", "strings-on-demand.js", "strings-signin.js"}
NOT_THE_PAGE: set[str] = set()  # sw.js too: its notifications' words come in the push message
# a credential header's name and its usual form; an upstream's example name and address
TECHNICAL = {"Authorization", "Bearer …", "files", "https://mcp.example.com/mcp"}

TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*")
  | (?P<template>`(?:\\.|\$\{(?:[^{}]|\{[^{}]*\})*\}|[^`\\])*`)
  | (?P<regex>(?<=[(,=:!&|?{};])\s*/(?![/*])(?:\\.|\[(?:\\.|[^\]\\])*\]|[^/\\\n\[])+/[a-z]*)
  | (?P<word>[A-Za-z_$][\w$]*)
  | (?P<punct>\S)
""", re.X | re.S)


def tokens(source: str) -> list[tuple[str, str]]:
    out = []
    for m in TOKEN.finditer(source):
        kind = m.lastgroup
        if kind != "comment":
            out.append((kind, m.group(kind)))
    return out


def text_of(kind: str, value: str) -> str:
    """What a literal says (a template literal without its ${...} parts)."""
    if kind == "template":
        return re.sub(r"\$\{(?:[^{}]|\{[^{}]*\})*\}", "", value[1:-1])
    return value[1:-1]


def visible(kind: str, value: str) -> bool:
    return kind in ("string", "template") and re.search(r"[A-Za-z]", text_of(kind, value)) is not None \
        and text_of(kind, value) not in TECHNICAL


def arguments(toks: list[tuple[str, str]], start: int) -> tuple[list[list[tuple[str, str]]], int]:
    """The top-level arguments of the call whose '(' is at ``start``, and the index after its ')'."""
    args: list[list[tuple[str, str]]] = [[]]
    depth = 0
    i = start
    while i < len(toks):
        kind, value = toks[i]
        if value in "([{" and kind == "punct":
            depth += 1
            if depth > 1:
                args[-1].append(toks[i])
        elif value in ")]}" and kind == "punct":
            depth -= 1
            if depth == 0:
                return args, i + 1
            args[-1].append(toks[i])
        elif value == "," and kind == "punct" and depth == 1:
            args.append([])
        else:
            args[-1].append(toks[i])
        i += 1
    return args, i


def shown_literals(expression: list[tuple[str, str]]) -> list[str]:
    """The literals of an expression that become text: not inside a call's parentheses (a nested el()
    is checked on its own, a function's result is its own), nor inside an object or a function body."""
    found, depth, opened = [], 0, []
    for i, (kind, value) in enumerate(expression):
        if kind == "punct" and value in "({[":
            call = value == "(" and i > 0 and expression[i - 1][0] == "word"
            opaque = call or value == "{" or (value == "(" and i > 0 and expression[i - 1][1] == ")")
            opened.append(opaque)
            depth += opaque
        elif kind == "punct" and value in ")}]" and opened:
            depth -= opened.pop()
        elif depth == 0 and visible(kind, value):
            found.append(text_of(kind, value))
    return found


def literals_shown(name: str) -> list[str]:
    toks = tokens((WEB_DIR / name).read_text())
    found = []
    for i, (kind, value) in enumerate(toks):
        nxt = toks[i + 1][1] if i + 1 < len(toks) else ""
        if kind == "word" and value == "el" and nxt == "(":
            args, _ = arguments(toks, i + 1)
            for child in args[2:]:
                found += shown_literals(child)
        elif kind == "word" and value in ("announce", "Error") and nxt == "(":
            args, _ = arguments(toks, i + 1)
            for arg in args:
                found += shown_literals(arg)
        elif kind == "word" and value in ("textContent", "title") and nxt == "=" and toks[i + 2][1] != "=":
            j = i + 2
            expression = []
            while j < len(toks) and toks[j][1] != ";":
                expression.append(toks[j])
                j += 1
            found += shown_literals(expression)
        elif (value if kind == "word" else text_of(kind, value)) in ("placeholder", "aria-label", "title") \
                and kind in ("word", "string") and nxt == ":" and visible(*toks[i + 2]):
            found.append(text_of(*toks[i + 2]))
    return found


def test_the_scan_finds_what_it_looks_for(tmp_path, monkeypatch):
    monkeypatch.setattr("tests.browser.test_strings.WEB_DIR", tmp_path)
    (tmp_path / "x.js").write_text(
        "const a = /['\"]/g; // el('p', {}, 'In a comment')\n"
        "show(el('p', { class: 'muted wide', title: 'Hover' }, 'Hello', el('b', {}, `Hi ${name}`), ' · ',\n"
        "  ok ? 'Yes' : S.no, f('arg'), [' in ', x]));\n"
        "btn.textContent = busy ? S.wait : 'Send';\nannounce(`${n} done`);\n"
        "throw new Error('Nope');\nel('input', { placeholder: 'Claude', value: 'Authorization' });\n")
    assert sorted(literals_shown("x.js")) == sorted(["Hover", "Hello", "Hi ", "Yes", " in ", "Send", " done", "Nope",
                                                     "Claude"])


def test_no_module_but_the_strings_files_writes_a_visible_english_literal():
    modules = sorted(p.name for p in WEB_DIR.glob("*.js") if p.name not in STRINGS_FILES | NOT_THE_PAGE)
    assert {"app.js", "cards.js", "dom.js", "settings.js", "consent.js"} <= set(modules)
    found = {name: literals_shown(name) for name in modules}
    assert {name: texts for name, texts in found.items() if texts} == {}
