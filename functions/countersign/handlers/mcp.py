"""The ``mcp`` Lambda function: the MCP endpoint behind API Gateway's REST API (payload 1.0), via Mangum, and
the OAuth endpoints beside it (``/.well-known/oauth-*``, ``/oauth/*``: docs/oauth.md).

Built once per instance, at import (cold start): settings, store client, keys and the
``MCPServer``. The toolsets are imported, and each tool's schemas built, on first use and then
kept: a first ``tools/call`` imports the toolsets and builds that one tool, a first ``tools/list``
builds them all (:class:`~countersign.surfaces.mcp.server.ToolsOnDemand`), so a cold start pays for
neither and no request pays twice. Requests carry no state between them; request-state
keys are shared by every instance (``COUNTERSIGN_STATE_KEYS``), so a 2026-07-28 retry may land
anywhere. A filed card's email is not sent from here: the card's notification is written with
it (the outbox) and the table's stream hands it to the ``notifier`` function. Logs, metrics and
traces: :mod:`countersign.platform.telemetry`.
"""

from __future__ import annotations

import os

from mangum import Mangum

from ..platform import heap, telemetry
from ..runtime import build
from ..settings import load
from ..surfaces.http.challenge import carry_challenge
from ..surfaces.http.origin import accepted, require_origin
from ..surfaces.http.request_limits import RequestLimit
from ..surfaces.mcp.server import build_server
from ..surfaces.mcp.transport import lambda_app
from ..surfaces.oauth.endpoints import OAuthEndpoints

telemetry.setup()  # first, so what building logs is JSON and redacted
# One request at a time: a call's work, and each layer's writes, run on the event loop (gate/offload.py).
runtime = build(load(), deliver_inline=False, lazy_toolsets=True,  # the notifier function emails; toolsets on first use
                one_request_at_a_time=True)
telemetry.wire(runtime)
# Outside in: a request without CloudFront's origin secret is refused (403); then the per-connection
# and per-address request limits (429); then the stateless MCP endpoint and, beside it, the OAuth
# authorization server (it needs the SDK, which is loaded here anyway).
endpoint = RequestLimit(
    lambda_app(build_server(runtime.desk, runtime.state_keys), runtime.store, oauth=OAuthEndpoints(runtime)),
    runtime, "mcp",
)
handler = telemetry.instrument(carry_challenge(require_origin(
    Mangum(endpoint, lifespan="off", api_gateway_base_path=os.environ.get("COUNTERSIGN_BASE_PATH", "/")),
    accepted(runtime),
), telemetry.metric))  # each refusal carried as a 200 is counted (refusal_carried: RestApi4xxAlarm)
heap.settle(collect=False)  # what was built lives as long as the instance (countersign.platform.heap)
