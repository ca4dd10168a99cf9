"""``countersign serve`` as a person runs it: a real process on 127.0.0.1, its first words, the
public URL it records for the CLI, the forwarding headers it does not trust, and the one line it
stops with when the database cannot be used (docs/operations.md)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest

from tests.support.read_only import run_on_read_only

REPO = Path(__file__).resolve().parents[2]
LISTENING = "countersign is listening on"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COUNTERSIGN_")}
    env.update(extra)
    return env


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "countersign.cli", *args], cwd=REPO, env=env or clean_env(),
                          capture_output=True, text=True, timeout=timeout)


class Served:
    """``countersign serve`` in a process of its own, read until it says it listens."""

    def __init__(self, data: Path, *args: str, env: dict[str, str] | None = None):
        self.port = free_port()
        self.origin = f"http://localhost:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "countersign.cli", "serve", "--data", str(data), "--port", str(self.port), *args],
            cwd=REPO, env=env or clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.out: list[str] = []
        self.err: list[str] = []
        self.listening = threading.Event()
        threading.Thread(target=self._read, args=(self.proc.stdout, self.out), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, self.err), daemon=True).start()
        if not self.listening.wait(60):
            self.stop()
            raise AssertionError("the server never said it listens:\n" + "".join(self.out + self.err))
        time.sleep(0.2)  # the rest of the start-up text follows the first line

    def _read(self, stream, lines: list[str]) -> None:
        for line in stream:
            lines.append(line)
            if line.startswith(LISTENING):
                self.listening.set()

    @property
    def text(self) -> str:
        return "".join(self.out)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


@pytest.fixture
def served(tmp_path):
    running: list[Served] = []

    def start(*args: str, data: Path | None = None, env: dict[str, str] | None = None) -> Served:
        server = Served(data or tmp_path / "data", *args, env=env)
        running.append(server)
        return server

    yield start
    for server in running:
        server.stop()


# -- what a person sees, and the links the CLI prints ----------------------------------------------


def test_the_first_words_say_what_to_do_next(served, tmp_path):
    server = served("--demo", env=clean_env(COUNTERSIGN_CLI="scripts/countersign"))
    demo = json.loads((tmp_path / "data" / "demo.json").read_text())
    text, mcp, token = server.text, f"{server.origin}/mcp", demo["agent_token"]
    assert text.startswith(f"{LISTENING} {server.origin}")
    assert demo["signin_url"] in text
    assert f"claude mcp add --transport http countersign {mcp} --header \"Authorization: Bearer {token}\"" in text
    configs = [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]
    assert {"mcpServers": {"countersign": {"url": mcp, "headers": {"Authorization": f"Bearer {token}"}}}} in configs
    assert {"servers": {"countersign": {"type": "http", "url": mcp,
                                        "headers": {"Authorization": f"Bearer {token}"}}}} in configs
    # How to get a new sign-in link, as it must be typed; and it works, printing this server's origin.
    command = re.search(r"scripts/countersign (signin-link .*)", text).group(1).split()
    assert command == ["signin-link", "--data", str(tmp_path / "data"), "--email", "demo@example.com"]
    link = cli(*command)
    assert link.returncode == 0, link.stderr
    assert link.stdout.startswith(f"{server.origin}/signin#token=")
    assert httpx2.get(f"{server.origin}/confirm").status_code == 200


def test_links_the_cli_prints_name_the_origin_the_server_recorded(served, tmp_path):
    data = tmp_path / "data"
    server = served("--demo", data=data)
    assert json.loads((data / "server.json").read_text()) == {"public_url": server.origin}
    server.stop()  # the record outlives the server: a restart serves the same origin
    created = cli("connection", "create", "--data", str(data), "--email", "demo@example.com", "--name", "Agent")
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["mcp_url"] == f"{server.origin}/mcp"
    explicit = cli("signin-link", "--data", str(data), "--email", "demo@example.com",
                   env=clean_env(COUNTERSIGN_PUBLIC_URL="https://confirm.example.com"))
    assert explicit.stdout.startswith("https://confirm.example.com/signin#token=")


def test_without_demo_it_says_how_to_make_a_workspace(served):
    text = served().text
    assert "countersign workspace create" in text and "countersign connection create" in text
    assert "Bearer cs_…" in text


# -- forwarding headers ---------------------------------------------------------------------------


def test_ctrl_c_stops_it_with_its_shutdown_lines_and_no_traceback(served):
    """The start-up text says "Stop with Ctrl+C": that ends it cleanly (exit 0), the app shut down,
    not with uvicorn's re-raised interrupt as two tracebacks."""
    server = served("--demo")
    assert "Stop with Ctrl+C" in server.text
    server.proc.send_signal(signal.SIGINT)
    assert server.proc.wait(15) == 0
    time.sleep(0.2)  # the reader threads take the last lines
    said = "".join(server.err + server.out)
    assert "Application shutdown complete" in said
    assert "Traceback" not in said and "KeyboardInterrupt" not in said, said


def test_a_forged_forwarded_for_does_not_lift_the_per_address_limit(served):
    """Locally the connecting address is the client: rotating X-Forwarded-For from 127.0.0.1 gets
    20 sign-in requests per 15 minutes, like any one address (5 per email: rotate those too)."""
    origin = served().origin
    answers = [httpx2.post(f"{origin}/api/signin/request", json={"email": f"a{i}@example.com"},
                           headers={"Origin": origin, "X-Forwarded-For": f"203.0.113.{i}"}, timeout=10).status_code
               for i in range(21)]
    assert answers == [202] * 20 + [429]


def test_a_configured_proxy_is_believed(served):
    origin = served(env=clean_env(COUNTERSIGN_TRUSTED_PROXIES="127.0.0.1")).origin
    answers = [httpx2.post(f"{origin}/api/signin/request", json={"email": f"a{i}@example.com"},
                           headers={"Origin": origin, "X-Forwarded-For": f"203.0.113.{i}"}, timeout=10).status_code
               for i in range(21)]
    assert answers == [202] * 21  # 21 different clients behind the proxy


def test_what_the_server_logs_is_redacted_as_on_aws(served):
    """Its log lines go through the functions' redaction (docs/security.md): a secret in a request
    line is logged as ``[redacted]``, and the line itself is still there."""
    server = served()
    secret = "cs_" + "Zq7Rm2Xk9Lp4Vw8N" * 2
    assert httpx2.get(f"{server.origin}/api/nothing?token={secret}&ticket=a", timeout=10).status_code == 404
    deadline = time.monotonic() + 10
    while not any("/api/nothing" in line for line in server.out + server.err) and time.monotonic() < deadline:
        time.sleep(0.05)
    [line] = [line for line in server.out + server.err if "/api/nothing" in line]
    assert "token=[redacted]" in line and "404" in line, line
    assert secret not in "".join(server.out + server.err)


def test_a_wrong_trusted_proxy_value_stops_start_up(tmp_path):
    done = cli("serve", "--data", str(tmp_path / "d"), env=clean_env(COUNTERSIGN_TRUSTED_PROXIES="my-proxy"))
    assert done.returncode == 2
    assert "COUNTERSIGN_TRUSTED_PROXIES" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("unshare") is None,
                    reason="as root a read-only folder is still writable; a read-only mount needs unshare")
def test_demo_on_a_read_only_data_folder_stops_naming_the_folder(served, tmp_path):
    """A demo made before, then its folder read-only: minting the fresh sign-in link cannot be
    written, and ``serve --demo`` says which folder, exits 2, and prints no traceback."""
    data = tmp_path / "data"
    served("--demo").stop()  # the demo, as a person stops it (its database's -wal stays beside it)
    demo = (data / "demo.json").read_text()
    command = [sys.executable, "-m", "countersign.cli", "serve", "--demo", "--data", str(data),
               "--port", str(free_port())]
    done = run_on_read_only(command, data, cwd=REPO, env=clean_env())
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr and LISTENING not in done.stdout
    [error] = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert f"serve --demo cannot write to the data folder {data} " in error, error
    assert "--data" in error and "read-only" in error, error
    assert (data / "demo.json").read_text() == demo  # the link it could not save was not handed out either


SETTLED = """
import gc, json, os, sys
from countersign import settings
from countersign.surfaces.local.app import build_local
from countersign.surfaces.local.run import serve
app, _ = build_local(settings.load({"COUNTERSIGN_DATA": sys.argv[1]}), demo=True)
def listening():
    print(json.dumps({"frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects())}), flush=True)
    os._exit(0)
serve(app, "127.0.0.1", int(sys.argv[2]), on_listening=listening)
"""


def test_once_listening_a_full_collection_walks_none_of_what_start_up_built(tmp_path):
    """The server as ``countersign serve`` runs it (``serve``): by the time it listens, what it
    built (some 100,000 objects: a ~20 ms walk of the event loop at every full collection) is
    frozen, and a collection walks only what requests make (countersign.platform.heap)."""
    done = subprocess.run([sys.executable, "-c", SETTLED, str(tmp_path / "d"), str(free_port())], cwd=REPO,
                          env=clean_env(PYTHONPATH=str(REPO / "functions")), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    heap = json.loads(done.stdout.strip().splitlines()[-1])
    assert heap["frozen"] > 50_000, heap
    assert heap["tracked"] < heap["frozen"] // 100, heap
