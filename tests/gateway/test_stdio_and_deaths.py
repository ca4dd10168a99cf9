"""A stdio upstream (a child process per operation), and upstreams that die mid-call: the card
reads *outcome unknown* with the upstream's words, and nothing is sent twice."""

import pytest

from countersign.core.cards import CardState, Refusal, RefusalReason

from .flows import add, call, text
from .support import FileStore, HttpUpstream

pytestmark = pytest.mark.anyio


async def test_a_stdio_upstream_reads_at_once_and_writes_once_after_the_click(gw, tmp_path):
    store = FileStore(tmp_path / "stdio")
    store.write("a.txt", "from stdio")
    card = add(gw, "local", command=store.stdio_command())
    assert any(line.startswith("Where: ") and "tests.gateway.upstream" in line for line in card.lines)
    read = await call(gw, "local__read_file", {"path": "a.txt"})
    assert text(read) == "from stdio"
    held = (await call(gw, "local__write_file", {"path": "a.txt", "content": "new"})).structured_content
    assert store.read("a.txt") == "from stdio"
    assert gw.confirm_on_page(held["confirmationId"]).state is CardState.COMPLETED
    assert store.read("a.txt") == "new" and store.calls() == ["write_file a.txt"]


async def test_a_stdio_upstream_that_dies_mid_call_is_outcome_unknown(gw, tmp_path):
    store = FileStore(tmp_path / "dying")
    add(gw, "dying", command=store.stdio_command())
    held = (await call(gw, "dying__die_write", {"path": "a.txt", "content": "x"})).structured_content
    card = gw.confirm_on_page(held["confirmationId"])
    assert card.state is CardState.FAILED
    assert card.result["error"].startswith("Outcome unknown: the call to die_write was sent to dying")
    assert "Connection closed" in card.result["error"]
    assert store.calls() == ["die_write a.txt"]


async def test_an_http_upstream_killed_mid_call_is_outcome_unknown_and_one_that_is_down_sends_nothing(gw, tmp_path):
    up = HttpUpstream(tmp_path / "killed")
    try:
        add(gw, "killed", url=up.url)
        up.flag("slow", "30")
        held = (await call(gw, "killed__slow_write", {"path": "a.txt", "content": "x"})).structured_content
        waiting = (await call(gw, "killed__write_file", {"path": "c.txt", "content": "x"})).structured_content
        import threading

        def kill_soon():
            import time

            deadline = time.monotonic() + 10
            while not up.calls() and time.monotonic() < deadline:
                time.sleep(0.02)
            up.kill()

        killer = threading.Thread(target=kill_soon)
        killer.start()
        card = gw.confirm_on_page(held["confirmationId"])
        killer.join()
        assert card.state is CardState.FAILED and card.result["error"].startswith("Outcome unknown:")
        assert up.calls() == ["slow_write a.txt"]
        down = await call(gw, "killed__write_file", {"path": "b.txt", "content": "x"})
        assert down.is_error and "killed could not be read" in text(down)  # no card: nothing to show
        assert up.calls() == ["slow_write a.txt"]
        with pytest.raises(Refusal) as refused:  # a card whose upstream is down at the click: nothing sent
            gw.confirm_on_page(waiting["confirmationId"])
        assert refused.value.reason is RefusalReason.CHANGED and "killed could not be read" in refused.value.message
        assert up.calls() == ["slow_write a.txt"]
        read = await call(gw, "killed__read_file", {"path": "a.txt"})
        assert read.is_error and "could not be reached" in text(read)
    finally:
        up.kill()
