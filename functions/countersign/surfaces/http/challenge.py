"""A refusal's ``WWW-Authenticate``, carried past API Gateway to the deployment's CloudFront.

API Gateway renames a Lambda function's ``WWW-Authenticate`` answer header to
``x-amzn-Remapped-WWW-Authenticate``, and an MCP client finds the OAuth authorization server
through that header on a 401 (``resource_metadata``, docs/oauth.md). CloudFront could restore it
with a viewer-response function, but CloudFront runs none on an origin answer of 400 or more.

So on Lambda, :func:`carry_challenge` turns a refusal that carries ``WWW-Authenticate`` into a
200 with ``X-Countersign-Status`` (the refusal's status) and ``X-Countersign-WWW-Authenticate``
(the challenge), and the distribution's viewer-response function (template.yaml,
``ChallengeFunction``) gives the viewer the refusal back: its status, ``WWW-Authenticate``, the
body as it was, the carrier headers dropped. :func:`restore_challenge` is what that function does,
for the tests that play CloudFront. The local server answers directly and needs none of this.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

STATUS_HEADER = "x-countersign-status"
CHALLENGE_HEADER = "x-countersign-www-authenticate"
CHALLENGE = "www-authenticate"
REMAPPED = "x-amzn-remapped-www-authenticate"
REASONS = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden"}


def carry(result: dict) -> dict:
    """``result`` (an API Gateway proxy answer) with a 4xx's ``WWW-Authenticate`` carried in a 200."""
    status = result.get("statusCode")
    headers = result.get("headers") or {}
    name = next((k for k in headers if k.lower() == CHALLENGE), None)
    if name is None or not isinstance(status, int) or not 400 <= status <= 499:
        return result
    carried = {k: v for k, v in headers.items() if k != name}
    carried[STATUS_HEADER] = str(status)
    carried[CHALLENGE_HEADER] = headers[name]
    return {**result, "statusCode": 200, "headers": carried}


CARRIED = "refusal_carried"  # the metric of a refusal API Gateway saw as a 200 (RestApi4xxAlarm adds it)


def carry_challenge(handler: Callable[[dict, Any], Any],
                    on_event: Callable[[str], None] | None = None) -> Callable[[dict, Any], Any]:
    """A Lambda handler whose refusals keep their ``WWW-Authenticate`` through API Gateway.
    ``on_event`` is told :data:`CARRIED` for each one carried: API Gateway counts it as a 200,
    not in its ``4XXError``, so the 4xx alarm reads this count beside it (template.yaml)."""

    def carrying(event: dict, context: Any) -> Any:
        result = handler(event, context)
        if not isinstance(result, dict):
            return result
        carried = carry(result)
        if carried is not result and on_event is not None:
            on_event(CARRIED)
        return carried

    return carrying


def restore_challenge(status: int, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    """What the distribution's ``ChallengeFunction`` does to an answer (headers lower-cased)."""
    headers = dict(headers)
    carried = headers.pop(STATUS_HEADER, None)
    challenge = headers.pop(CHALLENGE_HEADER, None)
    headers.pop(REMAPPED, None)
    if carried is not None and carried.isdigit() and 400 <= int(carried) <= 499:
        status = int(carried)
        if challenge is not None:
            headers[CHALLENGE] = challenge
    return status, headers
