"""The demo budget and the CSV import (YNAB register export), on both stores; the CLI command."""

from __future__ import annotations

import json

import pytest

from countersign.cli import main
from countersign.core.ids import new_id
from countersign.identity import accounts
from countersign.toolsets.budget import TOOLSET
from countersign.toolsets.budget.figures import month_figures
from countersign.toolsets.budget.importer import RegisterError, import_register, parse_register
from countersign.toolsets.budget.model import MONTH, RTA_ID, TXNS, Ledger, add_months, is_uncategorised, today
from tests.budget.ledger import NOW, every_transaction, new_book

HEADER = (
    '"Account","Flag","Date","Payee","Category Group/Category","Category Group","Category",'
    '"Memo","Outflow","Inflow","Cleared"'
)


def register(*rows: str) -> str:
    return "\n".join([HEADER, *rows]) + "\n"


GOOD = register(
    '"Checking","","09/01/2026","Acme Corp","Inflow: Ready to Assign","Inflow","Ready to Assign",'
    '"","$0.00","$2,400.00","Reconciled"',
    '"Checking","Red","09/12/2026","Market","Everyday: Groceries","Everyday","Groceries",'
    '"weekly","$86.40","$0.00","Cleared"',
    '"Checking","","09/13/2026","Hardware","","","","Split (1/2) nails","$10.00","$0.00","Uncleared"',
    '"Checking","","09/13/2026","Hardware","","","","Split (2/2) ","$5.50","$0.00","Uncleared"',
    '"Checking","","09/14/2026","Transfer : Visa Card","","","","","$100.00","$0.00","Cleared"',
    '"Visa Card","","09/14/2026","Transfer : Checking","","","","","$0.00","$100.00","Cleared"',
    '"Visa Card","","10/02/2026","Corner Store","","","","","$12.00","$0.00","Uncleared"',
)
GOOD = GOOD.replace('"","","","Split (1/2) nails"', '"Everyday: Household","Everyday","Household","Split (1/2) nails"')
GOOD = GOOD.replace('"","","","Split (2/2) "', '"Fun: Hobbies","Fun","Hobbies","Split (2/2) "')


# -- demo -----------------------------------------------------------------------------------------


def test_demo_is_a_realistic_budget(store):
    book = new_book(store, seed=False)
    TOOLSET.demo(book.store.docs, book.ctx)
    ledger = Ledger.load(store.docs, book.workspace_id)
    txns = [r.data for r in every_transaction(ledger)]
    assert len(ledger.accounts) == 3 and len(ledger.groups) >= 4
    assert len([c for c in ledger.categories.values() if not c.data.get("internal")]) >= 20
    assert len(txns) >= 200
    current = today(NOW).isoformat()[:7] + "-01"
    months = {t["date"][:7] + "-01" for t in txns}
    assert months == {add_months(current, -2), add_months(current, -1), current}
    assert 3 <= sum(is_uncategorised(t) for t in txns) <= 20
    assert 5 <= sum(not t["approved"] for t in txns) <= 20
    assert {t["cleared"] for t in txns} == {"cleared", "uncleared", "reconciled"}
    assert [d.id for d in ledger.range(MONTH)] == [add_months(current, i) for i in (-2, -1, 0)]
    figures = month_figures(ledger, current)
    assert figures["ready_to_assign"] > 0 and figures["activity"]
    names = {c.data["name"] for c in ledger.categories.values()}
    assert {"Restaurants", "Groceries", "Tennis"} <= names
    assert "Everyday" in {g.data["name"] for g in ledger.groups.values()}


# -- import -----------------------------------------------------------------------------------------


def test_import_register(store):
    book = new_book(store)
    result = import_register(book.store.docs, book.ctx, GOOD, "register.csv")
    assert result.imported == 6 and result.skipped == 0
    assert result.accounts_created == ["Visa Card"]
    assert result.categories_created == ["Fun: Hobbies"]  # Groceries and Household exist already
    ledger = Ledger.load(store.docs, book.workspace_id)
    by_payee = {(ledger.accounts[r.account_id].data["name"], r.data["payee"]): r.data for r in every_transaction(ledger)
                if r.data["import_id"]}
    payroll = by_payee[("Checking", "Acme Corp")]
    assert (payroll["amount"], payroll["category_id"], payroll["cleared"]) == (2_400_000, RTA_ID, "reconciled")
    market = by_payee[("Checking", "Market")]
    assert (market["amount"], market["category_id"], market["memo"], market["flag"]) == (
        -86_400, "cat_groceries", "weekly", "red")
    hardware = by_payee[("Checking", "Hardware")]
    assert hardware["amount"] == -15_500 and hardware["category_id"] is None
    assert [(s["amount"], ledger.category_name(s["category_id"]), s["memo"]) for s in hardware["subtransactions"]] == [
        (-10_000, "Household", "nails"), (-5_500, "Hobbies", "")]
    assert by_payee[("Checking", "Transfer : Visa Card")]["transfer"] == "Visa Card"
    assert is_uncategorised(by_payee[("Visa Card", "Corner Store")])
    assert (
        ledger.accounts[next(a for a in ledger.accounts if ledger.accounts[a].data["name"] == "Visa Card")].data["type"]
        == "creditCard"
    )
    [op] = [o for o in book.ops() if o.data["kind"] == "import"]
    assert op.data["summary"] == "import 6 transaction(s) from register.csv" and op.data["undoable"] is False

    again = import_register(book.store.docs, book.ctx, GOOD, "register.csv")
    assert again.imported == 0 and again.skipped == 6


@pytest.mark.parametrize(
    "row, line, words",
    [
        (
            '"Checking","","02/30/2026","Market","","","","","$1.00","","Cleared"',
            3,
            "Date '02/30/2026' is not a date that exists",
        ),
        ('"Checking","","09/12/2026","Market","","","","","lots","","Cleared"', 3, "Outflow 'lots' is not an amount"),
        ('"Checking","","09/12/2026","Market","","","","","","1.00","Pending"', 3, "Cleared 'Pending'"),
        ('"","","09/12/2026","Market","","","","","","1.00","Cleared"', 3, "Account is empty"),
        ('"Checking","","09/12/2026","Market","","","","","1.00"', 3, "9 fields, the header has 11"),
        ('"Checking","","09/12/2026","Market","","","Groceries","","1.00","","Cleared"', 3, "has no Category Group"),
        (
            '"Checking","","09/12/2026","Shop","","","","Split (1/2) a","1.00","","Cleared"',
            4,
            "split part 2 of 2 expected",
        ),
    ],
)
def test_a_malformed_row_names_its_line_and_imports_nothing(store, row, line, words):
    book = new_book(store)
    before = book.snapshot()
    text = register('"Checking","","09/01/2026","Fine","","","","","$1.00","","Cleared"', row,
                    '"Checking","","09/02/2026","Also fine","","","","","$1.00","","Cleared"')
    with pytest.raises(RegisterError) as err:
        import_register(book.store.docs, book.ctx, text)
    assert err.value.line == line and words in str(err.value), str(err.value)
    assert str(err.value).startswith(f"line {line}: ")
    assert book.snapshot() == before and book.ops() == []


def test_line_numbers_count_lines_of_multiline_memos():
    text = register('"Checking","","09/01/2026","A","","","","two\nlines","$1.00","","Cleared"',
                    '"Checking","","09/31/2026","B","","","","","$1.00","","Cleared"')
    with pytest.raises(RegisterError) as err:
        parse_register(text)
    assert err.value.line == 4


def test_header_and_formats():
    with pytest.raises(RegisterError) as missing:
        parse_register('"Account","Date","Payee"\n"a","2026-09-01","b"\n')
    assert missing.value.line == 1 and "missing column" in str(missing.value)
    with pytest.raises(RegisterError) as empty:
        parse_register("")
    assert "empty" in str(empty.value)
    rows = parse_register("\ufeff" + register(
        '"Konto","","13/09/2026","Markt","","","","","86,40 €","","Cleared"',
        '"Konto","","2026-09-14","Markt","","","","","1.234,50","","Cleared"',
        '"Konto","","15.09.2026","Lohn","Inflow: Ready to Assign","","","","","(0.00)","Uncleared"',
    )).rows
    assert [(r.date, r.amount) for r in rows] == [
        ("2026-09-13", -86_400),
        ("2026-09-14", -1_234_500),
        ("2026-09-15", 0),
    ]
    assert (rows[2].group, rows[2].category) == ("Inflow", "Ready to Assign")


def test_a_long_history_is_written_in_batches(store):
    book = new_book(store, seed=False)
    rows = [f'"Old","","{2010 + i // 12}-{i % 12 + 1:02d}-05","Shop {i}","","","","","$1.00","","Reconciled"'
            for i in range(100)]
    result = import_register(book.store.docs, book.ctx, register(*rows))
    assert result.imported == 100
    ledger = Ledger.load(store.docs, book.workspace_id)
    assert len(store.docs.list_docs(book.workspace_id, TXNS)) == 100  # one chunk a month
    assert ledger.balances(next(iter(ledger.accounts))) == (-100_000, 0)
    assert len(every_transaction(ledger)) == 100


# -- the CLI ---------------------------------------------------------------------------------------------


def test_cli_budget_import(tmp_path, capsys):
    from countersign.store.sqlite import SQLiteStore

    db = tmp_path / "cli.db"
    store = SQLiteStore(str(db))
    email = f"{new_id('u')}@example.com"
    workspace, _ = accounts.create_workspace(store.workspaces, "CLI", email)
    good = tmp_path / "register.csv"
    good.write_text(GOOD, encoding="utf-8")
    bad = tmp_path / "bad.csv"
    bad.write_text(register('"Checking","","09/12/2026","Market","","","","","x","","Cleared"'), encoding="utf-8")
    base = ["--store", f"sqlite:///{db}", "--data", str(tmp_path / "data")]

    assert main(["budget", "import", str(bad), "--email", email, *base]) == 2
    assert "line 2: Outflow 'x' is not an amount; nothing was imported" in capsys.readouterr().err
    assert store.docs.list_docs(workspace.id, "budget_txns") == []

    assert main(["budget", "import", str(good), "--email", email, *base]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["workspace_id"] == workspace.id and out["imported"] == 6
    assert out["accounts_created"] == ["Checking", "Visa Card"]
    assert len(store.docs.list_docs(workspace.id, "budget_txns")) == 3

    assert main(["budget", "import", str(good), "--email", "nobody@example.com", *base]) == 2
    assert "no member" in capsys.readouterr().err

    assert main(["budget", "upgrade", "--email", email, *base]) == 0  # nothing of an older layout here
    assert json.loads(capsys.readouterr().out) == {"workspace_id": workspace.id, "moved": 0}
    assert main(["budget", "upgrade", "--email", "nobody@example.com", *base]) == 2
    store.close()
