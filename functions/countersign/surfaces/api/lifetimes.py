"""How long cards wait, their reminders and what a lapse means (docs/policy.md, "Lifetimes,
reminders and lapses"): the workspace's rules in words, and an owner's change filed as a held card.

``GET /api/settings/card-lifetimes`` — the rules (durations as text, ``2h``) and each in words, for
every member (the page's Settings shows them). ``POST /api/settings/card-lifetimes`` ``{"rules": …}``
— the owner files ``set_card_lifetimes``; it changes nothing until they confirm that card (with
their passkey where the passkey policy asks). Bad rules are refused with every problem named by its
path, and nothing is filed.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from ...core import lifetimes
from ...gate.lifetimes import SetCardLifetimes, rules_of
from .cards import file_own_request
from .errors import ApiError
from .schemas import CardView, Strict, errors
from .session import Acting, SignedIn, runtime_of

router = APIRouter(tags=["settings"])


class LifetimesBody(Strict):
    rules: dict[str, Any] = Field(description="Per class (default, always, client, setting, when, risky): any of "
                                              "wait (5m to 7d), remind_before (less than the wait, or null) and "
                                              "lapse (expired or declined). {} removes every rule.")


class LifetimesView(BaseModel):
    rules: dict[str, Any] = Field(description="The rules as set, durations as text (2h, 30m)")
    words: list[str] = Field(description="The rules in words, one line each")
    canChange: bool = Field(description="Whether the signed-in person (the owner) can file a change")


def lifetimes_view(runtime: Any, workspace: Any, role: str) -> dict[str, Any]:
    rules = rules_of(workspace)
    return {"rules": lifetimes.exported(rules), "words": lifetimes.describe(rules, runtime.settings.card_ttl),
            "canChange": role == "owner"}


@router.get("/settings/card-lifetimes", response_model=LifetimesView, responses=errors(401))
def get_lifetimes(request: Request, signed: SignedIn) -> dict:
    """The workspace's card lifetimes, as set and in words."""
    return lifetimes_view(runtime_of(request), signed.workspace, signed.person.role)


@router.post("/settings/card-lifetimes", response_model=CardView, status_code=201, responses=errors(401, 403, 422))
def request_lifetimes(body: LifetimesBody, request: Request, signed: Acting) -> dict:
    """File the owner's change of card lifetimes as a card they then confirm."""
    problems = lifetimes.problems_of(body.rules, "rules")
    if problems:
        raise ApiError(422, "invalid", " ".join(f"{path}: {text}" for path, text in problems) + " Nothing was filed.",
                       field=problems[0][0])
    return file_own_request(runtime_of(request), signed, SetCardLifetimes.name, {"rules": body.rules}, "rules")
