"""What the gateway tests do again and again: put an upstream behind a tenant's gate (a held
request, confirmed on the page), and call its tools as the agent."""

from __future__ import annotations

from countersign.core.card_states import CardState
from countersign.store.cards import Card
from countersign.surfaces import upstream_requests


def change(tenant, tool: str, arguments: dict) -> Card:
    """File an upstream change as the CLI does, and confirm it on the page."""
    card = upstream_requests.file_change(tenant.runtime.desk, tenant.workspace_id, tenant.person, tool, arguments)
    done = tenant.confirm_on_page(card.id)
    assert done.state is CardState.COMPLETED, done.result
    return done


def add(tenant, name: str = "fs", *, url: str | None = None, command: list[str] | None = None,
        headers: dict | None = None) -> Card:
    desk = tenant.runtime.desk
    arguments = upstream_requests.add_arguments(desk, tenant.workspace_id, name, url, command, headers or {})
    return change(tenant, "upstream_add", arguments)


async def call(tenant, tool: str, arguments: dict, **client):
    async with tenant.client(**client) as c:
        return await c.call_tool(tool, arguments)


def text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def shown_tool(card: Card, name: str) -> dict:
    """The entry of tool ``name`` in the sections of an add or refresh card (what the page draws)."""
    return next(t for s in card.sections for t in s["tools"] if t["name"] == name)


def read(segments: list) -> str:
    """A field of a card's sections as it reads, whatever was struck out or added."""
    return "".join(text for _, text in segments)


def after(segments: list) -> str:
    """A field as it reads now: what is the same and what was added."""
    return "".join(text for mark, text in segments if mark != "-")
