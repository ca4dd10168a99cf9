"""Sign-in links and the confirm page's sessions: minted, spent, started and resolved.

* A sign-in token is one-time, good for :data:`SIGNIN_TTL_SECONDS`, stored only as its hash. A
  request for an address that is no member's mints one too, bound to :data:`NOBODY` (it can never
  start a session), so a sign-in request does the same work either way (docs/security.md).
* A session is a random id the browser keeps (the cookie); the store keeps only its hash, the
  CSRF token and whose it is. Every request resolves its member afresh: a removed member's
  sessions end with them.

The HTTP side (the cookie, the Origin and CSRF checks, the routes, the email) is the confirm API's:
:mod:`countersign.surfaces.api.session` and :mod:`countersign.surfaces.api.signin`.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field

from ..core.ids import new_secret_token
from ..store.callers import CallerReads, Owner, Owners
from ..store.cards import Card
from ..store.errors import NotFound
from ..store.hashes import secret_hash
from ..store.limits import RequestCounts
from ..store.sessions import SESSION_LIFETIME, Session, SessionStore, SignInToken
from ..store.workspaces import Person, Workspace, WorkspaceStore

SIGNIN_TTL_SECONDS = 15 * 60
NOBODY = "-"  # the person and workspace of a sign-in token minted for an address that is no member's
SESSION_TTL_SECONDS = SESSION_LIFETIME
MAX_SESSION_ID = 256  # longer is no session id of ours: refused unread


@dataclass(frozen=True)
class Signed:
    """A signed-in person on the confirm page."""

    session: Session
    person: Person
    workspace: Workspace
    # the card the request's path names, when it was read with the session (one request on
    # DynamoDB): a click's first read of its card; None when it was not
    card: Card | None = None
    # the request's counts against the request limits, read with the session (a click's): its
    # handler passes them down to the write that answers or files the card, which takes them
    counts: RequestCounts | None = field(default=None, compare=False, repr=False)


def mint_signin_token(sessions: SessionStore, person: Person | None, now: int | None = None) -> str:
    """A one-time sign-in token (15 minutes); the caller puts it in a link and forgets it.

    For ``None`` (an address that is no member's) the token is bound to nobody: stored like any
    other, it can never start a session. A sign-in request does the same work either way.
    """
    now = int(time.time()) if now is None else now
    token = new_secret_token()
    person_id, workspace_id = (person.id, person.workspace_id) if person is not None else (NOBODY, NOBODY)
    sessions.put_signin_token(SignInToken(secret_hash(token), person_id, workspace_id, now + SIGNIN_TTL_SECONDS))
    return token


@dataclass(frozen=True)
class SigninLink:
    """Where a sign-in link goes and the link itself (its token in the fragment); ``member``:
    whether the address is a member's (only then is it sent: a stranger's is composed, not sent)."""

    to: str
    link: str
    member: bool


def signin_link(sessions: SessionStore, workspaces: WorkspaceStore, email: str, public_url: str,
                now: int) -> SigninLink:
    """The same work for every address: look it up and store a token (bound to nobody for a
    stranger)."""
    person = workspaces.get_person_by_email(email)
    token = mint_signin_token(sessions, person, now=now)
    return SigninLink(person.email if person is not None else email, f"{public_url}/signin#token={token}",
                      person is not None)


def redeem_signin_token(sessions: SessionStore, workspaces: WorkspaceStore, token: str,
                        now: int) -> tuple[Person, Workspace] | None:
    """Spend a sign-in token (once, within its 15 minutes): the member it signs in, or None for a
    token that is invalid, expired, already spent, a stranger's, or whose member was removed."""
    record = sessions.consume_signin_token(secret_hash(token), now) if token else None
    if record is None:
        return None
    try:
        person = workspaces.get_person(record.workspace_id, record.person_id)
        return person, workspaces.get_workspace(record.workspace_id)
    except NotFound:
        return None


def start_session(sessions: SessionStore, owners: Owners, person: Person, workspace: Workspace,
                  now: int) -> tuple[str, Signed]:
    """A new session for ``person``: (the session id, for the cookie; the signed-in view).
    ``owners``: whose each session this process has seen is (:mod:`countersign.store.callers`)."""
    session_id = new_secret_token()
    session = Session(
        session_hash=secret_hash(session_id), person_id=person.id, workspace_id=workspace.id,
        csrf_token=secrets.token_urlsafe(32), created_at=now, expires_at=now + SESSION_TTL_SECONDS,
    )
    sessions.create_session(session)
    owners.remember(session.session_hash, Owner(workspace.id, person.id))
    return session_id, Signed(session, person, workspace)


def resolve_session(callers: CallerReads, sessions: SessionStore, workspaces: WorkspaceStore, owners: Owners,
                    session_id: str | None, now: int, card_id: str | None = None,
                    counts: RequestCounts | None = None) -> Signed | None:
    """The session ``session_id`` names, if it is valid now, with its member; ``card_id``: a card
    the request names, read with the session when this process has seen it before (one read).
    ``counts``: the request's counters against the request limits, read with them and carried by
    the :class:`Signed` (:attr:`Signed.counts`)."""
    if not session_id or len(session_id) > MAX_SESSION_ID:
        return None
    session_hash = secret_hash(session_id)
    owner = owners.get(session_hash)  # whose it is, when this process has seen it: one read
    if owner is not None:  # a card's page or click reads the card in the same request
        found = (callers.get_session_and_card(session_hash, owner, now, card_id, counts) if card_id is not None
                 else callers.get_session_as(session_hash, owner, now, counts))
        if found is not None:
            live, workspace, person, *card = found
            return Signed(live, person, workspace, card[0] if card else None, counts)
    session = sessions.get_session(session_hash, now)
    if session is None:
        return None
    owner = Owner(session.workspace_id, session.person_id)
    if counts is not None:  # the member with the counters, in one read
        again = callers.get_session_as(session_hash, owner, now, counts)
        if again is None:  # the member was removed (or the session ended meanwhile)
            return None
        session, workspace, person = again
    else:
        try:
            workspace, person = workspaces.get_member(session.workspace_id, session.person_id)
        except NotFound:  # the member was removed: the session ends with them
            return None
    owners.remember(session_hash, owner)
    return Signed(session, person, workspace, counts=counts)
