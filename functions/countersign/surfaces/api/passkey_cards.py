"""Confirming a card with a passkey, a completed card's receipt, and filing a passkey policy change.

``POST /api/cards/{id}/passkey/options`` builds the card's statement (card id, fingerprint,
preview digest, a single-use nonce with a 2-minute expiry; countersign.core.statement) and
returns request options whose challenge is SHA-256 of it, allowing only the person's passkeys.
``POST /api/cards/{id}/passkey/confirm`` spends that challenge, verifies the assertion and hands
the evidence to the gate, which records it with the card's move in one transaction. Every
refusal leaves an audit entry on the card and runs nothing.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import Field

from ...core.card_states import CardState, Refusal, refusal_for
from ...core.statement import CONFIRM_TTL, b64u, confirm_statement, statement_challenge
from ...gate import clicks
from ...gate.passkey_policy import POLICIES, SetPasskeyPolicy
from ...gate.refusals import record_refusal
from ...identity.passkeys.ceremony import authentication_options, client_data
from ...identity.passkeys.receipts import receipt_body, seal_receipt
from ...identity.sessions import Signed
from ...runtime import Runtime
from ...store.cards import Card
from ...store.errors import NotFound
from ...store.workspaces import Person
from ...toolkit import Unavailable
from .cards import CLICK_ERRORS, _load, _refused, _view, file_own_request, unavailable
from .errors import ApiError, not_found
from .passkey_common import check, issue, refused, relying_party, spend
from .passkeys import AssertionBody
from .schemas import CardView, Strict, errors, stated
from .session import CARD_ID, Acting, SignedIn, runtime_of

router = APIRouter(tags=["passkeys"])


class PolicyBody(Strict):
    # Checked by the action (an unknown one is a 422 naming the field); the document lists them.
    policy: str = Field(json_schema_extra=stated(enum=list(POLICIES)),
                        description="never, risky (cards that spend, send, grant or cannot be undone) or every")


def _pending(request: Request, signed: Signed, card_id: str):
    if not CARD_ID.fullmatch(card_id):
        raise not_found()
    runtime = runtime_of(request)
    card = _load(runtime, signed, card_id)
    if card.state is not CardState.PENDING:  # refused as a plain click is: its reason, and the card as it stands
        raise _refused(runtime, signed, card.id, refusal_for(card.state, CardState.RUNNING))
    return card


@router.post("/cards/{card_id}/passkey/options", responses=errors(401, 403, 404, 409))
def confirm_options(card_id: str, request: Request, signed: Acting) -> dict:
    """The statement this card's confirmation signs, and the options that ask for it."""
    runtime = runtime_of(request)
    card = _pending(request, signed, card_id)
    mine = [p.credential_id for p in runtime.store.passkeys.list_passkeys(signed.workspace.id, signed.person.id)]
    if not mine:
        raise ApiError(409, "no_passkey", "You have no passkey yet. Add one in Settings from a device that can "
                       "(a phone or a computer with a screen lock), or ask the workspace's owner.")
    rp = relying_party(runtime)
    statement = confirm_statement(rp.rp_id, card, runtime.desk.now())
    challenge = issue(runtime, "confirm", signed.workspace.id, signed.person.id,
                      challenge=statement_challenge(statement), ttl=CONFIRM_TTL, card_id=card.id, statement=statement)
    return {"statement": statement, "publicKey": authentication_options(rp, challenge, mine)}


@router.post("/cards/{card_id}/passkey/confirm", response_model=CardView, responses=CLICK_ERRORS)
def confirm(card_id: str, body: AssertionBody, request: Request, signed: Acting) -> dict:
    """Verify the passkey's assertion over this card's statement, then run the card once."""
    runtime = runtime_of(request)
    card = _pending(request, signed, card_id)
    actor = f"person:{signed.person.id}"
    try:
        record, challenge = spend(runtime, body.credential, "confirm")
        if record.card_id != card.id or (record.workspace_id, record.person_id) != (signed.workspace.id,
                                                                                      signed.person.id):
            raise refused("it was made for another card.")
        passkey = check(runtime, body.credential, challenge, (signed.workspace.id, signed.person.id))
    except ApiError as err:
        record_refusal(runtime.store.cards, card, actor, "page", runtime.desk.now(), f"passkey: {err.message}")
        raise
    response = body.credential["response"]
    raw_cdj, _ = client_data(body.credential)
    rp = relying_party(runtime)
    evidence = {
        "type": "passkey-confirmation", "v": 1, "rp_id": rp.rp_id, "origin": rp.origin,
        "statement": record.statement, "credential_id": passkey.credential_id, "user_handle": passkey.user_handle,
        "public_key_cose": passkey.public_key, "authenticator_data": response["authenticatorData"],
        "client_data_json": b64u(raw_cdj), "signature": response["signature"], "verified_at": runtime.desk.now(),
    }
    try:
        done = clicks.confirm_click(runtime.desk, signed.workspace.id, signed.person, card.id, passkey=evidence,
                                    counts=signed.counts)
    except NotFound:
        raise not_found() from None
    except Refusal as refusal:
        raise _refused(runtime, signed, card.id, refusal) from None
    except Unavailable as exc:
        raise unavailable(runtime, signed, card.id, exc) from None
    return _view(runtime, signed, done)


RECEIPT_STATES = (CardState.COMPLETED, CardState.RUNNING, CardState.FAILED)
NO_RECEIPT = {"pending": "is still waiting for an answer", "running": "is still running",
              "failed": "failed (its action did not complete)", "declined": "was declined",
              "withdrawn": "was withdrawn", "expired": "expired unanswered"}


@router.get("/cards/{card_id}/receipt", responses=errors(401, 403, 404, 409))
def receipt(card_id: str, request: Request, signed: SignedIn) -> JSONResponse:
    """A completed card's receipt (docs/passkeys.md), with the passkey's assertion when one signed it;
    a card confirmed with a passkey has one from its confirmation on (also running or failed).
    ``countersign verify-receipt`` checks it and says what it proves."""
    runtime = runtime_of(request)
    if not CARD_ID.fullmatch(card_id):
        raise not_found()
    card = _load(runtime, signed, card_id)
    if card.state is not CardState.COMPLETED and (card.passkey is None or card.state not in RECEIPT_STATES):
        why = NO_RECEIPT.get(card.state.value, card.state.value)
        raise ApiError(409, "no_receipt", f"No receipt: this card {why}; only a completed card has one.",
                       state=card.state.value)
    keyring = runtime.keyring
    # The request's person, whoever downloads it (an approver of a quorum card): its ticket names them.
    person = signed.person if card.person_id == signed.person.id else _person_of(runtime, card)
    body = receipt_body(workspace=signed.workspace, person=person, card=card,
                        audit=runtime.store.cards.audit_trail(signed.workspace.id, card.id),
                        server_key=bytes(keyring.public_key()), key_id=keyring.key_id)
    if body["confirmation"] is None:  # a completed card always has its confirming entry; never seal one without
        raise ApiError(409, "no_receipt", "This card's audit trail does not say how it was confirmed.",
                       state=card.state.value)
    sealed = seal_receipt(body, keyring.seal)
    download = f'attachment; filename="countersign-receipt-{card.id}.json"'
    return JSONResponse(sealed, headers={"Content-Disposition": download})


def _person_of(runtime: Runtime, card: Card) -> Person:
    """The person ``card`` is the request of (as recorded on it, if they were removed since)."""
    try:
        return runtime.store.workspaces.get_person(card.workspace_id, card.person_id)
    except NotFound:
        return Person(id=card.person_id, workspace_id=card.workspace_id, email="")


@router.post("/settings/passkey-policy", response_model=CardView, status_code=201, responses=errors(401, 403, 422))
def request_policy(body: PolicyBody, request: Request, signed: Acting) -> dict:
    """File the owner's passkey policy change as a card they then confirm (under the current policy)."""
    return file_own_request(runtime_of(request), signed, SetPasskeyPolicy.name, {"policy": body.policy}, "policy")
