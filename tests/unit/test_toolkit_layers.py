"""The package's layering, read from the source: a toolset imports the toolkit, core and its own
modules only; the toolkit never imports the gate; the gate imports nothing that stands above it
(surfaces, toolsets) nor the passkey ceremonies and receipts; identity (accounts, members, sessions,
OAuth, passkeys) imports nothing above it (gate, toolkit, toolsets, surfaces, CLI, handlers, the
runtime); no cycle among the gate's modules or identity's."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "functions" / "countersign"


def _name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Every module of the package ``path`` imports, at the top or inside a function."""
    name, found = _name(path), set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.startswith("countersign"):
                found.update(f"{module}.{a.name}" if (PACKAGE.parent / f"{module}.{a.name}".replace(".", "/")).is_dir()
                             or (PACKAGE.parent / (f"{module}.{a.name}".replace(".", "/") + ".py")).exists()
                             else module for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("countersign"))
    return found


def modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


@pytest.mark.parametrize("path", modules("toolsets"), ids=lambda p: _name(p))
def test_a_toolset_imports_the_toolkit_core_and_itself_only(path):
    own = ".".join(_name(path).split(".")[:3])  # countersign.toolsets.<name>
    allowed = ("countersign.toolkit", "countersign.core", own)
    wrong = sorted(m for m in imports(path) if m != "countersign.toolsets" and not m.startswith(allowed))
    assert not wrong, wrong


@pytest.mark.parametrize("path", modules("toolkit"), ids=lambda p: _name(p))
def test_the_toolkit_never_imports_the_gate_or_above(path):
    above = ("countersign.gate", "countersign.surfaces", "countersign.toolsets", "countersign.identity.passkeys",
             "countersign.runtime", "countersign.cli", "countersign.handlers")
    assert not sorted(m for m in imports(path) if m.startswith(above))


@pytest.mark.parametrize("path", modules("gate"), ids=lambda p: _name(p))
def test_the_gate_imports_nothing_above_it(path):
    above = ("countersign.surfaces", "countersign.toolsets", "countersign.identity.passkeys", "countersign.runtime",
             "countersign.cli", "countersign.handlers", "countersign.notify", "countersign.identity.oauth")
    assert not sorted(m for m in imports(path) if m.startswith(above))


@pytest.mark.parametrize("path", modules("identity"), ids=lambda p: _name(p))
def test_identity_imports_nothing_above_it(path):
    allowed = ("countersign.identity", "countersign.store", "countersign.core", "countersign.logs",
               "countersign.settings")
    wrong = sorted(m for m in imports(path) if m != "countersign" and not m.startswith(allowed))
    assert not wrong, wrong


def _without_a_cycle(folder: str) -> None:
    package = f"countersign.{folder}"
    graph = {_name(p): {m for m in imports(p) if m == package or m.startswith(package + ".")} for p in modules(folder)}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, " -> ".join((*path, module))
        if module in done:
            return
        for imported in graph.get(module, ()):
            visit(imported, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())


def test_the_gate_modules_import_each_other_without_a_cycle():
    _without_a_cycle("gate")


def test_the_identity_modules_import_each_other_without_a_cycle():
    _without_a_cycle("identity")
