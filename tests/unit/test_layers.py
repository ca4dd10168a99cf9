"""The whole package's layers, read from the source (docs/architecture.md): every module imports
only modules of its own layer or of layers below it, and no module imports itself back through
others — across folders and inside one folder alike.

The layers, top to bottom, each a folder (or a module) of ``functions/countersign``. Within a layer
anything may import anything, as long as no cycle forms.
"""

from __future__ import annotations

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
