"""Buying mail credits (class always: it spends money)."""

from __future__ import annotations

from pydantic import Field

from ...core.preview import Preview, money
from ...gate.actions import ALWAYS, ActionContext, Arguments, Effect, Step
from .action import MailAction
from .kinds import PRICES
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
        balance = mail.balance() + amount
        # In the units get_credits reads: "25.00" credits, and the thousandths beside it.
        result = {"bought": money(amount), "bought_milli": amount, "balance": money(balance),
                  "balance_milli": balance, "charged_usd": money(price)}
        return subject, Preview(title, lines), Effect.writes(result, [ledger_after(mail, bought=amount)])

    def next_steps(self, result, ctx):
        steps = [Step("get_credits", "Check the new balance.")]
        after = int(result.get("balance_milli", 0))
        before = after - int(result.get("bought_milli", 0))
        for name, cost in _drafts_and_costs(Mail(ctx)):
            if before < cost <= after:  # this purchase is what it was waiting for
                steps.append(Step("launch_campaign", f"Launch {q(name)}: it needs {credits(cost)}, which the "
                                  "balance now covers.", person_must_act=True))
        return steps


def _drafts_and_costs(mail: Mail) -> list[tuple[str, int]]:
    """(name, what its launch would debit) of each draft campaign that has designs and an audience."""
    out = []
    for camp in mail.campaigns.values():
        designs = [mail.designs[d] for d in camp.data.get("design_ids", []) if d in mail.designs]
        if camp.data.get("status") != "draft" or not designs:
            continue
        contacts, _ = mail.audience(camp)
        cost = len(contacts) * sum(PRICES.get(d.data.get("format", ""), 0) for d in designs)
        if cost:
            out.append((camp.data["name"], cost))
    return out


ACTIONS = [BuyCredits()]
__all__ = ["ACTIONS"]
