"""A full disk while an agent files a held write over MCP: the call answers with a sentence that
says nothing was written and that calling again is safe, and once space is freed the same call
files exactly one card.

The disk is real: the server runs in a mount namespace of its own with its data folder on a small
tmpfs, and a helper inside that namespace fills it (and empties it) when the test says so."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2
import pytest

from countersign.identity import accounts
from countersign.store.sqlite import SQLiteStore
from tests.budget.ledger import seed_small
from tests.support.harness import mcp_client

REPO = Path(__file__).resolve().parents[2]
CALL = {"account_id": "acc_checking", "transactions": [{"date": "2026-09-18", "payee": "Bakery", "amount": "-5.00"}]}

# Inside the namespace: a 4 MiB tmpfs over DATA, the seeded files copied in, then a helper that
# fills the disk when FILL appears (and says so in FULL), and empties it when FREE appears.
SCRIPT = r"""
set -e
mount -t tmpfs -o size=4m tmpfs "$DATA"
cp -a "$SEED"/. "$DATA"/
(
  while [ ! -e "$CTL/FILL" ]; do sleep 0.05; done
  dd if=/dev/zero of="$DATA/filler" bs=64k 2>/dev/null || true
  touch "$CTL/FULL"
  while [ ! -e "$CTL/FREE" ]; do sleep 0.05; done
  rm -f "$DATA/filler"
  touch "$CTL/FREED"
) &
exec "$@"
"""


def namespace() -> list[str] | None:
    if shutil.which("unshare") is None:
        return None
    command = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user", "--mount"]
    probe = subprocess.run([*command, "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"], capture_output=True)
    return command if probe.returncode == 0 else None


def wait_for(path: Path, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def call(origin: str, token: str, tool: str, args: dict):
    async def go():
        async with mcp_client(f"{origin}/mcp", token) as client:
            return await client.call_tool(tool, args)

    return asyncio.run(go())


def test_a_full_disk_while_filing_says_nothing_was_written_and_a_retry_is_safe(tmp_path):
    command = namespace()
    if command is None:
        pytest.skip("needs unshare and a mount namespace (tmpfs) to fill a real disk")
    seed, data, ctl = tmp_path / "seed", tmp_path / "data", tmp_path / "ctl"
    for folder in (seed, data, ctl):
        folder.mkdir()
    store = SQLiteStore(str(seed / "countersign.db"))
    workspace, person = accounts.create_workspace(store.workspaces, "Acme", "owner@example.com")
    seed_small(store, workspace.id)
    token = accounts.create_connection(store.workspaces, store.connections, workspace.id, person.id, "Agent").token
    store.close()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("COUNTERSIGN_")}
    env.update(PYTHONPATH=os.pathsep.join([str(REPO / "functions"), str(REPO)]),  # this checkout first
               DATA=str(data), SEED=str(seed), CTL=str(ctl))
    log = open(tmp_path / "server.log", "wb")
    proc = subprocess.Popen([*command, "sh", "-c", SCRIPT, "sh", sys.executable, "-m", "tests.crash.server",
                             str(data), str(port)], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
    origin = f"http://localhost:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, (tmp_path / "server.log").read_text()
            try:
                if httpx2.get(f"{origin}/", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.1)

        (ctl / "FILL").touch()
        wait_for(ctl / "FULL")
        refused = call(origin, token, "create_transactions", CALL)
        assert refused.is_error
        text = refused.content[0].text
        assert "disk is full" in text and "nothing was written" in text, text
        assert "calling again with the same arguments is safe" in text, text
        assert "Traceback" not in text and "sqlite" not in text.lower()

        (ctl / "FREE").touch()
        wait_for(ctl / "FREED")
        held = call(origin, token, "create_transactions", CALL)
        assert not held.is_error, held.content[0].text
        assert held.structured_content["status"] == "pending"
        again = call(origin, token, "create_transactions", CALL)
        assert again.structured_content["confirmationId"] == held.structured_content["confirmationId"]
        waiting = call(origin, token, "list_confirmations", {}).structured_content["confirmations"]
        assert [c["confirmationId"] for c in waiting] == [held.structured_content["confirmationId"]]
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
