"""Passkeys on the confirm page: register, list, rename and remove them (Settings), and sign in
with one (a discoverable credential: no username asked). The email link stays for the first
sign-in and for recovery.

Removing a passkey needs a fresh proof: an assertion made just now by one of the person's
passkeys, or a session started within :data:`FRESH_SIGNIN` seconds (an email link just followed).
"""

from __future__ import annotations

import secrets
from typing import Any

from fastapi import APIRouter, Depends, Request, Response
from pydantic import Field

from ...core.statement import b64u, key_fingerprint, unb64u
from ...core.times import iso
from ...gate.passkey_policy import DESCRIBED, policy_of
from ...identity.passkeys.ceremony import (
    PasskeyError,
    authentication_options,
    registration_options,
    verify_registration,
)
from ...store.errors import BadInput, Conflict, NotFound
from ...store.passkeys import MAX_PASSKEY_NAME, Passkey, check_passkey_name
from .errors import ApiError
from .passkey_common import check, issue, refused, relying_party, spend
from .schemas import (
    PASSKEY_NAME_PATTERN,
    PASSKEY_NAME_RULE,
    PASSKEY_RENAME_PATTERN,
    SessionView,
    Strict,
    errors,
    stated,
)
from .session import (
    Acting,
    SignedIn,
    check_origin,
    current,
    runtime_of,
    session_view,
    set_session_cookie,
    start_session,
)
from .signin import RATE_WINDOW, client_addresses

router = APIRouter(tags=["passkeys"])

FRESH_SIGNIN = 600
MAX_PASSKEYS = 10
Credential = Field(description="The PublicKeyCredential as JSON (credential.toJSON())")


class RegisterBody(Strict):
    credential: dict[str, Any] = Credential
    name: str = Field(default="Passkey", max_length=MAX_PASSKEY_NAME,
                      json_schema_extra=stated(pattern=PASSKEY_NAME_PATTERN),
                      description=f"{PASSKEY_NAME_RULE} Blank: \"Passkey\".")


class RenameBody(Strict):
    # 200 before runs of whitespace are joined; the store refuses more than 64 after (the document says 64).
    name: str = Field(max_length=200, json_schema_extra=stated(maxLength=MAX_PASSKEY_NAME,
                                                               pattern=PASSKEY_RENAME_PATTERN),
                      description=f"{PASSKEY_NAME_RULE} Not blank.")


class AssertionBody(Strict):
    credential: dict[str, Any] = Credential


class RemoveBody(Strict):
    credential: dict[str, Any] | None = Field(default=None, description="A fresh assertion (removal options)")


def passkey_view(p: Passkey) -> dict:
    return {"id": p.credential_id, "name": p.name, "createdAt": iso(p.created_at),
            "lastUsedAt": iso(p.last_used_at) if p.last_used_at else None, "transports": list(p.transports),
            "fingerprint": key_fingerprint(p.public_key)}


@router.get("/passkeys", responses=errors(401))
def list_passkeys(request: Request, signed: SignedIn) -> dict:
    """The signed-in person's passkeys, and the workspace's passkey policy."""
    runtime = runtime_of(request)
    policy = policy_of(signed.workspace)
    mine = runtime.store.passkeys.list_passkeys(signed.workspace.id, signed.person.id)
    return {"passkeys": [passkey_view(p) for p in mine],
            "policy": policy, "policyText": DESCRIBED[policy], "rpId": relying_party(runtime).rp_id,
            "canChangePolicy": signed.person.role == "owner"}


@router.post("/passkeys/register/options", responses=errors(401, 403, 409))
def register_options(request: Request, signed: Acting) -> dict:
    """Options for ``navigator.credentials.create``: a discoverable key with user verification."""
    runtime = runtime_of(request)
    mine = runtime.store.passkeys.list_passkeys(signed.workspace.id, signed.person.id)
    if len(mine) >= MAX_PASSKEYS:
        raise ApiError(409, "too_many", f"You have {MAX_PASSKEYS} passkeys; remove one before adding another.")
    handle = mine[0].user_handle if mine else b64u(secrets.token_bytes(32))
    # The user handle the options carry is kept with the challenge (its statement field) for the new passkey.
    challenge = issue(runtime, "register", signed.workspace.id, signed.person.id, statement=handle)
    return registration_options(relying_party(runtime), challenge, unb64u(handle), signed.person.email,
                                signed.person.name or signed.person.email, [p.credential_id for p in mine])


@router.post("/passkeys", status_code=201, responses=errors(400, 401, 403, 409, 422))
def register(body: RegisterBody, request: Request, signed: Acting) -> dict:
    """Verify the new credential (origin, RP ID, user verification) and keep its public key."""
    runtime = runtime_of(request)
    try:
        name = check_passkey_name(body.name.strip() or "Passkey")  # before the challenge is spent
    except BadInput as exc:
        raise ApiError(422, "invalid", str(exc), field="name") from None
    record, challenge = spend(runtime, body.credential, "register")
    if (record.workspace_id, record.person_id) != (signed.workspace.id, signed.person.id):
        raise refused("it answered a challenge issued to someone else.")
    try:
        made = verify_registration(relying_party(runtime), body.credential, challenge)
    except PasskeyError as exc:
        raise refused(str(exc)) from None
    passkey = Passkey(credential_id=made.credential_id, workspace_id=signed.workspace.id, person_id=signed.person.id,
                      user_handle=record.statement, public_key=made.public_key,
                      name=name, created_at=runtime.desk.now(), sign_count=made.sign_count,
                      transports=made.transports)
    try:
        runtime.store.passkeys.put_passkey(passkey)
    except Conflict:
        raise ApiError(409, "passkey_exists", "This passkey is registered already.") from None
    except BadInput as exc:
        raise ApiError(422, "invalid", str(exc), field="name") from None
    return passkey_view(passkey)


@router.patch("/passkeys/{credential_id}", responses=errors(401, 403, 404, 422))
def rename(credential_id: str, body: RenameBody, request: Request, signed: Acting) -> dict:
    try:
        return passkey_view(runtime_of(request).store.passkeys.rename_passkey(
            signed.workspace.id, signed.person.id, credential_id[:1400], body.name))
    except NotFound:
        raise ApiError(404, "not_found", "No such passkey of yours.") from None
    except BadInput as exc:
        raise ApiError(422, "invalid", str(exc), field="name") from None


@router.post("/passkeys/remove/options", responses=errors(401, 403))
def remove_options(request: Request, signed: Acting) -> dict:
    """Options for the fresh assertion a removal needs (any of the person's passkeys)."""
    runtime = runtime_of(request)
    mine = [p.credential_id for p in runtime.store.passkeys.list_passkeys(signed.workspace.id, signed.person.id)]
    challenge = issue(runtime, "remove", signed.workspace.id, signed.person.id)
    return authentication_options(relying_party(runtime), challenge, mine)


@router.post("/passkeys/{credential_id}/remove", status_code=204, response_class=Response,
             responses=errors(400, 401, 403, 404))
def remove(credential_id: str, request: Request, signed: Acting, body: RemoveBody | None = None) -> Response:
    """Remove a passkey: with a fresh assertion, or within 10 minutes of signing in."""
    runtime = runtime_of(request)
    now = runtime.desk.now()
    if body is not None and body.credential is not None:
        record, challenge = spend(runtime, body.credential, "remove")
        if (record.workspace_id, record.person_id) != (signed.workspace.id, signed.person.id):
            raise refused("it answered a challenge issued to someone else.")
        check(runtime, body.credential, challenge, (signed.workspace.id, signed.person.id))
    elif now - signed.session.created_at > FRESH_SIGNIN:
        raise ApiError(403, "fresh_proof_needed", "To remove a passkey, confirm with one of your passkeys, or sign "
                       "in again with an email link and remove it within 10 minutes.")
    try:
        runtime.store.passkeys.remove_passkey(signed.workspace.id, signed.person.id, credential_id[:1400])
    except NotFound:
        raise ApiError(404, "not_found", "No such passkey of yours.") from None
    return Response(status_code=204)


@router.post("/signin/passkey/options", dependencies=[Depends(check_origin)], responses=errors(403, 429))
def signin_options(request: Request) -> dict:
    """Options for a discoverable sign-in (also for the browser's autofill)."""
    runtime = runtime_of(request)
    now = runtime.desk.now()
    for key, limit in client_addresses(request):
        if not runtime.store.limits.hit_rate_limit("passkey-" + key, now, RATE_WINDOW, limit * 4):
            raise ApiError(429, "rate_limited", "Too many sign-in attempts. Wait 15 minutes, then try again.")
    return authentication_options(relying_party(runtime), issue(runtime, "signin"))


@router.post("/signin/passkey", response_model=SessionView, dependencies=[Depends(check_origin)],
             responses=errors(400, 403, 422))
def signin(body: AssertionBody, request: Request, response: Response) -> dict:
    """Verify the assertion and start a session for the passkey's person."""
    runtime = runtime_of(request)
    _, challenge = spend(runtime, body.credential, "signin")
    passkey = check(runtime, body.credential, challenge, None)
    try:
        person = runtime.store.workspaces.get_person(passkey.workspace_id, passkey.person_id)
        workspace = runtime.store.workspaces.get_workspace(passkey.workspace_id)
    except NotFound:
        raise refused("this passkey's member was removed.") from None
    previous = current(request)
    if previous is not None:
        runtime.store.sessions.delete_session(previous.session.session_hash)
    session_id, signed = start_session(runtime, person, workspace)
    set_session_cookie(response, session_id)
    return session_view(signed, runtime)
