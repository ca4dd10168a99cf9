"""A sign-in request for a member's address and for a stranger's take the same path: the same
store write, the same email composed and rendered (only a member's is handed to the sender). So a
request that follows on the same connection, which runs while that work does, is no slower after a
member's address than after a stranger's (before, the member's email work made it about 3x slower)."""

from __future__ import annotations

import statistics
import time

import httpx2

from countersign import accounts
from countersign.core.ids import new_id
from countersign.surfaces.api.app import create_api
from tests.api.pages import signin_emails
from tests.support.live import LiveServer

FLOOR = 0.02  # the padding after the work; short, so the rounds are quick
ROUNDS = 40


def test_a_follow_up_request_is_as_fast_after_a_member_as_after_a_stranger(tenant, clock):
    runtime = tenant.runtime
    server = LiveServer(create_api(runtime, signin_floor=FLOOR), lifespan="off").start()
    origin = runtime.desk.settings.public_url
    stranger = f"{new_id('nobody')}@example.com"
    follow_up: dict[str, list[float]] = {"member": [], "stranger": []}
    try:
        with httpx2.Client(base_url=f"http://127.0.0.1:{server.port}", headers={"Origin": origin},
                           timeout=10) as http:
            http.get("/api/session")  # the connection is open before the first round
            for i in range(2 * ROUNDS):
                kind, address = ("member", tenant.person.email) if i % 2 else ("stranger", stranger)
                clock.advance(900)  # a fresh rate-limit window each round
                assert http.post("/api/signin/request", json={"email": address}).status_code == 202
                started = time.perf_counter()
                assert http.get("/api/session").status_code == 401
                follow_up[kind].append(time.perf_counter() - started)
                time.sleep(FLOOR + 0.03)  # the work and its padding are over before the next round
    finally:
        server.stop()
    member, other = (statistics.median(follow_up[k]) * 1000 for k in ("member", "stranger"))
    assert member <= other * 1.8 + 1.0, f"after a member's address {member:.2f} ms, after a stranger's {other:.2f} ms"
    assert len(signin_emails(runtime, tenant.person.email)) == ROUNDS
    assert signin_emails(runtime, stranger) == []


def test_a_token_minted_for_a_stranger_signs_nobody_in(page, tenant, clock):
    token = accounts.mint_signin_token(tenant.store, None, now=tenant.runtime.desk.now())
    response = page.complete(token)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "signin_invalid"
    assert "set-cookie" not in response.headers
