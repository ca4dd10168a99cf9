"""Bad input through the real MCP endpoint: every refusal is a sentence of the product's own that
names the field as the agent wrote it, and nothing is written."""

from __future__ import annotations

import json

import httpx2
import pytest

from tests.budget.ledger import seed_small
from tests.support.harness import TRANSCRIPT

pytestmark = pytest.mark.anyio

TXN = {"date": "2026-09-20", "payee": "Market", "amount": -12.5}
RAW_PYDANTIC = ("input_value", "[type=", "pydantic", "validation error", "Input should", "Field required",
                "Extra inputs", "Arguments", "Args")


def nothing_filed(tenant) -> bool:
    pending, _ = tenant.store.cards.list_pending_cards(tenant.workspace_id, tenant.person.id, tenant.runtime.desk.now())
    history, _ = tenant.store.cards.list_card_history(tenant.workspace_id, tenant.person.id, tenant.runtime.desk.now())
    return not pending and not history


async def refusal(tenant, tool: str, arguments: dict) -> str:
    async with tenant.client() as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error, result
    text = result.content[0].text
    assert not any(bit in text for bit in RAW_PYDANTIC), text
    return text


def raw_call(tenant, tool: str, arguments: str, status: int = 200) -> dict:
    """A tools/call whose arguments are written by hand (JSON that no client library would send)."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}
    params = f'{{"name":{json.dumps(tool)},"arguments":{arguments},"_meta":{json.dumps(meta)}}}'
    body = f'{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}'
    headers = {"Authorization": f"Bearer {tenant.token}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2026-07-28",
               "Mcp-Method": "tools/call", "Mcp-Name": tool}
    response = httpx2.post(tenant.url, content=body.encode(), headers=headers, timeout=30)
    TRANSCRIPT.append(response.content)
    assert response.status_code == status, response.text
    text = response.text
    if "text/event-stream" in response.headers.get("content-type", ""):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    return json.loads(text)


async def test_an_unknown_argument_is_refused_naming_it_and_the_closest_name(tenant):
    seed_small(tenant.store, tenant.workspace_id)
    text = await refusal(tenant, "create_transactions",
                         {"account_id": "acc_checking", "transactions": [TXN], "aproved": False})
    assert "aproved: create_transactions has no argument named ‘aproved’; did you mean ‘approved’?" in text
    assert "Nothing was written." in text and nothing_filed(tenant)
    nested = await refusal(tenant, "create_transactions",
                           {"account_id": "acc_checking", "transactions": [dict(TXN, payeee="X")]})
    assert "transactions[0].payeee: there is no field named ‘payeee’; did you mean ‘payee’?" in nested
    assert nothing_filed(tenant)


@pytest.mark.parametrize("value", ["true", 1, "yes", 0])
async def test_only_json_booleans_are_booleans(tenant, value):
    seed_small(tenant.store, tenant.workspace_id)
    text = await refusal(tenant, "create_transactions",
                         {"account_id": "acc_checking", "transactions": [TXN], "approved": value})
    assert "approved: must be true or false" in text and nothing_filed(tenant)


@pytest.mark.parametrize("field", ["payee", "memo"])
@pytest.mark.parametrize("bad", ["\x00", "\x1b[31m", "\x7f", "\x08"])
async def test_control_characters_are_refused_in_names_and_memos(tenant, field, bad):
    seed_small(tenant.store, tenant.workspace_id)
    text = await refusal(tenant, "create_transactions",
                         {"account_id": "acc_checking", "transactions": [dict(TXN, **{field: f"Pay{bad}Pal"})]})
    assert f"transactions[0].{field}: contains the control character U+{ord(bad[0]):04X}" in text
    assert nothing_filed(tenant)
    renamed = await refusal(tenant, "create_category", {"group_id": "grp_fun", "name": f"Ten{bad}nis"})
    assert "name: contains the control character" in renamed and nothing_filed(tenant)


@pytest.mark.parametrize("month", ["1900-01", "9999-12", "1999-12-31", "0001-01"])
async def test_months_outside_the_budget_window_file_nothing(tenant, month):
    seed_small(tenant.store, tenant.workspace_id)
    text = await refusal(tenant, "set_category_budget", {"category_id": "cat_books", "month": month, "amount": 10})
    assert f"month: {month} is outside the months a budget holds: from 2000-01 to " in text
    day = await refusal(tenant, "create_transactions",
                        {"account_id": "acc_checking", "transactions": [dict(TXN, date=f"{month[:7]}-01")]})
    assert "transactions[0].date: " in day and "outside the months a budget holds" in day
    assert nothing_filed(tenant)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
async def test_numbers_that_are_not_finite_get_a_sentence_saying_what_an_amount_is(tenant, number):
    seed_small(tenant.store, tenant.workspace_id)
    arguments = f'{{"category_id": "cat_books", "month": "2026-09", "amount": {number}}}'
    answer = raw_call(tenant, "set_category_budget", arguments)["result"]
    assert answer["isError"] is True
    text = answer["content"][0]["text"]
    assert text.startswith("Error executing tool set_category_budget: amount: ")
    assert "give a finite number. Expected: The amount to budget, in currency units (e.g. 150.00)." in text
    txn = f'{{"date": "2026-09-20", "payee": "X", "amount": {number}}}'
    nested = raw_call(tenant, "create_transactions", f'{{"account_id": "acc_checking", "transactions": [{txn}]}}')
    text = nested["result"]["content"][0]["text"]
    assert "transactions[0].amount: " in text and "An amount in currency units" in text
    assert nothing_filed(tenant)


@pytest.mark.parametrize("arguments", ['"{\\"note_id\\": \\"n1\\"}"', '["n1", "text"]', "42", "null"])
async def test_request_confirmation_with_arguments_that_are_not_an_object(tenant, arguments):
    answer = raw_call(tenant, "request_confirmation", f'{{"tool": "edit_note", "arguments": {arguments}}}')
    text = answer["result"]["content"][0]["text"]
    assert answer["result"]["isError"] is True
    expected = "arguments: required." if arguments == "null" else "arguments: must be an object."
    assert expected in text and "Nothing was written." in text, text
    assert nothing_filed(tenant)


@pytest.mark.parametrize(("arguments", "kind"), [('"note_id=n1"', "a string"), ('["n1"]', "a list"), ("42", "a number"),
                                              ("true", "a boolean")])
async def test_arguments_themselves_not_an_object_are_refused_naming_the_field(tenant, arguments, kind):
    # A JSON-RPC invalid-params error (no tool can run), whose message names the field and its shape.
    answer = raw_call(tenant, "edit_note", arguments, status=400)
    assert answer["error"]["code"] == -32602
    assert answer["error"]["message"] == (
        "Invalid params: params.arguments: must be an object mapping each argument's name to its value "
        f'(e.g. {{"note_id": "n1"}}), got {kind}. Nothing was written.')
    assert answer["error"]["data"] == {"field": "params.arguments"}
    assert tenant.note("n1")["text"] == "text 1" and nothing_filed(tenant)


def test_the_shape_of_tools_call_params_is_named_when_it_is_wrong():
    from countersign.surfaces.mcp.params import shape_problem

    assert shape_problem({"name": "edit_note", "arguments": {"note_id": "n1"}}) is None
    assert shape_problem({"name": "edit_note"}) is None  # no arguments: the tool says which it needs
    assert shape_problem(["edit_note"]) == (
        "params: must be an object with the tool's name and its arguments, got a list.")
    assert shape_problem({"arguments": {}}).startswith("params.name: required")
    assert shape_problem({"name": "x", "arguments": "a=1"}).endswith("got a string.")


async def test_zero_width_and_format_characters_are_shown_in_the_preview(tenant):
    async with tenant.client() as client:
        held = (await client.call_tool("publish_note", {"note_id": "n1", "text": "Pay\u200bPal \ufeffx\u2060y"}))
    body = held.structured_content
    assert body["lines"] == ["text 1 → Pay[U+200B]Pal [U+FEFF]x[U+2060]y"]
    card = tenant.store.cards.get_card(tenant.workspace_id, body["confirmationId"], tenant.runtime.desk.now())
    assert card.lines == ("text 1 → Pay[U+200B]Pal [U+FEFF]x[U+2060]y",)  # what the confirm page shows


def nested(depth: int) -> str:
    """A JSON value ``depth`` levels of lists deep."""
    return "[" * depth + "]" * depth


async def test_arguments_nested_too_deep_are_refused_by_name_through_the_client(tenant):
    deep: list = []  # 200 levels (the SDK's client serialises up to about 250; 900 is sent by hand below)
    for _ in range(199):
        deep = [deep]
    text = await refusal(tenant, "edit_note", {"note_id": "n1", "text": deep})
    assert "arguments: nested deeper than 64 levels of objects and lists" in text, text
    assert "Nothing was written." in text and "recursion" not in text
    assert tenant.note("n1")["text"] == "text 1" and nothing_filed(tenant)


@pytest.mark.parametrize(("tool", "arguments", "written"), [
    ("edit_note", f'{{"note_id": "n1", "text": {nested(900)}}}', True),
    ("request_confirmation", f'{{"tool": "edit_note", "arguments": {{"note_id": "n1", "text": {nested(900)}}}}}', True),
    ("list_notes", f'{{"filter": {nested(900)}}}', False),
])
async def test_arguments_nested_deeper_than_the_limit_are_refused_naming_the_limit(tenant, tool, arguments, written):
    answer = raw_call(tenant, tool, arguments)["result"]
    text = answer["content"][0]["text"]
    assert answer["isError"] is True
    assert "arguments: nested deeper than 64 levels of objects and lists; no tool takes arguments this deep." in text
    assert ("Nothing was written." in text) is written and "recursion" not in text, text
    assert tenant.note("n1")["text"] == "text 1" and nothing_filed(tenant)


async def test_arguments_64_levels_deep_are_checked_as_usual(tenant):
    # The arguments' object and 63 lists inside it: within the limit, refused for the field's type instead.
    answer = raw_call(tenant, "edit_note", f'{{"note_id": "n1", "text": {nested(63)}}}')["result"]
    text = answer["content"][0]["text"]
    assert answer["isError"] is True and "text: " in text and "nested deeper" not in text, text
    assert tenant.note("n1")["text"] == "text 1" and nothing_filed(tenant)
