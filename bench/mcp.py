"""The MCP bench by the name issue 13 gives it: runs ``bench/mcp_calls.py`` with the same arguments.

    .venv/bin/python bench/mcp.py [--n 30] [--ledger 50000 | 0 to skip head-of-line]

The bench itself is ``mcp_calls.py`` (what it measures: its docstring). A module named ``mcp``
imported from this folder would be this file, not the SDK, so every bench imports
:mod:`bench_paths` first, which puts this folder last on ``sys.path``.
"""

import runpy

import bench_paths

if __name__ == "__main__":
    runpy.run_path(str(bench_paths.BENCH / "mcp_calls.py"), run_name="__main__")
