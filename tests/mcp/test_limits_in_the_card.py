"""The request limits inside the card's transaction (docs/operations.md, "Request limits"), on a
local server in process (SQLite): a held call and a click are counted once, by the write that files
or answers their card; a race lost at a counter writes nothing and says so; two requests served at
once never take each other's counts."""

from __future__ import annotations

import collections
import tempfile
import time

import anyio
import httpx2
import pytest

from countersign import settings as settings_mod
from countersign.identity import accounts, sessions
from countersign.runtime import build
from countersign.store.limits import RequestCounts
from countersign.surfaces.api.session import COOKIE, CSRF_HEADER
from countersign.surfaces.http.request_limits import MCP_MESSAGE, PAGE_MESSAGE, WINDOW
from countersign.surfaces.local.app import build_local
from tests.support.harness import DECLINE, accept, all_toolsets, mcp_client
from tests.support.sample_toolset import seed_notes
from tests.support.stores import with_roles

pytestmark = pytest.mark.anyio

ORIGIN = "https://confirm.example.com"
ADDRESS = "127.0.0.1"  # httpx's ASGI transport's client


class Racing:
    """The callers role of a store, and, once ``armed``, another request that takes what is left of
    the request's counters right after they were read with the caller (the race the card's
    transaction must catch)."""

    def __init__(self, callers, limits):
        self.callers, self.limits, self.armed = callers, limits, False

    def __getattr__(self, name):
        return getattr(self.callers, name)

    def _race(self, counts: RequestCounts | None) -> None:
        if self.armed and counts is not None:
            while self.limits.take_counts(RequestCounts(counts.counters, counts.now, counts.window)):
                pass

    def get_connection_as(self, token_hash, owner, counts=None):
        found = self.callers.get_connection_as(token_hash, owner, counts)
        self._race(counts)
        return found

    def get_session_and_card(self, session_hash, owner, now, card_id, counts=None):
        found = self.callers.get_session_and_card(session_hash, owner, now, card_id, counts)
        self._race(counts)
        return found


class Alone:
    """The limits role of a store, counting the requests counted alone (not in a card's transaction)."""

    def __init__(self, limits):
        self.limits, self.taken = limits, 0

    def __getattr__(self, name):
        return getattr(self.limits, name)

    def take_counts(self, counts):
        self.taken += 1
        return self.limits.take_counts(counts)


class Server:
    def __init__(self, tmp: str, **limits: str):
        settings = settings_mod.load({"COUNTERSIGN_DATA": tmp, "COUNTERSIGN_PUBLIC_URL": ORIGIN, **limits})
        self.runtime = build(settings, toolsets=all_toolsets())
        now = int(time.time())
        self.runtime.desk.clock = lambda: float(now - now % WINDOW)  # a window's start, held: no burst straddles two
        store = self.runtime.store
        self.racing, self.alone = Racing(store.callers, store.limits), Alone(store.limits)
        # what the layers in front of the gate read and count through (the gate's desk has the store itself)
        self.runtime.store = with_roles(store, callers=self.racing, limits=self.alone)
        self.app, _ = build_local(settings, runtime=self.runtime)
        self.store = store
        self.workspace, self.person = accounts.create_workspace(store.workspaces, "Acme", "owner@example.com")
        seed_notes(store, self.workspace.id)
        self.token = accounts.create_connection(store.workspaces, store.connections, self.workspace.id, self.person.id,
                                                "agent").token
        self.requests = 0
        self.by_token: collections.Counter[str] = collections.Counter()  # requests to /mcp, per bearer token
        self.transport = httpx2.ASGITransport(app=self._counting)

    async def _counting(self, scope, receive, send):
        if scope["type"] == "http":
            self.requests += 1
            bearer = dict(scope["headers"]).get(b"authorization", b"").decode()
            self.by_token[bearer.removeprefix("Bearer ")] += 1
        await self.app(scope, receive, send)

    def hits(self, key: str) -> int:
        counts = RequestCounts(((key, 1),), self.runtime.desk.now(), WINDOW)
        self.store.limits.read_counts(counts)
        return (counts.seen or {}).get(key, 0)

    def connection_key(self, token: str) -> str:
        from countersign.store.hashes import secret_hash

        return f"mcp-connection:{secret_hash(token)[:32]}"

    def pending(self) -> list:
        return self.store.cards.list_pending_cards(self.workspace.id, self.person.id, self.runtime.desk.now())[0]

    def note(self, note_id: str) -> str:
        return self.store.docs.get_doc(self.workspace.id, "note", note_id).data["text"]

    async def click(self, card_id: str) -> httpx2.Response:
        session_id, signed = sessions.start_session(self.store.sessions, self.runtime.sessions, self.person,
                                                    self.workspace,
                                                    self.runtime.desk.now())
        async with httpx2.AsyncClient(transport=self.transport, base_url=ORIGIN, cookies={COOKIE: session_id}) as http:
            # once to the card (the process learns whose the session is), then the click
            await http.get(f"/api/cards/{card_id}")
            return await http.post(f"/api/cards/{card_id}/confirm",
                                   headers={"origin": ORIGIN, CSRF_HEADER: signed.session.csrf_token})


    async def clicks(self, card_id: str, *paths: str) -> list[tuple[httpx2.Response, int, int]]:
        """Each of ``paths`` (``decline``, ``reopen``: on the card the previous click answered with,
        the first on ``card_id``) clicked in turn in one session: (the reply, the request's hits on
        the page's counter, the requests counted alone meanwhile)."""
        session_id, signed = sessions.start_session(self.store.sessions, self.runtime.sessions, self.person,
                                                    self.workspace, self.runtime.desk.now())
        page, out = f"page-address:{ADDRESS}", []
        async with httpx2.AsyncClient(transport=self.transport, base_url=ORIGIN, cookies={COOKIE: session_id}) as http:
            await http.get(f"/api/cards/{card_id}")  # the process learns whose the session is
            for path in paths:
                before = self.hits(page), self.alone.taken
                done = await http.post(f"/api/cards/{card_id}/{path}",
                                       headers={"origin": ORIGIN, CSRF_HEADER: signed.session.csrf_token})
                out.append((done, self.hits(page) - before[0], self.alone.taken - before[1]))
                card_id = done.json().get("id", card_id)
        return out


async def held_call(server: Server, text: str = "changed", token: str | None = None):
    async with mcp_client(f"{ORIGIN}/mcp", token or server.token, transport=server.transport) as client:
        return await client.call_tool("edit_note", {"note_id": "n1", "text": text})


async def test_a_held_call_is_counted_once_in_its_cards_filing():
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(tmp, COUNTERSIGN_LIMIT_CONNECTION="30", COUNTERSIGN_LIMIT_ADDRESS="120")
        async with server.app.router.lifespan_context(server.app):
            async with mcp_client(f"{ORIGIN}/mcp", server.token, transport=server.transport) as client:
                await client.list_tools()
                before = server.hits(server.connection_key(server.token)), server.requests, server.alone.taken
                result = await client.call_tool("edit_note", {"note_id": "n1", "text": "changed"})
                hits, requests, alone = (server.hits(server.connection_key(server.token)) - before[0],
                                         server.requests - before[1], server.alone.taken - before[2])
            assert result.structured_content["status"] == "pending" and len(server.pending()) == 1
            # every request counted once; the one that filed the card, in the filing's own transaction
            assert requests >= 1 and hits == requests and alone == requests - 1
            assert server.hits(f"mcp-address:{ADDRESS}") == server.hits(server.connection_key(server.token))
        server.store.close()


async def test_a_held_call_that_loses_the_race_for_the_last_count_files_nothing():
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(tmp, COUNTERSIGN_LIMIT_CONNECTION="30")
        async with server.app.router.lifespan_context(server.app):
            async with mcp_client(f"{ORIGIN}/mcp", server.token, transport=server.transport) as client:
                server.racing.armed = True
                result = await client.call_tool("edit_note", {"note_id": "n1", "text": "changed"})
                server.racing.armed = False
            assert result.is_error
            assert result.content[0].text.endswith(f"{MCP_MESSAGE.format(wait=WINDOW)} Nothing was written.")
            assert server.pending() == [] and server.note("n1") == "text 1"
            # the next request is refused before any work, as HTTP 429
            async with httpx2.AsyncClient(transport=server.transport, base_url=ORIGIN) as http:
                refused = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                          headers={"authorization": f"Bearer {server.token}",
                                                   "accept": "application/json, text/event-stream"})
            assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
        server.store.close()


async def test_a_click_is_counted_once_in_its_commit_and_a_lost_race_leaves_the_card_pending():
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(tmp, COUNTERSIGN_LIMIT_PAGE="60")
        async with server.app.router.lifespan_context(server.app):
            first = (await held_call(server, "first")).structured_content["confirmationId"]
            page = f"page-address:{ADDRESS}"
            before = server.hits(page)
            done = await server.click(first)
            assert done.status_code == 200 and done.json()["state"] == "completed"
            assert server.hits(page) == before + 2  # the card's page, then the click in its commit
            assert server.note("n1") == "first"
            second = (await held_call(server, "second")).structured_content["confirmationId"]
            server.racing.armed = True
            refused = await server.click(second)
            server.racing.armed = False
            assert refused.status_code == 429, refused.text
            assert refused.json()["error"]["code"] == "rate_limited"
            assert refused.headers["retry-after"] == str(WINDOW)
            assert refused.json()["error"]["message"] == PAGE_MESSAGE.format(wait=WINDOW)
            assert [c.id for c in server.pending()] == [second] and server.note("n1") == "first"
            trail = server.store.cards.audit_trail(server.workspace.id, second)
            assert [e.event for e in trail] == ["filed"]
        server.store.close()


async def test_two_requests_served_at_once_never_take_each_others_counts():
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(tmp, COUNTERSIGN_LIMIT_CONNECTION="100")
        other = accounts.create_connection(server.store.workspaces, server.store.connections, server.workspace.id,
                                           server.person.id, "other").token
        async with server.app.router.lifespan_context(server.app):
            async with mcp_client(f"{ORIGIN}/mcp", server.token, transport=server.transport) as mine, \
                    mcp_client(f"{ORIGIN}/mcp", other, transport=server.transport) as theirs:
                start = {t: (server.hits(server.connection_key(t)), server.by_token[t]) for t in (server.token, other)}
                requests, alone = server.requests, server.alone.taken

                async def calls(client, prefix: str, n: int) -> None:
                    for i in range(n):
                        await client.call_tool("edit_note", {"note_id": "n2", "text": f"{prefix} {i}"})

                async with anyio.create_task_group() as group:
                    group.start_soon(calls, mine, "mine", 6)
                    group.start_soon(calls, theirs, "theirs", 3)
            # each call's count went into its card's filing, in the worker thread the filing ran in
            assert len(server.pending()) == 9 and server.alone.taken - alone == server.requests - requests - 9
            for token, calls_made in ((server.token, 6), (other, 3)):
                hits, requests = start[token]
                assert server.by_token[token] - requests >= calls_made
                assert server.hits(server.connection_key(token)) - hits == server.by_token[token] - requests
        server.store.close()


async def test_a_2026_question_is_counted_in_the_look_at_its_request_and_its_answer_in_its_commit():
    """A 2026 question round writes no card: its counts are taken in the write that looks whether a
    card holds its request (store.cards.request_holder), not in a write of their own after its work;
    its answer is counted in the commit that files its card. Asked again right after the no, the
    question gets that card, asks nothing and writes nothing, and is counted after its work."""
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(tmp, COUNTERSIGN_LIMIT_CONNECTION="30", COUNTERSIGN_LIMIT_ADDRESS="120")
        asked: list = []
        edit = {"note_id": "n1", "text": "changed"}
        key = server.connection_key(server.token)
        async with server.app.router.lifespan_context(server.app):
            async with mcp_client(f"{ORIGIN}/mcp", server.token, transport=server.transport, answer=DECLINE,
                                  record=asked) as client:
                await client.list_tools()
                before = server.hits(key), server.requests, server.alone.taken
                no = (await client.call_tool("edit_note", edit)).structured_content
                hits, requests, alone = server.hits(key) - before[0], server.requests - before[1], \
                    server.alone.taken - before[2]
                assert no["status"] == "declined" and len(asked) == 1 and requests >= 2
                # every request counted once; the question and its answer, neither in a write of its own
                assert hits == requests and alone == requests - 2
                before = server.hits(key), server.requests, server.alone.taken
                again = (await client.call_tool("edit_note", edit)).structured_content
                hits, requests, alone = server.hits(key) - before[0], server.requests - before[1], \
                    server.alone.taken - before[2]
            assert again["status"] == "declined" and again["confirmationId"] == no["confirmationId"]
            assert len(asked) == 1 and server.note("n1") == "text 1"
            assert hits == requests and alone == requests  # a card held it: counted after its work, as before
            trail = server.store.cards.audit_trail(server.workspace.id, no["confirmationId"])
            assert [e.event for e in trail] == ["filed", "declined"]
        server.store.close()


async def test_a_2026_question_that_loses_the_race_for_the_last_count_asks_nothing_and_writes_nothing():
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(tmp, COUNTERSIGN_LIMIT_CONNECTION="30")
        asked: list = []
        async with server.app.router.lifespan_context(server.app):
            async with mcp_client(f"{ORIGIN}/mcp", server.token, transport=server.transport, answer=accept(),
                                  record=asked) as client:
                await client.list_tools()
                server.racing.armed = True
                result = await client.call_tool("edit_note", {"note_id": "n1", "text": "changed"})
                server.racing.armed = False
            assert result.is_error and asked == []
            assert result.content[0].text.endswith(f"{MCP_MESSAGE.format(wait=WINDOW)} Nothing was written.")
            assert server.pending() == [] and server.note("n1") == "text 1"
            assert server.store.cards.list_card_history(server.workspace.id, server.person.id,
                                                        server.runtime.desk.now())[0] == []
        server.store.close()


async def test_a_request_counted_after_its_work_is_counted_before_its_reply_ends():
    # A ping files no card: it is counted by one write after its work, and that write is on disk
    # before the reply's last bytes go out, so the caller's next request always finds it counted
    # (a count taken after the reply raced the next request: it could slip past a spent limit).
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(tmp, COUNTERSIGN_LIMIT_CONNECTION="30", COUNTERSIGN_LIMIT_ADDRESS="120")
        key = server.connection_key(server.token)
        seen_at_end: list[int] = []

        async def watching(scope, receive, send):
            async def watched(message):
                if message["type"] == "http.response.body" and not message.get("more_body"):
                    seen_at_end.append(server.hits(key))
                await send(message)
            await server.app(scope, receive, watched)

        async with server.app.router.lifespan_context(server.app):
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=watching), base_url=ORIGIN) as http:
                for _ in range(3):
                    answered = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                               headers={"authorization": f"Bearer {server.token}",
                                                        "accept": "application/json, text/event-stream"})
                    assert answered.status_code != 429
        assert seen_at_end == [1, 2, 3]
        assert server.alone.taken == 3  # one write each, not two
        server.store.close()


async def test_a_decline_a_reopen_and_an_agents_cancel_are_each_counted_once_in_their_cards_commit():
    """The counts travel with the request's answer to the write that records it (no context
    variable): the page's Decline and reopen, and the agent's cancel_confirmation, are each counted
    in the commit that answers or files their card, never by a write of their own."""
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(tmp, COUNTERSIGN_LIMIT_PAGE="60", COUNTERSIGN_LIMIT_CONNECTION="30")
        async with server.app.router.lifespan_context(server.app):
            first = (await held_call(server, "first")).structured_content["confirmationId"]
            (declined, hits, alone), (reopened, hits_again, alone_again) = await server.clicks(first, "decline",
                                                                                               "reopen")
            assert declined.status_code == 200 and declined.json()["state"] == "declined"
            assert reopened.status_code == 200 and reopened.json()["state"] == "pending"
            assert reopened.json()["id"] != first
            assert (hits, alone, hits_again, alone_again) == (1, 0, 1, 0)
            key = server.connection_key(server.token)
            async with mcp_client(f"{ORIGIN}/mcp", server.token, transport=server.transport) as client:
                await client.list_tools()
                before = server.hits(key), server.requests, server.alone.taken
                cancelled = (await client.call_tool("cancel_confirmation",
                                                    {"confirmation_id": reopened.json()["id"]})).structured_content
                hits, requests, alone = (server.hits(key) - before[0], server.requests - before[1],
                                         server.alone.taken - before[2])
            assert cancelled["status"] == "withdrawn" and server.pending() == []
            assert requests >= 1 and hits == requests and alone == requests - 1
            trail = server.store.cards.audit_trail(server.workspace.id, reopened.json()["id"])
            assert [e.event for e in trail] == ["filed", "withdrawn"]
        server.store.close()
