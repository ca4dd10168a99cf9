"""countersign.surfaces.http.origin: the 403 gate in front of the HTTP functions, the previous value a
rotation leaves accepted, and which address a request is counted against."""

from __future__ import annotations

import json

from countersign import settings as settings_mod
from countersign.runtime import load_previous_origin_secret
from countersign.surfaces.http import origin

CURRENT = "C" * 40 + "urrent0123456789012345"
PREVIOUS = "P" * 40 + "revious012345678901234"


def event(headers: dict[str, str]) -> dict:
    return {"headers": headers, "requestContext": {"identity": {"sourceIp": "130.176.0.1"}}}


def test_the_gate_answers_403_without_the_secret_and_passes_either_accepted_value():
    seen = []
    gated = origin.require_origin(lambda e, c: seen.append(e) or {"statusCode": 200}, (CURRENT, PREVIOUS))
    for headers in ({}, {"x-countersign-origin": ""}, {"x-countersign-origin": CURRENT[:-1]},
                    {"X-Other": CURRENT}, {"x-countersign-origin": CURRENT.lower()}):
        answer = gated(event(headers), None)
        assert answer["statusCode"] == 403 and json.loads(answer["body"])["error"]["code"] == "forbidden"
    assert seen == []
    assert gated(event({"x-countersign-origin": CURRENT}), None) == {"statusCode": 200}
    assert gated(event({"X-Countersign-Origin": PREVIOUS}), None) == {"statusCode": 200}
    assert len(seen) == 2


def test_without_a_secret_nothing_is_refused_and_no_viewer_is_trusted():
    handler = lambda e, c: {"statusCode": 200}  # noqa: E731
    assert origin.require_origin(handler, ()) is handler
    headers = {"cloudfront-viewer-address": "192.0.2.9:443", "x-countersign-origin": CURRENT}
    assert origin.client_address(headers, "127.0.0.1", ()) == "127.0.0.1"
    assert origin.client_address(headers, "130.176.0.1", (CURRENT,)) == "192.0.2.9"
    assert origin.client_address({**headers, "x-countersign-origin": "forged" * 8}, "203.0.113.5",
                                 (CURRENT,)) == "203.0.113.5"
    v6 = {"cloudfront-viewer-address": "2001:db8::7:443", "x-countersign-origin": PREVIOUS}
    assert origin.client_address(v6, "130.176.0.1", (CURRENT, PREVIOUS)) == "2001:db8::7"


def test_the_previous_value_is_read_only_for_an_arn_and_only_if_long_enough(tmp_path):
    arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:OriginVerifySecret-AbCdEf"
    asked = []

    def loader(name):
        asked.append(name)
        return PREVIOUS

    with_arn = settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path), "COUNTERSIGN_ORIGIN_SECRET": arn})
    assert load_previous_origin_secret(with_arn, loader) == PREVIOUS and asked == [arn]
    assert load_previous_origin_secret(with_arn, lambda name: None) is None  # never rotated
    assert load_previous_origin_secret(with_arn, lambda name: "short") is None
    literal = settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path), "COUNTERSIGN_ORIGIN_SECRET": CURRENT})
    assert load_previous_origin_secret(literal, loader) is None and asked == [arn]
