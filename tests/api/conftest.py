"""Fixtures for the confirm API tests (all marked ``api``)."""

from __future__ import annotations

import pytest

from tests.api.pages import Clock, Page
from tests.support.harness import Tenant, new_tenant


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/api/" in str(item.fspath):
            item.add_marker(pytest.mark.api)


@pytest.fixture
def clock(live):
    runtime, _ = live
    original = runtime.desk.clock
    fake = Clock(runtime.desk)
    runtime.desk.clock = fake
    yield fake
    runtime.desk.clock = original


@pytest.fixture
def page(live):
    _, server = live
    p = Page(server.origin)
    yield p
    p.close()


@pytest.fixture
def signed(page, tenant) -> Page:
    """The tenant's owner, signed in on the page."""
    return page.sign_in(tenant.runtime, tenant.person)


@pytest.fixture
def other_tenant(live) -> Tenant:
    runtime, server = live
    return new_tenant(runtime, server.origin)


