"""The client a webhook delivery and a push POST with (countersign.notify.outbound): one TLS
context made once for the process, and it still verifies the server it talks to."""

from __future__ import annotations

import httpx2
import pytest

from countersign.notify import outbound
from tests.support.oauth import start_document_host


def test_a_host_whose_certificate_no_trusted_authority_signed_is_refused_before_any_request():
    host = start_document_host()  # https on 127.0.0.1, its certificate signed by a test CA nobody trusts
    host.serve_json("/hook", {"ok": True})
    try:
        with outbound.client(5) as client, pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            client.post(host.url("/hook"), content=b"{}")
    finally:
        host.stop()
    assert host.requests == []

