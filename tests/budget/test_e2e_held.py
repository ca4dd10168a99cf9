"""Each held budget tool end to end through the live MCP endpoint with the real Python client, on
every path: 2026-07-28 accept / untick / decline / cancel → card, confirmation code, hosted card
confirmed by the person; and drift on each path. Questions are asserted word for word."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import mcp_types as types
import pytest

from countersign.core.card_states import CardState, Refusal, RefusalReason
from countersign.core.codes import CODE_REFUSAL
from countersign.toolsets.budget.model import DRIFT
from tests.budget.ledger import Book, book_for, seed_small, set_group
from tests.support.harness import CANCEL, DECLINE, accept

pytestmark = [pytest.mark.mcp, pytest.mark.anyio]

RECAT = {"changes": [{"transaction_id": "t_market", "category_id": "cat_groceries"},
                     {"transaction_id": "t_shop", "category_id": "cat_household"}]}
RECAT_QUESTION = (
    "Recategorise 2 transaction(s)?\n"
    "2026-09-12, Market, -86.40, Uncategorised → Groceries\n"
    "2026-09-15, Corner Store, -12.00, Uncategorised → Household"
)


@dataclass
class Case:
    tool: str
    args: Callable[[Book], dict]
    question: str
    applied: Callable[[Book, dict], None]
    drift: Callable[[Book], None]
    kind: str
    drift_text: str = DRIFT
    setup_ops: int = 0
    extra: dict = field(default_factory=dict)


def _recategorised(book: Book, result: dict) -> None:
    assert book.txn("t_market")["category_id"] == "cat_groceries"
    assert book.txn("t_shop")["category_id"] == "cat_household"


def _budgeted(book: Book, result: dict) -> None:
    assert book.budgeted("2026-09-01", "cat_restaurants") == 150_000
    assert result["budgeted"] == "150.00"


def _renamed(book: Book, result: dict) -> None:
    assert book.category("cat_tennis")["name"] == "Sport"


def _created_category(book: Book, result: dict) -> None:
    assert book.category(result["category_id"])["name"] == "Pets"
    assert book.category(result["category_id"])["group_id"] == "grp_everyday"


def _created_txn(book: Book, result: dict) -> None:
    [txn_id] = result["transaction_ids"]
    txn = book.txn(txn_id)
    assert (txn["date"], txn["payee"], txn["amount"], txn["category_id"]) == (
        "2026-09-12", "Market", -86_400, "cat_groceries")


def _reconciled(book: Book, result: dict) -> None:
    txns = book.all_txns()
    assert [txns[t]["cleared"] for t in ("t_pay", "t_market", "t_bistro", "t_shop")] == \
        ["reconciled", "reconciled", "reconciled", "uncleared"]
    assert txns[result["adjustment_transaction_id"]]["amount"] == -3_100


def _split(book: Book, result: dict) -> None:
    assert [s["amount"] for s in book.txn("t_market")["subtransactions"]] == [-60_000, -26_400]


def _undone(book: Book, result: dict) -> None:
    assert book.txn("t_market")["category_id"] is None and book.txn("t_shop")["category_id"] is None
    ops = {o.id: o.data for o in book.ops()}
    assert ops[result["undid"]]["undone_by"] == result["operation_id"]


def _recategorise_first(book: Book) -> dict:
    return {"operation_id": book.do("apply_categories", **RECAT)["operation_id"]}


CASES = [
    Case(
        "apply_categories",
        lambda b: RECAT,
        RECAT_QUESTION,
        _recategorised,
        lambda b: b.set_txn("t_market", category_id="cat_books"),
        "recategorise",
    ),
    Case(
        "set_category_budget",
        lambda b: {"category_id": "cat_restaurants", "month": "2026-09", "amount": 150},
        "Budget Restaurants for 2026-09-01: 120.00 → 150.00?",
        _budgeted,
        lambda b: b.set_budget("2026-09-01", "cat_restaurants", 130_000),
        "budget",
    ),
    Case(
        "update_category",
        lambda b: {"category_id": "cat_tennis", "name": "Sport"},
        "Change category ‘Tennis’ (Fun) to ‘Sport’ (Fun)?",
        _renamed,
        lambda b: b.set_category("cat_tennis", name="Padel"),
        "update_category",
    ),
    Case(
        "create_category",
        lambda b: {"group_id": "grp_everyday", "name": "Pets"},
        "Create category ‘Pets’ in Everyday?",
        _created_category,
        lambda b: set_group(b, "grp_everyday", name="Daily"),
        "create_category",
    ),
    Case(
        "create_transactions",
        lambda b: {
            "account_id": "acc_checking",
            "transactions": [
                {"date": "2026-09-12", "payee": "Market", "amount": -86.40, "category_id": "cat_groceries"}
            ],
        },
        "Create 1 transaction(s) on Checking?\n2026-09-12, Market, -86.40, Groceries",
        _created_txn,
        lambda b: b.set_category("cat_groceries", name="Food"),
        "create_transactions",
    ),
    Case(
        "reconcile_account",
        lambda b: {"account_id": "acc_checking", "balance": "2250.00"},
        "Reconcile Checking: mark 3 cleared transaction(s) reconciled?\n"
        "Bank balance: 2250.00\nCleared balance: 2253.10\nDifference to adjust: -3.10\n"
        "An adjustment of -3.10 is entered as ‘Reconciliation Balance Adjustment’ (Ready to Assign).",
        _reconciled,
        lambda b: b.set_txn("t_shop", cleared="cleared"),
        "reconcile",
    ),
    Case(
        "split_transaction",
        lambda b: {
            "transaction_id": "t_market",
            "lines": [
                {"amount": -60, "category_id": "cat_groceries"},
                {"amount": -26.40, "category_id": "cat_household"},
            ],
        },
        "Split 2026-09-12 Market 86.40 into 2 lines?\nGroceries 60.00\nHousehold 26.40\n"
        "Warning: a split cannot be undone.",
        _split,
        lambda b: b.set_txn("t_market", category_id="cat_books"),
        "split",
    ),
    Case(
        "undo_operation",
        _recategorise_first,
        "Undo: recategorise 2 transaction(s)?\n"
        "2026-09-12, Market, -86.40, Groceries → Uncategorised\n"
        "2026-09-15, Corner Store, -12.00, Household → Uncategorised",
        _undone,
        lambda b: b.set_txn("t_market", category_id="cat_books"),
        "undo",
        drift_text="The budget changed",
        setup_ops=1,
    ),
]
IDS = [c.tool for c in CASES]


def _book(tenant) -> Book:
    seed_small(tenant.store, tenant.workspace_id)
    return book_for(tenant.store, tenant.workspace_id, tenant.person, now=tenant.runtime.desk.now())


def _error(result) -> str:
    assert result.is_error, result
    return result.content[0].text


def _assert_applied(case: Case, book: Book, result: dict) -> None:
    case.applied(book, result)
    ops = {o.id: o.data for o in book.ops()}
    assert len(ops) == case.setup_ops + 1
    op = ops[result["operation_id"]]
    assert op["kind"] == case.kind
    assert op["by"] == book.ctx.person.id
    assert op["summary"] == case.question.split("\n")[0][0].lower() + case.question.split("\n")[0][1:-1]


def _card(tenant, card_id):
    return tenant.store.cards.get_card(tenant.workspace_id, card_id, tenant.runtime.desk.now())


# -- 2026-07-28: the question in the client ----------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_accept_applies(tenant, case):
    book = _book(tenant)
    args = case.args(book)
    asked = []
    async with tenant.client(answer=accept(), record=asked) as client:
        result = await client.call_tool(case.tool, args)
    body = result.structured_content
    assert body["status"] == "completed", body
    assert [q.message for q in asked] == [case.question]
    _assert_applied(case, book, body["result"])
    assert _card(tenant, body["confirmationId"]).channel == "client"


@pytest.mark.parametrize("answer, reason", [(accept(ticked=False), "The box was not ticked."),
                                            (DECLINE, "Declined in the client.")], ids=["untick", "decline"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_untick_and_decline_write_nothing(tenant, case, answer, reason):
    book = _book(tenant)
    args = case.args(book)
    before = book.snapshot()
    asked = []
    async with tenant.client(answer=answer, record=asked) as client:
        result = await client.call_tool(case.tool, args)
    body = result.structured_content
    assert body["status"] == "declined" and body["reason"] == reason
    assert [q.message for q in asked] == [case.question]
    assert book.snapshot() == before and len(book.ops()) == case.setup_ops


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_cancel_files_a_card(tenant, case):
    book = _book(tenant)
    args = case.args(book)
    before = book.snapshot()
    async with tenant.client(answer=CANCEL) as client:
        result = await client.call_tool(case.tool, args)
    body = result.structured_content
    assert body["status"] == "pending"
    assert "\n".join([body["title"], *body["lines"]]) == case.question
    assert _card(tenant, body["confirmationId"]).state is CardState.PENDING
    assert book.snapshot() == before and len(book.ops()) == case.setup_ops


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_drift_between_question_and_answer(tenant, case):
    book = _book(tenant)
    args = case.args(book)
    async with tenant.client(answer=accept()) as client:
        first = await client.session.call_tool(case.tool, args, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult), first
        assert first.input_requests["confirm"].params.message == case.question
        case.drift(book)
        moved = book.snapshot()
        retry = await client.session.call_tool(case.tool, args, input_responses={"confirm": accept()},
                                               request_state=first.request_state, allow_input_required=True)
    assert case.drift_text in _error(retry)
    assert book.snapshot() == moved and len(book.ops()) == case.setup_ops


# -- confirmation codes (a deployment without a confirm page) ------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_code_path_applies(tenant, configure, case):
    configure(fallback="code")
    book = _book(tenant)
    args = case.args(book)
    before = book.snapshot()
    async with tenant.client() as client:
        first = (await client.call_tool(case.tool, args)).structured_content
        assert first["status"] == "confirmation_required"
        assert first["preview"] == case.question
        assert book.snapshot() == before
        done = await client.call_tool(case.tool, dict(args, confirmation=first["confirmation"]))
    body = done.structured_content
    assert body["status"] == "completed", body
    _assert_applied(case, book, body["result"])


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_code_after_drift_gets_the_code_sentence(tenant, configure, case):
    configure(fallback="code")
    book = _book(tenant)
    args = case.args(book)
    async with tenant.client() as client:
        first = (await client.call_tool(case.tool, args)).structured_content
        case.drift(book)
        moved = book.snapshot()
        result = await client.call_tool(case.tool, dict(args, confirmation=first["confirmation"]))
    assert CODE_REFUSAL in _error(result)  # the state moved: the code is for changes that no longer exist
    assert book.snapshot() == moved and len(book.ops()) == case.setup_ops


async def test_a_code_confirms_the_same_subject_however_it_is_spelled(tenant, configure):
    # The code is bound to the fingerprint of the subject, not to the spelling of the arguments.
    configure(fallback="code")
    book = _book(tenant)
    async with tenant.client() as client:
        first = (await client.call_tool("set_category_budget", {"category_id": "cat_restaurants",
                                                                "month": "2026-09", "amount": 150})).structured_content
        respelled = {"category_id": "cat_restaurants", "month": "2026-09-01", "amount": "150.00"}
        done = await client.call_tool("set_category_budget", dict(respelled, confirmation=first["confirmation"]))
        assert done.structured_content["status"] == "completed", done.structured_content
        again = await client.call_tool("set_category_budget", dict(respelled, confirmation=first["confirmation"]))
    assert CODE_REFUSAL in _error(again)  # spent: reused after success gets the code sentence
    assert book.budgeted("2026-09-01", "cat_restaurants") == 150_000


# -- the hosted card, confirmed by the person ----------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_card_confirmed_on_the_page(tenant, case):
    book = _book(tenant)
    args = case.args(book)
    async with tenant.client() as client:  # declares no elicitation: a held card
        held = (await client.call_tool(case.tool, args)).structured_content
        assert held["status"] == "pending"
        assert "\n".join([held["title"], *held["lines"]]) == case.question
        card = tenant.confirm_on_page(held["confirmationId"])
        assert card.state is CardState.COMPLETED, card.result
        status = (
            await client.call_tool("get_confirmation_status", {"confirmation_id": held["confirmationId"]})
        ).structured_content
    assert status["status"] == "completed" and status["answeredVia"] == "page"
    _assert_applied(case, book, status["result"])
    if case.tool != "split_transaction" and case.tool != "undo_operation":
        assert status["next"][0]["tool"] == "undo_operation"


@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_card_after_drift_is_refused_as_changed(tenant, case):
    book = _book(tenant)
    args = case.args(book)
    async with tenant.client() as client:
        held = (await client.call_tool(case.tool, args)).structured_content
        case.drift(book)
        moved = book.snapshot()
        with pytest.raises(Refusal) as refused:
            tenant.confirm_on_page(held["confirmationId"])
        status = (
            await client.call_tool("get_confirmation_status", {"confirmation_id": held["confirmationId"]})
        ).structured_content
    assert refused.value.reason is RefusalReason.CHANGED
    assert "The budget changed between the preview and the answer" in refused.value.message
    assert (
        status["status"] == "declined" and "The budget changed between the preview and the answer" in status["reason"]
    )
    assert book.snapshot() == moved and len(book.ops()) == case.setup_ops
