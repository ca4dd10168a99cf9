"""What the channels that show one filed card to its person share (Slack's message, Web Push's
notification): who asked, in the card view's words; the settings read at each use; each outcome
counted and reported; and the hand-over from the filing call, on a worker thread when asked.

The card email lists several cards in one message and keeps its own delivery (the outbox, the
email slot), but says who asked with the same :func:`asked_by_words`.

**Quiet hours.** A card filed while its person's quiet hours run is not shown by these channels
then: it is held in the outbox's quiet-hours wait for the channel and that person
(:meth:`~countersign.store.outbox.OutboxStore.hold_for_quiet_hours`), due when the quiet hours
end. The sweep takes the wait (one conditional write marks it done before anything is shown: of
two sweeps one takes it) and hands it to the channel (:func:`deliver_quiet_wait`), which shows
the cards held that still wait (:meth:`CardChannel.after_quiet`); cards answered meanwhile are
not shown. A crash between taking and showing loses that showing (the page and the email still
carry the cards), never doubles it.
"""

from __future__ import annotations

import abc
import logging
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from ..core.askers import AGENT, PERSON, asked_by
from ..settings import Settings
from ..store import Store
from ..store.cards import Card
from ..store.connections import ConnectionStore
from ..store.errors import NotFound
from ..store.outbox import Notification, is_quiet_wait, quiet_wait_channel, quiet_wait_id
from ..store.workspaces import Person, Workspace, WorkspaceStore
from .quiet_hours import quiet_until

log = logging.getLogger("countersign.notify")

SettingsSource = Settings | Callable[[], Settings]
# Whether the workspace's passkey policy covers a card (the gate's rule, handed in: notify is below
# the gate); given a listed card, it reads the card whole if its class matters.
PasskeyRule = Callable[[Card, Workspace], bool]


def asked_by_words(connections: ConnectionStore, workspaces: WorkspaceStore, card: Card, person: Person) -> str:
    """Who asked for ``card``, as ``person`` reads it: the agent's connection by name, a member by
    name ("You" to themselves), the command line; a connection or member removed since, unnamed."""
    asker = card.asker
    name: str | None = None
    try:
        if asker.kind == AGENT and asker.id:
            name = connections.get_connection(card.workspace_id, asker.id).name
        elif asker.kind == PERSON and asker.id != person.id:
            member = workspaces.get_person(card.workspace_id, asker.id)
            name = member.name or member.email
    except NotFound:  # removed since
        name = None
    return asked_by(asker.kind, name, you=asker.kind == PERSON and asker.id == person.id)


def counted(counts: Counter[str], on_event: Callable[[str], None] | None, name: str) -> str:
    """Count the outcome ``name`` and report it to ``on_event`` (whose failure is logged, never
    raised); returns ``name``. Every notifier reports its outcomes so."""
    counts[name] += 1
    if on_event is not None:
        try:
            on_event(name)
        except Exception:
            log.exception("on_event(%r) failed", name)
    return name


QUIET_HOURS_ENDED = "quiet_hours_ended"  # the outcome a quiet-hours wait is done with, once taken
PAGE = 50
MAX_PAGES = 20  # the waiting cards a quiet-hours wait's are found among (1000, more than it lists)


class CardChannel(abc.ABC):
    """A channel that shows each filed card to its person; :meth:`deliver` does it and never raises."""

    thread_name = "channel"
    channel = ""  # its name in quiet-hours waits (store.outbox.QUIET_CHANNELS)

    def __init__(self, store: Store, settings: SettingsSource, *, needs_passkey: PasskeyRule | None = None,
                 clock: Callable[[], float] = time.time, on_event: Callable[[str], None] | None = None,
                 background: bool = False):
        self.store = store
        self._settings = settings
        self.needs_passkey = needs_passkey
        self.clock = clock
        self.on_event = on_event
        self.counts: Counter[str] = Counter()
        self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix=self.thread_name) if background else None

    @property
    def settings(self) -> Settings:
        return self._settings() if callable(self._settings) else self._settings

    @abc.abstractmethod
    def deliver(self, workspace_id: str, card_id: str) -> object:
        """Show the card to its person if it still waits (the outcome is the channel's own)."""

    def might_reach(self, card: Card) -> bool:
        """A cheap look, on the filing call's thread, at whether this channel could show ``card``
        to anyone at all (its person has a device; the workspace is linked to Slack): a card it
        cannot show is not handed to a worker thread, whose wake-up and share of the interpreter
        cost the held call that filed it 0.17-0.19 ms. Asked only of a store that reads locally
        (elsewhere the look would be a round trip on the filing call: the worker looks instead).
        True when in doubt; :meth:`deliver` looks again, and decides."""
        return True

    def __call__(self, card: Card) -> None:
        """A card just filed: deliver it, on a worker thread when this channel has them."""
        if self._pool is None:
            self.deliver(card.workspace_id, card.id)
            return
        try:
            reachable = not self.store.reads_locally() or self.might_reach(card)
        except Exception:  # in doubt: the worker thread looks again
            log.exception("could not tell whether %s reaches card %s's person", self.channel, card.id)
            reachable = True
        if reachable:
            self._pool.submit(self.deliver, card.workspace_id, card.id)

    # -- quiet hours ----------------------------------------------------------------------------

    def held_for_quiet_hours(self, person: Person, card_ids: list[str], now: int) -> bool:
        """Whether ``person``'s quiet hours run at ``now``; if so, the cards are held in this
        channel's wait for them, shown when they end (a wait that can take no more is logged:
        the page and the email still carry those cards)."""
        until = quiet_until(person.quiet_hours, now)
        if until is None:
            return False
        wait = Notification(quiet_wait_id(self.channel, person.id, until), person.workspace_id, person.id, now,
                            due_at=until)
        for card_id in card_ids:
            if not self.store.outbox.hold_for_quiet_hours(wait, card_id):
                log.warning("card %s was not held for %s after quiet hours: the wait is full or shown", card_id,
                            self.channel)
        return True

    def still_waiting(self, wait: Notification, now: int) -> list[Card]:
        """The cards ``wait`` held that still wait on its person, oldest first."""
        held = set(wait.listed)
        cards, cursor = self.store.cards.list_pending_cards(wait.workspace_id, wait.person_id, now, limit=PAGE)
        pages = 1
        while cursor is not None and pages < MAX_PAGES:
            more, cursor = self.store.cards.list_pending_cards(wait.workspace_id, wait.person_id, now, limit=PAGE,
                                                               cursor=cursor)
            cards += more
            pages += 1
        return sorted((c for c in cards if c.id in held), key=lambda c: (c.created_at, c.id))

    @abc.abstractmethod
    def after_quiet(self, wait: Notification, now: int) -> object:
        """Show the person the cards ``wait`` (taken) held that still wait; never raises."""

    def asked_by(self, card: Card, person: Person) -> str:
        return asked_by_words(self.store.connections, self.store.workspaces, card, person)

    def _event(self, name: str) -> str:
        return counted(self.counts, self.on_event, name)


def deliver_quiet_wait(store: Store, channels: dict[str, CardChannel], wait_id: str, now: int) -> str | None:
    """Take the quiet-hours wait ``wait_id`` if it is due (one conditional write: done before
    anything is shown, so two sweeps show it once) and hand it to its channel. The outcome
    (:data:`QUIET_HOURS_ENDED`), or None when it was not taken (not due, taken already)."""
    if not is_quiet_wait(wait_id):
        return None
    channel = channels.get(quiet_wait_channel(wait_id))
    if channel is None:
        return None  # leave it pending for a process that has the channel
    wait = store.outbox.take_notification(wait_id, now, QUIET_HOURS_ENDED)
    if wait is None:
        return None
    try:
        channel.after_quiet(wait, now)
    except Exception:
        log.exception("showing the cards held for quiet hours (%s) failed", wait_id)
    return QUIET_HOURS_ENDED
