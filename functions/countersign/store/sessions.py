"""The sessions role: single-use sign-in tokens and the confirm page's sessions (hashes only).

:class:`SessionStore` is the interface both stores implement; :class:`SignInToken` and
:class:`Session` its records. The rules every role keeps are stated in :mod:`.workspaces`.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

SESSION_LIFETIME = 7 * 24 * 3600  # a page session's, from sign-in (identity.sessions starts them)


@dataclass(frozen=True)
class SignInToken:
    token_hash: str
    person_id: str
    workspace_id: str
    expires_at: int


@dataclass(frozen=True)
class Session:
    session_hash: str
    person_id: str
    workspace_id: str
    csrf_token: str
    created_at: int
    expires_at: int


class SessionStore(abc.ABC):
    """Sign-in tokens (spent once) and sessions, each kept and found by the hash of its secret."""

    @abc.abstractmethod
    def put_signin_token(self, token: SignInToken) -> None: ...

    @abc.abstractmethod
    def consume_signin_token(self, token_hash: str, now: int) -> SignInToken | None:
        """Spend a sign-in token: the first call before expiry gets it, every later call None."""

    @abc.abstractmethod
    def create_session(self, session: Session) -> None: ...

    @abc.abstractmethod
    def get_session(self, session_hash: str, now: int) -> Session | None:
        """None when unknown, deleted or expired."""

    @abc.abstractmethod
    def delete_session(self, session_hash: str) -> None: ...
