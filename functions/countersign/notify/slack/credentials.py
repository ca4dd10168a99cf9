"""A Slack app's bot token and signing secret at rest: sealed with the server's request-state keys
(:mod:`countersign.core.sealing`, a key derived for Slack alone), bound to the workspace and the
Slack team they belong to: sealed values copied onto another workspace's app do not open.

Unsealed values live in memory only, for one call, and are held out of every log line
(:func:`~countersign.logs.redaction.hold_secret`).
"""

from __future__ import annotations

from ...core.sealing import Sealer, SealError
from ...logs.redaction import hold_secret
from ...store.slack import SlackApp

PURPOSE = b"cs-slack-key"
LABEL = "countersign-slack"
TOKEN, SECRET = "bot_token", "signing_secret"

__all__ = ["SealError", "SlackCredentials"]


class SlackCredentials:
    def __init__(self, keys: list[bytes]):
        self.sealer = Sealer(keys, purpose=PURPOSE, label=LABEL)

    def seal(self, workspace_id: str, team_id: str, token: str, secret: str) -> tuple[str, str]:
        """(the token sealed, the signing secret sealed) for ``workspace_id``'s app in ``team_id``."""
        return (self.sealer.seal((workspace_id, team_id, TOKEN), token.encode("utf-8")),
                self.sealer.seal((workspace_id, team_id, SECRET), secret.encode("utf-8")))

    def token(self, app: SlackApp) -> str:
        """The bot token; :class:`SealError` if no key of this server opens it."""
        return self._open(app, app.token_sealed, TOKEN, "Slack bot token")

    def secret(self, app: SlackApp) -> str:
        """The signing secret; :class:`SealError` if no key of this server opens it."""
        return self._open(app, app.secret_sealed, SECRET, "Slack signing secret")

    def _open(self, app: SlackApp, sealed: str, kind: str, what: str) -> str:
        value = self.sealer.unseal((app.workspace_id, app.team_id, kind), sealed, what).decode("utf-8")
        hold_secret(value)
        return value
