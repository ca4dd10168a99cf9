"""Every test under tests/unit is a unit test of the pure core (marker ``unit``); ``ring`` is the
keyring the ticket tests (test_ticket_*.py) sign and verify with."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from countersign.core.tickets import Keyring
from tests.unit.tickets import SECRET_A

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    # This hook sees every collected item of the session, not only this folder's: filter by path.
    for item in items:
        path = Path(str(item.path)).resolve()
        if path == _HERE or _HERE in path.parents:
            item.add_marker(pytest.mark.unit)


@pytest.fixture
def ring() -> Keyring:
    """A keyring of the ticket tests' SECRET_A (tests/unit/tickets.py)."""
    return Keyring.from_secrets([SECRET_A])


@pytest.fixture
def clean_env(monkeypatch):
    """The CLI reads the process environment: start without any COUNTERSIGN_ variable."""
    for name in [n for n in os.environ if n.startswith("COUNTERSIGN_")]:
        monkeypatch.delenv(name, raising=False)
