"""A stand-in for Slack's Web API on 127.0.0.1 (``WebClient(base_url=...)`` points at it), and
signed requests as Slack sends them to the app's request URLs.

It answers ``auth.test`` for the bot tokens it was told of (``invalid_auth`` for any other),
``chat.postMessage``, ``chat.update`` and ``chat.postEphemeral``, and records every call: the
method, the JSON body and the bearer token.
"""

from __future__ import annotations

import itertools
import json
import secrets
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from slack_sdk.signature import SignatureVerifier


@dataclass
class Bot:
    token: str
    team_id: str
    team_name: str = "Acme Slack"
    user_id: str = "UBOT0001"
    secret: str = field(default_factory=lambda: secrets.token_hex(16))


def new_bot() -> Bot:
    return Bot(token=f"xoxb-{secrets.randbelow(10**12)}-{secrets.token_hex(12)}",
               team_id="T" + secrets.token_hex(5).upper())


@dataclass
class Call:
    method: str
    body: dict[str, Any]
    token: str


class SlackStandIn:
    def __init__(self) -> None:
        self.bots: dict[str, Bot] = {}
        self.calls: list[Call] = []
        self.failing: dict[str, str] = {}  # method → the error Slack answers it with
        self._ts = itertools.count(1)
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                method = self.path.rsplit("/", 1)[-1]
                token = (self.headers.get("authorization") or "").removeprefix("Bearer ")
                kind = self.headers.get("content-type") or ""
                body = json.loads(raw) if raw and kind.startswith("application/json") else \
                    dict(urllib.parse.parse_qsl(raw.decode()))
                answer = stand_in.answer(method, body, token)
                out = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json; charset=utf-8")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/api/"

    def add(self, bot: Bot) -> Bot:
        self.bots[bot.token] = bot
        return bot

    def answer(self, method: str, body: dict[str, Any], token: str) -> dict[str, Any]:
        self.calls.append(Call(method, body, token))
        bot = self.bots.get(token)
        if bot is None:
            return {"ok": False, "error": "invalid_auth"}
        if method in self.failing:
            return {"ok": False, "error": self.failing[method]}
        if method == "auth.test":
            return {"ok": True, "url": "https://acme.slack.com/", "team": bot.team_name, "team_id": bot.team_id,
                    "user": "countersign", "user_id": bot.user_id, "bot_id": "B0001"}
        ts = f"{int(time.time())}.{next(self._ts):06d}"
        if method == "chat.postMessage":
            channel = body["channel"]
            return {"ok": True, "channel": "D" + channel[1:] if channel.startswith("U") else channel, "ts": ts,
                    "message": {"text": body.get("text"), "blocks": body.get("blocks")}}
        if method == "chat.update":
            return {"ok": True, "channel": body["channel"], "ts": body["ts"], "text": body.get("text")}
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": ts}
        return {"ok": False, "error": "unknown_method"}

    def of(self, method: str, token: str | None = None) -> list[Call]:
        return [c for c in self.calls if c.method == method and (token is None or c.token == token)]

    def wait_for(self, method: str, count: int = 1, token: str | None = None, timeout: float = 10) -> list[Call]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.of(method, token)
            if len(found) >= count:
                return found
            time.sleep(0.02)
        raise AssertionError(f"Slack got {len(self.of(method, token))} {method}, not {count}")

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def signed_headers(secret: str, body: bytes, timestamp: int | str) -> dict[str, str]:
    """The headers Slack sends with ``body``, signed with the app's signing secret at ``timestamp``."""
    signature = SignatureVerifier(secret).generate_signature(timestamp=str(timestamp), body=body)
    assert signature is not None
    return {"X-Slack-Request-Timestamp": str(timestamp), "X-Slack-Signature": signature,
            "Content-Type": "application/x-www-form-urlencoded"}


def action_body(team_id: str, user_id: str, action_id: str, card_id: str, channel: str = "D0USER01",
                message_ts: str = "1700000000.000001") -> bytes:
    """A ``block_actions`` payload as Slack posts it for a click on a card's button."""
    payload = {
        "type": "block_actions",
        "team": {"id": team_id, "domain": "acme"},
        "user": {"id": user_id, "username": "pat", "team_id": team_id},
        "api_app_id": "A0001",
        "container": {"type": "message", "message_ts": message_ts, "channel_id": channel, "is_ephemeral": False},
        "channel": {"id": channel, "name": "directmessage"},
        "message": {"type": "message", "ts": message_ts, "text": "Waiting for your answer"},
        "response_url": "https://hooks.slack.com/actions/T/1/never-called",
        "actions": [{"type": "button", "action_id": action_id, "block_id": "countersign_card", "value": card_id,
                     "action_ts": "1700000001.000001"}],
    }
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()


def command_body(team_id: str, user_id: str, text: str) -> bytes:
    """The ``/countersign`` slash command as Slack posts it."""
    return urllib.parse.urlencode({"token": "deprecated", "team_id": team_id, "team_domain": "acme",
                                   "channel_id": "D0USER01", "user_id": user_id, "user_name": "pat",
                                   "command": "/countersign", "text": text,
                                   "response_url": "https://hooks.slack.com/commands/T/1/never-called",
                                   "trigger_id": "1.2.3"}).encode()
