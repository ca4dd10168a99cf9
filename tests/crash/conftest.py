"""Crash tests: real server processes killed at named points (see countersign/core/crash_points.py)."""

from __future__ import annotations

import pytest

from .harness import Crashable, Payments


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/crash/" in str(item.fspath):
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def crash(tmp_path):
    c = Crashable(tmp_path)
    yield c
    c.close()


@pytest.fixture
def payments():
    p = Payments()
    yield p
    p.close()
