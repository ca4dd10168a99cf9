"""The budget toolset through the live MCP endpoint: the tool list, reads, approve_transactions
(runs on the call), bad input, undo round trips, long previews, request_confirmation, the
2025 back-channel, and a session on the demo budget."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState
from countersign.toolsets.budget import TOOLSET
from countersign.toolsets.budget.model import RTA_ID
from tests.budget.ledger import book_for, seed_small
from tests.support.harness import accept

pytestmark = [pytest.mark.mcp, pytest.mark.anyio]

HELD = ["apply_categories", "set_category_budget", "update_category", "create_category", "create_transactions",
        "reconcile_account", "split_transaction", "undo_operation"]
READS = ["list_accounts", "list_categories", "list_transactions", "get_month", "list_operations"]


def _book(tenant, seed=True):
    if seed:
        seed_small(tenant.store, tenant.workspace_id)
    return book_for(tenant.store, tenant.workspace_id, tenant.person, now=tenant.runtime.desk.now())


async def _call(client, tool, args=None):
    result = await client.call_tool(tool, args or {})
    assert not result.is_error, result.content[0].text
    return result.structured_content


def _error(result) -> str:
    assert result.is_error, result
    return result.content[0].text


async def test_tools_are_listed_with_their_classes(tenant):
    async with tenant.client() as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    for name in HELD:
        assert tools[name].annotations.destructive_hint is True, name
        assert "Waits for a person's yes" in tools[name].description, name
    assert "Runs at once." in tools["approve_transactions"].description
    for name in READS:
        assert tools[name].annotations.read_only_hint is True, name
    amount = tools["set_category_budget"].input_schema["properties"]["amount"]
    assert {"type": "number"} in amount["anyOf"] and {"type": "string"} in amount["anyOf"]
    assert "confirmation" in tools["set_category_budget"].input_schema["properties"]


async def test_reads(tenant):
    _book(tenant)
    async with tenant.client() as client:
        accounts = (await _call(client, "list_accounts"))["accounts"]
        categories = await _call(client, "list_categories", {"month": "2026-09"})
        month = await _call(client, "get_month", {"month": "2026-09-01"})
        uncategorised = await _call(client, "list_transactions", {"uncategorised": True})
        unapproved = await _call(client, "list_transactions", {"unapproved": True, "account_id": "acc_checking"})
        tennis = await _call(client, "list_transactions", {"category_id": "cat_tennis"})
        since = await _call(client, "list_transactions", {"since": "2026-09-14"})
        page1 = await _call(client, "list_transactions", {"limit": 4})
        page2 = await _call(client, "list_transactions", {"limit": 4, "cursor": page1["next_cursor"]})
        savings = await _call(client, "list_transactions", {"account_id": "acc_savings"})
    assert [(a["name"], a["cleared_balance"], a["uncleared_balance"], a["balance"]) for a in accounts] == [
        ("Checking", "2253.10", "-12.00", "2241.10"), ("Savings", "2.10", "0.00", "2.10")]
    groups = {g["name"]: [c["name"] for c in g["categories"]] for g in categories["groups"]}
    assert groups == {"Inflow": ["Ready to Assign"], "Everyday": ["Groceries", "Restaurants", "Household"],
                      "Fun": ["Tennis", "Books"]}
    restaurants = next(c for c in month["categories"] if c["name"] == "Restaurants")
    assert (restaurants["budgeted"], restaurants["activity"], restaurants["available"]) == ("120.00", "-42.50", "77.50")
    assert restaurants["available_milliunits"] == 77_500
    assert month["month"] == "2026-09-01" and month["income"] == "2400.00" and month["ready_to_assign"] == "1882.10"
    assert [t["id"] for t in uncategorised["transactions"]] == ["t_shop", "t_market"]
    assert uncategorised["transactions"][1]["category_name"] == "Uncategorised"
    assert {t["id"] for t in unapproved["transactions"]} == {"t_shop", "t_market"}
    assert [t["id"] for t in tennis["transactions"]] == ["t_court"]
    assert [t["id"] for t in since["transactions"]] == ["t_court", "t_shop", "t_bistro"]
    assert page1["total"] == 6 and len(page1["transactions"]) == 4 and page1["next_cursor"] == "4"
    assert [t["id"] for t in page2["transactions"]] == ["t_pay", "t_interest"] and page2["next_cursor"] is None
    assert savings["transactions"][0] == {
        "id": "t_interest",
        "date": "2026-08-31",
        "payee": "Interest",
        "amount": "2.10",
        "amount_milliunits": 2100,
        "account_id": "acc_savings",
        "account_name": "Savings",
        "category_id": RTA_ID,
        "category_name": "Ready to Assign",
        "memo": "",
        "cleared": "cleared",
        "approved": True,
        "flag": None,
        "transfer": None,
        "subtransactions": [],
    }


@pytest.mark.parametrize("tool, args, field", [
    ("list_transactions", {"account_id": "acc_nope"}, "account_id"),
    ("list_transactions", {"category_id": "cat_nope"}, "category_id"),
    ("list_transactions", {"since": "2026-02-30"}, "since"),
    ("list_transactions", {"cursor": "xyz"}, "cursor"),
    ("get_month", {"month": "2026-13"}, "month"),
])
async def test_bad_read_arguments_name_the_field(tenant, tool, args, field):
    _book(tenant)
    async with tenant.client() as client:
        text = _error(await client.call_tool(tool, args))
    assert f"{field}:" in text and "Traceback" not in text, text


async def test_approve_runs_on_the_call_and_can_be_undone(tenant):
    book = _book(tenant)
    async with tenant.client(answer=accept()) as client:
        done = await _call(client, "approve_transactions", {"transaction_ids": ["t_market", "t_shop"]})
        assert done["status"] == "completed"
        assert book.txn("t_market")["approved"] and book.txn("t_shop")["approved"]
        [op] = book.ops()
        assert op.data["kind"] == "approve" and op.data["summary"] == "approve 2 transaction(s)"
        undone = await _call(client, "undo_operation", {"operation_id": done["result"]["operation_id"]})
    assert undone["status"] == "completed"
    assert not book.txn("t_market")["approved"] and not book.txn("t_shop")["approved"]


@pytest.mark.parametrize(
    "tool, args, field",
    [
        (
            "create_transactions",
            {"account_id": "acc_nope", "transactions": [{"date": "2026-09-01", "payee": "X", "amount": 1}]},
            "account_id",
        ),
        (
            "apply_categories",
            {"changes": [{"transaction_id": "t_market", "category_id": "cat_nope"}]},
            "changes[0].category_id",
        ),
        (
            "apply_categories",
            {"changes": [{"transaction_id": "t_nope", "category_id": "cat_books"}]},
            "changes[0].transaction_id",
        ),
        (
            "split_transaction",
            {
                "transaction_id": "t_nope",
                "lines": [{"amount": 1, "category_id": "cat_books"}, {"amount": 1, "category_id": "cat_books"}],
            },
            "transaction_id",
        ),
        (
            "split_transaction",
            {
                "transaction_id": "t_market",
                "lines": [{"amount": -60, "category_id": "cat_groceries"}, {"amount": -6, "category_id": "cat_books"}],
            },
            "lines",
        ),
        ("set_category_budget", {"category_id": "cat_books", "month": "2026-09", "amount": "abc"}, "amount"),
        ("set_category_budget", {"category_id": "cat_books", "month": "2026-02-30", "amount": 1}, "month"),
        (
            "create_transactions",
            {"account_id": "acc_checking", "transactions": [{"date": "2026-02-30", "payee": "X", "amount": 1}]},
            "transactions[0].date",
        ),
        ("reconcile_account", {"account_id": "acc_checking", "balance": "12,50"}, "balance"),
        ("undo_operation", {"operation_id": "op_nope"}, "operation_id"),
    ],
)
async def test_bad_input_names_the_field_and_writes_nothing(tenant, tool, args, field):
    book = _book(tenant)
    before = book.snapshot()
    async with tenant.client(answer=accept()) as client:
        text = _error(await client.call_tool(tool, args))
        waiting = await _call(client, "list_confirmations")
    assert f"{field}:" in text, text
    assert book.snapshot() == before and book.ops() == []
    assert waiting["confirmations"] == []


async def test_undo_round_trip_and_twice_refused(tenant):
    book = _book(tenant)
    before = book.snapshot()
    async with tenant.client(answer=accept()) as client:
        done = await _call(
            client, "set_category_budget", {"category_id": "cat_restaurants", "month": "2026-09", "amount": 150}
        )
        op_id = done["result"]["operation_id"]
        assert done["next"][0]["tool"] == "undo_operation" and op_id in done["next"][0]["description"]
        listed = (await _call(client, "list_operations"))["operations"]
        assert [(o["id"], o["kind"], o["undoable"]) for o in listed] == [(op_id, "budget", True)]
        undone = await _call(client, "undo_operation", {"operation_id": op_id})
        assert undone["status"] == "completed"
        assert book.snapshot() == before
        again = _error(await client.call_tool("undo_operation", {"operation_id": op_id}))
        of_undo = _error(await client.call_tool("undo_operation", {"operation_id": undone["result"]["operation_id"]}))
        listed = (await _call(client, "list_operations"))["operations"]
    assert "already undone" in again and "itself an undo" in of_undo
    assert [o["kind"] for o in listed] == ["undo", "budget"] and not any(o["undoable"] for o in listed)


async def test_long_preview_shows_twenty_lines_then_the_rest_counted(tenant):
    _book(tenant)
    asked = []
    txns = [{"date": "2026-09-01", "payee": f"Payee {i}", "amount": -i} for i in range(1, 26)]
    async with tenant.client(answer=accept(False), record=asked) as client:
        await client.call_tool("create_transactions", {"account_id": "acc_checking", "transactions": txns})
    lines = asked[0].message.split("\n")
    assert lines[0] == "Create 25 transaction(s) on Checking?"
    assert lines[1] == "2026-09-01, Payee 1, -1.00, Uncategorised"
    assert len(lines) == 22 and lines[-1] == "… and 5 more"


async def test_request_confirmation_for_a_budget_write(tenant):
    book = _book(tenant)
    async with tenant.client(answer=accept()) as client:
        held = await _call(client, "request_confirmation", {"tool": "approve_transactions",
                                                            "arguments": {"transaction_ids": ["t_market"]}})
        assert held["status"] == "pending" and held["title"] == "Approve 1 transaction(s)?"
        assert not book.txn("t_market")["approved"]
        card = tenant.confirm_on_page(held["confirmationId"])
    assert card.state is CardState.COMPLETED and book.txn("t_market")["approved"]


async def test_legacy_client_is_asked_during_the_call(tenant):
    book = _book(tenant)
    asked = []
    async with tenant.client(mode="legacy", answer=accept(), record=asked) as client:
        done = await _call(client, "update_category", {"category_id": "cat_tennis", "name": "Sport"})
    assert done["status"] == "completed"
    assert [q.message for q in asked] == ["Change category ‘Tennis’ (Fun) to ‘Sport’ (Fun)?"]
    assert book.category("cat_tennis")["name"] == "Sport"


async def test_an_agent_works_through_the_demo_budget(tenant):
    book = _book(tenant, seed=False)
    TOOLSET.demo(book.store.docs, book.ctx)
    asked = []
    async with tenant.client(answer=accept(), record=asked) as client:
        todo = await _call(client, "list_transactions", {"uncategorised": True})
        assert todo["total"] >= 5
        cats = {c["name"]: c["id"] for g in (await _call(client, "list_categories"))["groups"] for c in g["categories"]}
        first, second = todo["transactions"][:2]
        recat = await _call(client, "apply_categories", {"changes": [
            {"transaction_id": first["id"], "category_id": cats["Groceries"]},
            {"transaction_id": second["id"], "category_id": cats["Household"]}]})
        assert recat["status"] == "completed"
        budget = await _call(client, "set_category_budget", {"category_id": cats["Restaurants"], "month": "current",
                                                             "amount": "150"})
        assert budget["status"] == "completed"
        big = next(t for t in (await _call(client, "list_transactions", {"limit": 200}))["transactions"]
                   if t["payee"] == "Market" and t["amount_milliunits"] <= -40_000 and not t["subtransactions"]
                   and t["id"] not in (first["id"], second["id"]))
        half = big["amount_milliunits"] // 2
        split = await _call(client, "split_transaction", {"transaction_id": big["id"], "lines": [
            {"amount": half / 1000, "category_id": cats["Groceries"]},
            {"amount": (big["amount_milliunits"] - half) / 1000, "category_id": cats["Household"]}]})
        assert split["status"] == "completed"
        checking = next(a for a in (await _call(client, "list_accounts"))["accounts"] if a["name"] == "Checking")
        reconcile = await _call(client, "reconcile_account", {"account_id": checking["id"],
                                                              "balance": checking["cleared_balance"]})
        assert reconcile["status"] == "completed" and reconcile["result"]["adjustment"] is None
        undo = await _call(client, "undo_operation", {"operation_id": recat["result"]["operation_id"]})
        assert undo["status"] == "completed"
    titles = [q.message.split("\n")[0] for q in asked]
    assert titles[0] == "Recategorise 2 transaction(s)?"
    assert titles[1].startswith("Budget Restaurants for ") and titles[1].endswith(" → 150.00?")
    assert titles[2].startswith(f"Split {big['date']} Market ") and titles[2].endswith(" into 2 lines?")
    assert titles[3].startswith("Reconcile Checking: mark ")
    assert titles[4] == "Undo: recategorise 2 transaction(s)?"
    assert book.txn(first["id"])["category_id"] is None
