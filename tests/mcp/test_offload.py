"""Where a call's store and toolset work runs (countersign.gate.offload): in a worker thread where
one event loop serves many calls (the local server, any ASGI server), on the loop in a Lambda
instance, which serves one request at a time. The answers are the same either way."""

from __future__ import annotations

import contextvars
import dataclasses
import sqlite3
import tempfile
import threading
from fractions import Fraction
from pathlib import Path

import anyio
import anyio.to_thread
import httpx2
import pytest

from countersign import settings as settings_mod
from countersign.gate import offload
from countersign.gate.offload import IN_THREADS, ONE_AT_A_TIME, PROVEN_AFTER, LightRuns, Offload, Serving
from countersign.identity import accounts
from countersign.runtime import build
from countersign.surfaces.http.request_limits import RequestLimit
from countersign.surfaces.local.app import build_local
from countersign.surfaces.mcp.server import build_server
from countersign.surfaces.mcp.transport import StatelessMCP, lambda_handler
from countersign.toolkit import Read, Toolset
from tests.support.apigw import LambdaInstance, LambdaTransport
from tests.support.harness import mcp_client
from tests.support.sample_toolset import PublishNote, seed_notes
from tests.support.stores import with_roles

pytestmark = pytest.mark.anyio

URL = "https://confirm.example.com/mcp"


class WhichThread(Read):
    name = "which_thread"
    description = "Names the thread the read runs in."

    def __init__(self):
        self.threads: list[threading.Thread] = []

    def run(self, args, ctx) -> dict:
        self.threads.append(threading.current_thread())
        return {"workspace": ctx.workspace_id}


async def test_off_the_loop_hops_unless_one_request_at_a_time():
    loop_thread = threading.current_thread()
    assert await IN_THREADS.off_the_loop(threading.current_thread) is not loop_thread
    assert await ONE_AT_A_TIME.off_the_loop(threading.current_thread) is loop_thread
    assert await IN_THREADS.off_the_loop(threading.current_thread) is not loop_thread


class CountingWhere:
    """The limits role of a store, saying which thread each request's count ran in."""

    def __init__(self, limits):
        self.limits, self.threads = limits, []

    def __getattr__(self, name):
        return getattr(self.limits, name)

    def take_counts(self, *args):
        self.threads.append(threading.current_thread())
        return self.limits.take_counts(*args)


async def test_a_process_served_one_at_a_time_keeps_its_middlewares_store_calls_on_the_loop():
    """A Lambda instance's layers in front of the tools (handlers/mcp.py, handlers/api.py): a
    request limit's count stays on the loop, as the call's work does; elsewhere it hops."""
    async def app(scope, receive, send):
        pass

    threads = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = {"COUNTERSIGN_DATA": tmp, "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com",
               "COUNTERSIGN_LIMIT_PAGE": "100"}
        for one_at_a_time in (True, False):
            runtime = build(settings_mod.load(env), one_request_at_a_time=one_at_a_time)
            store = runtime.store
            counted = CountingWhere(store.limits)
            runtime.store = with_roles(store, limits=counted)
            scope = {"type": "http", "headers": [], "client": ("127.0.0.1", 1), "path": "/api/cards"}
            await RequestLimit(app, runtime, "page")(scope, None, None)
            threads[one_at_a_time] = counted.threads
            store.close()
    assert threads[True] == [threading.current_thread()]
    assert len(threads[False]) == 1 and threads[False][0] is not threading.current_thread()


async def test_a_lambda_instance_runs_the_work_on_its_loop_and_answers_the_same():
    read = WhichThread()
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_mod.load({"COUNTERSIGN_DATA": tmp, "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com"})
        runtime = build(settings, toolsets=[Toolset(name="probe", reads=[read])])
        workspace, person = accounts.create_workspace(runtime.store.workspaces, "Probe", "probe@example.com")
        token = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, workspace.id,
                                           person.id, "probe").token
        server = build_server(runtime.desk, runtime.state_keys)

        async with mcp_client(URL, token, transport=httpx2.ASGITransport(app=StatelessMCP(server, runtime.store))) as c:
            in_process = await c.call_tool("which_thread", {})
        # as handlers/mcp.py builds it: the same desk, served one request at a time
        on_lambda_desk = dataclasses.replace(runtime.desk, offload=ONE_AT_A_TIME)
        instance = LambdaInstance(lambda_handler(build_server(on_lambda_desk, runtime.state_keys), runtime.store))
        try:
            async with mcp_client(URL, token, transport=LambdaTransport([instance])) as c:
                on_lambda = await c.call_tool("which_thread", {})
        finally:
            instance.close()
        runtime.store.close()
    assert in_process.structured_content == on_lambda.structured_content == {"workspace": workspace.id}
    served_here, on_the_instance = read.threads
    assert served_here is not threading.current_thread() and served_here.name == "AnyIO worker thread"
    # the instance's own thread, whose event loop Mangum runs: no hop to a worker thread
    assert on_the_instance.name.startswith("ThreadPoolExecutor")


# -- reads that have proven light run on the loop (countersign.gate.offload.Offload.read_work) ------
#
# What a run costs is read from the clocks offload reads (``time.perf_counter``, the wall clock;
# ``time.thread_time``, the running thread's CPU clock). Here they are clocks that move only when
# a read's work says so: what the tests check is what is decided from the costs, which a loaded
# machine's pauses would otherwise blur. How the real clocks see real work, quiet and under load,
# is bench/offload.py's to measure.


class Clocks:
    """Stands in for the ``time`` module in countersign.gate.offload: a wall clock, and a CPU
    clock per thread, that move only by what a read's work takes (:meth:`work`). Exact fractions,
    so a run of exactly the threshold measures exactly the threshold."""

    def __init__(self):
        self.wall, self.cpu, self.waits = Fraction(0), {}, {}

    def perf_counter(self) -> Fraction:
        return self.wall

    def thread_time(self) -> Fraction:
        return self.cpu.get(threading.get_ident(), Fraction(0))

    def own_waits(self) -> int:
        return self.waits.get(threading.get_ident(), 0)

    def work(self, waits: float = 0.0, computes: float = 0.0, paused: float = 0.0) -> None:
        """The running thread waits (the CPU idle: it stops of its own accord, as for a disk or a
        lock) then computes: both pass on the wall clock, only the computing on this thread's CPU
        clock. ``paused``: the machine stops the thread meanwhile (another process runs): wall time
        only, and no wait of the thread's own."""
        self.wall += Fraction(waits) + Fraction(computes) + Fraction(paused)
        self.cpu[threading.get_ident()] = self.thread_time() + Fraction(computes)
        if waits:
            self.waits[threading.get_ident()] = self.own_waits() + 1


@pytest.fixture
def clocks(monkeypatch) -> Clocks:
    clocks = Clocks()
    monkeypatch.setattr(offload, "time", clocks)
    monkeypatch.setattr(offload, "own_waits", clocks.own_waits)
    return clocks


def _where(clocks: Clocks, slow: float = 0.0, spin: float = 0.0, paused: float = 0.0):
    """A read's work: waits ``slow`` seconds (the CPU idle, as on a disk or a lock), computes for
    ``spin`` seconds, is paused by the machine for ``paused``, and says which thread it ran in."""
    def run():
        clocks.work(waits=slow, computes=spin, paused=paused)
        return threading.current_thread()
    return run


async def _runs_on_loop(clocks: Clocks, key: str, count: int, runs: LightRuns, **work) -> list[bool]:
    loop_thread = threading.current_thread()
    offload = Offload(runs=runs)
    return [await offload.read_work(key, _where(clocks, **work)) is loop_thread for _ in range(count)]


async def test_a_read_hops_until_its_runs_prove_light_and_proves_itself_twice_as_long_after_holding_the_loop(clocks):
    runs = LightRuns(light_seconds=0.05, proven_after=3, wait_seconds=30.0)
    assert await _runs_on_loop(clocks, "probe", 4, runs) == [False, False, False, True]
    assert await _runs_on_loop(clocks, "probe", 1, runs, slow=0.06) == [True]  # it held the loop, once
    assert runs.needed("probe") == 6
    assert await _runs_on_loop(clocks, "probe", 7, runs) == [False] * 6 + [True]
    # light on the loop for as long again as proving itself takes: as trusted as before
    assert await _runs_on_loop(clocks, "probe", 2, runs) == [True, True] and runs.needed("probe") == 3
    assert await _runs_on_loop(clocks, "other", 1, runs) == [False]  # each read proves itself
    on_lambda = Offload(one_at_a_time=True, runs=runs)
    assert await on_lambda.read_work("new", _where(clocks, slow=0.06)) is threading.current_thread()


async def test_a_run_on_the_loop_as_long_as_the_threshold_is_not_light(clocks):
    runs = LightRuns(light_seconds=0.05, proven_after=1, wait_seconds=30.0)
    assert await _runs_on_loop(clocks, "edge", 2, runs, slow=0.049) == [False, True]
    assert runs.needed("edge") == 1  # under the threshold on the loop: still trusted
    assert await _runs_on_loop(clocks, "edge", 1, runs, slow=0.05) == [True]
    assert runs.needed("edge") == 2  # as long as the threshold: it held the loop


async def test_in_a_thread_a_run_counts_its_cpu_time_not_its_short_waits(clocks):
    """Under load a worker thread waits for the interpreter lock while the loop and the other
    workers run, so its wall time says little of what the read would cost on the loop: a read
    that waits briefly but computes little proves light in a thread; one that computes does not,
    nor one that waits longer than a lock wait would (a stalled disk, a network call)."""
    runs = LightRuns(light_seconds=0.02, proven_after=3, wait_seconds=0.5)
    assert await _runs_on_loop(clocks, "waits", 4, runs, slow=0.03) == [False, False, False, True]
    assert runs.needed("waits") == 6  # it then held the loop on its first run there
    assert await _runs_on_loop(clocks, "computes", 5, runs, spin=0.03) == [False] * 5
    assert await _runs_on_loop(clocks, "stalls", 4, runs, slow=0.55) == [False] * 4
    # both at once: light only if it computes little and waits less than a lock wait
    assert await _runs_on_loop(clocks, "both", 4, runs, slow=0.4, spin=0.01) == [False, False, False, True]


async def test_a_run_on_the_loop_the_machine_paused_is_not_the_reads_doing(clocks):
    """On a busy machine another process (or the hypervisor) stops the loop's thread now and then:
    a read that computed little and never waited of its own accord took longer only because the
    loop stood still, as it would have wherever the read ran. It stays on the loop; a read that
    waited as long (a disk, a lock) or computed as long does not, nor a pause past the wait bound."""
    runs = LightRuns(light_seconds=0.05, proven_after=1, wait_seconds=0.5)
    assert await _runs_on_loop(clocks, "paused", 4, runs, paused=0.3) == [False, True, True, True]
    assert runs.needed("paused") == 1
    assert await _runs_on_loop(clocks, "paused", 2, runs, paused=0.3, slow=0.01) == [True, False]
    assert runs.needed("paused") == 2  # it waited of its own accord: it held the loop
    assert await _runs_on_loop(clocks, "spins", 3, runs, paused=0.3, spin=0.05) == [False] * 3
    assert await _runs_on_loop(clocks, "long", 3, runs) == [False, True, True]
    assert await _runs_on_loop(clocks, "long", 2, runs, paused=0.5) == [True, False]


async def test_the_waits_of_the_running_thread_are_counted_where_the_system_counts_them():
    """On Linux a thread's sleep shows as a wait of its own (a voluntary context switch)."""
    before = offload.own_waits()
    if before is None:
        pytest.skip("no per-thread count of waits on this system: a run on the loop is judged by its wall time")
    threading.Event().wait(0.01)
    assert offload.own_waits() > before


async def test_a_read_that_keeps_holding_the_loop_is_tried_there_ever_more_rarely(clocks):
    runs = LightRuns(light_seconds=0.005, proven_after=1, wait_seconds=30.0)
    tried = []
    for _ in range(runs.most_wary + 2):  # each time: proves light in threads, then holds the loop once
        needed = runs.needed("waits")
        assert await _runs_on_loop(clocks, "waits", needed + 1, runs, slow=0.006) == [False] * needed + [True]
        tried.append(needed)
    assert tried == [1, 2, 4, 8, 16, 32, 64, 128, 128]


async def test_a_read_on_the_loop_sets_nothing_in_the_callers_context():
    var: contextvars.ContextVar[str] = contextvars.ContextVar("probe", default="caller's")
    runs = LightRuns(light_seconds=1.0, proven_after=0)  # proven from the start: on the loop

    def sets():
        var.set("the read's")
        return threading.current_thread()

    assert await Offload(runs=runs).read_work("probe", sets) is threading.current_thread()
    assert var.get() == "caller's"


class Blocking(Read):
    """Waits until the test lets it go (a slow read: a big report, a cold disk)."""

    name = "blocking_report"
    description = "Waits for the test."

    def __init__(self):
        self.started, self.release = threading.Event(), threading.Event()

    def run(self, args, ctx) -> dict:
        self.started.set()
        assert self.release.wait(30), "never released"
        return {"done": True}


class Light(WhichThread):
    name = "light_read"


async def test_over_the_local_server_a_slow_read_holds_up_no_other_call_and_light_reads_stop_hopping(clocks):
    # What moves a read is under test here, not the 2 ms threshold or the wait bound (the tests
    # above): the clocks stand still (every run costs nothing), so a busy machine's pause inside a
    # light read does not restart its streak; the slow read is held by an event, not by a time.
    blocking, light = Blocking(), Light()
    with tempfile.TemporaryDirectory() as tmp:
        settings = settings_mod.load({"COUNTERSIGN_DATA": tmp, "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com"})
        runtime = build(settings, toolsets=[Toolset(name="probe", reads=[blocking, light])])
        app, _ = build_local(settings, runtime=runtime)
        workspace, person = accounts.create_workspace(runtime.store.workspaces, "Probe", "probe@example.com")
        token = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, workspace.id,
                                           person.id, "probe").token
        transport = httpx2.ASGITransport(app=app)
        async with app.router.lifespan_context(app), mcp_client(URL, token, transport=transport) as slow_client, \
                mcp_client(URL, token, transport=transport) as client:
            async with anyio.create_task_group() as tg:
                async def slow():
                    result = await slow_client.call_tool("blocking_report", {})
                    assert result.structured_content == {"done": True}
                tg.start_soon(slow)
                await anyio.to_thread.run_sync(blocking.started.wait, 30)
                with anyio.fail_after(30):  # on the loop, the slow read would hold this call until released
                    answers = [await client.call_tool("light_read", {}) for _ in range(PROVEN_AFTER + 2)]
                assert not blocking.release.is_set()
                blocking.release.set()
            # proven light in one workspace is not proven in another (its budget may be far bigger)
            other, someone = accounts.create_workspace(runtime.store.workspaces, "Other", "other@example.com")
            other_token = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, other.id,
                                                     someone.id, "probe").token
            async with mcp_client(URL, other_token, transport=transport) as elsewhere:
                assert (await elsewhere.call_tool("light_read", {})).structured_content == {"workspace": other.id}
        runtime.store.close()
    assert all(a.structured_content == {"workspace": workspace.id} for a in answers)
    loop_thread = threading.current_thread()
    assert [t is loop_thread for t in light.threads] == [False] * PROVEN_AFTER + [True, True, False]


class WriteLockHeld:
    """SQLite's write lock held by another connection, as a long commit holds it, until
    :meth:`release` (or 10 s, the most a caller on the event loop would be held up here)."""

    def __init__(self, database: Path):
        self.writer = sqlite3.connect(str(database), check_same_thread=False)
        self.writer.execute("BEGIN IMMEDIATE")
        self.released = threading.Event()
        self.timer = threading.Timer(10, self.release)
        self.timer.start()

    def release(self) -> None:
        self.timer.cancel()
        if not self.released.is_set():
            self.released.set()
            self.writer.rollback()
            self.writer.close()


async def while_a_write_waits_for_the_lock(database: Path, waiting, meanwhile) -> None:
    """Start ``waiting()`` (it must wait for the write lock), then ``meanwhile()``, which must be
    answered before the lock is given up: the loop was free while the write waited."""
    lock = WriteLockHeld(database)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(0.3)  # it is waiting for the write lock
            await meanwhile()
            assert not lock.released.is_set(), "the event loop waited for the write lock"
            lock.release()
    finally:
        lock.release()


def probe_app(tmp: str, toolset: Toolset | None = None, **env: str):
    """(runtime, local app, workspace, person, an agent's token) of a local server with the probe
    toolset (by default one read that names its thread)."""
    settings = settings_mod.load({"COUNTERSIGN_DATA": tmp, "COUNTERSIGN_PUBLIC_URL": "https://confirm.example.com",
                                  **env})
    runtime = build(settings, toolsets=[toolset or Toolset(name="probe", reads=[WhichThread()])])
    app, _ = build_local(settings, runtime=runtime)
    workspace, person = accounts.create_workspace(runtime.store.workspaces, "Probe", "probe@example.com")
    token = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, workspace.id, person.id,
                                       "probe").token
    return runtime, app, workspace, person, token


async def test_recording_a_connections_use_waits_for_the_write_lock_off_the_event_loop():
    """Settings shows each connection's last use: a write, once a minute. While another writer
    holds SQLite's write lock (a long commit, a stalled disk), that write waits — in a worker
    thread, so the event loop serves the other agents' calls meanwhile; then it is recorded."""
    with tempfile.TemporaryDirectory() as tmp:
        runtime, app, workspace, person, warm = probe_app(tmp)
        fresh = accounts.create_connection(runtime.store.workspaces, runtime.store.connections, workspace.id,
                                           person.id, "fresh")
        transport = httpx2.ASGITransport(app=app)
        answers = []
        async with app.router.lifespan_context(app), mcp_client(URL, warm, transport=transport) as client:
            await client.call_tool("which_thread", {})  # its use this minute is recorded

            async def newcomer():  # its first request records its use
                async with mcp_client(URL, fresh.token, transport=transport) as other:
                    answers.append(await other.call_tool("which_thread", {}))

            async def meanwhile():
                answers.extend([await client.call_tool("which_thread", {}) for _ in range(3)])
            await while_a_write_waits_for_the_lock(runtime.settings.data_dir / "countersign.db", newcomer, meanwhile)
        assert [a.structured_content for a in answers] == [{"workspace": workspace.id}] * 4
        assert fresh.connection.id in runtime.store.connections.connections_last_used(workspace.id)
        runtime.store.close()


async def test_a_request_limit_counts_off_the_event_loop():
    """Each request's count against its limit is a write: while another writer holds SQLite's
    write lock, a counted request waits for it in a worker thread, and the loop answers others."""
    with tempfile.TemporaryDirectory() as tmp:
        runtime, app, workspace, _, token = probe_app(tmp, COUNTERSIGN_LIMIT_CONNECTION="100")
        transport = httpx2.ASGITransport(app=app)
        answers = []
        async with app.router.lifespan_context(app), mcp_client(URL, token, transport=transport) as client, \
                httpx2.AsyncClient(transport=transport, base_url="https://confirm.example.com") as http:
            async def counted():
                answers.append(await client.call_tool("which_thread", {}))

            async def meanwhile():  # a request no limit counts (no token), answered on the loop
                refused = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                assert refused.status_code == 401
            await while_a_write_waits_for_the_lock(runtime.settings.data_dir / "countersign.db", counted, meanwhile)
        assert [a.structured_content for a in answers] == [{"workspace": workspace.id}]
        runtime.store.close()


async def test_an_oauth_registration_writes_off_the_event_loop():
    """The authorization server's writes (a registration here; codes, tokens, an ended grant
    alike) wait for the write lock in a worker thread: agents' calls go on meanwhile."""
    with tempfile.TemporaryDirectory() as tmp:
        runtime, app, workspace, _, token = probe_app(tmp)
        transport = httpx2.ASGITransport(app=app)
        registered = []
        async with app.router.lifespan_context(app), mcp_client(URL, token, transport=transport) as client, \
                httpx2.AsyncClient(transport=transport, base_url="https://confirm.example.com") as http:
            async def register():
                registered.append(await http.post("/oauth/register", json={
                    "client_name": "Probe", "redirect_uris": ["http://127.0.0.1:3000/callback"],
                    "grant_types": ["authorization_code", "refresh_token"], "token_endpoint_auth_method": "none"}))

            async def meanwhile():
                answer = await client.call_tool("which_thread", {})
                assert answer.structured_content == {"workspace": workspace.id}
            await while_a_write_waits_for_the_lock(runtime.settings.data_dir / "countersign.db", register, meanwhile)
        assert registered[0].status_code == 201, registered[0].text
        assert runtime.store.authorizations.get_oauth_client(registered[0].json()["client_id"],
                                                             runtime.desk.now()) is not None
        runtime.store.close()


# -- the gate's decision on a call the process serves alone (Offload.write_work) -----------------


async def test_a_decision_runs_on_the_loop_only_while_its_request_is_the_only_one_served(clocks):
    """The hop to a worker thread buys nothing while nobody else is served, and costs a held call
    a thread's wake-up each way: a decision of a kind proven light then runs on the loop. With a
    second request in flight, or where the server does not count its requests, it hops."""
    loop_thread = threading.current_thread()
    runs = LightRuns(light_seconds=0.05, proven_after=2, wait_seconds=30.0)
    serving = Serving()
    offload = Offload(decisions=runs, serving=serving)
    decided: list[bool] = []

    async def decide(**work) -> None:
        decided.append(await offload.write_work("w:publish:decide", _where(clocks, **work)) is loop_thread)

    for _ in range(3):  # nobody counts this process's requests: never known to be alone, nothing to prove
        await decide()
    assert decided == [False] * 3 and not runs.proven("w:publish:decide")

    slow_started, slow_release = anyio.Event(), anyio.Event()

    async def app(scope, receive, send):
        if scope["path"] == "/slow":
            slow_started.set()
            await slow_release.wait()
        else:
            await decide(**scope.get("work", {}))

    counted = serving.count(app)
    decided.clear()
    for _ in range(3):  # alone: in threads until proven light, then on the loop
        await counted({"type": "http", "path": "/mcp"}, None, None)
    assert decided == [False, False, True] and serving.in_flight == 0
    decided.clear()
    async with anyio.create_task_group() as tg:
        tg.start_soon(counted, {"type": "http", "path": "/slow"}, None, None)
        await slow_started.wait()
        await counted({"type": "http", "path": "/mcp"}, None, None)  # another request is being served
        slow_release.set()
    await counted({"type": "websocket", "path": "/mcp"}, None, None)  # not an HTTP request: not counted
    assert decided == [False, True]
    # a decision that held the loop (an email sent, a lock waited for) goes back to threads
    await counted({"type": "http", "path": "/mcp", "work": {"slow": 0.06}}, None, None)
    await counted({"type": "http", "path": "/mcp"}, None, None)
    assert decided[-2:] == [True, False] and runs.needed("w:publish:decide") == 4
    assert await ONE_AT_A_TIME.write_work("new", threading.current_thread) is loop_thread


class PublishWhere(PublishNote):
    """A held action that notes the thread its plan ran in (the gate's decision: plan, then file)."""

    name = "publish_where"

    def __init__(self):
        self.threads: list[threading.Thread] = []

    def plan(self, args, ctx):
        self.threads.append(threading.current_thread())
        return super().plan(args, ctx)


async def test_over_the_local_server_a_held_call_alone_is_decided_on_the_loop_and_files_its_card_once(clocks):
    """Served alone, held calls hop until decisions of their kind have proven light, then are
    decided (planned, filed, committed) on the loop; while another call is in flight they hop
    again. Each files exactly one card, wherever it was decided. (The clocks stand still, as in
    the reads' test above: what moves a decision is under test, not what a run costs.)"""
    publish, blocking = PublishWhere(), Blocking()
    with tempfile.TemporaryDirectory() as tmp:
        probe = Toolset(name="probe", actions=[publish], reads=[blocking])
        runtime, app, workspace, person, token = probe_app(tmp, probe)
        seed_notes(runtime.store, workspace.id, count=1)
        transport = httpx2.ASGITransport(app=app)
        replies = []
        async with app.router.lifespan_context(app), mcp_client(URL, token, transport=transport) as client, \
                mcp_client(URL, token, transport=transport) as slow_client:
            async def held(k: int) -> None:
                replies.append(await client.call_tool("publish_where", {"note_id": "n1", "text": f"draft {k}"}))

            for k in range(PROVEN_AFTER + 2):
                await held(k)
            async with anyio.create_task_group() as tg:
                async def slow():
                    await slow_client.call_tool("blocking_report", {})
                tg.start_soon(slow)
                await anyio.to_thread.run_sync(blocking.started.wait, 30)
                with anyio.fail_after(30):
                    await held(PROVEN_AFTER + 2)
                blocking.release.set()
        cards, _ = runtime.store.cards.list_pending_cards(workspace.id, person.id, runtime.desk.now())
        runtime.store.close()
    assert all(r.structured_content["status"] == "pending" for r in replies)
    assert len({r.structured_content["confirmationId"] for r in replies}) == len(replies) == len(cards)
    loop_thread = threading.current_thread()
    assert [t is loop_thread for t in publish.threads] == [False] * PROVEN_AFTER + [True, True, False]


async def test_a_held_call_alone_that_finds_the_write_lock_taken_waits_for_it_off_the_event_loop(clocks):
    """A decision proven light and alone would run on the loop, but another writer (a CLI command,
    the sweep, a long commit) holds SQLite's write lock: it waits for it in a worker thread, the
    loop answers others meanwhile, and the card is filed once the lock is given up."""
    publish = PublishWhere()
    with tempfile.TemporaryDirectory() as tmp:
        runtime, app, workspace, person, token = probe_app(tmp, Toolset(name="probe", actions=[publish]))
        seed_notes(runtime.store, workspace.id, count=1)
        transport = httpx2.ASGITransport(app=app)
        replies = []
        async with app.router.lifespan_context(app), mcp_client(URL, token, transport=transport) as client, \
                httpx2.AsyncClient(transport=transport, base_url="https://confirm.example.com") as http:
            async def held(k: int) -> None:
                replies.append(await client.call_tool("publish_where", {"note_id": "n1", "text": f"draft {k}"}))

            for k in range(PROVEN_AFTER + 1):  # proven light: the last one was decided on the loop
                await held(k)

            async def meanwhile():  # a request that writes nothing, answered on the loop
                refused = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                assert refused.status_code == 401
            await while_a_write_waits_for_the_lock(runtime.settings.data_dir / "countersign.db",
                                                   lambda: held(PROVEN_AFTER + 1), meanwhile)
        cards, _ = runtime.store.cards.list_pending_cards(workspace.id, person.id, runtime.desk.now())
        runtime.store.close()
    loop_thread = threading.current_thread()
    assert [t is loop_thread for t in publish.threads][-2:] == [True, False]
    assert all(r.structured_content["status"] == "pending" for r in replies) and len(cards) == len(replies)
