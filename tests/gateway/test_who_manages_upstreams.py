"""Only the CLI and the Settings page file a change of a workspace's upstreams, and only for an
owner or admin: an agent cannot name those actions by any path (they would start a command or list
a server's tools while filing), and a member cannot ask for one or confirm one."""

import sys

import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.surfaces import upstream_requests
from countersign.toolkit import ActionError
from tests.support.harness import new_tenant

from .flows import add, call, text

pytestmark = pytest.mark.anyio

MANAGE = ("upstream_add", "upstream_refresh", "upstream_remove", "upstream_policy")


def _marker_command(marker) -> list[str]:
    return [sys.executable, "-c", f"open({str(marker)!r}, 'w').write('ran')"]


@pytest.mark.parametrize("role", ["owner", "member"])
async def test_no_agent_reaches_an_upstream_change_by_any_path(gateway_live, upstream, tmp_path, role):
    runtime, server = gateway_live
    tenant = new_tenant(runtime, server.origin, role)
    marker = tmp_path / "ran"
    arguments = {
        "upstream_add": {"name": "x", "command": _marker_command(marker)},
        "upstream_refresh": {"name": "fs"}, "upstream_remove": {"name": "fs"},
        "upstream_policy": {"name": "fs", "tool": "write_file", "cls": "read"},
    }
    async with tenant.client() as c:
        listed = {t.name for t in (await c.list_tools()).tools}
        for tool in MANAGE:
            asked = await c.call_tool("request_confirmation", {"tool": tool, "arguments": arguments[tool]})
            direct = await c.call_tool(tool, arguments[tool])
            assert asked.is_error and f"Unknown tool '{tool}'" in text(asked), text(asked)
            assert direct.is_error and tool in text(direct)
    assert not set(MANAGE) & listed
    assert not marker.exists()  # the command never started
    pending, _ = tenant.store.cards.list_pending_cards(tenant.workspace_id, tenant.person.id, runtime.desk.now())
    assert pending == []


async def test_a_member_cannot_ask_for_an_upstream_change_nor_confirm_one_filed_before_a_demotion(
        gw, upstream, tmp_path):
    add(gw, url=upstream.url)
    marker = tmp_path / "ran"
    member = gw.add_person("member")
    desk = gw.runtime.desk
    for tool, arguments in (("upstream_add", {"name": "x", "command": _marker_command(marker)}),
                            ("upstream_policy", {"name": "fs", "tool": "write_file", "cls": "read"}),
                            ("upstream_remove", {"name": "fs"})):
        with pytest.raises(ActionError) as refused:
            upstream_requests.file_change(desk, gw.workspace_id, member, tool, arguments)
        assert "Only the workspace's owners and admins manage its upstream servers" in refused.value.message
    assert not marker.exists()

    card = upstream_requests.file_change(desk, gw.workspace_id, gw.person, "upstream_policy",
                                {"name": "fs", "tool": "write_file", "cls": "read"})
    demoted = gw.store.workspaces.update_person(gw.workspace_id, gw.person.id, role="member")
    with pytest.raises(Refusal) as clicked:
        gw.confirm_on_page(card.id, demoted)
    assert clicked.value.reason is RefusalReason.CHANGED
    held = await call(gw, "fs__write_file", {"path": "a", "content": "x"})
    assert held.structured_content["status"] == "pending"  # still held: the policy did not change
    assert gw.store.cards.get_card(gw.workspace_id, card.id, desk.now()).state is CardState.DECLINED
    assert upstream.calls() == []
