"""What a standing grant may bound, as an action declares it (docs/policy.md, "Standing grants").

A person may let one of their connections run an action without asking each time, within bounds
(countersign.gate.standing_grants). Only the action knows which of its arguments can be bounded,
and how, so it declares them in :attr:`Action.grantable <countersign.toolkit.actions.Action.grantable>`:

* :class:`AmountBound` — an amount: at most so much a call, and the sum over the grant's uses
  under its cap. ``credits`` of ``buy_credits``, ``amount`` of ``set_category_budget``.
* :class:`ChoiceBound` — a value from a set the person picks: the categories a budget may be set
  for, the lists a piece may be sent to.

Each bound reads the call's value from the plan's **subject** (names resolved, amounts in
thousandths), never from the arguments as spelled, so ``"150"`` and ``150.00`` are the same amount
and an id is the one the plan resolved. An action that declares none cannot be granted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from .context import ActionContext


class BoundError(ValueError):
    """A limit a person gave that the bound refuses; the message says why, for a person."""


@dataclass(frozen=True)
class AmountBound:
    """An amount a grant may bound: at most ``max`` a call, and at most its cap over all its uses.

    ``amount(subject)`` is the call's amount in thousandths of the unit (credits, currency). A
    negative amount is never covered. ``places``: the decimals a person may give a limit with (0:
    whole numbers). ``unit``: what follows a number when it is read out (``" credits"``).
    """

    argument: str
    amount: Callable[[Any], int]
    label: str = ""
    places: int = 2
    unit: str = ""
    kind: str = field(default="max", init=False)

    @property
    def name(self) -> str:
        return self.argument

    def parse(self, value: Any, what: str | None = None) -> int:
        """A limit a person gave (``100``, ``"150.00"``) in thousandths; :class:`BoundError` if it is
        not a positive amount with at most :attr:`places` decimals."""
        what = what or self.argument
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise BoundError(f"{what}: must be an amount such as {self.show(100_000)}.")
        try:
            number = Decimal(str(value).strip())
        except InvalidOperation:
            raise BoundError(f"{what}: {str(value)[:40]!r} is not an amount.") from None
        if not number.is_finite() or number <= 0:
            raise BoundError(f"{what}: must be more than zero.")
        if number.as_tuple().exponent < -self.places:  # type: ignore[operator]
            whole = "a whole number" if self.places == 0 else f"at most {self.places} decimals"
            raise BoundError(f"{what}: {value} has more decimals than this amount takes ({whole}).")
        milli = int(number * 1000)
        if milli > 10**15:
            raise BoundError(f"{what}: {value} is more than any amount a grant can bound.")
        return milli

    def show(self, thousandths: int) -> str:
        """An amount as a person reads it: ``100 credits``, ``500.00``."""
        number = Decimal(thousandths) / 1000
        text = f"{number:.{self.places}f}" if self.places else f"{number.normalize():f}"
        return f"{text}{self.unit}"


@dataclass(frozen=True)
class ChoiceBound:
    """A value a grant may restrict to a set the person picks.

    ``values(subject, ctx)`` gives the values this call uses. With ``any_of`` the call is covered
    when one of them is allowed (a contact on one of the allowed lists); otherwise every one must be
    (the category a budget is set for). ``choices(ctx)`` lists what a person may pick, as (value,
    name) pairs: a limit naming anything else is refused.
    """

    argument: str
    values: Callable[[Any, ActionContext], Iterable[str]]
    choices: Callable[[ActionContext], list[tuple[str, str]]]
    label: str = ""
    any_of: bool = False
    kind: str = field(default="in", init=False)

    @property
    def name(self) -> str:
        return self.argument

    def parse(self, value: Any, ctx: ActionContext, what: str | None = None) -> tuple[list[str], list[str]]:
        """The values a person picked (sorted, without repeats) and their names; :class:`BoundError`
        if it is not a list of 1 to 100 of this workspace's choices."""
        what = what or self.argument
        if not isinstance(value, list) or not value or len(value) > 100 or not all(isinstance(v, str) for v in value):
            raise BoundError(f"{what}: must be a list of 1 to 100 values to allow.")
        known = dict(self.choices(ctx))
        unknown = [v for v in value if v not in known]
        if unknown:
            raise BoundError(f"{what}: {unknown[0][:64]!r} is not one of this workspace's choices.")
        picked = sorted(set(value))
        return picked, [known[v] for v in picked]

    def covers(self, subject: Any, ctx: ActionContext, allowed: Iterable[str]) -> bool:
        used = set(self.values(subject, ctx))
        allowed = set(allowed)
        if self.any_of:
            return bool(used & allowed)
        return bool(used) and used <= allowed


Bound = AmountBound | ChoiceBound
