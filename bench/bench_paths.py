"""Where a bench finds what it imports: the project first, this folder last.

Every bench script imports this module before anything else. Python starts a script with the
script's own folder first on ``sys.path``, and this folder holds ``mcp.py`` (the MCP bench, by the
name issue 13 gives it), which would then stand in for the ``mcp`` SDK. With this folder last,
``import mcp`` is the SDK, and the benches' own modules (``mcp_servers``, ``ledger``...) are
still found. The repository's root (``tests.support``) and ``functions/`` (``countersign``) go first.
"""

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent

_OURS = (BENCH, ROOT, ROOT / "functions")
sys.path[:] = [str(ROOT), str(ROOT / "functions"),
               *(entry for entry in sys.path if Path(entry or ".").resolve() not in _OURS), str(BENCH)]
