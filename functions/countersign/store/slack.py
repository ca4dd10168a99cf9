"""The slack role: a workspace's Slack app, its members' Slack users, the one-time codes that link
them, and the cards posted to Slack.

:class:`SlackStore` is the interface both stores implement; :class:`SlackApp`, :class:`SlackLink`,
:class:`SlackLinkCode` and :class:`SlackPost` are its records; the ``check_*`` functions are the
checks both stores make before writing (bad input raises :class:`~.errors.BadInput` and writes
nothing). The rules every role keeps are stated in :mod:`.workspaces`.

* A workspace connects at most one Slack app, and a Slack workspace (team) is connected to at
  most one countersign workspace: a click arriving for a team is verified with that one app's
  signing secret and acts only in that one workspace.
* The app's bot token and signing secret are stored sealed (:mod:`countersign.core.sealing`);
  this role never sees them in the clear.
* A person links one Slack user of the connected team; a Slack user is linked to at most one
  person. A link code is stored only as its hash, is spent by its first use and expires.
* A post record makes a card's Slack message at most one: whoever claims it posts, and a claim
  whose poster died lapses after its lease.
"""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass

from .errors import BadInput

POSTING, POSTED = "posting", "posted"
POST_RETENTION = 30 * 24 * 3600  # a post record outlives any card's deadline

TEAM_ID = re.compile(r"^[TE][A-Z0-9]{2,31}$")
USER_ID = re.compile(r"^[UW][A-Z0-9]{2,31}$")
USER_NAME = re.compile(r"^[^\x00-\x1f\x7f@<>&\s]{1,80}$")  # a Slack name, shown after an @
CHANNEL_ID = re.compile(r"^[CG][A-Z0-9]{2,31}$")  # a public or private channel (a DM is no choice)
MAX_TEAM_NAME = 200


@dataclass(frozen=True)
class SlackApp:
    """A workspace's Slack app: the Slack workspace (team) it is installed in, its bot user, its
    credentials sealed, and where cards go: ``channel`` (a channel id the owner picked) or, when
    None, each card's person in a direct message from the bot."""

    workspace_id: str
    team_id: str
    team_name: str
    bot_user_id: str
    token_sealed: str
    secret_sealed: str
    connected_by: str  # the owner's person id
    connected_at: int
    channel: str | None = None


@dataclass(frozen=True)
class SlackLink:
    """A person's Slack user (of the team their workspace's app is installed in)."""

    workspace_id: str
    person_id: str
    team_id: str
    user_id: str
    linked_at: int
    user_name: str | None = None  # their Slack name ("pat") as the slash command said it; None for older links


@dataclass(frozen=True)
class SlackLinkCode:
    """A one-time code a person sends the bot to link their Slack user: kept as its hash only."""

    code_hash: str
    workspace_id: str
    person_id: str
    expires_at: int


@dataclass(frozen=True)
class SlackPost:
    """A card's Slack message: claimed (``posting``) by whoever posts it, then where it went."""

    card_id: str
    workspace_id: str
    state: str
    claimed_at: int
    channel: str | None = None
    ts: str | None = None


class SlackStore(abc.ABC):
    """Slack apps, links, link codes and posts."""

    # -- the workspace's app ----------------------------------------------------------------------

    @abc.abstractmethod
    def connect_app(self, app: SlackApp) -> SlackApp:
        """Store ``app`` as its workspace's app, replacing the one it had (its team's claim moved
        with it), in one transaction. :class:`~.errors.Conflict` if the team is connected to
        another workspace, and then nothing is written."""

    @abc.abstractmethod
    def get_app(self, workspace_id: str) -> SlackApp | None: ...

    @abc.abstractmethod
    def app_for_team(self, team_id: str) -> SlackApp | None:
        """The app connected for Slack team ``team_id``, whichever workspace it belongs to."""

    @abc.abstractmethod
    def set_channel(self, workspace_id: str, channel: str | None) -> SlackApp:
        """Where cards go: a channel id, or None for each person's direct messages.
        :class:`~.errors.NotFound` if the workspace has no app."""

    @abc.abstractmethod
    def disconnect_app(self, workspace_id: str) -> bool:
        """Remove the workspace's app and its team's claim; False if it had none. Links stay (they
        work again if the same Slack workspace is connected again)."""

    # -- links --------------------------------------------------------------------------------------

    @abc.abstractmethod
    def put_link_code(self, code: SlackLinkCode) -> None: ...

    @abc.abstractmethod
    def take_link_code(self, code_hash: str, now: int) -> SlackLinkCode | None:
        """Delete and return the code: its first use spends it. None if unknown, spent or expired."""

    @abc.abstractmethod
    def link(self, link: SlackLink) -> SlackLink:
        """Link the person to the Slack user, replacing the person's previous link, in one
        transaction. :class:`~.errors.Conflict` if that Slack user is linked to someone else."""

    @abc.abstractmethod
    def get_link(self, workspace_id: str, person_id: str) -> SlackLink | None: ...

    @abc.abstractmethod
    def link_of_user(self, team_id: str, user_id: str) -> SlackLink | None:
        """The link of Slack user ``user_id`` of team ``team_id``, in whichever workspace."""

    @abc.abstractmethod
    def unlink(self, workspace_id: str, person_id: str) -> bool:
        """Remove the person's link; False if they had none."""

    # -- posts --------------------------------------------------------------------------------------

    @abc.abstractmethod
    def claim_post(self, card_id: str, workspace_id: str, now: int, lease: int) -> bool:
        """One conditional write: True if nobody posted the card's message and nobody holds a claim
        younger than ``lease`` seconds; the card is then ``posting`` for the caller."""

    @abc.abstractmethod
    def finish_post(self, card_id: str, channel: str, ts: str) -> None:
        """``posting → posted`` with where the message went."""

    @abc.abstractmethod
    def release_post(self, card_id: str) -> None:
        """Drop a claim whose post failed (a later try may claim again); a posted card keeps its record."""

    @abc.abstractmethod
    def get_post(self, card_id: str) -> SlackPost | None: ...


# -- checks -----------------------------------------------------------------------------------------


def check_app(app: SlackApp) -> None:
    if not TEAM_ID.fullmatch(app.team_id):
        raise BadInput("team_id", "is not a Slack workspace id.")
    if not USER_ID.fullmatch(app.bot_user_id):
        raise BadInput("bot_user_id", "is not a Slack user id.")
    if not isinstance(app.team_name, str) or len(app.team_name) > MAX_TEAM_NAME:
        raise BadInput("team_name", f"at most {MAX_TEAM_NAME} characters.")
    check_channel(app.channel)
    if not app.token_sealed or not app.secret_sealed:
        raise BadInput("credentials", "the bot token and signing secret are both needed, sealed.")


def check_channel(channel: str | None) -> None:
    if channel is not None and (not isinstance(channel, str) or not CHANNEL_ID.fullmatch(channel)):
        raise BadInput("channel", "is not a Slack channel id (C… or G…, as Slack shows it under the channel's "
                                  "details); leave it empty to send each card to its person directly.")


def check_link(link: SlackLink) -> None:
    if not TEAM_ID.fullmatch(link.team_id):
        raise BadInput("team_id", "is not a Slack workspace id.")
    if not USER_ID.fullmatch(link.user_id):
        raise BadInput("user_id", "is not a Slack user id.")
    if link.user_name is not None and not USER_NAME.fullmatch(link.user_name):
        raise BadInput("user_name", "is not a Slack user name (1 to 80 characters, no spaces or @).")


def slack_user_name(value: object) -> str | None:
    """The Slack name a request gives (a slash command's ``user_name``) if it is one, else None."""
    return value if isinstance(value, str) and USER_NAME.fullmatch(value) else None
