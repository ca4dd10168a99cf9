"""The gate: every held write goes through :func:`countersign.gate.ask.ask`.

Toolsets never import the gate: they import :mod:`countersign.toolkit` (the toolset API), which
the gate imports in turn.
"""
