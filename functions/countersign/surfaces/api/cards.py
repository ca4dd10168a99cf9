"""Cards on the confirm page: the pending list, one card, history, the two clicks, and reopening
a request the person declined.

The clicks call :class:`~countersign.gate.desk.CardDesk` (``confirm_click``/``decline_click``),
which owns every rule (ticket, drift, one winner); this module only shapes requests and answers.
A card view never carries the ticket, fingerprint, arguments or subject.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request

from ...core import askers
from ...core.askers import AGENT, PERSON
from ...core.canonical import map_strings
from ...core.card_states import CardState, Refusal, RefusalReason, reported_state
from ...core.preview import plain_line, plain_text
from ...core.times import iso
from ...gate import clicks, edits, quorum
from ...gate.question import Question
from ...gate.replies import decline_reason, lapse_message
from ...identity.sessions import Signed
from ...runtime import Runtime
from ...store.cards import Card
from ...store.errors import NotFound
from ...toolkit import ActionError, Unavailable
from .errors import ApiError, not_found
from .offers import Offers
from .outcomes import Outcomes
from .schemas import CURSOR_PATTERN, CardPage, CardView, DeclineBody, EditBody, RefusalBody, documented, errors, stated
from .session import CARD_ID, Acting, SignedIn, runtime_of

router = APIRouter(tags=["cards"])

DEFAULT_PAGE = 20
MAX_PAGE = 100


class ConnectionNames:
    """Connection names for card views, read once per request."""

    def __init__(self, runtime: Runtime, workspace_id: str):
        self.runtime, self.workspace_id = runtime, workspace_id
        self.names: dict[str, str | None] = {}

    def __call__(self, connection_id: str) -> str | None:
        if not connection_id:
            return None
        if connection_id not in self.names:
            try:
                connections = self.runtime.store.connections
                self.names[connection_id] = connections.get_connection(self.workspace_id, connection_id).name
            except NotFound:
                self.names[connection_id] = None
        return self.names[connection_id]


class Askers:
    """Who asked for each card, as its view says it (``askedBy``), for the person viewing: a
    connection's name, a member's name (or email), read once per request."""

    def __init__(self, runtime: Runtime, signed: Signed, names: ConnectionNames | None = None):
        self.runtime, self.viewer = runtime, signed.person
        self.connections = names or ConnectionNames(runtime, signed.workspace.id)
        self.members: dict[str, str | None] = {self.viewer.id: self.viewer.name or self.viewer.email}

    def _member(self, person_id: str) -> str | None:
        if person_id not in self.members:
            try:
                person = self.runtime.store.workspaces.get_person(self.viewer.workspace_id, person_id)
                self.members[person_id] = person.name or person.email
            except NotFound:  # removed since: "A member, from Settings"
                self.members[person_id] = None
        return self.members[person_id]

    def __call__(self, card: Card) -> dict:
        """``{kind: agent|person|cli, name, you}``; a listed card that no agent filed is read whole
        (a listing leaves out who filed it)."""
        if not card.connection_id and card.filed_by is None and not card.fingerprint:
            card = self.runtime.store.cards.get_card(card.workspace_id, card.id, self.runtime.desk.now())
        asker = card.asker
        if asker.kind == AGENT:
            return {"kind": AGENT, "name": self.connections(asker.id), "you": False}
        if asker.kind == PERSON:
            return {"kind": PERSON, "name": self._member(asker.id), "you": asker.id == self.viewer.id}
        return {"kind": asker.kind, "name": None, "you": False}


def irreversible(runtime: Runtime, tool: str) -> bool:
    """Whether the card's action declares it cannot be undone (a tool no longer served: no)."""
    try:
        return runtime.registry.action(tool).irreversible
    except ActionError:
        return False


def _plain(value: Any) -> Any:
    """``value`` (an outcome: plain JSON) with every text as a card's lines are shown, its line
    breaks kept: tabs and other control characters as spaces, characters nobody can see (bidi
    overrides) as ``[U+XXXX]`` (:func:`~countersign.core.preview.plain_text`). An outcome is data
    too: an upstream's answer, a reason an agent wrote."""
    return map_strings(value, plain_text)


def card_view(card: Card, connection_name: str | None, outcomes: Outcomes, asked_by: dict | None = None,
              cannot_be_undone: bool = False) -> dict:
    body = _plain(card.result) if isinstance(card.result, dict) else {}
    reason = decline_reason(card)
    if card.state is CardState.FAILED:
        reason = body.get("error")
    elif reason is not None:
        reason = plain_line(reason)
    declined_lapse = card.state is CardState.EXPIRED and card.lapses_as_declined
    if declined_lapse:  # the workspace counts it as a no: said as the agent is told it (docs/policy.md)
        reason = lapse_message(card)
    return {
        "id": card.id,
        "tool": card.tool,
        "title": card.title,
        "lines": list(card.lines),
        "sections": list(card.sections),
        "state": card.state.value,
        "status": "declined" if declined_lapse else reported_state(card.state),
        "lapse": "declined" if declined_lapse else None,
        "connectionName": connection_name,
        "askedBy": asked_by or {"kind": AGENT, "name": connection_name, "you": False},
        "irreversible": cannot_be_undone,
        "createdAt": iso(card.created_at),
        "expiresAt": iso(card.expires_at),
        "result": body.get("result") if card.state is CardState.COMPLETED else None,
        "next": body.get("next", []) if card.state is CardState.COMPLETED else None,
        "reason": reason,
        "refusal": "changed" if card.refusal else None,
        "passkeyRequired": False,
        "passkeySigned": card.passkey is not None,
        "outcome": outcomes.lines(card, body),
        "signedWith": outcomes.signed_with(card),
        "grant": body.get("grant") if isinstance(body.get("grant"), dict) else None,
        "editable": [],
        "edited": _edited(card),
    }


def _edited(card: Card) -> dict | None:
    """A person's edit, as a card view shows it (never the original arguments: the card it
    replaced shows them as its preview)."""
    edited = card.edited
    if not isinstance(edited, dict):
        return None
    return _plain({"from": edited.get("from"), "into": edited.get("into"), "by": edited.get("byName", ""),
                   "changes": edited.get("changes", [])})


def _view(runtime: Runtime, signed: Signed, card: Card) -> dict:
    names = ConnectionNames(runtime, signed.workspace.id)
    view = card_view(card, names(card.connection_id), Outcomes(runtime, signed.workspace.id),
                     Askers(runtime, signed, names)(card), irreversible(runtime, card.tool))
    view["quorum"] = quorum.standing(card, signed.person)
    if card.state is CardState.PENDING and card.arguments:
        view["passkeyRequired"] = runtime.desk.card_needs_passkey(card)
        view["editable"] = _plain(edits.editable_fields(runtime.desk, card))
    return Offers(runtime, signed).mark(view, card)


def file_own_request(runtime: Runtime, signed: Signed, tool: str, arguments: dict[str, Any], field: str) -> dict:
    """File the signed-in person's own held request ``tool`` (a policy change from Settings) as a
    card they then confirm, and its view; refused by the action's checks: 422 naming the field
    (``field`` when the refusal names none), nothing filed."""
    desk = runtime.desk
    ctx = desk.context(signed.workspace.id, signed.person, None, desk.now())
    try:
        q = Question.of(desk.registry.action(tool), arguments, ctx)
    except ActionError as exc:
        raise ApiError(422, "invalid", exc.message, field=exc.field or field) from None
    card, _ = desk.file(q, "page", askers.person(signed.person.id))
    return _view(runtime, signed, card)


def _load(runtime: Runtime, signed: Signed, card_id: str) -> Card:
    """A card of the signed-in person, as it stands now: 404 if unknown or in another workspace,
    403 if someone else's."""
    if not CARD_ID.fullmatch(card_id):
        raise not_found()
    try:
        return clicks.open_card(runtime.desk, signed.workspace.id, signed.person, card_id, card=signed.card,
                                counts=signed.counts)
    except NotFound:
        raise not_found() from None
    except Refusal:
        raise _not_yours() from None


def _not_yours(message: str = "This card waits on someone else; only they can answer it.") -> ApiError:
    return ApiError(403, "not_yours", message)


def _page(cards: list[Card], cursor: str | None, names: ConnectionNames, signed: Signed) -> dict:
    runtime, workspace_id = names.runtime, names.workspace_id
    outcomes, askers = Outcomes(runtime, workspace_id), Askers(runtime, signed, names)
    offers = Offers(runtime, signed)
    views = [offers.mark(card_view(c, names(c.connection_id), outcomes, askers(c), irreversible(runtime, c.tool)), c)
             for c in cards]
    for view, c in zip(views, cards, strict=True):
        view["quorum"] = quorum.standing(c, signed.person)  # (a listing keeps a card's quorum and votes)
    if any(c.state is CardState.PENDING for c in cards) and \
            runtime.store.workspaces.get_workspace(workspace_id).setting("passkey_policy") not in (None, "never"):
        for view, c in zip(views, cards, strict=True):  # listed cards carry no arguments: read each
            if c.state is CardState.PENDING:
                view["passkeyRequired"] = runtime.desk.card_needs_passkey(runtime.store.cards.get_card(
                    workspace_id, c.id, runtime.desk.now()))
    return {"cards": views, "nextCursor": cursor}


# The stores decode a cursor (a refused one is a 422 naming ``cursor``); the document states its form.
Cursor = Query(default=None, max_length=512, json_schema_extra=stated(pattern=CURSOR_PATTERN),
               description="nextCursor of the previous page (URL-safe base64); empty or absent: the first page")
Limit = Query(default=DEFAULT_PAGE, ge=1, le=MAX_PAGE)


# A list's cards leave out every field at its default (no sections, nothing irreversible, no result,
# reason or refusal, no passkey): the page's 20 cards in fewer bytes. One card's view is complete.
@router.get("/cards", response_model=CardPage, response_model_exclude_defaults=True, responses=errors(401, 422))
def pending(request: Request, signed: SignedIn, cursor: str | None = Cursor, limit: int = Limit) -> dict:
    """Cards waiting on the signed-in person, oldest first."""
    runtime = runtime_of(request)
    now = runtime.desk.now()
    cards, after = runtime.store.cards.list_pending_cards(
        signed.workspace.id, signed.person.id, now, limit=limit, cursor=cursor or None)
    page = _page(cards, after, ConnectionNames(runtime, signed.workspace.id), signed)
    # how many wait in all: this page's, unless more follow (then counted: the page says "25", not "20")
    page["waiting"] = len(cards) if after is None and cursor is None else (
        runtime.store.cards.count_pending_cards(signed.workspace.id, signed.person.id, now))
    return page


@router.get("/history", response_model=CardPage, response_model_exclude_defaults=True, responses=errors(401, 422))
def history(request: Request, signed: SignedIn, cursor: str | None = Cursor, limit: int = Limit) -> dict:
    """Answered (and lapsed) cards of the signed-in person, newest first."""
    runtime = runtime_of(request)
    cards, after = runtime.store.cards.list_card_history(
        signed.workspace.id, signed.person.id, runtime.desk.now(), limit=limit, cursor=cursor or None)
    return _page(cards, after, ConnectionNames(runtime, signed.workspace.id), signed)


@router.get("/cards/{card_id}", response_model=CardView, responses=errors(401, 403, 404))
def one(card_id: str, request: Request, signed: SignedIn) -> dict:
    """One card in any state."""
    runtime = runtime_of(request)
    return _view(runtime, signed, _load(runtime, signed, card_id))


def _refused(runtime: Runtime, signed: Signed, card_id: str, refusal: Refusal) -> ApiError:
    if refusal.reason is RefusalReason.NOT_YOURS:  # (a quorum's approval that cannot count says why)
        return _not_yours(refusal.message)
    card = runtime.store.cards.get_card(signed.workspace.id, card_id, runtime.desk.now())
    return ApiError(409, refusal.reason.value, refusal.message, card=_view(runtime, signed, card))


def unavailable(runtime: Runtime, signed: Signed, card_id: str, exc: Unavailable) -> ApiError:
    """A confirm that could not reach what the card depends on: 503, the card as it stands (still pending)."""
    card = runtime.store.cards.get_card(signed.workspace.id, card_id, runtime.desk.now())
    return ApiError(503, exc.code, exc.message, headers={"Retry-After": "5"}, card=_view(runtime, signed, card))


CLICK_ERRORS = {**errors(401, 403, 404, 422), 409: documented(RefusalBody), 503: documented(RefusalBody)}
VIA_HEADER = "X-Countersign-Via"  # "push": the click came from a notification's button (sw.js)


def click_channel(request: Request) -> str:
    """The channel the audit trail records a click with: ``push`` when the service worker says it
    sends a notification's button, else ``page``. A label only: the same session, CSRF token,
    ticket, drift and passkey checks run whatever it says, and any other value is ``page``."""
    return "push" if request.headers.get(VIA_HEADER, "").strip().lower() == "push" else "page"


@router.post("/cards/{card_id}/confirm", response_model=CardView, responses=CLICK_ERRORS)
def confirm(card_id: str, request: Request, signed: Acting) -> dict:
    """Run the card's action now (once), if nothing behind it changed. Answers with the outcome."""
    runtime = runtime_of(request)
    if not CARD_ID.fullmatch(card_id):
        raise not_found()
    read: dict = {}  # the card's connection, read once for the run and its view
    try:
        card = clicks.confirm_click(runtime.desk, signed.workspace.id, signed.person, card_id,
                                    workspace=signed.workspace, connections=read, card=signed.card,
                                    channel=click_channel(request), counts=signed.counts)
    except NotFound:
        raise not_found() from None
    except Refusal as refusal:
        raise _refused(runtime, signed, card_id, refusal) from None
    except Unavailable as exc:
        raise unavailable(runtime, signed, card_id, exc) from None
    names = ConnectionNames(runtime, signed.workspace.id)
    names.names.update({c.id: c.name for c in read.values()})
    view = card_view(card, names(card.connection_id), Outcomes(runtime, signed.workspace.id),
                     Askers(runtime, signed, names)(card), irreversible(runtime, card.tool))
    view["quorum"] = quorum.standing(card, signed.person)
    return view


@router.post("/cards/{card_id}/decline", response_model=CardView, responses=CLICK_ERRORS)
def decline(card_id: str, request: Request, signed: Acting, body: DeclineBody | None = None) -> dict:
    """Say no, optionally with a reason the agent is shown."""
    runtime = runtime_of(request)
    if not CARD_ID.fullmatch(card_id):
        raise not_found()
    try:
        card = clicks.decline_click(runtime.desk, signed.workspace.id, signed.person, card_id,
                                    body.reason if body else None, card=signed.card, channel=click_channel(request),
                                    counts=signed.counts)
    except NotFound:
        raise not_found() from None
    except Refusal as refusal:
        raise _refused(runtime, signed, card_id, refusal) from None
    return _view(runtime, signed, card)


@router.post("/cards/{card_id}/reopen", response_model=CardView, responses=CLICK_ERRORS)
def reopen(card_id: str, request: Request, signed: Acting) -> dict:
    """Ask again about a request you declined: a new card for the same request, waiting for your
    answer (or the request's card that already waits). Refused if it changed since."""
    runtime = runtime_of(request)
    if not CARD_ID.fullmatch(card_id):
        raise not_found()
    try:
        card = clicks.reopen(runtime.desk, signed.workspace.id, signed.person, card_id, card=signed.card,
                             counts=signed.counts)
    except NotFound:
        raise not_found() from None
    except Refusal as refusal:
        raise _refused(runtime, signed, card_id, refusal) from None
    return _view(runtime, signed, card)


@router.post("/cards/{card_id}/edit", response_model=CardView, responses=CLICK_ERRORS)
def edit(card_id: str, request: Request, signed: Acting, body: EditBody) -> dict:
    """Change what the card's action declares editable, then confirm the new card: the values go
    through the same argument checker and plan as an agent's call (422 naming the field, nothing
    written); the card ends ``edited`` and a new pending card with a new preview is filed for the
    same request (docs/policy.md, "Edit, then approve"). Answers with the new card."""
    runtime = runtime_of(request)
    if not CARD_ID.fullmatch(card_id):
        raise not_found()
    try:
        card = edits.edit_card(runtime.desk, signed.workspace.id, signed.person, card_id, body.arguments,
                               card=signed.card, counts=signed.counts)
    except NotFound:
        raise not_found() from None
    except Refusal as refusal:
        raise _refused(runtime, signed, card_id, refusal) from None
    except Unavailable as exc:
        raise unavailable(runtime, signed, card_id, exc) from None
    except ActionError as exc:  # the argument checker's or the plan's sentence; nothing was written
        raise ApiError(422, "invalid", exc.message, field=exc.field or "arguments") from None
    return _view(runtime, signed, card)
