"""Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document): fetching a
client's ``client_id`` URL without letting a client turn the server into a proxy (SSRF).

The fetch, in order:

1. the URL: ``https://`` only, a host, a path other than ``/``, no user info, fragment or dot
   segments, at most 2000 characters;
2. the host's addresses (every one of them, resolved once): refused if any is private, loopback,
   link-local, multicast, reserved or otherwise not global, unless this fetcher was made with
   ``allow_private=True`` (the tests do, for a document served on 127.0.0.1);
3. a TLS connection to exactly the address that was checked (no second lookup a rebinding DNS
   server could answer differently), the certificate verified for the host name;
4. ``GET`` with no redirect followed (any answer but 200 is refused), the whole exchange within
   ``timeout`` seconds and the body within ``max_bytes``, whatever the server says or how slowly
   it trickles;
5. the document: a JSON object whose ``client_id`` is exactly the URL, with redirect URIs this
   server accepts (:mod:`.redirects`), for a public client (``token_endpoint_auth_method``
   ``none``, no secret).

Standard library only: the MCP function uses it through the SDK's provider, and nothing here may
depend on the SDK.
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from ...core.addresses import refused_address
from .redirects import BadRedirect, check_redirect_uri

MAX_URL = 2000
MAX_BYTES = 5 * 1024
TIMEOUT = 5.0
MAX_REDIRECT_URIS = 10
MAX_NAME = 100
CACHE_SECONDS = (60, 600, 24 * 3600)  # at least, by default, at most
_MAX_AGE = re.compile(r"max-age\s*=\s*(\d+)")


class DocumentRefused(Exception):
    """Why a client's metadata document cannot be used (safe to show the client)."""


def is_document_url(client_id: str) -> bool:
    """Whether ``client_id`` is meant as a metadata document's URL (any ``https:`` client id)."""
    return client_id.lower().startswith("https:")


def check_url(url: str) -> tuple[str, int, str]:
    """(host, port, path and query) of a usable document URL, else :class:`DocumentRefused`."""
    if len(url) > MAX_URL or any(c.isspace() or ord(c) < 0x20 for c in url):
        raise DocumentRefused("the client_id URL is too long or has spaces or control characters")
    try:
        parts = urlsplit(url)
        port = parts.port or 443
    except ValueError:
        raise DocumentRefused("the client_id is not a URL") from None
    if parts.scheme != "https":
        raise DocumentRefused("a client_id metadata document must be served over https")
    if not parts.hostname or "@" in parts.netloc:
        raise DocumentRefused("the client_id URL needs a host and no user name or password")
    if parts.fragment or url.endswith("#"):
        raise DocumentRefused("the client_id URL has no fragment")
    segments = [unquote(segment) for segment in parts.path.split("/")]  # (%2e%2e is .. to most servers)
    if parts.path in ("", "/") or "." in segments or ".." in segments:
        raise DocumentRefused("the client_id URL needs a path (not /) without . or .. segments")
    return parts.hostname, port, parts.path + (f"?{parts.query}" if parts.query else "")


Resolver = Callable[[str, int], list[str]]


def resolve(host: str, port: int) -> list[str]:
    """Every address of ``host`` (an IP literal stands for itself)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


class _Pinned(http.client.HTTPSConnection):
    """An HTTPS connection to one checked address, verifying the certificate for the host name."""

    def __init__(self, host: str, port: int, address: str, context: ssl.SSLContext, timeout: float):
        super().__init__(host, port, context=context, timeout=timeout)
        self._address = address
        self._tls = context

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)


@dataclass
class Fetched:
    document: dict[str, Any]
    cache_seconds: int


class DocumentFetcher:
    """Fetches and checks metadata documents. ``allow_private`` and ``ssl_context`` exist for
    tests that serve a document on loopback with their own certificate authority; the server
    never sets them."""

    def __init__(self, *, timeout: float = TIMEOUT, max_bytes: int = MAX_BYTES, allow_private: bool = False,
                 ssl_context: ssl.SSLContext | None = None, resolver: Resolver = resolve):
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.allow_private = allow_private
        self.ssl_context = ssl_context
        self.resolver = resolver

    def fetch(self, url: str) -> Fetched:
        """The checked document at ``url``, or :class:`DocumentRefused` saying why not."""
        host, port, target = check_url(url)
        deadline = time.monotonic() + self.timeout
        try:
            addresses = self.resolver(host, port)
        except (OSError, UnicodeError):
            raise DocumentRefused("the client_id URL's host could not be resolved") from None
        if not addresses:
            raise DocumentRefused("the client_id URL's host has no address")
        if not self.allow_private and any(refused_address(a) for a in addresses):
            raise DocumentRefused("the client_id URL points at a private or reserved address")
        body, max_age = self._get(host, port, target, addresses[0], deadline)
        try:
            document = json.loads(body)
        except (UnicodeDecodeError, ValueError):
            raise DocumentRefused("the client metadata document is not JSON") from None
        return Fetched(check_document(document, url), max_age)

    def _get(self, host: str, port: int, target: str, address: str, deadline: float) -> tuple[bytes, int]:
        context = self.ssl_context or ssl.create_default_context()
        connection = _Pinned(host, port, address, context, timeout=self._left(deadline))
        try:
            connection.request("GET", target, headers={"Accept": "application/json", "User-Agent": "countersign"})
            response = connection.getresponse()
            if response.status != 200:
                raise DocumentRefused(f"the client metadata document answered HTTP {response.status} (not 200)")
            length = response.getheader("content-length")
            if length is not None and length.isdigit() and int(length) > self.max_bytes:
                raise DocumentRefused(f"the client metadata document is larger than {self.max_bytes} bytes")
            chunks: list[bytes] = []
            size = 0
            while True:
                if connection.sock is not None:
                    connection.sock.settimeout(self._left(deadline))
                chunk = response.read1(1024)  # whatever arrived, so a trickle still meets the deadline
                if not chunk:
                    break
                size += len(chunk)
                if size > self.max_bytes:
                    raise DocumentRefused(f"the client metadata document is larger than {self.max_bytes} bytes")
                chunks.append(chunk)
                self._left(deadline)
            return b"".join(chunks), _cache_seconds(response.getheader("cache-control") or "")
        except TimeoutError:
            raise DocumentRefused(f"the client metadata document took longer than {self.timeout:g} s") from None
        except ssl.SSLError:
            raise DocumentRefused("the client metadata document's TLS certificate could not be verified") from None
        except (OSError, http.client.HTTPException):
            raise DocumentRefused("the client metadata document could not be fetched") from None
        finally:
            connection.close()

    def _left(self, deadline: float) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return left


def _cache_seconds(cache_control: str) -> int:
    least, default, most = CACHE_SECONDS
    found = _MAX_AGE.search(cache_control.lower())
    return min(max(int(found.group(1)), least), most) if found else default


def _name(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise DocumentRefused("client_name must be a string")
    cleaned = "".join(c for c in value if c.isprintable()).strip()
    return cleaned[:MAX_NAME] or None


def check_document(document: Any, url: str) -> dict[str, Any]:
    """The metadata this server keeps from a document fetched from ``url``."""
    if not isinstance(document, dict):
        raise DocumentRefused("the client metadata document is not a JSON object")
    if document.get("client_id") != url:
        raise DocumentRefused("the document's client_id is not exactly the URL it was fetched from")
    if document.get("token_endpoint_auth_method", "none") != "none" or any(
            k in document for k in ("client_secret", "client_secret_expires_at")):
        raise DocumentRefused("only public clients (token_endpoint_auth_method none, no secret) may connect")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not 1 <= len(uris) <= MAX_REDIRECT_URIS:
        raise DocumentRefused(f"redirect_uris must list 1 to {MAX_REDIRECT_URIS} URLs")
    try:
        redirect_uris = [check_redirect_uri(u) for u in uris]
    except BadRedirect as bad:
        raise DocumentRefused(str(bad)) from None
    grant_types = document.get("grant_types", ["authorization_code"])
    if not isinstance(grant_types, list) or "authorization_code" not in grant_types or not set(grant_types) <= {
            "authorization_code", "refresh_token"}:
        raise DocumentRefused("grant_types must include authorization_code and may add only refresh_token")
    response_types = document.get("response_types", ["code"])
    if response_types != ["code"]:
        raise DocumentRefused("response_types must be [\"code\"]")
    return {
        "client_id": url,
        "client_name": _name(document.get("client_name")),
        "redirect_uris": redirect_uris,
        "grant_types": sorted(set(grant_types)),
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
