"""SlackNotifier: post a filed card to Slack, beside its email, and update the message once answered.

Where a card goes: the channel the workspace's owner picked, or else a direct message from the
bot to the card's person, if they linked their Slack user (:class:`~countersign.store.slack.SlackLink`).
A workspace without a Slack app gets nothing, at the cost of one read. A person who turned Slack
off in Settings (:meth:`~countersign.store.workspaces.Person.reached_by`) gets no message for their
cards, in a channel or directly (``slack_off``). A card filed while its person's quiet hours run is
held (``slack_quiet``) and posted when they end, by the sweep, if it still waits
(:class:`~countersign.notify.card_channel.CardChannel`): each such card its own message, oldest
first, at most :data:`MAX_AFTER_QUIET` of them, and one more message saying how many more wait,
with a link to the list.

At most one message per card: the poster claims the card first
(:meth:`~countersign.store.slack.SlackStore.claim_post`), and a claim whose poster died lapses
after ``COUNTERSIGN_RUN_LEASE`` seconds. A failed post releases its claim and is reported
``slack_retry`` (Slack could not be reached, or asked to slow down: worth another try; the stream
notifier on AWS reports its record failed so Lambda tries again) or ``slack_failed`` (Slack
refused it for good: a revoked token, a channel the bot is not in); either is logged without the
token or the message.

Locally the filing call hands the card over (``notifier(card)``) and the post runs on a worker
thread, off the agent's call. On AWS the stream notifier calls :meth:`SlackNotifier.post` for each
card filed. A notifier never raises.

Each outcome is counted in :attr:`SlackNotifier.counts` and reported to ``on_event(name)``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ...core.card_states import CardState
from ...core.sealing import SealError
from ...store import Store
from ...store.cards import Card
from ...store.outbox import Notification
from ...store.slack import SlackApp, SlackLink
from ...store.workspaces import Person, Workspace
from ..card_channel import CardChannel, PasskeyRule, SettingsSource
from .blocks import SlackCard, answered_message, card_message, more_waiting_message, slack_test_message
from .client import SlackCallError, call
from .credentials import SlackCredentials

log = logging.getLogger("countersign.notify.slack")

POSTED = "slack_posted"
NOT_LINKED = "slack_not_linked"
RETRY = "slack_retry"
FAILED = "slack_failed"
OFF = "slack_off"
QUIET = "slack_quiet"
EVENTS = (POSTED, NOT_LINKED, RETRY, FAILED, OFF, QUIET)
MAX_AFTER_QUIET = 5  # cards posted one by one when quiet hours end; beyond, one message says how many more


class SlackNotifier(CardChannel):
    thread_name = "slack"
    channel = "slack"

    def __init__(self, store: Store, credentials: SlackCredentials, settings: SettingsSource, *,
                 needs_passkey: PasskeyRule | None = None, clock: Callable[[], float] = time.time,
                 on_event: Callable[[str], None] | None = None, background: bool = False):
        super().__init__(store, settings, needs_passkey=needs_passkey, clock=clock, on_event=on_event,
                         background=background)
        self.credentials = credentials

    # -- posting ------------------------------------------------------------------------------------

    def might_reach(self, card: Card) -> bool:
        return self.store.slack.get_app(card.workspace_id) is not None

    def post(self, workspace_id: str, card_id: str) -> str | None:
        """Post the card if its workspace has a Slack app and it still waits; the outcome (None:
        nothing to post, or posted already). Never raises."""
        try:
            return self._post(workspace_id, card_id)
        except Exception:
            log.exception("posting card %s to Slack failed", card_id)
            return self._event(RETRY)


    deliver = post

    def _post(self, workspace_id: str, card_id: str) -> str | None:
        app = self.store.slack.get_app(workspace_id)
        if app is None:
            return None
        now = int(self.clock())
        card = self.store.cards.get_card(workspace_id, card_id, now)
        if card.state is not CardState.PENDING:
            return None
        workspace, person = self.store.workspaces.get_member(workspace_id, card.person_id)
        if not person.reached_by("slack"):
            return self._event(OFF)
        if self.held_for_quiet_hours(person, [card.id], now):
            return self._event(QUIET)
        channel = self._where(app, person)
        if channel is None:
            return self._event(NOT_LINKED)
        if not self.store.slack.claim_post(card_id, workspace_id, now, self.settings.run_lease):
            return None  # posted already, or another poster holds it
        try:
            text, blocks = card_message(self.view(card, person, workspace, app))
            answer = self._call(app, "chat.postMessage", channel=channel, text=text, blocks=blocks,
                                unfurl_links=False, unfurl_media=False)
        except SlackCallError as exc:
            self.store.slack.release_post(card_id)
            log.warning("Slack refused card %s's message: %s", card_id, exc.error)
            return self._event(RETRY if exc.transient else FAILED)
        except SealError as exc:
            self.store.slack.release_post(card_id)
            log.error("card %s was not posted to Slack: %s", card_id, exc)
            return self._event(FAILED)
        except BaseException:
            self.store.slack.release_post(card_id)
            raise
        self.store.slack.finish_post(card_id, str(answer.get("channel") or channel), str(answer.get("ts") or ""))
        return self._event(POSTED)

    def _where(self, app: SlackApp, person: Person) -> str | None:
        """Where ``person``'s cards go: the app's channel, else their linked Slack user (the bot's
        direct message to them); None if they linked none of the app's team."""
        if app.channel is not None:
            return app.channel
        link = self.store.slack.get_link(app.workspace_id, person.id)
        return None if link is None or link.team_id != app.team_id else link.user_id

    # -- when quiet hours end ---------------------------------------------------------------------

    def after_quiet(self, wait: Notification, now: int) -> list[str | None]:
        """The cards held for quiet hours that still wait, each posted as if filed now (oldest
        first, at most :data:`MAX_AFTER_QUIET`); if more wait, one message says how many more."""
        cards = self.still_waiting(wait, now)
        outcomes = [self.post(wait.workspace_id, card.id) for card in cards[:MAX_AFTER_QUIET]]
        more = len(cards) - MAX_AFTER_QUIET
        if more > 0 and POSTED in outcomes:
            self._post_more(wait, more)
        return outcomes

    def _post_more(self, wait: Notification, count: int) -> None:
        try:
            app = self.store.slack.get_app(wait.workspace_id)
            if app is None:
                return
            person = self.store.workspaces.get_person(wait.workspace_id, wait.person_id)
            channel = self._where(app, person)
            if channel is None:
                return
            text, blocks = more_waiting_message(count, self.settings.pending_url,
                                                (person.name or person.email) if app.channel else None)
            self._call(app, "chat.postMessage", channel=channel, text=text, blocks=blocks, unfurl_links=False,
                       unfurl_media=False)
        except (SlackCallError, SealError) as exc:
            log.warning("the message of the cards held for quiet hours was not posted: %s", exc)

    # -- the test message from Settings -----------------------------------------------------------

    def send_test(self, app: SlackApp, link: SlackLink, lines: list[str]) -> None:
        """A test message now, as a direct message from the bot to the linked Slack user: the same
        credentials and Web API call a card's message takes (quiet hours do not hold it).
        :class:`SlackCallError` or :class:`~countersign.core.sealing.SealError` if it was not sent."""
        text, blocks = slack_test_message(lines)
        self._call(app, "chat.postMessage", channel=link.user_id, text=text, blocks=blocks, unfurl_links=False,
                   unfurl_media=False)

    # -- what a message shows ---------------------------------------------------------------------

    def view(self, card: Card, person: Person, workspace: Workspace, app: SlackApp) -> SlackCard:
        """``card`` as its message shows it: who asked in the card view's words, and whether a
        click without a passkey may answer it (the workspace's passkey policy)."""
        return SlackCard(
            card_id=card.id, title=card.title, lines=card.lines, asked_by=self.asked_by(card, person),
            link=self.settings.card_url(card.id),
            answerable=self.needs_passkey is not None and not self.needs_passkey(card, workspace),
            for_whom=(person.name or person.email) if app.channel else None,
        )

    # -- after a click ----------------------------------------------------------------------------

    def show_answered(self, app: SlackApp, channel: str, ts: str, card: Card, person: Person, workspace: Workspace,
                      outcome: str) -> bool:
        """Replace the card's message with its outcome (no button answers it any more); whether
        Slack took it (a failure is logged: the card is answered whatever the message shows)."""
        text, blocks = answered_message(self.view(card, person, workspace, app), outcome)
        try:
            self._call(app, "chat.update", channel=channel, ts=ts, text=text, blocks=blocks)
        except (SlackCallError, SealError) as exc:
            log.warning("the Slack message of card %s was not updated: %s", card.id, exc)
            return False
        return True

    def tell(self, app: SlackApp, channel: str, user_id: str, text: str) -> bool:
        """A message only ``user_id`` sees, in ``channel`` (why a click was refused)."""
        try:
            self._call(app, "chat.postEphemeral", channel=channel, user=user_id, text=text)
        except (SlackCallError, SealError) as exc:
            log.warning("a Slack notice was not sent: %s", exc)
            return False
        return True

    def _call(self, app: SlackApp, method: str, **arguments: object) -> dict:
        return call(self.settings.slack_api_url, self.credentials.token(app), method, **arguments)


def outcome_words(card: Card, who: str | None) -> str:
    """What the message says once ``card`` was answered: by ``who`` in Slack, or (None) elsewhere."""
    state = card.state
    by = f" in Slack by {who}" if who else ""
    if state is CardState.COMPLETED:
        return f"Confirmed{by}. It ran."
    if state is CardState.FAILED:
        error = card.result.get("error") if isinstance(card.result, dict) else None
        return f"Confirmed{by}, but it failed: {error or 'nothing was done'}."
    if state is CardState.DECLINED:
        return "Not run: what it describes changed since it was asked." if card.refusal else f"Declined{by}."
    if state is CardState.WITHDRAWN:
        return "Withdrawn: nothing ran."
    if state is CardState.EXPIRED:
        return "Expired: nobody answered in time, nothing ran."
    if state is CardState.EDITED:
        return "Edited on the confirm page: a new card with the changes waits for an answer; this one ran nothing."
    if state is CardState.RUNNING:
        return f"Confirmed{by}; it is running."
    return "Waiting for an answer."
