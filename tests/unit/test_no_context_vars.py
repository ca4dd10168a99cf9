"""No context variable steers what the package does (docs/architecture.md): a request's state — its
counts against the request limits above all — travels as values (the ASGI scope, the caller, the
gate's question and answer), so no write can pick up another request's value or lose its own on
the way to a worker thread. One kept only for log correlation would be named in ``LOG_ONLY``."""

from __future__ import annotations

import ast

from tests.unit.test_toolkit_layers import PACKAGE, _name

LOG_ONLY: set[str] = set()  # modules allowed one ContextVar that only tags log lines (none today)


def _context_vars(source: str) -> list[int]:
    """The lines of ``source`` that name ``ContextVar`` (made, imported or annotated)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "ContextVar" or \
                isinstance(node, ast.Attribute) and node.attr == "ContextVar":
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module == "contextvars" and any(
                alias.name == "ContextVar" for alias in node.names):
            lines.append(node.lineno)
    return sorted(lines)


def test_the_package_defines_no_context_variable_that_steers_behaviour():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts or _name(path) in LOG_ONLY:
            continue
        lines = _context_vars(path.read_text(encoding="utf-8"))
        if lines:
            found[_name(path)] = lines
    assert found == {}, f"a ContextVar steers behaviour (pass the value down instead): {found}"


def test_the_check_finds_one():
    assert _context_vars("from contextvars import ContextVar\nV: ContextVar[int] = ContextVar('v')\n") == [1, 2, 2]
    assert _context_vars("import contextvars\nV = contextvars.ContextVar('v')\n") == [2]
