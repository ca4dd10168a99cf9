"""A real local server for the crash tests, in a process of its own: ``python -m tests.crash.server
DATA PORT``. Every toolset of the build plus the test toolsets; the environment configures the rest
(``COUNTERSIGN_FAULT`` names where it dies)."""

from __future__ import annotations

import os
import sys

from countersign import settings as settings_mod
from countersign.runtime import build
from countersign.surfaces.local.app import build_local
from countersign.surfaces.local.run import serve
from tests.support.harness import all_toolsets
from tests.support.stepped_toolset import TOOLSET as STEPPED


def make_app(data: str, port: int):
    env = dict(os.environ, COUNTERSIGN_DATA=data, COUNTERSIGN_PUBLIC_URL=f"http://localhost:{port}")
    settings = settings_mod.load(env)
    runtime = build(settings, toolsets=[*all_toolsets(), STEPPED])
    app, _ = build_local(settings, runtime=runtime)
    return app


def main() -> None:
    data, port = sys.argv[1], int(sys.argv[2])
    raise SystemExit(serve(make_app(data, port), "127.0.0.1", port, log_level="warning"))


if __name__ == "__main__":
    main()
