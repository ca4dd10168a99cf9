"""Request limits on the live local server (SQLite): per connection and per address on /mcp, per
address on /api, answered 429 with Retry-After (countersign.surfaces.http.request_limits). The same middleware
runs in the Lambda functions on DynamoDB (tests/deploy/test_rehearsal.py bursts it there)."""

from __future__ import annotations

import json

import httpx2
import pytest

from countersign.surfaces.http.request_limits import WINDOW
from tests.support.harness import new_tenant

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def mcp(tenant, token: str | None = None) -> httpx2.Response:
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json",
               "authorization": f"Bearer {token or tenant.token}"}
    return httpx2.post(f"{tenant.origin}/mcp", headers=headers, content=json.dumps(PING), timeout=10)


def page(origin: str) -> httpx2.Response:
    return httpx2.get(f"{origin}/api/session", timeout=10)


@pytest.fixture
def window(clock):
    """The desk's clock at the start of a fresh window of its own, so no burst straddles two."""
    clock.now = float(int(clock.now) - int(clock.now) % WINDOW)
    return clock


def test_off_by_default_locally(live, tenant, window):
    runtime, _ = live
    assert (runtime.desk.settings.limit_connection, runtime.desk.settings.limit_address) == (0, 0)
    assert all(mcp(tenant).status_code != 429 for _ in range(12))
    assert all(page(tenant.origin).status_code == 401 for _ in range(12))


def test_a_noisy_connection_is_refused_while_another_and_the_page_go_on(live, tenant, configure, window):
    runtime, server = live
    configure(limit_connection=5, limit_address=8, limit_page=4)
    other = new_tenant(runtime, server.origin)
    codes = [mcp(tenant).status_code for _ in range(9)]
    assert 429 not in codes[:5] and codes[5:] == [429] * 4
    refused = mcp(tenant)
    assert refused.status_code == 429 and refused.headers["retry-after"] == str(WINDOW)
    assert refused.json()["error"] == "rate_limited" and "Wait 10 s" in refused.json()["error_description"]
    # The noisy agent's refused requests did not use up the address's allowance (8): the other
    # connection, from the same address, still gets its 3 of the 8 remaining.
    assert [mcp(other).status_code != 429 for _ in range(3)] == [True] * 3
    assert mcp(other).status_code == 429  # now the address is spent: 5 + 3 + 1
    # The page has its own counters.
    assert page(server.origin).status_code == 401
    # The next window lets the noisy connection in again, with Retry-After counting down.
    window.advance(3)
    assert mcp(tenant).headers["retry-after"] == str(WINDOW - 3)
    window.advance(WINDOW)
    assert mcp(tenant).status_code != 429


def test_the_page_is_limited_per_address(live, configure, window):
    _, server = live
    configure(limit_page=3)
    codes = [page(server.origin).status_code for _ in range(4)]
    assert codes == [401, 401, 401, 429]
    refused = page(server.origin)
    assert refused.json() == {"error": {"code": "rate_limited", "message": f"Too many requests. Wait {WINDOW} s, "
                                                                         "then try again."}}
    assert refused.headers["retry-after"] == str(WINDOW)
    assert refused.headers["x-frame-options"] == "DENY"  # the API's own headers on a 429 too


def test_a_wrong_token_counts_against_the_address_only(live, tenant, configure, window):
    configure(limit_connection=2, limit_address=3)
    codes = [mcp(tenant, token=f"cs_wrong{i}").status_code for i in range(4)]
    assert codes == [401, 401, 401, 429]
