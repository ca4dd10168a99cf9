"""Browser fixtures: one Debian chromium per test run, a fresh context per test.

A missing chromium FAILS the browser tests with the command that installs it; they never skip
(a skipped browser suite in CI hides a broken page). Launch rules: tests/browser/pages.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.pages import ChromiumMissing, Watch, launch, new_context

HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        try:
            browser = launch(p)
        except ChromiumMissing as exc:
            pytest.fail(str(exc), pytrace=False)
        yield browser
        browser.close()


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.fixture
def context(browser, watch):
    ctx = new_context(browser, watch)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context):
    return context.new_page()
