"""The ``api`` Lambda function: the confirm API behind API Gateway's HTTP API (payload 2.0), via Mangum.

Settings, store client, keys and the app are built once per instance, at import (cold start).
This module must not import ``mcp`` or anything under ``countersign.surfaces.mcp_*``: the MCP SDK
costs about a second and a half of cold start and this function never speaks MCP.
``tests/api/test_lambda.py`` and ``tests/deploy`` check it. Logs, metrics and traces:
:mod:`countersign.observability`.
"""

from __future__ import annotations

import os

from mangum import Mangum

from .. import observability
from ..runtime import build
from ..settings import load
from ..surfaces.api.app import create_api
from ..surfaces.origin import accepted, require_origin

observability.setup()  # first, so what building logs is JSON and redacted
runtime = build(load(), deliver_inline=False, lazy_toolsets=True)  # files no card; toolsets at the first click
observability.wire(runtime)
app = create_api(runtime)
# A request without CloudFront's origin secret is refused (403) before the app sees it.
handler = observability.instrument(require_origin(
    Mangum(app, lifespan="off", api_gateway_base_path=os.environ.get("COUNTERSIGN_BASE_PATH", "/")),
    accepted(runtime),
))
