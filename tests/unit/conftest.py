"""Every test under tests/unit is a unit test of the pure core (marker ``unit``)."""

from __future__ import annotations

from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    # This hook sees every collected item of the session, not only this folder's: filter by path.
    for item in items:
        path = Path(str(item.path)).resolve()
        if path == _HERE or _HERE in path.parents:
            item.add_marker(pytest.mark.unit)
