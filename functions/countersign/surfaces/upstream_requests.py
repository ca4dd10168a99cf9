"""Filing a change of the gateway's upstreams as a held request, and listing them (the CLI and
the Settings page share this). What may be shown of an upstream is the gateway toolset's
(:func:`countersign.toolsets.gateway.requests.view`): never a credential, sealed or not."""

from __future__ import annotations

from typing import Any

from ..core.askers import COMMAND_LINE, Asker
from ..gate.desk import CardDesk
from ..gate.question import Question
from ..store.cards import Card
from ..store.workspaces import Person
from ..toolsets.gateway.config import load_all
from ..toolsets.gateway.requests import view
from ..toolsets.gateway.seal import Sealer


def sealer_of(desk: CardDesk) -> Sealer:
    action = desk.registry.action("upstream_add")
    return action.env.sealer  # type: ignore[attr-defined]


def add_arguments(desk: CardDesk, workspace_id: str, name: str, url: str | None, command: list[str] | None,
                  headers: dict[str, str]) -> dict[str, Any]:
    """The arguments of ``upstream_add``: the credential sealed for this workspace and name."""
    args: dict[str, Any] = {"name": name}
    if url:
        args["url"] = url
    if command:
        args["command"] = list(command)
    if headers:
        args["sealed"] = sealer_of(desk).seal(workspace_id, name, headers)
    return args


SUPERSEDED = "A newer request for the same change of this upstream replaced this one; nothing changed."


def file_change(desk: CardDesk, workspace_id: str, person: Person, tool: str, arguments: dict[str, Any], *,
                asker: Asker = COMMAND_LINE) -> Card:
    """Plan the change now (its card lists what it will approve) and file its card for ``person``,
    asked by ``asker``: the command line, or the member who asked from Settings.

    The same request again (the same subject: same credential, same tools, same version) is
    answered with its card. Another one for the same change of the same upstream (another
    credential, say) replaces the one still waiting, which is withdrawn: only the newest can be
    confirmed, so nobody confirms the request that was corrected."""
    ctx = desk.context(workspace_id, person, None, desk.now())
    q = Question.of(desk.registry.action(tool), arguments, ctx)
    card = desk.recent(q)
    if card is None:
        card, filed = desk.file(q, "page", asker)
        if filed:
            _withdraw_replaced(desk, card)
            desk.notify(card)
    return card


def _same_change(a: Card, b: Card) -> bool:
    keys = ("name", "tool") if a.tool == "upstream_policy" else ("name",)
    return a.tool == b.tool and all(a.arguments.get(k) == b.arguments.get(k) for k in keys)


def _withdraw_replaced(desk: CardDesk, card: Card) -> None:
    desk.withdraw_waiting(card.workspace_id, card.person_id, f"person:{card.person_id}", "page", SUPERSEDED,
                          connection_id="", tool=card.tool,
                          which=lambda other: other.id != card.id and _same_change(other, card))


def views(desk: CardDesk, workspace_id: str, person: Person) -> list[dict[str, Any]]:
    return [view(u) for u in load_all(desk.context(workspace_id, person, None, desk.now()))]
