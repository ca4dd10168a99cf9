"""The answer this thread is resolving: what its commit claims and spends with the card.

An answer given in the client (or with a code) resolves its request's card (:mod:`.answers`). Two
things used to be separate requests before that commit and now ride in it:

* ``asked_at`` — the answer's request is claimed by a card filed already decided only if no card
  holds it and none was decided at or after the question was put (an older yes never overrides a
  newer no). The store checks it in the commit's own transaction, so the common case (a request
  with no card) reads nothing first; a request that turns out to be held raises
  :class:`~countersign.store.errors.Taken` with its card, and :mod:`.answers` decides from that.
* ``nonce`` — a 2026-07-28 answer's single-use value, spent by the first commit that resolves the
  answer (so a replayed answer raises :class:`~countersign.store.errors.Replayed`, nothing written).
  An answer that ends without a commit spends it on its own (:func:`spend_alone`).

The state is a :class:`contextvars.ContextVar`, set around one answer in the worker thread that
resolves it; :meth:`CardDesk.commit <countersign.gate.cards.CardDesk.commit>` is the one place that
reads it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TypeVar

from ..store.errors import Replayed
from ..store.interface import Store
from ..store.records import CardCommit
from .errors import AnswerReplayed

T = TypeVar("T")


@dataclass
class Answer:
    asked_at: int | None  # None: claim as any filing does (the caller read the request's card itself)
    nonce: tuple[str, int] | None = None  # (value, until); None once spent (or if there is none)


_CURRENT: ContextVar[Answer | None] = ContextVar("countersign_answer", default=None)


@contextmanager
def answering(asked_at: int | None, nonce: tuple[str, int] | None = None) -> Iterator[Answer]:
    answer = Answer(asked_at, nonce)
    token = _CURRENT.set(answer)
    try:
        yield answer
    finally:
        _CURRENT.reset(token)


@contextmanager
def claiming(asked_at: int) -> Iterator[Answer]:
    """The answer being resolved (as :func:`with_nonce` set it), or a new one asked at ``asked_at``."""
    answer = _CURRENT.get()
    if answer is not None:
        yield answer
        return
    with answering(asked_at) as answer:
        yield answer


def stamp(commit: CardCommit) -> CardCommit:
    """``commit`` with what the answer being resolved adds to it (nothing outside an answer)."""
    answer = _CURRENT.get()
    if answer is None:
        return commit
    changes: dict = {}
    if commit.new and answer.asked_at is not None:
        changes["asked_at"] = answer.asked_at
    if answer.nonce is not None:
        changes["nonce"] = answer.nonce
    return replace(commit, **changes) if changes else commit


def committed(commit: CardCommit) -> None:
    """The commit went through: the nonce it carried is spent."""
    answer = _CURRENT.get()
    if answer is not None and commit.nonce is not None:
        answer.nonce = None


def with_nonce(store: Store, asked_at: int, nonce: tuple[str, int], now: int, resolve: Callable[[], T]) -> T:
    """Run ``resolve`` (which answers the request) with the nonce spent by its first commit; if it
    ends without one (a refusal, a no to a card already decided), the nonce is spent on its own
    then. Either way a nonce spent before raises :class:`AnswerReplayed` instead of the outcome."""
    with answering(asked_at, nonce) as answer:
        try:
            out = resolve()
        except Replayed:
            raise AnswerReplayed() from None
        except Exception:
            if answer.nonce is not None and not store.use_nonce(*answer.nonce, now):
                raise AnswerReplayed() from None
            raise
        if answer.nonce is not None and not store.use_nonce(*answer.nonce, now):
            raise AnswerReplayed()
        return out
