"""CardNotifier: deliver the notification a filed card owes its person — at least once, and at
most one email per person per interval.

Filing a card records its notification in the same transaction (the transactional outbox,
:class:`~countersign.store.outbox.OutboxStore`), so a crash right after filing loses no email.
Delivery leases the notification (one sender at a time), decides, sends, and marks it done:

* the person turned *Email me when an agent asks* off → done, nothing sent;
* their address bounced for good or reported a card email as spam (SES's feedback,
  :mod:`countersign.surfaces.background.feedback`) → done as ``email_suppressed``, nothing sent;
* their quiet hours run (:mod:`.quiet_hours`) → put back until they end, no attempt counted
  (:data:`QUIET`); one whose own card no longer waits by then is done, nothing sent;
* one conditional write (:meth:`~countersign.store.limits.LimitStore.claim_email_slot`) decides
  the rate limit: of a burst of cards for one person within ``COUNTERSIGN_EMAIL_INTERVAL``
  seconds exactly one sends — its email lists every card that waits — and the others are done
  as rate limited. The claim names
  its notification, so if its sender dies before sending, the retry may claim again;
* the digest: before an email goes out, it records a *digest check* in the outbox
  (:func:`~countersign.store.outbox.digest_id`, one per claim), due when the interval ends; the
  sweep delivers it. If cards filed since the email (from :data:`DIGEST_OVERLAP` seconds before
  it, less those it counted) still wait, the check claims the slot like a card would and one
  email lists them ("3 more requests are waiting"), recording its own check; if none waits,
  nothing is claimed or sent; if the slot is taken (a card's email after the interval listed them
  all), it is done as rate limited;
* nothing waits any more (answered before we looked) → the slot is released, done;
* a card filed while this process holds the person's slot because it *sent* an email under it
  (a slot is released only when nothing was sent) owes no email until :data:`SLOT_MARGIN` seconds
  before the interval ends: :meth:`CardNotifier.owes_email` says so before filing, the card is
  filed without a notification, and ``notifier(card)`` counts it rate limited with no store
  request at all — the outcome the claim would have given, without the lease, the refused claim
  and the finish (two commits) on the filing call's path. A filing that still commits after the
  interval ended is delivered directly (the claim decides, as on the whole path);
* a send that fails releases the slot and puts the notification back, due again after a backoff
  (:data:`MAX_ATTEMPTS` tries in all); a sender that dies mid-way leaves a lease that lapses, and
  the sweep (:meth:`CardNotifier.sweep`) picks it up. An email can therefore go out twice only if
  a process dies between handing it over and marking it done.

Each outcome is counted in :attr:`CardNotifier.counts` and reported to ``on_event(name)`` (for
metrics): ``email_sent``, ``email_rate_limited``, ``email_disabled``, ``email_suppressed``, ``email_failed``,
``email_nothing_pending`` and ``email_quiet_hours``. A notifier never raises: the call that filed the card goes on.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..core.card_states import CardState
from ..core.crash_points import crash_point
from ..settings import Settings
from ..store import Store
from ..store.cards import Card, CardStore
from ..store.errors import NotFound
from ..store.limits import LimitStore
from ..store.outbox import (
    MAX_LISTED,
    Notification,
    OutboxStore,
    digest_id,
    is_digest,
    is_quiet_wait,
    is_reminder,
    reminded_card,
)
from ..store.suppressions import SuppressionStore
from ..store.workspaces import Person, Workspace, WorkspaceStore
from .card_channel import PasskeyRule, SettingsSource, asked_by_words, counted
from .interface import Email, Sender, SendError
from .message import MAX_TITLES, Waiting, compose_digest, compose_pending
from .quiet_hours import quiet_until
from .reminders import compose_reminder

log = logging.getLogger("countersign.notify")

SENT = "email_sent"
RATE_LIMITED = "email_rate_limited"
DISABLED = "email_disabled"
FAILED = "email_failed"
NOTHING_PENDING = "email_nothing_pending"
SUPPRESSED = "email_suppressed"
QUIET = "email_quiet_hours"  # put back until the person's quiet hours end: nothing is done yet
REMINDER_SENT = "email_reminder_sent"  # a card's reminder went out (docs/policy.md, "Lifetimes, reminders and lapses")
REMINDER_WAITS = "email_reminder_waits"  # another email holds the slot: the reminder is put back a minute
EVENTS = (SENT, RATE_LIMITED, DISABLED, FAILED, NOTHING_PENDING, SUPPRESSED, QUIET, REMINDER_SENT, REMINDER_WAITS)
PUT_BACK = (QUIET, REMINDER_WAITS)  # outcomes that leave the notification owed, not done
REMINDER_RETRY = 60  # seconds a reminder waits for the person's email slot before it tries again

PAGE = 50
MAX_PAGES = 20  # count up to 1000 waiting cards; beyond that the email says "1000+"
MAX_ATTEMPTS = 8
BACKOFF_SECONDS = 60  # 1, 2, 4 … minutes between tries, at most an hour
# Seconds before a known slot ends from which cards take the whole path again: longer than a filing
# can wait on the store after owes_email decided (SQLite's busy timeout is 30 s), so the interval
# cannot end between the decision and the commit; if it does anyway, the card is delivered directly.
SLOT_MARGIN = 60
MAX_REMEMBERED = 10_000  # persons whose slot this process holds; card ids filed owing no email
FINISH_ATTEMPTS = 3  # recording a delivery's outcome: a store that refused once (throttled) is asked again
FINISH_BACKOFF = 0.2  # seconds, then twice that
# A digest check covers the cards filed from this many seconds before the email it follows (but
# those that email counted): a filing stamped before the claim may commit after the email read the
# list (it may wait on the store; a DynamoDB index may lag), and such a card must not fall between.
DIGEST_OVERLAP = 120



@dataclass
class _Found:
    """The cards that wait on a person, as one email counts them: ``cards`` oldest first (every
    one counted), ``at_least`` when the count stopped at :data:`MAX_PAGES` pages."""

    cards: list[Card]
    count: int
    at_least: bool


def _waited(n: Notification) -> bool:
    """Whether a card's notification was put back for quiet hours (due after it was filed, no
    attempt counted) rather than tried as filed or after a failed send."""
    return n.attempts == 0 and n.due_at > n.created_at


class CardNotifier:
    """``notifier(card)`` delivers ``card``'s notification now (if it is due and nobody else holds
    it) and returns the outcome, one of :data:`EVENTS` (None: nothing to deliver).

    ``settings`` may be a :class:`Settings` or a function returning the current one (the
    runtime passes the desk's, so a changed public URL shows in the next email). ``needs_passkey``
    (the desk's :meth:`~countersign.gate.desk.CardDesk.card_needs_passkey`) says which cards the
    email marks as needing a passkey; without it, none.
    """

    def __init__(
        self,
        store: Store,
        sender: Sender,
        settings: SettingsSource,
        clock: Callable[[], float] = time.time,
        on_event: Callable[[str], None] | None = None,
        pause: Callable[[float], None] = time.sleep,
        needs_passkey: PasskeyRule | None = None,
    ):
        # the roles it works through: the outbox it delivers, the cards an email lists, the person it
        # goes to, whether their address is suppressed, and the email slot that limits how often
        self.outbox: OutboxStore = store.outbox
        self.cards: CardStore = store.cards
        self.workspaces: WorkspaceStore = store.workspaces
        self.suppressions: SuppressionStore = store.suppressions
        self.limits: LimitStore = store.limits
        self.pause = pause
        self.needs_passkey = needs_passkey
        self.connections = store.connections  # the names of the agents that asked
        self.sender = sender
        self._settings = settings
        self.clock = clock
        self.on_event = on_event
        self.counts: Counter[str] = Counter()
        # person id → (claimed_at, claiming card id) of the email slots this process claimed and has
        # not released; and the cards filed owing no email because of one, until they are told of
        self._slots: dict[str, tuple[int, str]] = {}
        self._unowed: dict[str, int] = {}  # card id → when the slot that made it owe nothing ends
        self._lock = threading.Lock()
        # Other channels told of each card filed, before its email (Slack: countersign.notify.slack);
        # each hands the card on and returns at once, and one that raises is logged and skipped.
        self.beside: list[Callable[[Card], object]] = []
        # Who delivers a quiet-hours wait (the cards Slack and push held until a person's quiet hours
        # end, countersign.notify.card_channel): the outbox holds them, so the sweep finds them here.
        self.after_quiet: Callable[[str], str | None] | None = None

    @property
    def settings(self) -> Settings:
        return self._settings() if callable(self._settings) else self._settings

    def __call__(self, card: Card) -> str | None:
        self._tell_beside(card)
        with self._lock:
            slot_end = self._unowed.pop(card.id, None)
        if slot_end is None:
            return self.deliver(card.id)
        now = int(self.clock())
        if now < slot_end:  # filed without a notification (owes_email): rate limited, nothing owed
            return self._event(RATE_LIMITED)
        # The filing outlived the interval it was decided in (it waited longer than SLOT_MARGIN):
        # the claim decides, as on the whole path. There is no notification to lease; a send that
        # fails here is logged and not retried.
        log.warning("card %s was filed after its person's email interval ended; delivering directly", card.id)
        try:
            outcome = self._notify(Notification(card.id, card.workspace_id, card.person_id, card.created_at,
                                                attempts=MAX_ATTEMPTS - 1), now)
        except Exception:
            log.exception("email about card %s failed", card.id)
            outcome = None
        return self._event(outcome or FAILED)

    def _tell_beside(self, card: Card) -> None:
        for channel in self.beside:
            try:
                channel(card)
            except Exception:
                log.exception("telling another channel of card %s failed", card.id)

    def owes_email(self, card: Card) -> bool:
        """Whether ``card``, about to be filed, may owe its person an email. False only when this
        process sent the person an email about another card under a slot claimed within the
        interval (more than :data:`SLOT_MARGIN` seconds before it ends): that slot is never
        released, and the claim refuses every other card until the interval ends, so this one would
        be done as rate limited. It is then filed
        without a notification (nothing is owed, so a crash loses nothing) and ``notifier(card)``
        counts it rate limited without a store request. A claim made by another process, or before
        this one started, is not known here: those cards take the whole path and the claim decides."""
        with self._lock:
            slot = self._slots.get(card.person_id)
            if slot is None or slot[1] == card.id:
                return True
            if int(self.clock()) + SLOT_MARGIN >= slot[0] + self.settings.email_interval:
                return True
            if len(self._unowed) >= MAX_REMEMBERED:  # ids of cards another filing won, never told of
                self._unowed.clear()
            self._unowed[card.id] = slot[0] + self.settings.email_interval
            return False

    def deliver(self, card_id: str) -> str | None:
        """Lease and deliver one card's notification; never raises. A quiet-hours wait goes to
        :attr:`after_quiet` (None while this process has none, and the wait stays owed)."""
        if is_quiet_wait(card_id):
            if self.after_quiet is None:
                return None
            try:
                return self.after_quiet(card_id)
            except Exception:
                log.exception("delivering the quiet-hours wait %s failed", card_id)
                return None
        now = int(self.clock())
        try:
            notification = self.outbox.lease_notification(card_id, now, self.settings.run_lease)
        except Exception:
            log.exception("leasing the notification of card %s failed; the sweep retries it", card_id)
            return None
        if notification is None:
            return None
        try:
            outcome = self._notify(notification, now)
        except Exception:
            log.exception("email about card %s failed", card_id)
            outcome = self._retry(notification, now)
        if outcome is not None and outcome not in PUT_BACK:
            self._finish(card_id, outcome)
        return self._event(outcome or FAILED)

    def _finish(self, card_id: str, outcome: str) -> None:
        """Record ``outcome``, trying again a few times: after a send, a notification left
        unfinished is delivered again by a sweep once its lease lapses, and its card's own claim
        of the email slot does not stop that second email (docs/guarantees.md, "Emails")."""
        for attempt in range(FINISH_ATTEMPTS):
            try:
                self.outbox.finish_notification(card_id, int(self.clock()), outcome)
                return
            except Exception:
                if attempt == FINISH_ATTEMPTS - 1:
                    log.exception("marking the notification of card %s %s failed; a sweep may deliver it again",
                                  card_id, outcome)
                    return
                log.warning("marking the notification of card %s %s failed; trying again", card_id, outcome)
                self.pause(FINISH_BACKOFF * (attempt + 1))

    def sweep(self, limit: int = 50) -> int:
        """Deliver every notification that is due (or whose sender died); how many were tried."""
        due = self.outbox.due_notifications(int(self.clock()), limit)
        for notification in due:
            self.deliver(notification.card_id)
        return len(due)

    # -- steps ----------------------------------------------------------------------------------

    def _notify(self, n: Notification, now: int) -> str | None:
        """The outcome to record, or None when the send failed and the notification waits again
        (:data:`QUIET`: it waits for the person's quiet hours to end)."""
        settings = self.settings
        try:
            person = self.workspaces.get_person(n.workspace_id, n.person_id)
        except NotFound:
            return FAILED  # the person is gone: nobody to tell
        if not person.agent_requests_email:
            return DISABLED
        if self.suppressions.address_suppression(person.email) is not None:
            return SUPPRESSED
        quiet_end = quiet_until(person.quiet_hours, now)
        if quiet_end is not None:
            return self._defer(n, quiet_end)
        if is_digest(n.card_id):
            return self._digest(n, person, now, settings)
        if is_reminder(n.card_id):
            return self._remind(n, person, now, settings)
        if not self.limits.claim_email_slot(person.id, now, settings.email_interval, claimer=n.card_id):
            return RATE_LIMITED
        # A notification that waited out quiet hours is owed only while its own card waits.
        return self._send_on_slot(n, person, now, settings, lambda: self._compose(
            person, n.card_id, now, settings, own_card_waits=_waited(n)))

    def _send_on_slot(self, n: Notification, person: Person, now: int, settings: Settings,
                      compose: Callable[[], tuple[Email | None, _Found]]) -> str | None:
        """Compose and send the email the slot just claimed for ``person`` is for: the slot is
        released when there is nothing to send or the send fails (the notification waits again)."""
        try:
            email, found = compose()
            if email is None:
                self._release(person, now)
                return NOTHING_PENDING
            self._follow_up(person, now, settings, found)
            self.sender.send(email)
        except SendError as exc:
            self._release(person, now)
            log.warning("email to %s failed: %s", person.email, exc)
            return self._retry(n, now)
        except Exception:
            self._release(person, now)
            raise
        self._sent(person.id, now, n.card_id)
        crash_point("after_send")
        return SENT

    def _defer(self, n: Notification, until: int) -> str | None:
        """Quiet hours: the notification waits until ``until`` (nothing claimed, nothing sent)."""
        try:
            self.outbox.defer_notification(n.card_id, until)
        except Exception:
            log.exception("putting back the notification of %s until quiet hours end failed; its lease lapses "
                          "instead", n.card_id)
        return QUIET

    def _digest(self, n: Notification, person: Person, now: int, settings: Settings) -> str | None:
        """A digest check: if cards filed since the email it follows (``n.created_at``, but those
        it counted: ``n.listed``) still wait, one email lists them — if the person's slot is free
        (another email in this interval listed every card that waited, these too)."""
        told = set(n.listed)
        found = self._waiting_cards(person, now)
        new = [c for c in found.cards if c.created_at >= n.created_at and c.id not in told]
        if not new:
            return NOTHING_PENDING  # every card of the interval was answered, withdrawn or lapsed
        if not self.limits.claim_email_slot(person.id, now, settings.email_interval, claimer=n.card_id):
            return RATE_LIMITED

        def digest() -> tuple[Email, _Found]:
            workspace = self.workspaces.get_workspace(person.workspace_id)
            earlier = found.count - len(new)
            one = len(new) == 1 and earlier == 0 and not found.at_least
            email = compose_digest(
                to=person.email,
                waiting=[self._waiting(c, person, workspace, now) for c in new[:MAX_TITLES]],
                count=len(new),
                earlier=earlier,
                link=settings.card_url(new[0].id) if one else settings.pending_url,
                name=person.name,
                workspace=workspace.name,
                at_least=found.at_least,
                from_address=self.sender.from_address,
            )
            return email, found

        return self._send_on_slot(n, person, now, settings, digest)

    def _remind(self, n: Notification, person: Person, now: int, settings: Settings) -> str | None:
        """A card's reminder (:mod:`.reminders`): sent only while the card waits, under the person's
        email slot; if another email holds the slot, put back :data:`REMINDER_RETRY` seconds (while
        the card would still wait then), else done as rate limited (that email listed it)."""
        try:
            card = self.cards.get_card(n.workspace_id, reminded_card(n.card_id), now)
        except NotFound:
            return NOTHING_PENDING
        if card.state is not CardState.PENDING:
            return NOTHING_PENDING  # answered, withdrawn or lapsed: nothing to remind of
        if not self.limits.claim_email_slot(person.id, now, settings.email_interval, claimer=n.card_id):
            if now + REMINDER_RETRY >= card.expires_at:
                return RATE_LIMITED
            try:
                self.outbox.defer_notification(n.card_id, now + REMINDER_RETRY)
            except Exception:
                log.exception("putting back the reminder %s failed; its lease lapses instead", n.card_id)
            return REMINDER_WAITS

        def reminder() -> tuple[Email, _Found]:
            workspace = self.workspaces.get_workspace(person.workspace_id)
            email = compose_reminder(
                to=person.email, waiting=self._waiting(card, person, workspace, now), left=card.expires_at - now,
                deadline=card.expires_at, declined=card.lapses_as_declined, link=settings.card_url(card.id),
                name=person.name, workspace=workspace.name, from_address=self.sender.from_address)
            return email, _Found([card], 1, False)

        outcome = self._send_on_slot(n, person, now, settings, reminder)
        return REMINDER_SENT if outcome == SENT else outcome

    def _follow_up(self, person: Person, claimed_at: int, settings: Settings, found: _Found) -> None:
        """Before the email of the slot claimed at ``claimed_at`` goes out: the digest check that
        tells, when the interval ends, of the cards filed meanwhile (one per claim: a retry adds
        nothing). Failing to record it does not stop this email; it is logged."""
        if settings.email_interval <= 0:
            return  # no interval: every card's own notification sends
        cutoff = claimed_at - DIGEST_OVERLAP
        told = tuple(c.id for c in found.cards if c.created_at >= cutoff)[:MAX_LISTED]
        check = Notification(digest_id(person.id, claimed_at), person.workspace_id, person.id, cutoff,
                             due_at=claimed_at + settings.email_interval, listed=told)
        try:
            self.outbox.add_notification(check)
        except Exception:
            log.exception("recording the digest check after the email to %s failed; cards filed in this interval "
                          "are told of by the next card's email", person.id)

    def _retry(self, n: Notification, now: int) -> str | None:
        """Put the notification back, due after a backoff; after :data:`MAX_ATTEMPTS`, give up (FAILED)."""
        if n.attempts + 1 >= MAX_ATTEMPTS:
            log.error("giving up on the email about card %s after %d attempts", n.card_id, n.attempts + 1)
            return FAILED
        try:
            self.outbox.retry_notification(n.card_id, now, now + min(3600, BACKOFF_SECONDS * 2**n.attempts))
        except Exception:
            log.exception("putting back the notification of card %s failed; its lease lapses instead", n.card_id)
        return None

    def compose(self, person: Person, card_id: str, now: int, settings: Settings, *,
                own_card_waits: bool = False) -> Email | None:
        """The email for ``person`` listing what waits on them now, or None if nothing does (or,
        ``own_card_waits``, if ``card_id`` itself no longer waits)."""
        return self._compose(person, card_id, now, settings, own_card_waits)[0]

    def _compose(self, person: Person, card_id: str, now: int, settings: Settings,
                 own_card_waits: bool = False) -> tuple[Email | None, _Found]:
        found = self._waiting_cards(person, now, card_id)
        if found.count == 0 or (own_card_waits and card_id not in {c.id for c in found.cards}):
            return None, found
        shown = found.cards[:MAX_TITLES]
        workspace = self.workspaces.get_workspace(person.workspace_id)
        one = found.count == 1 and not found.at_least
        return compose_pending(
            to=person.email,
            waiting=[self._waiting(c, person, workspace, now) for c in shown],
            count=found.count,
            link=settings.card_url(shown[0].id) if one and shown else settings.pending_url,
            name=person.name,
            workspace=workspace.name,
            at_least=found.at_least,
            from_address=self.sender.from_address,
        ), found

    def _waiting_cards(self, person: Person, now: int, card_id: str | None = None) -> _Found:
        """Every card that waits on ``person`` (up to :data:`MAX_PAGES` pages), oldest first, and
        ``card_id``'s card if it waits but the listing missed it (a just-filed card can be missing
        from an eventually consistent index: DynamoDB's GSI)."""
        cards, cursor = self.cards.list_pending_cards(person.workspace_id, person.id, now, limit=PAGE)
        pages = 1
        while cursor is not None and pages < MAX_PAGES:
            more, cursor = self.cards.list_pending_cards(person.workspace_id, person.id, now, limit=PAGE, cursor=cursor)
            cards += more
            pages += 1
        if card_id is not None and cursor is None and card_id not in {c.id for c in cards}:
            card = self.cards.get_card(person.workspace_id, card_id, now)
            if card.state is CardState.PENDING:
                cards.append(card)
        return _Found(cards, len(cards), cursor is not None)

    def _waiting(self, card: Card, person: Person, workspace: Workspace, now: int) -> Waiting:
        """One card as the email lists it: its title, who asked, whether a passkey is needed."""
        if not card.connection_id and card.filed_by is None and not card.fingerprint:
            card = self.cards.get_card(card.workspace_id, card.id, now)  # listed: who filed it was left out
        words = asked_by_words(self.connections, self.workspaces, card, person)
        passkey = self.needs_passkey is not None and self.needs_passkey(card, workspace)
        return Waiting(card.title, words, passkey)

    def _sent(self, person_id: str, claimed_at: int, card_id: str) -> None:
        """An email went out under the slot claimed at ``claimed_at``: that slot is never released,
        so until the interval ends every other card of the person would be rate limited."""
        with self._lock:
            if len(self._slots) >= MAX_REMEMBERED:
                self._slots.clear()
            self._slots[person_id] = (claimed_at, card_id)

    def _release(self, person: Person, claimed_at: int) -> None:
        with self._lock:
            if self._slots.get(person.id, (None,))[0] == claimed_at:
                del self._slots[person.id]
        try:
            self.limits.release_email_slot(person.id, claimed_at)
        except Exception:
            log.exception("releasing the email slot of %s failed; the next email waits for the interval", person.id)

    def _event(self, name: str) -> str:
        return counted(self.counts, self.on_event, name)
