"""The ``api`` Lambda function: the confirm API behind API Gateway's REST API (payload 1.0), via Mangum.

Settings, store client, keys and the app are built once per instance, at import (cold start).
This module must not import ``mcp`` or anything under ``countersign.surfaces.mcp``: the MCP SDK
costs about a second and a half of cold start and this function never speaks MCP.
``tests/api/test_lambda.py`` and ``tests/deploy`` check it. Logs, metrics and traces:
:mod:`countersign.platform.telemetry`.
"""

from __future__ import annotations

import os
import sys

# botocore imports ``urllib3.contrib.pyopenssl`` only to take from it urllib3's own standard-library
# SSLContext, and takes the same class from ``urllib3.util.ssl_`` when that import fails. In this
# function's bundle pyOpenSSL is installed (py_webauthn needs it for attestation certificates), so
# that import would load pyOpenSSL and cryptography's x509 at every cold start (~50 ms, before the
# first request) for nothing: nothing here injects pyOpenSSL into urllib3. py_webauthn imports
# pyOpenSSL itself, at the first passkey ceremony. Before anything imports boto3:
sys.modules.setdefault("urllib3.contrib.pyopenssl", None)  # type: ignore[arg-type]
# FastAPI imports ``pydantic.v1`` (~30 ms) at the first route that takes or returns a model, only
# to refuse a pydantic v1 model, and treats it as absent when that import fails (as it will be
# once pydantic drops it). Nothing in this function's bundle uses pydantic v1:
sys.modules.setdefault("pydantic.v1", None)  # type: ignore[arg-type]

from mangum import Mangum  # noqa: E402

from ..platform import heap, telemetry  # noqa: E402
from ..runtime import build  # noqa: E402
from ..settings import load  # noqa: E402
from ..surfaces.api.app import create_api  # noqa: E402
from ..surfaces.http.challenge import carry_challenge  # noqa: E402
from ..surfaces.http.origin import accepted, require_origin  # noqa: E402

telemetry.setup()  # first, so what building logs is JSON and redacted
# files no card; toolsets at the first card shown (what it declares: can it be undone) or click; one request
# at a time: the page limit's count on the loop,
# not in a thread (gate/offload.py)
runtime = build(load(), deliver_inline=False, lazy_toolsets=True, one_request_at_a_time=True)
telemetry.wire(runtime)
app = create_api(runtime)
# A request without CloudFront's origin secret is refused (403) before the app sees it.
handler = telemetry.instrument(carry_challenge(require_origin(
    Mangum(app, lifespan="off",
           api_gateway_base_path=os.environ.get("COUNTERSIGN_BASE_PATH", "/")),
    accepted(runtime),
), telemetry.metric))  # each refusal carried as a 200 is counted (refusal_carried: RestApi4xxAlarm)
heap.settle(collect=False)  # what was built lives as long as the instance (countersign.platform.heap)
