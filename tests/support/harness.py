"""The shared test harness: one live local server per test run, a fresh tenant per test.

The server runs every toolset of this build plus the test-only notes toolset, on SQLite, on
127.0.0.1. A tenant is a new workspace with an owner and an agent connection, so tests never see
each other's cards.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from countersign.core.card_states import Refusal, RefusalReason
from countersign.core.ids import new_id
from countersign.identity import accounts
from countersign.runtime import Runtime, load_toolsets
from countersign.settings import KNOWN_PACKS
from countersign.store.cards import Card
from countersign.store.errors import NotFound
from countersign.store.workspaces import Person
from tests.support.confirm_page import Page
from tests.support.sample_toolset import TOOLSET as NOTES, seed_notes


def all_toolsets():
    """The notes toolset plus every toolset of the build (``COUNTERSIGN_TEST_PACKS=a,b`` narrows it)."""
    chosen = os.environ.get("COUNTERSIGN_TEST_PACKS")
    packs = KNOWN_PACKS if chosen is None else tuple(p for p in chosen.split(",") if p)
    return [NOTES, *load_toolsets(packs)]


@dataclass
class Tenant:
    runtime: Runtime
    origin: str
    workspace_id: str
    person: Person
    token: str
    connection_id: str
    notes: list[str] = field(default_factory=list)
    _pages: dict = field(default_factory=dict, repr=False)

    @property
    def url(self) -> str:
        return f"{self.origin}/mcp"

    @property
    def store(self):
        return self.runtime.store

    def client(self, **kwargs):
        return mcp_client(self.url, self.token, **kwargs)

    def note(self, note_id: str) -> dict:
        return self.store.docs.get_doc(self.workspace_id, "note", note_id).data

    def add_person(self, role: str = "member") -> Person:
        return accounts.add_person(self.store.workspaces, self.workspace_id, f"{new_id('u')}@example.com", role)

    def connect(self, person: Person | None = None, name: str = "Second agent") -> str:
        person = person or self.person
        return accounts.create_connection(self.store.workspaces, self.store.connections, self.workspace_id, person.id,
                                          name).token

    def page(self, person: Person | None = None) -> Page:
        """The confirm page signed in as ``person`` (the owner by default), over real HTTP."""
        person = person or self.person
        if person.id not in self._pages:
            self._pages[person.id] = Page(self.origin).sign_in(self.runtime, person)
        return self._pages[person.id]

    def confirm_on_page(self, card_id: str, person: Person | None = None) -> Card:
        """Click Confirm on the confirm page: POST /api/cards/{id}/confirm from a signed-in session.

        Returns the card as stored after the run; a refusal (409/403) is raised as the
        :class:`Refusal` the page shows, an unknown card (404) as :class:`NotFound`.
        """
        return self._click(card_id, "confirm", None, person)

    def decline_on_page(self, card_id: str, reason: str | None = None, person: Person | None = None) -> Card:
        return self._click(card_id, "decline", {"reason": reason} if reason else {}, person)

    def _click(self, card_id: str, verb: str, body, person: Person | None) -> Card:
        response = self.page(person).post(f"/api/cards/{card_id}/{verb}", body)
        if response.status_code == 200:
            return self.store.cards.get_card(self.workspace_id, card_id, self.runtime.desk.now())
        error = response.json()["error"]
        if response.status_code in (403, 409) and error["code"] in {r.value for r in RefusalReason}:
            raise Refusal(RefusalReason(error["code"]), error["message"])
        if response.status_code == 404:
            raise NotFound("card", card_id)
        raise AssertionError(f"unexpected answer to {verb}: {response.status_code} {response.text}")


TENANTS: list[Tenant] = []


def new_tenant(runtime: Runtime, origin: str, role: str = "owner") -> Tenant:
    store = runtime.store
    workspace, person = accounts.create_workspace(store.workspaces, "Acme", f"{new_id('u')}@example.com")
    if role != "owner":
        person = store.workspaces.update_person(workspace.id, person.id, role=role)
    new = accounts.create_connection(store.workspaces, store.connections, workspace.id, person.id, "Test agent")
    notes = seed_notes(store, workspace.id)
    tenant = Tenant(runtime, origin, workspace.id, person, new.token, new.connection.id, notes)
    TENANTS.append(tenant)
    return tenant


def secrets_of_run(runtime: Runtime) -> set[str]:
    """Every value of the live server that must never reach an agent or a log: keys and tickets."""
    found = {s.decode() for s in runtime.state_keys}
    keys = runtime.settings.data_dir / "keys"
    if keys.is_dir():
        found |= {p.read_text().strip() for p in keys.iterdir()}
    for tenant in TENANTS:
        found |= card_secrets(runtime.store, tenant.workspace_id, runtime.desk.now())
    return {s for s in found if len(s) >= 16}


def swap_settings(runtime: Runtime, **changes):
    runtime.desk.settings = dataclasses.replace(runtime.desk.settings, **changes)


TRANSCRIPT: list[bytes] = []
"""Every byte of every MCP response this test run received (scanned for secrets at the end)."""

SECRETS: set[str] = set()
"""Every key, ticket and nonce of this run that must never appear in ``TRANSCRIPT`` or a log line."""


def card_secrets(store, workspace_id: str, now: int) -> set[str]:
    """The tickets (and their two halves) of every card of a workspace."""
    found: set[str] = set()
    for person in store.workspaces.list_persons(workspace_id):
        pending, _ = store.cards.list_pending_cards(workspace_id, person.id, now, limit=1000)
        done, _ = store.cards.list_card_history(workspace_id, person.id, now, limit=1000)
        for listed in pending + done:  # a listing carries no ticket: read each card whole
            card = store.cards.get_card(workspace_id, listed.id, now)
            found |= {card.ticket, *card.ticket.split(".")}
    return found


class _Recorded(httpx2.AsyncByteStream):
    def __init__(self, inner):
        self.inner = inner

    async def __aiter__(self):
        async for chunk in self.inner:
            TRANSCRIPT.append(bytes(chunk))
            yield chunk

    async def aclose(self):
        await self.inner.aclose()


class RecordingTransport(httpx2.AsyncBaseTransport):
    """Wraps a transport so that response bodies are recorded as the client streams them."""

    def __init__(self, inner: httpx2.AsyncBaseTransport | None = None):
        self.inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request):
        response = await self.inner.handle_async_request(request)
        response.stream = _Recorded(response.stream)
        return response

    async def aclose(self):
        await self.inner.aclose()


@asynccontextmanager
async def mcp_client(url: str, token: str, *, mode: str = "auto", answer=None, record=None, transport=None):
    """A real ``mcp.Client`` over HTTP. ``answer`` is an ElicitResult (or a function of the params)
    the client gives to every question; ``record`` collects the questions it was asked. Without
    ``answer`` the client declares no elicitation at all."""

    async def on_elicit(context, params):
        if record is not None:
            record.append(params)
        given = answer(params) if callable(answer) else answer
        return await given if inspect.isawaitable(given) else given

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30,
                              transport=RecordingTransport(transport))
    async with http:
        async with Client(streamable_http_client(url, http_client=http), mode=mode,
                          elicitation_callback=on_elicit if answer is not None else None) as client:
            yield client


def accept(ticked: bool = True) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"confirm": ticked})


DECLINE = types.ElicitResult(action="decline")
CANCEL = types.ElicitResult(action="cancel")


def assert_recorded(tenant: Tenant, card_id: str, state: str, channel: str, events: list[str]) -> Card:
    """The history of an answered call is complete: a card in ``state``, its ticket signed by the
    server for exactly this card, and the audit trail ``events`` through ``channel``."""
    card = tenant.store.cards.get_card(tenant.workspace_id, card_id, tenant.runtime.desk.now())
    assert card.state.value == state and card.channel == channel
    claims = tenant.runtime.keyring.verify(card.ticket)
    assert (claims.card_id, claims.workspace, claims.person, claims.fingerprint) == (
        card.id, tenant.workspace_id, card.person_id, card.fingerprint)
    trail = tenant.store.cards.audit_trail(tenant.workspace_id, card_id)
    assert [e.event for e in trail] == events
    assert all(e.channel == channel for e in trail)
    return card
