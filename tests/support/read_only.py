"""Running a command against a data folder that cannot be written, for root as for anyone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def run_on_read_only(command: list[str], data: Path, **run) -> subprocess.CompletedProcess[str]:
    """``command`` with ``data`` read-only: as root (which ignores file modes) through a read-only bind
    mount in a mount namespace of its own (needs ``unshare``), otherwise by the folder's and its
    files' modes, put back afterwards."""
    if os.geteuid() == 0:
        command = ["unshare", "--mount", "sh", "-c",
                   'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"', str(data), *command]
    else:
        for path in data.iterdir():
            path.chmod(0o400 if path.is_file() else 0o500)
        data.chmod(0o500)
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=60, **run)
    finally:
        data.chmod(0o700)
