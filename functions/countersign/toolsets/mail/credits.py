"""Buying mail credits (class always: it spends money)."""

from __future__ import annotations

from pydantic import Field

from ...core.preview import Preview, money
from ...toolkit import ALWAYS, ActionContext, AmountBound, Arguments, Editable, Effect, Step
from .action import MailAction
from .printing import ledger_after
from .snapshot import Mail
from .text import credits, q

MIN_CREDITS, MAX_CREDITS = 10, 100_000
PRICE_PER_CREDIT = 1000  # milliunits of USD per credit


class BuyCreditsArgs(Arguments):
    credits: int = Field(
        ge=MIN_CREDITS, le=MAX_CREDITS, description=f"Whole credits to buy ({MIN_CREDITS} to {MAX_CREDITS})"
    )


class BuyCredits(MailAction):
    name = "buy_credits"
    title = "Preparing a credit purchase confirmation"
    description = "Buy mail credits, charged to the workspace's payment method (1.00 USD per credit)."
    arguments = BuyCreditsArgs
    gate = ALWAYS
    irreversible = True  # the charge stands: no tool refunds a purchase
    drift_message = "The credit balance changed between the preview and the answer; nothing was bought or charged."
    grantable = (AmountBound("credits", amount=lambda subject: subject["buy"], label="credits bought", places=0,
                             unit=" credits"),)
    editable = (Editable("credits", label="credits to buy", kind="whole number",
                         shown=lambda subject: f"{subject['buy'] // 1000}"),)

    def prepare(self, args: BuyCreditsArgs, ctx: ActionContext):
        mail = Mail(ctx)
        amount = args.credits * 1000
        price = args.credits * PRICE_PER_CREDIT
        subject = {"buy": amount, "charge_usd": price}
        title = f"Buy {credits(amount)} for {money(price)} USD"
        lines = [
            f"Charged to the payment method of {q(mail.workspace_name())}",
            "Credits are added at once and never expire",
        ]
        balance = mail.balance() + amount
        # In the units get_credits reads: "25.00" credits, and the thousandths beside it.
        result = {"bought": money(amount), "bought_milli": amount, "balance": money(balance),
                  "balance_milli": balance, "charged_usd": money(price)}
        return subject, Preview(title, lines), Effect.writes(result, [ledger_after(mail, bought=amount)])

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"Bought {credits(result['bought_milli'])} · balance {credits(result['balance_milli'])}",
                f"Charged {result['charged_usd']} USD to the workspace's payment method"]

    def next_steps(self, result, ctx):
        # From the result alone: a purchase confirmed on the page re-plans on the ledger, as the
        # held call planned, and reads nothing more for a suggestion (which draft campaign the new
        # balance covers would mean reading every campaign, design, list and contact).
        return [
            Step("get_credits", "Check the new balance."),
            Step("launch_campaign", f"If a launch was refused for want of credits, it can go ahead now that the "
                 f"balance is {credits(int(result.get('balance_milli', 0)))}: launch it again.",
                 person_must_act=True),
        ]


ACTIONS = [BuyCredits()]
__all__ = ["ACTIONS"]
