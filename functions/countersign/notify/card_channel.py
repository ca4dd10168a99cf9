"""What the channels that show one filed card to its person share (Slack's message, Web Push's
notification): who asked, in the card view's words; the settings read at each use; each outcome
counted and reported; and the hand-over from the filing call, on a worker thread when asked.

The card email lists several cards in one message and keeps its own delivery (the outbox, the
email slot), but says who asked with the same :func:`asked_by_words`.
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
from ..store.workspaces import Person, Workspace, WorkspaceStore

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


class CardChannel(abc.ABC):
    """A channel that shows each filed card to its person; :meth:`deliver` does it and never raises."""

    thread_name = "channel"

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

    def __call__(self, card: Card) -> None:
        """A card just filed: deliver it, on a worker thread when this channel has them."""
        if self._pool is None:
            self.deliver(card.workspace_id, card.id)
        else:
            self._pool.submit(self.deliver, card.workspace_id, card.id)

    def asked_by(self, card: Card, person: Person) -> str:
        return asked_by_words(self.store.connections, self.store.workspaces, card, person)

    def _event(self, name: str) -> str:
        return counted(self.counts, self.on_event, name)
