"""OAuth test support: a local HTTPS host for client metadata documents (its own throwaway CA),
the Python SDK's ``OAuthClientProvider`` driven from a worker thread, and the page's consent
over HTTP. Every code, verifier and token the clients see joins the end-of-run secret scan."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import json
import queue
import ssl
import tempfile
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from countersign.identity.oauth.cimd import DocumentFetcher
from tests.support.harness import SECRETS, TRANSCRIPT

# -- an HTTPS host on 127.0.0.1 -------------------------------------------------------------------


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """(CA certificate, leaf certificate, leaf key) for localhost and 127.0.0.1."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "countersign test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])).issuer_name(ca_name)
            .public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = folder / "ca.pem", folder / "leaf.pem", folder / "leaf.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(leaf_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
    return paths


@dataclass
class Served:
    body: bytes
    status: int = 200
    delay: float = 0.0  # seconds to wait before the body (a slow host)
    trickle: bool = False  # send the body a byte at a time, each after ``delay``


@dataclass
class DocumentHost:
    """``https://localhost:PORT/...`` serving :class:`Served` answers, and the requests it got."""

    port: int
    ca_file: Path
    documents: dict[str, Served] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    def url(self, path: str) -> str:
        return f"https://localhost:{self.port}{path}"

    def serve_json(self, path: str, document: dict, **kw) -> str:
        self.documents[path] = Served(json.dumps(document).encode(), **kw)
        return self.url(path)

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))

    def fetcher(self, **kw) -> DocumentFetcher:
        """A fetcher in the explicit test setting: loopback allowed, this host's CA trusted."""
        return DocumentFetcher(allow_private=True, ssl_context=self.client_context(), **kw)

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def start_document_host() -> DocumentHost:
    folder = Path(tempfile.mkdtemp(prefix="countersign-cimd-"))
    ca, leaf, key = _certificates(folder)
    host = DocumentHost(0, ca)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            host.requests.append(self.path)
            served = host.documents.get(self.path)
            if served is None:
                self.send_error(404)
                return
            self.send_response(served.status)
            self.send_header("Content-Type", "application/json")
            if not served.trickle:
                self.send_header("Content-Length", str(len(served.body)))
            self.end_headers()
            if served.trickle:
                for byte in served.body:
                    time.sleep(served.delay)
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
            else:
                time.sleep(served.delay)
                self.wfile.write(served.body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(leaf), str(key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    host.port, host._server = server.server_address[1], server
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return host


# -- the Python SDK's OAuth client, driven from a test --------------------------------------------


class MemoryStorage:
    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens
        SECRETS.update(t for t in (tokens.access_token, tokens.refresh_token) if t)

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


class SecretRecorder(httpx2.AsyncBaseTransport):
    """Records what the OAuth exchange carries (codes, verifiers, tokens) into the secret scan,
    and the MCP responses into the transcript the scan reads."""

    def __init__(self, inner: httpx2.AsyncBaseTransport | None = None):
        self.inner = inner or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request):
        body = await request.aread()
        if request.url.path.startswith("/oauth/"):
            form = parse_qs(body.decode("utf-8", "replace"))
            SECRETS.update(v for k in ("code", "code_verifier", "refresh_token", "token") for v in form.get(k, []))
        response = await self.inner.handle_async_request(request)
        content = await response.aread()
        if request.url.path.startswith("/oauth/") and content.startswith(b"{"):
            found = json.loads(content)
            SECRETS.update(str(found[k]) for k in ("access_token", "refresh_token") if found.get(k))
        if request.url.path == "/mcp":
            TRANSCRIPT.append(content)
        return httpx2.Response(response.status_code, headers=response.headers, content=content, request=request)


def callback_result(url: str) -> AuthorizationCodeResult:
    query = parse_qs(urlsplit(url).query)
    if "code" not in query:
        raise RuntimeError(f"the authorization was not granted: {query.get('error')}")
    SECRETS.add(query["code"][0])
    return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0],
                                   iss=query.get("iss", [None])[0])


class PythonAgent:
    """An agent using ``OAuthClientProvider``: :meth:`call` runs tool calls in a worker thread;
    when the SDK wants a person it hands the authorize URL to :meth:`authorize_url` and waits
    for :meth:`answer` with the URL the browser was sent back to."""

    REDIRECT = "http://127.0.0.1:33418/callback"

    def __init__(self, mcp_url: str, name: str = "Python agent", client_metadata_url: str | None = None,
                 transport: httpx2.AsyncBaseTransport | None = None):
        self.mcp_url = mcp_url
        self.storage = MemoryStorage()
        self.urls: queue.Queue[str] = queue.Queue()
        self.callbacks: queue.Queue[str] = queue.Queue()
        self.transport = transport
        self.provider = OAuthClientProvider(
            mcp_url, OAuthClientMetadata(client_name=name, redirect_uris=[self.REDIRECT]), self.storage,
            self._redirect, self._callback, client_metadata_url=client_metadata_url,
        )
        self._thread: threading.Thread | None = None
        self._box: dict = {}

    async def _redirect(self, url: str) -> None:
        self.urls.put(url)

    async def _callback(self) -> AuthorizationCodeResult:
        url = await asyncio.to_thread(self.callbacks.get, True, 120)
        return callback_result(url)

    async def _calls(self, calls):
        out = []
        async with httpx2.AsyncClient(auth=self.provider, timeout=30, transport=SecretRecorder(self.transport)) as http:
            async with Client(streamable_http_client(self.mcp_url, http_client=http)) as client:
                for name, arguments in calls:
                    result = await client.call_tool(name, arguments)
                    out.append(result.structured_content or {"isError": result.is_error})
        return out

    def start(self, calls: list[tuple[str, dict]]) -> PythonAgent:
        def target():
            try:
                self._box["value"] = asyncio.run(self._calls(calls))
            except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
                self._box["error"] = exc
            self.urls.put("")  # wakes a test waiting for an authorize URL that will not come

        self._box = {}
        self._thread = threading.Thread(target=target, daemon=True)
        self._thread.start()
        return self

    def authorize_url(self, timeout: float = 30) -> str:
        url = self.urls.get(timeout=timeout)
        if not url:
            self.result()
            raise AssertionError("the agent finished without asking for authorization")
        return url

    def answer(self, callback_url: str) -> None:
        self.callbacks.put(callback_url)

    def result(self, timeout: float = 60):
        assert self._thread is not None
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError("the agent did not finish")
        if "error" in self._box:
            raise self._box["error"]
        return self._box["value"]

    def run(self, calls: list[tuple[str, dict]]):
        """Tool calls that need no person (the agent already holds tokens)."""
        return self.start(calls).result()
