"""Filing an upstream change as a held request (the CLI and the Settings page share this), and
the view of a workspace's upstreams that may be shown: never a credential, sealed or not."""

from __future__ import annotations

from typing import Any

from ...gate.cards import CardDesk
from ...gate.question import Question
from ...store.records import Card, Person
from .config import Upstream, load_all
from .seal import Sealer


def sealer_of(desk: CardDesk) -> Sealer:
    action = desk.registry.action("upstream_add")
    return action.env.sealer  # type: ignore[attr-defined]


def parse_headers(lines: list[str]) -> dict[str, str]:
    """``Name: value`` lines as headers. A line that is not one is refused without its text, which
    may be a credential typed without its colon (``Authorization Bearer sk-…``)."""
    headers = {}
    for number, line in enumerate(lines, 1):
        name, sep, value = line.partition(":")
        if not sep or not name.strip():
            raise ValueError(f"header {number} is not 'Name: value' (no name before a ':'); it is not shown here, "
                             "as it may hold a credential")
        headers[name.strip()] = value.strip()
    return headers


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


def file_change(desk: CardDesk, workspace_id: str, person: Person, tool: str, arguments: dict[str, Any]) -> Card:
    """Plan the change now (its card lists what it will approve) and file its card for ``person``."""
    ctx = desk.context(workspace_id, person, None, desk.now())
    q = Question.of(desk.registry.action(tool), arguments, ctx)
    card = desk.recent(q)
    if card is None:
        card, filed = desk.file(q, "page")
        if filed:
            desk.notify(card)
    return card


def view(upstream: Upstream) -> dict[str, Any]:
    return {
        "name": upstream.name, "transport": upstream.transport, "where": upstream.where,
        "credential": bool(upstream.sealed),
        "tools": [{"name": f"{upstream.name}__{n}", "class": p.cls, "title": p.title,
                   "witness": [w.to_dict() for w in p.witness]} for n, p in sorted(upstream.tools.items())],
    }


def views(desk: CardDesk, workspace_id: str, person: Person) -> list[dict[str, Any]]:
    return [view(u) for u in load_all(desk.context(workspace_id, person, None, desk.now()))]
