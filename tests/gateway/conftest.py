"""The gateway tests' own live servers: the shared one's settings refuse loopback upstreams, so
these allow them (``COUNTERSIGN_UPSTREAM_PRIVATE``, as a home lab would). One gives an upstream
operation 20 seconds (a stdio upstream is a Python process started for each operation: on a
loaded machine that alone can take seconds); the other 4 seconds, for the test of a call that
times out (``gw_short``)."""

from __future__ import annotations

import dataclasses

import pytest

from countersign import settings as settings_mod
from countersign.runtime import build
from countersign.surfaces.local.app import build_local
from tests.support.harness import SECRETS, all_toolsets, new_tenant, secrets_of_run
from tests.support.live import LiveServer

from .support import HttpUpstream

TIMEOUT = 20
SHORT_TIMEOUT = 4
UPSTREAM_SECRET = "upstream-token-3f9a1c0d5e7b2468"
PAGE_SECRET = "page-typed-token-8e41b07c2d9f5a36"  # sent once through the Settings API


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/gateway/" in str(item.fspath):
            item.add_marker(pytest.mark.mcp)


def _gateway_server(tmp_path_factory, timeout: int):
    data = tmp_path_factory.mktemp("gateway")
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(data), "COUNTERSIGN_UPSTREAM_PRIVATE": "1",
                                  "COUNTERSIGN_UPSTREAM_TIMEOUT": str(timeout)})
    runtime = build(settings, toolsets=all_toolsets())
    app, _ = build_local(settings, runtime=runtime)
    server = LiveServer(app).start()
    runtime.desk.settings = dataclasses.replace(settings, public_url=server.origin)
    yield runtime, server
    server.stop()
    SECRETS.update(secrets_of_run(runtime) | {UPSTREAM_SECRET, PAGE_SECRET})


@pytest.fixture(scope="session")
def gateway_live(tmp_path_factory):
    yield from _gateway_server(tmp_path_factory, TIMEOUT)


@pytest.fixture(scope="session")
def gateway_live_short(tmp_path_factory):
    yield from _gateway_server(tmp_path_factory, SHORT_TIMEOUT)


@pytest.fixture(scope="session")
def shared_upstream(tmp_path_factory):
    up = HttpUpstream(tmp_path_factory.mktemp("upstream"))
    yield up
    up.kill()


@pytest.fixture
def upstream(shared_upstream):
    shared_upstream.reset()
    return shared_upstream


@pytest.fixture
def gw(gateway_live):
    runtime, server = gateway_live
    return new_tenant(runtime, server.origin)


@pytest.fixture
def gw_short(gateway_live_short):
    runtime, server = gateway_live_short
    return new_tenant(runtime, server.origin)
