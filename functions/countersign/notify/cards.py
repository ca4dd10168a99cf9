"""CardNotifier: when a card is filed, email the person it waits on — at most once per interval.

The decision is one conditional write (:meth:`Store.claim_email_slot`): of a burst of cards for
one person within ``COUNTERSIGN_EMAIL_INTERVAL`` seconds exactly one claims the slot and sends.
The claim comes before anything else that costs (listing cards, composing, sending), so a
rate-limited card costs one read and one refused write. If the send fails, the claim is released
so the next card can notify. A notifier never raises: the call that filed the card goes on.

Each outcome is counted in :attr:`CardNotifier.counts` and reported to ``on_event(name)`` (for
metrics): ``email_sent``, ``email_rate_limited``, ``email_disabled``, ``email_failed`` and
``email_nothing_pending`` (the card was answered before we looked, and nothing else waits).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from typing import Callable, Union

from ..core.cards import CardState
from ..settings import Settings
from ..store.interface import Store
from ..store.records import Card, Person
from .interface import Email, SendError, Sender
from .message import MAX_TITLES, compose_pending

log = logging.getLogger("countersign.notify")

SENT = "email_sent"
RATE_LIMITED = "email_rate_limited"
DISABLED = "email_disabled"
FAILED = "email_failed"
NOTHING_PENDING = "email_nothing_pending"
EVENTS = (SENT, RATE_LIMITED, DISABLED, FAILED, NOTHING_PENDING)

PAGE = 50
MAX_PAGES = 20  # count up to 1000 waiting cards; beyond that the email says "1000+"

SettingsSource = Union[Settings, Callable[[], Settings]]


class CardNotifier:
    """``notifier(card)`` after a new card is filed; returns the outcome (one of :data:`EVENTS`).

    ``settings`` may be a :class:`Settings` or a function returning the current one (the
    runtime passes the desk's, so a changed public URL shows in the next email).
    """

    def __init__(
        self,
        store: Store,
        sender: Sender,
        settings: SettingsSource,
        clock: Callable[[], float] = time.time,
        on_event: Callable[[str], None] | None = None,
    ):
        self.store = store
        self.sender = sender
        self._settings = settings
        self.clock = clock
        self.on_event = on_event
        self.counts: Counter[str] = Counter()

    @property
    def settings(self) -> Settings:
        return self._settings() if callable(self._settings) else self._settings

    def __call__(self, card: Card) -> str:
        try:
            return self._notify(card)
        except Exception:  # never break the call that filed the card
            log.exception("email about card %s failed", card.id)
            return self._event(FAILED)

    # -- steps ----------------------------------------------------------------------------------

    def _notify(self, card: Card) -> str:
        settings = self.settings
        person = self.store.get_person(card.workspace_id, card.person_id)
        if not person.agent_requests_email:
            return self._event(DISABLED)
        now = int(self.clock())
        if not self.store.claim_email_slot(person.id, now, settings.email_interval):
            return self._event(RATE_LIMITED)
        try:
            email = self.compose(person, card, now, settings)
            if email is None:
                self._release(person, now)
                return self._event(NOTHING_PENDING)
            self.sender.send(email)
        except SendError as exc:
            self._release(person, now)
            log.warning("email to %s failed: %s", person.email, exc)
            return self._event(FAILED)
        except Exception:
            self._release(person, now)
            log.exception("email to %s about card %s failed", person.email, card.id)
            return self._event(FAILED)
        return self._event(SENT)

    def compose(self, person: Person, card: Card, now: int, settings: Settings) -> Email | None:
        """The email for ``person`` listing what waits on them now, or None if nothing does."""
        cards, cursor = self.store.list_pending_cards(person.workspace_id, person.id, now, limit=PAGE)
        count, titles, seen = len(cards), [c.title for c in cards], {c.id for c in cards}
        pages = 1
        while cursor is not None and pages < MAX_PAGES:
            more, cursor = self.store.list_pending_cards(person.workspace_id, person.id, now, limit=PAGE, cursor=cursor)
            count += len(more)
            seen.update(c.id for c in more)
            if len(titles) < MAX_TITLES:
                titles += [c.title for c in more]
            pages += 1
        if card.id not in seen and cursor is None and self._still_pending(card, now):
            # A just-filed card can be missing from an eventually consistent index (DynamoDB GSI).
            count += 1
            titles.append(card.title)
        if count == 0:
            return None
        return compose_pending(
            to=person.email,
            titles=titles,
            count=count,
            pending_url=settings.pending_url,
            name=person.name,
            at_least=cursor is not None,
            from_address=self.sender.from_address,
        )

    def _still_pending(self, card: Card, now: int) -> bool:
        current = self.store.get_card(card.workspace_id, card.id, now)
        return current.state is CardState.PENDING

    def _release(self, person: Person, claimed_at: int) -> None:
        try:
            self.store.release_email_slot(person.id, claimed_at)
        except Exception:
            log.exception("releasing the email slot of %s failed; the next email waits for the interval", person.id)

    def _event(self, name: str) -> str:
        self.counts[name] += 1
        if self.on_event is not None:
            try:
                self.on_event(name)
            except Exception:
                log.exception("on_event(%r) failed", name)
        return name
