"""What the rehearsal's protection act left (tests/deploy/protection.py): requests around CloudFront
refused, a bounce that suppresses the owner's address, a burst from one connection answered 429
while another connection and the page go on, and compressed /api answers."""

from __future__ import annotations

import json

from tests.deploy.rehearsal import OWNER
from tests.support.apigw import response_body


def test_requests_around_cloudfront_are_refused(rehearsal):
    """Sent to the execute-api URL itself (no X-Countersign-Origin, or a guessed one), /api and /mcp
    answer 403 before the app runs: nothing around CloudFront reaches the MCP endpoint or the API."""
    direct = rehearsal["protection"]["direct"]
    assert [a["statusCode"] for a in direct] == [403] * 4
    assert all(json.loads(response_body(a))["error"]["code"] == "forbidden" for a in direct)


def test_a_bounce_suppresses_the_address_and_the_page_says_so(rehearsal):
    act = rehearsal["protection"]
    assert act["feedback"] == {"records": 1, "failed": 0, "suppressed": 1}
    assert act["suppressed_result"] == {"batchItemFailures": []}
    assert act["suppressed_outcome"] == "email_suppressed" and act["owner_mails_after"] == 0
    notice = act["session"]["emailNotice"]
    assert notice["reason"] == "bounce" and OWNER in notice["message"]


def test_a_burst_from_one_connection_is_refused_while_another_and_the_page_go_on(rehearsal):
    act = rehearsal["protection"]
    limit = int(rehearsal["stack"].stack.environment("McpFunction")["COUNTERSIGN_LIMIT_CONNECTION"])
    assert act["burst"][-1] == 429 and 429 not in act["burst"][:-1]
    # The connection's own earlier calls in the same 10 s (the bounce act's card) count too, and a
    # burst that straddles two windows gets up to twice the limit; the window that refused holds
    # exactly the limit.
    assert len(act["burst"]) <= 2 * limit + 1
    assert max(act["connection_windows"].values()) == limit
    refused = act["refused"]
    assert 1 <= int(refused["headers"]["retry-after"]) <= 10
    assert json.loads(response_body(refused))["error"] == "rate_limited"
    assert act["other_agent"]["status"] == "pending"
    assert act["page_after_burst"] == 200


def test_api_answers_are_compressed_for_clients_that_accept_it(rehearsal):
    import base64
    import gzip

    act = rehearsal["protection"]
    gzipped, plain = act["gzipped"], act["plain"]
    assert gzipped["statusCode"] == plain["statusCode"] == 200
    assert gzipped["headers"]["content-encoding"] == "gzip" and gzipped["isBase64Encoded"] is True
    assert "content-encoding" not in plain["headers"]
    unpacked = gzip.decompress(base64.b64decode(gzipped["body"]))
    assert json.loads(unpacked) == json.loads(response_body(plain))
    assert len(gzipped["body"]) < len(plain["body"]) / 2


