"""Arguments generated from every tool's published input schema, sent through the real MCP
endpoint: those that fit the schema and those with one thing wrong (an unknown name, a wrong type,
a missing field). Whatever comes back:

- never a protocol error or a crash ("Error executing tool X" with nothing after it);
- a refusal is the product's own sentence (no pydantic text: model names, ``[type=…]``,
  ``input_value``, a pydantic URL, ``Input should…``) and wrote nothing (no card, no document);
- an unknown argument name is always refused, and named.
"""

from __future__ import annotations

from anyio.from_thread import start_blocking_portal
from hypothesis import HealthCheck, given, settings

from countersign.toolkit import ActionContext
from countersign.toolsets.budget.model import ACCOUNT, CATEGORY, GROUP, LOCATOR, MONTH, OP, TOTAL, TXNS
from countersign.toolsets.mail import kinds as mail
from countersign.toolsets.mail.demo import seed as seed_mail
from tests.budget.ledger import seed_small
from tests.mcp.schema_args import Arguments
from tests.mcp.test_bad_input import RAW_PYDANTIC

EXAMPLES = 8  # per tool and kind: about 800 calls in all
KINDS = ["note", ACCOUNT, GROUP, CATEGORY, MONTH, TXNS, TOTAL, LOCATOR, OP, mail.KIND_PROFILE, mail.KIND_LEDGER,
         mail.KIND_CONTACT, mail.KIND_LIST, mail.KIND_DESIGN, mail.KIND_CAMPAIGN, mail.KIND_SENDER, mail.KIND_JOB,
         mail.KIND_SUPPRESSION]


def snapshot(tenant) -> tuple:
    store, ws, now = tenant.store, tenant.workspace_id, tenant.runtime.desk.now()
    pending, _ = store.cards.list_pending_cards(ws, tenant.person.id, now, limit=1000)
    history, _ = store.cards.list_card_history(ws, tenant.person.id, now, limit=1000)
    docs = tuple((k, d.id, d.version) for k in KINDS for d in store.docs.list_docs(ws, k))
    return len(pending), len(history), docs, store.workspaces.get_workspace(ws).name


def check(tenant, portal, client, tool: str, arguments: dict, unknown: str | None = None) -> None:
    before = snapshot(tenant)
    result = portal.call(client.call_tool, tool, arguments)
    if not result.is_error:
        assert unknown is None, (tool, arguments, result.structured_content)
        return
    text = result.content[0].text
    assert text.startswith(f"Error executing tool {tool}: ") and len(text) > len(f"Error executing tool {tool}: "), \
        (tool, arguments, text)
    assert not any(bit in text for bit in RAW_PYDANTIC), (tool, arguments, text)
    if unknown is not None:
        assert f"‘{unknown}’" in text, (tool, arguments, text)
    assert snapshot(tenant) == before, (tool, arguments, text)


def test_every_tool_with_generated_arguments(tenant):
    seed_small(tenant.store, tenant.workspace_id)
    ctx = ActionContext.reading(tenant.store.docs, tenant.store.workspaces,
                                tenant.store.workspaces.get_workspace(tenant.workspace_id), tenant.person,
                           None,
                           tenant.runtime.desk.now())
    seed_mail(tenant.store.docs, ctx)
    ids = sorted({d.id for k in KINDS for d in tenant.store.docs.list_docs(tenant.workspace_id, k)})
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(tenant.client()) as client:
        tools = portal.call(client.list_tools).tools
        assert len(tools) > 40
        for tool in tools:
            fuzz(tenant, portal, client, tool.name, Arguments(tool.input_schema, ids))


def fuzz(tenant, portal, client, name: str, arguments: Arguments) -> None:
    @given(args=arguments.fits())
    @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def fits(args):
        check(tenant, portal, client, name, args)

    @given(case=arguments.breaks())
    @settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    def breaks(case):
        how, field, args = case
        check(tenant, portal, client, name, args, unknown=field if how == "unknown" else None)

    fits()
    breaks()
