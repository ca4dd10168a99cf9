"""The ``smoke`` Lambda function (the stack's optional canary, ``SmokeTest=true``): one run of
``countersign smoke`` against the stack's public URL (and its REST API's own URL, which must refuse
a request around CloudFront), every 5 minutes.

CloudWatch Synthetics invokes it; it reads the smoke credentials from ``SmokeSecret`` (written by
``countersign smoke setup --secret``), runs :func:`countersign.cli.smoke.run_smoke` and answers the
one line; a failed run raises, so the canary run fails and its alarm counts it. Its role may read
that secret and nothing else: it reaches the deployment only through its public URL, as a client.
"""

from __future__ import annotations

import functools
import os

import anyio

from ..cli.smoke import check_origin_url, check_url, parse_credentials, run_smoke
from ..platform.secrets_manager import read_secret


class SmokeFailed(Exception):
    pass


def handler(event, context) -> dict:
    origin = check_url(os.environ["COUNTERSIGN_SMOKE_URL"])
    credentials = parse_credentials(read_secret(os.environ["COUNTERSIGN_SMOKE_SECRET"]), "SmokeSecret")
    # The REST API's own URL: each run also checks that AWS WAF refuses a request around CloudFront.
    origin_url = check_origin_url(os.environ["COUNTERSIGN_SMOKE_ORIGIN_URL"]) \
        if os.environ.get("COUNTERSIGN_SMOKE_ORIGIN_URL") else None
    outcome = anyio.run(functools.partial(run_smoke, origin, credentials, origin_url=origin_url))
    print(outcome.line)  # the function's log: one line a run
    if not outcome.ok:
        raise SmokeFailed(outcome.line)
    return {"ok": True, "line": outcome.line}
