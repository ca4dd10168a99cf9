"""Shared fixtures. Every test runs on loopback only and never touches real AWS."""

from __future__ import annotations

import os

# Never let a test reach real AWS: fake credentials and a fixed region for boto3/moto.
os.environ.setdefault("AWS_DEFAULT_REGION", "eu-west-1")
os.environ["AWS_ACCESS_KEY_ID"] = "testing"
os.environ["AWS_SECRET_ACCESS_KEY"] = "testing"
os.environ["AWS_SECURITY_TOKEN"] = "testing"
os.environ["AWS_SESSION_TOKEN"] = "testing"
os.environ.pop("AWS_PROFILE", None)
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "1")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "countersign-tests")

import dataclasses
import logging
import shutil
import tempfile
from pathlib import Path

import pytest
from xdist.scheduler import LoadFileScheduling

from countersign import settings as settings_mod
from countersign.gate import ask as gate_ask
from countersign.runtime import build
from countersign.surfaces.local.app import build_local
from tests.deploy import sam_build
from tests.deploy.tools import SAM_BUILD_TEST, start_sam_build
from tests.support.harness import SECRETS, TRANSCRIPT, Tenant, all_toolsets, new_tenant, secrets_of_run
from tests.support.live import LiveServer
from tests.support.secret_scan import occurring


@pytest.fixture
def anyio_backend():
    return "asyncio"


class _LogCapture(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        try:
            self.lines.append(self.format(record))
        except Exception:  # noqa: BLE001, S110  # pragma: no cover - a log handler never breaks the test it watches
            pass


@pytest.fixture(scope="session", autouse=True)
def secret_scan():
    """At the end of the run, every MCP response the tests received (Python and TypeScript
    clients, local server and Lambda handlers) and every log line the process wrote are scanned:
    none may contain a ticket, a question's nonce, a signing key or a request-state key.

    Fixtures that make keys or cards add them to ``SECRETS``; the nonces are recorded here; the
    OAuth clients' codes, PKCE verifiers and tokens are added as the clients see them
    (tests/support/oauth.py, tests/browser/test_oauth_clients.py).
    """
    capture = _LogCapture()
    logging.getLogger().addHandler(capture)
    original_ask_form = gate_ask.AskForm

    class RecordingAskForm(original_ask_form):  # every nonce the gate seals into a question
        def __post_init__(self):
            SECRETS.add(self.state["n"])

    gate_ask.AskForm = RecordingAskForm
    yield
    gate_ask.AskForm = original_ask_form
    logging.getLogger().removeHandler(capture)
    responses = b"".join(TRANSCRIPT).decode("utf-8", "replace")
    logs = "\n".join(capture.lines)
    leaked = [s[:12] + "…" for s in occurring((s for s in SECRETS if len(s) >= 16), responses, logs)]
    assert not leaked, f"secrets reached an MCP response or a log line: {leaked}"


@pytest.fixture(scope="session")
def live(tmp_path_factory):
    """(runtime, server): the one live local server of this test run."""
    data = tmp_path_factory.mktemp("live")
    # Slack's Web API: a loopback port nobody listens on, so no test reaches Slack (the Slack tests
    # point it at their stand-in, tests/support/slack_api.py)
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(data), "COUNTERSIGN_SLACK_API_URL": "http://127.0.0.1:9/api/"})
    runtime = build(settings, toolsets=all_toolsets())
    app, _ = build_local(settings, runtime=runtime)
    server = LiveServer(app).start()
    runtime.desk.settings = dataclasses.replace(settings, public_url=server.origin)
    yield runtime, server
    server.stop()
    found = secrets_of_run(runtime)
    assert len(found) >= 2, "the scan found no keys to look for"
    SECRETS.update(found)


@pytest.fixture
def tenant(live) -> Tenant:
    runtime, server = live
    return new_tenant(runtime, server.origin)


@pytest.fixture
def configure(live):
    """Change process settings for one test (e.g. ``configure(fallback="code")``); restored after."""
    runtime, _ = live
    original = runtime.desk.settings

    def apply(**changes):
        runtime.desk.settings = dataclasses.replace(runtime.desk.settings, **changes)

    yield apply
    runtime.desk.settings = original


def pytest_collection_modifyitems(config, items):
    """Browser tests run last: Playwright's sync API keeps an event loop registered on the main
    thread for as long as the session's browser lives, and async tests cannot start after it."""
    items.sort(key=lambda item: "tests/browser/" in str(item.fspath).replace("\\", "/"))


@pytest.fixture(scope="session")
def document_host():
    """An https host on 127.0.0.1 (its own throwaway CA) serving client ID metadata documents."""
    from tests.support.oauth import start_document_host

    host = start_document_host()
    yield host
    host.stop()


@pytest.fixture
def cimd_fetcher(live, document_host):
    """The live server fetches metadata documents in the explicit test setting for this test:
    loopback addresses allowed, the document host's CA trusted. Restored after."""
    _, server = live
    endpoints = server.server.config.app.state.oauth
    original = endpoints.fetcher
    endpoints.fetcher = document_host.fetcher()
    yield endpoints.fetcher
    endpoints.fetcher = original


# -- a parallel run (pytest-xdist): this process only hands tests to the workers -------------------
# Every session fixture above lives once per worker (each worker is a process with its own live
# server on its own port and data folder, and scans its own responses and log lines). What must
# happen once per run happens here: test_sam_build's ``sam build`` (tests/deploy/sam_build.py).

_SAM_BUILD_FOLDER: Path | None = None


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """Each worker learns where this run's ``sam build`` runs, if it runs."""
    global _SAM_BUILD_FOLDER
    if _SAM_BUILD_FOLDER is None:
        _SAM_BUILD_FOLDER = Path(tempfile.mkdtemp(prefix="countersign-sam-build-"))
    node.workerinput["countersign_sam_build"] = str(_SAM_BUILD_FOLDER)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node, ids):
    """The first worker's collection says whether test_sam_build runs: then its build starts now."""
    if _SAM_BUILD_FOLDER is not None and SAM_BUILD_TEST in ids and not node.config.option.collectonly:
        start_sam_build(_SAM_BUILD_FOLDER)


# Files whose tests share one fixture above module scope, given to one worker together under
# ``--dist loadfile`` (scripts/test): the deploy rehearsal (tests/deploy/conftest.py, package scope).
SHARED_SCOPES = {
    "tests/deploy/test_rehearsal.py": "tests/deploy: the rehearsal",
    "tests/deploy/test_protection.py": "tests/deploy: the rehearsal",
}


class _FilesTogether(LoadFileScheduling):
    """``--dist loadfile``, with the files of SHARED_SCOPES each kept with the others of its scope,
    handed out in the order of the collection: xdist would put the files with most tests first,
    and a worker given a browser file before others could not start an async test after it
    (pytest_collection_modifyitems above)."""

    def _split_scope(self, nodeid: str) -> str:
        path = super()._split_scope(nodeid)
        return SHARED_SCOPES.get(path, path)

    def schedule(self) -> None:
        self.config.option.loadscopereorder = False
        super().schedule()


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") == "loadfile":
        return _FilesTogether(config, log)
    return None


def pytest_sessionfinish(session):
    if getattr(session.config, "workerinput", None) is None and _SAM_BUILD_FOLDER is not None:
        sam_build.stop()
        shutil.rmtree(_SAM_BUILD_FOLDER, ignore_errors=True)
