"""A push service on 127.0.0.1 that plays the browser too: it makes each subscription's keys (a
P-256 key pair and an auth secret, as a browser does), and for every POST it gets it checks the
VAPID ``Authorization`` (the JWT's ES256 signature under the ``k=`` key, its ``aud`` and ``exp``)
and decrypts the body with the subscription's private key (RFC 8291, ``http_ece``). It answers
with the statuses a test queues (201 once the queue is empty)."""

from __future__ import annotations

import base64
import json
import os
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import http_ece
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Device:
    """One browser's subscription: what the page posts, and the private half kept here."""

    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes

    @property
    def p256dh(self) -> str:
        return b64url(self.private_key.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint))

    def as_json(self) -> dict:
        """What ``PushSubscription.toJSON()`` gives the page."""
        return {"endpoint": self.endpoint, "expirationTime": None,
                "keys": {"p256dh": self.p256dh, "auth": b64url(self.auth)}}


@dataclass
class Push:
    """One POST, checked: the plaintext, the JWT's claims and key, the headers."""

    path: str
    headers: dict[str, str]  # names lower-cased
    plaintext: bytes | None
    claims: dict | None
    vapid_key: str | None  # the k= of the Authorization header
    problem: str | None  # why the request is not a valid Web Push request (None: it is)

    @property
    def message(self) -> dict:
        assert self.plaintext is not None, self.problem
        return json.loads(self.plaintext)


@dataclass
class PushService:
    host: str
    port: int
    devices: dict[str, Device] = field(default_factory=dict)  # path → device
    pushes: list[Push] = field(default_factory=list)
    statuses: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def device(self) -> Device:
        path = f"/push/{secrets.token_urlsafe(16)}"
        device = Device(self.origin + path, ec.generate_private_key(ec.SECP256R1()), os.urandom(16))
        self.devices[path] = device
        return device

    def answer(self, *statuses: int) -> None:
        with self.lock:
            self.statuses.extend(statuses)

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Push]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.pushes) >= count:
                    return list(self.pushes)
            time.sleep(0.02)
        raise AssertionError(f"expected {count} pushes, got {len(self.pushes)}")

    def check(self, path: str, headers: dict[str, str], body: bytes) -> Push:
        device = self.devices.get(path)
        if device is None:
            return Push(path, headers, None, None, None, "no such subscription")
        claims, key, problem = verify_vapid(headers.get("authorization", ""), self.origin)
        if headers.get("content-encoding") != "aes128gcm":
            problem = problem or "not aes128gcm"
        try:
            plaintext = http_ece.decrypt(body, private_key=device.private_key, auth_secret=device.auth,
                                         version="aes128gcm")
        except Exception as exc:  # noqa: BLE001 (the stand-in reports what failed)
            return Push(path, headers, None, claims, key, f"does not decrypt: {exc!r}")
        return Push(path, headers, plaintext, claims, key, problem)


def verify_vapid(authorization: str, audience: str) -> tuple[dict | None, str | None, str | None]:
    """(the JWT's claims, the k= key, a problem or None) of ``vapid t=<JWT>,k=<key>``."""
    if not authorization.startswith("vapid "):
        return None, None, "no vapid Authorization"
    fields = dict(part.strip().split("=", 1) for part in authorization[len("vapid "):].split(","))
    token, key = fields.get("t", ""), fields.get("k", "")
    try:
        header_b64, claims_b64, signature_b64 = token.split(".")
        header, claims = json.loads(unb64url(header_b64)), json.loads(unb64url(claims_b64))
        public = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(key))
        raw = unb64url(signature_b64)
        signature = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        public.verify(signature, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
    except (ValueError, InvalidSignature) as exc:
        return None, key or None, f"the JWT does not verify: {exc!r}"
    if header != {"typ": "JWT", "alg": "ES256"}:
        return claims, key, f"JWT header {header}"
    if claims.get("aud") != audience:
        return claims, key, f"aud {claims.get('aud')!r} is not {audience!r}"
    if not time.time() < claims.get("exp", 0) <= time.time() + 24 * 3600:
        return claims, key, "exp is not within the next 24 h"
    if not str(claims.get("sub", "")).startswith(("mailto:", "https://")):
        return claims, key, "no sub"
    return claims, key, None


@contextmanager
def push_service() -> Iterator[PushService]:
    service: PushService

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            push = service.check(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            with service.lock:
                service.pushes.append(push)
                status = service.statuses.pop(0) if service.statuses else 201
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    service = PushService(*server.server_address[:2])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()
