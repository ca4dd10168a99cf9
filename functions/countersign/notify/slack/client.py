"""Slack's Web API through ``slack_sdk``'s ``WebClient``, at the base URL the settings name
(``COUNTERSIGN_SLACK_API_URL``: Slack's own, or a stand-in on loopback in the tests).

``slack_sdk`` (about 80 ms of imports) is loaded at the first Slack call, not when a function
starts: most of the API function's requests never talk to Slack.
"""

from __future__ import annotations

from typing import Any

from .. import outbound

TIMEOUT_SECONDS = 10


class SlackCallError(Exception):
    """A Web API call that did not succeed: the message is Slack's error code (``invalid_auth``,
    ``channel_not_found``…) or the kind of failure; never the token or the message sent."""

    def __init__(self, error: str, transient: bool):
        super().__init__(error)
        self.error, self.transient = error, transient


PERMANENT = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
                       "channel_not_found", "not_in_channel", "is_archived", "user_not_found", "cannot_dm_bot",
                       "missing_scope", "invalid_blocks", "msg_too_long", "message_not_found", "cant_update_message",
                       "user_not_in_channel", "team_access_not_granted"})


def call(base_url: str, token: str, method: str, **arguments: Any) -> dict[str, Any]:
    """``method`` (``chat.postMessage`` …) with ``arguments`` as JSON; Slack's answer, or
    :class:`SlackCallError`."""
    # slack_sdk at the first call (see the module's docstring)
    from slack_sdk import WebClient
    from slack_sdk.errors import SlackApiError, SlackClientError

    client = WebClient(token=token, base_url=base_url, timeout=TIMEOUT_SECONDS, ssl=outbound.tls_context())
    try:
        if method == "auth.test":
            response = client.api_call(method)
        else:
            response = client.api_call(method, json=arguments)
    except SlackApiError as exc:
        error = str(exc.response.get("error") or f"status {exc.response.status_code}")
        raise SlackCallError(error, transient=error not in PERMANENT) from None
    except (SlackClientError, OSError) as exc:  # unreachable, timed out, a body that is not Slack's
        raise SlackCallError(type(exc).__name__, transient=True) from None
    return dict(response.data) if isinstance(response.data, dict) else {}
