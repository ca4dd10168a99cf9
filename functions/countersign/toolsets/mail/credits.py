"""Buying mail credits (class always: it spends money)."""

from __future__ import annotations

from pydantic import Field

from ...core.preview import Preview, money
from ...gate.actions import ALWAYS, ActionContext, Arguments, Effect, Step
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
    title = "Buy mail credits"
    description = "Buy mail credits, charged to the workspace's payment method (1.00 USD per credit)."
    arguments = BuyCreditsArgs
    gate = ALWAYS
    drift_message = "The credit balance changed between the preview and the answer; nothing was bought or charged."

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
        return (
            subject,
            Preview(title, lines),
            Effect.writes({"bought": amount, "charged_usd": money(price)}, [ledger_after(mail, bought=amount)]),
        )

    def next_steps(self, result, ctx):
        return [Step("get_credits", "Check the new balance."),
                Step("launch_campaign", "Launch the campaign that was waiting for credits.", person_must_act=True)]


ACTIONS = [BuyCredits()]
__all__ = ["ACTIONS"]
