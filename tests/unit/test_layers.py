"""The whole package's layers, read from the source (docs/architecture.md): every module imports
only modules of its own layer or of layers below it, and no module imports itself back through
others — across folders and inside one folder alike.

The layers, top to bottom, each a folder (or a module) of ``functions/countersign``. Within a layer
anything may import anything, as long as no cycle forms.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.unit.test_toolkit_layers import PACKAGE, _name, imports

LAYERS: list[tuple[str, ...]] = [
    ("handlers",),                       # Lambda entry points: build once, hand the event on
    ("cli",),                            # the countersign command
    ("surfaces",),                       # mcp/, api/, oauth/, local/, http/, background/
    ("runtime",),                        # the composition root: settings → store, keys, toolsets, desk
    ("gate",),                           # the engine: decide, file, answer, click, run, recover
    ("toolsets",),                       # budget/, mail/, gateway/
    ("toolkit",),                        # the toolset API
    ("identity",),                       # accounts, members, sessions, OAuth, passkeys
    ("notify",),                         # email: outbox, SMTP, SES
    ("store",),                          # one role a module; sqlite/, dynamodb/
    ("platform", "logs"),                # AWS-only pieces; log redaction
    ("settings",),                       # typed configuration, parsed once
    ("core",),                           # pure
]


def _layer(module: str) -> int:
    parts = module.split(".")
    if len(parts) < 2:
        return len(LAYERS)  # the package's face (countersign/__init__) stands below everything
    for depth, names in enumerate(LAYERS):
        if parts[1] in names:
            return depth
    raise AssertionError(f"{module} is in no layer: add its folder to LAYERS (and to docs/architecture.md)")


ALL = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)
GRAPH = {_name(p): {m for m in imports(p) if m != "countersign"} for p in ALL}


def test_every_module_is_in_a_layer():
    for module in GRAPH:
        _layer(module)


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_a_module_imports_its_layer_or_below(module):
    mine = _layer(module)
    upward = sorted(m for m in GRAPH[module] if _layer(m) < mine)
    assert not upward, f"{module} (layer {LAYERS[mine]}) imports above it: {upward}"


def test_no_import_cycle_anywhere_in_the_package():
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, "cycle: " + " -> ".join((*path[path.index(module):], module))
        if module in done:
            return
        for imported in sorted(GRAPH.get(module, ())):
            visit(imported, (*path, module))
        done.add(module)

    for module in sorted(GRAPH):
        visit(module, ())


def _unexplained_imports(path) -> list[str]:
    """The imports made inside a function of ``path`` with no comment on or just above them: an
    import belongs at the top of its module unless a comment says which cold start it protects."""
    source = path.read_text().splitlines()
    found = []
    for node in ast.walk(ast.parse("\n".join(source))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for block in ast.walk(node):
            for body in (getattr(block, name, None) for name in ("body", "orelse", "finalbody")):
                group: list[ast.stmt] = []
                for statement in [*body, None] if isinstance(body, list) else []:
                    if isinstance(statement, ast.Import | ast.ImportFrom):
                        group.append(statement)
                        continue
                    if group:  # a run of imports: a comment on one of its lines or on the line above
                        lines = source[max(group[0].lineno - 2, 0):group[-1].end_lineno]
                        if not any("#" in line for line in lines):
                            found.append(f"{path.relative_to(PACKAGE)}:{group[0].lineno}")
                        group = []
    return sorted(set(found))


def test_an_import_inside_a_function_says_which_cold_start_it_protects():
    unexplained = [where for path in ALL for where in _unexplained_imports(path)]
    assert unexplained == [], unexplained


def test_the_architecture_pages_imports_today_table_is_what_the_code_imports():
    """docs/architecture.md lists what each folder imports today: kept true as the code moves."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    table = page.split("| folder | imports today |", 1)[1].split("\n\n", 1)[0]
    said: dict[str, set[str]] = {}
    for line in table.strip().splitlines()[1:]:
        folders, imported = (cell.strip() for cell in line.strip("|").split("|"))
        imported = re.sub(r"\([^)]*\)", "", imported)  # (what a note says of one)
        words = set() if imported.startswith("nothing") else {w.strip() for w in imported.split(",")}
        for folder in re.findall(r"`([a-z_]+)(?:/|\.py)`", folders):
            said[folder] = words
    imported_today: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        parts = module.split(".")
        if len(parts) < 2:
            continue
        imported_today.setdefault(parts[1], set()).update(
            t.split(".")[1] for t in targets if len(t.split(".")) > 1 and t.split(".")[1] != parts[1])
    assert said == {folder: imported_today.get(folder, set()) for folder in said}
    assert set(said) == {names[0] for names in LAYERS} | {"logs"}
