"""A sign-in request for a member's address and for a stranger's take the same path: the same
answer, then the same store calls (a token stored for both, the stranger's bound to nobody) and
the same email composed and rendered, only a member's handed to the sender. So a request that
follows on the same connection, which runs while that work does, is no slower after a member's
address than after a stranger's: bench/signin.py measures that (before, the member's email work
made it about 3x slower); here the path itself is checked, which no load can blur."""

from __future__ import annotations

import dataclasses
import threading

import httpx2

from countersign.core.ids import new_id
from countersign.identity.sessions import NOBODY, mint_signin_token
from countersign.surfaces.api.app import create_api
from tests.api.pages import signin_emails, wait_for_signin_email
from tests.support.live import LiveServer
from tests.support.stores import calls_recorded

FLOOR = 0.02  # the padding after the work; short, so the rounds are quick
ROUNDS = 3


class Recorded:
    """The store as the API is given it (:attr:`store`): every call of any method of its roles
    made, then recorded (by name, with its arguments); :meth:`wait_for` a call by name."""

    def __init__(self, store):
        self.calls, self._made = [], threading.Condition()
        self.store = calls_recorded(store, self._record)

    def _record(self, name, args, result):
        with self._made:
            self.calls.append((name, args))
            self._made.notify_all()

    def wait_for(self, name: str) -> None:
        with self._made:
            assert self._made.wait_for(lambda: any(made == name for made, _ in self.calls), 10), self.calls


def test_a_member_and_a_stranger_take_the_same_path(tenant, clock):
    runtime = tenant.runtime
    recorded = Recorded(runtime.store)
    server = LiveServer(create_api(dataclasses.replace(runtime, store=recorded.store), signin_floor=FLOOR),
                        lifespan="off").start()
    origin = runtime.desk.settings.public_url
    stranger = f"{new_id('nobody')}@example.com"
    paths: dict[str, list[list[str]]] = {"member": [], "stranger": []}
    tokens: dict[str, list] = {"member": [], "stranger": []}
    answers: dict[str, set] = {"member": set(), "stranger": set()}
    try:
        with httpx2.Client(base_url=f"http://127.0.0.1:{server.port}", headers={"Origin": origin},
                           timeout=10) as http:
            for i in range(2 * ROUNDS):
                kind, address = ("member", tenant.person.email) if i % 2 else ("stranger", stranger)
                clock.advance(900)  # a fresh rate-limit window each round
                recorded.calls.clear()
                answer = http.post("/api/signin/request", json={"email": address})
                recorded.wait_for("put_signin_token")  # the work after the answer stored its token
                if kind == "member":
                    wait_for_signin_email(runtime, address, count=len(paths["member"]) + 1)
                answers[kind].add((answer.status_code, answer.text))
                paths[kind].append([name for name, _ in recorded.calls])
                tokens[kind] += [args[0] for name, args in recorded.calls if name == "put_signin_token"]
    finally:
        server.stop()
    assert answers["member"] == answers["stranger"] and len(answers["member"]) == 1  # the same answer
    assert next(iter(answers["member"]))[0] == 202
    member_path, *_ = paths["member"]
    assert all(path == member_path for path in paths["member"] + paths["stranger"]), paths  # the same calls
    assert {"get_person_by_email", "put_signin_token"} <= set(member_path), member_path
    assert [t.person_id for t in tokens["member"]] == [tenant.person.id] * ROUNDS
    assert [(t.person_id, t.workspace_id) for t in tokens["stranger"]] == [(NOBODY, NOBODY)] * ROUNDS  # bound to nobody
    assert len(signin_emails(runtime, tenant.person.email)) == ROUNDS  # only a member's email is sent
    assert signin_emails(runtime, stranger) == []


def test_a_token_minted_for_a_stranger_signs_nobody_in(page, tenant, clock):
    token = mint_signin_token(tenant.store.sessions, None, now=tenant.runtime.desk.now())
    response = page.complete(token)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "signin_invalid"
    assert "set-cookie" not in response.headers
