"""What the gateway does with an upstream tool's schema and a call's arguments: a schema is used
without fetching anything it points to, one that cannot be used refuses the call in words, and the
person sees every argument of a call before they say yes."""

import json
import socket
import threading

import pytest

from countersign.core.cards import CardState

from .flows import add, call, text

pytestmark = pytest.mark.anyio

UNUSABLE = "The upstream tool's approved schema is not a JSON Schema countersign can check arguments with"


class Listener:
    """A loopback port that counts who connects (a ``$ref`` must never make the server fetch it)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.hits = 0
        self.running = True
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/schema.json"

    def _accept(self):
        while self.running:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.hits += 1
            conn.close()

    def close(self):
        self.running = False
        self.thread.join()
        self.sock.close()


async def test_a_schema_is_used_without_fetching_its_refs_and_an_unusable_one_refuses_in_words(gw, upstream):
    listener = Listener()
    try:
        obj = lambda prop: {"type": "object", "properties": {"path": prop}}  # noqa: E731
        upstream.write(".schemas", json.dumps({
            "remote_ref": obj({"$ref": listener.url}), "remote_read": obj({"$ref": listener.url}),
            "unknown_type": obj({"type": "frobnicate"}), "nowhere_ref": obj({"$ref": "#/definitions/nope"}),
            "bad_pattern": obj({"type": "string", "pattern": "(["}),
            "local_ref": {"type": "object", "properties": {"path": {"$ref": "#/$defs/name"}},
                          "$defs": {"name": {"type": "string", "maxLength": 5}}},
            "read": ["remote_read"],
        }))
        add(gw, url=upstream.url)
        results = {}
        for tool in ("remote_ref", "remote_read", "unknown_type", "nowhere_ref", "bad_pattern"):
            results[tool] = await call(gw, f"fs__{tool}", {"path": "a.txt"})
        too_long = await call(gw, "fs__local_ref", {"path": "far-too-long.txt"})
        held = await call(gw, "fs__local_ref", {"path": "a.txt"})
    finally:
        listener.close()
    for tool, result in results.items():
        assert result.is_error and text(result).startswith(UNUSABLE), (tool, text(result))
        assert "nothing was sent" in text(result)
    assert too_long.is_error and "path: 'far-too-long.txt' is too long" in text(too_long)
    assert held.structured_content["status"] == "pending"  # a $ref inside the schema still works
    assert listener.hits == 0  # nothing fetched what the upstream's schema pointed to
    assert upstream.calls() == []
    done = gw.confirm_on_page(held.structured_content["confirmationId"])
    assert done.state is CardState.COMPLETED and upstream.calls() == ["local_ref a.txt"]
