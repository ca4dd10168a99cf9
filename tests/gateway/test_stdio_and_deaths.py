"""A stdio upstream (a child process per operation), and upstreams that die mid-call: the card
reads *outcome unknown* with the upstream's words, and nothing is sent twice."""

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason

from .flows import add, call, change, text
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
        assert down.is_error and "killed could not be reached" in text(down)  # no card: nothing to show
        assert up.calls() == ["slow_write a.txt"]
        clicked = gw.page().post(f"/api/cards/{waiting['confirmationId']}/confirm")  # down at the click: no drift
        assert clicked.status_code == 503 and "killed could not be reached" in clicked.json()["error"]["message"]
        assert clicked.json()["card"]["state"] == "pending" and up.calls() == ["slow_write a.txt"]
        read = await call(gw, "killed__read_file", {"path": "a.txt"})
        assert read.is_error and "could not be reached" in text(read)
    finally:
        up.kill()


async def test_an_upstream_down_at_the_click_leaves_the_card_waiting_and_it_runs_once_when_back(gw, tmp_path):
    up = HttpUpstream(tmp_path / "flaky")
    try:
        add(gw, "flaky", url=up.url)
        change(gw, "upstream_policy", {"name": "flaky", "tool": "write_file",
                                       "witness": [{"tool": "read_file", "arguments": {"path": "$path"}}]})
        up.write("a.txt", "before")
        held = (await call(gw, "flaky__write_file", {"path": "a.txt", "content": "after"})).structured_content
        card_id = held["confirmationId"]
        up.kill()
        clicked = gw.page().post(f"/api/cards/{card_id}/confirm")
        assert clicked.status_code == 503 and clicked.headers["retry-after"] == "5"
        error = clicked.json()["error"]
        assert error["code"] == "upstream_unavailable" and error["message"].startswith("flaky could not be reached: ")
        assert "Nothing was sent" in error["message"] and "The card still waits." in error["message"]
        assert "All connection attempts failed" in error["message"]  # the words of the transport that failed
        assert clicked.json()["card"]["state"] == "pending"
        assert gw.store.cards.get_card(gw.workspace_id, card_id, gw.runtime.desk.now()).state is CardState.PENDING
        async with gw.client() as c:  # the agent's status: still waiting
            status = await c.call_tool("get_confirmation_status", {"confirmation_id": card_id})
        assert status.structured_content["status"] == "pending"
        assert up.calls() == []
        up.start()
        done = gw.confirm_on_page(card_id)
        assert done.state is CardState.COMPLETED, done.result
        assert up.calls() == ["write_file a.txt"] and up.read("a.txt") == "after"
    finally:
        up.kill()


async def test_a_real_change_while_the_upstream_was_down_is_still_drift(gw, tmp_path):
    up = HttpUpstream(tmp_path / "moved")
    try:
        add(gw, "moved", url=up.url)
        change(gw, "upstream_policy", {"name": "moved", "tool": "write_file",
                                       "witness": [{"tool": "read_file", "arguments": {"path": "$path"}}]})
        up.write("a.txt", "before")
        held = (await call(gw, "moved__write_file", {"path": "a.txt", "content": "after"})).structured_content
        up.kill()
        assert gw.page().post(f"/api/cards/{held['confirmationId']}/confirm").status_code == 503
        up.write("a.txt", "moved meanwhile")
        up.start()
        with pytest.raises(Refusal) as refused:
            gw.confirm_on_page(held["confirmationId"])
        assert refused.value.reason is RefusalReason.CHANGED and up.calls() == []
    finally:
        up.kill()


async def test_an_answer_in_the_client_while_the_upstream_is_down_is_a_tool_error_and_sends_nothing(gw, tmp_path):
    from tests.support.harness import accept

    up = HttpUpstream(tmp_path / "client")
    try:
        add(gw, "client", url=up.url)
        gw.store.workspaces.update_workspace_settings(gw.workspace_id, {"confirm_in_client": True})

        def down_then_yes(params):
            up.kill()  # the person answers while the upstream goes away
            return accept()

        refused = await call(gw, "client__touch_file", {"path": "t.txt"}, answer=down_then_yes)
        assert refused.is_error and "client could not be reached" in text(refused)
        assert "Nothing was sent" in text(refused) and up.calls() == []
        up.start()
        done = await call(gw, "client__touch_file", {"path": "t.txt"}, answer=accept())
        assert not done.is_error and done.structured_content["status"] == "completed", text(done)
        assert up.calls() == ["touch_file t.txt"]
    finally:
        up.kill()
