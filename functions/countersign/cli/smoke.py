"""``countersign smoke``: file a card over MCP at a running deployment, confirm it on the confirm API
as the smoke person, check how it ended, clean up; one line and an exit status.

``countersign smoke setup`` (once, by an operator in front of the store) makes the smoke workspace
and the two credentials the run uses (:mod:`countersign.identity.smoke`); ``countersign smoke --url``
needs nothing else: no store, no AWS access, only the deployment's public URL. The same code runs
against the local server (``http://`` on loopback only) and a deployed stack (``https://``), and in
the stack's optional canary (``countersign.handlers.smoke``).

The steps, each named in the line when it fails: ``connect`` (MCP over Streamable HTTP, with the
agent token), ``clear`` (smoke cards an earlier run left waiting are withdrawn), ``file``
(``request_confirmation`` of ``countersign_smoke``), ``read`` and ``confirm`` (the confirm API with
the smoke session), ``status`` (``get_confirmation_status`` says completed, with this run's result),
``once`` (a second confirm is refused as already answered, and the status still says completed),
``cleanup`` (nothing of the smoke connection waits), and with ``--origin-url`` (the stack's
``OriginApiUrl``) ``origin``: a request straight to the REST API, around CloudFront, is refused by
AWS WAF (403 with its ``not_through_cloudfront`` body), not by a function it would have invoked.
Exit status 0 when every step passed, 1 when one failed, 2 when the command could not start
(usage, credentials).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..core.ids import new_id
from ..core.smoke import SMOKE_EMAIL, SMOKE_TOOL
from ..settings import ConfigError
from .common import store_options

LOOPBACK = ("localhost", "127.0.0.1", "::1")
SESSION_COOKIE = "__Host-cs_session"
TIMEOUT_SECONDS = 30
CREDENTIALS_VARIABLE = "COUNTERSIGN_SMOKE_CREDENTIALS"  # the credentials' JSON itself (the canary's function)
# The code of AWS WAF's refusal on the REST API's stage (template.yaml: OriginWebAcl's body); a
# function's own refusal of a request without the origin header says "forbidden".
NOT_THROUGH_CLOUDFRONT = "not_through_cloudfront"


class StepFailed(Exception):
    def __init__(self, step: str, message: str):
        super().__init__(message)
        self.step, self.message = step, message


@dataclass(frozen=True)
class Outcome:
    ok: bool
    line: str


def check_url(url: str) -> str:
    """The deployment's origin (``scheme://host[:port]``) from ``url``: https, or http on loopback
    only. :class:`ConfigError` otherwise."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError("--url", f"{url!r} is not an http(s) URL")
    if parts.scheme == "http" and parts.hostname not in LOOPBACK:
        raise ConfigError("--url", f"{url!r}: plain http only to this machine (localhost, 127.0.0.1, ::1); "
                                   "a deployment is reached over https")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ConfigError("--url", f"{url!r}: give the deployment's origin, without a user, query or fragment")
    return f"{parts.scheme}://{parts.netloc}"


def check_origin_url(url: str) -> str:
    """The REST API's own URL (the stack's ``OriginApiUrl``, ``https://<id>.execute-api.<region>.
    amazonaws.com/<stage>``), without a trailing slash. :class:`ConfigError` otherwise."""
    parts = urlsplit(url.strip())
    if parts.scheme != "https" or not parts.hostname or parts.query or parts.fragment or parts.username:
        raise ConfigError("--origin-url", f"{url!r} is not the stack's OriginApiUrl (https://<id>.execute-api."
                                          "<region>.amazonaws.com/<stage>)")
    return url.strip().rstrip("/")


async def check_origin_closed(http, origin_url: str) -> str:
    """Send an MCP initialize straight to the REST API, without CloudFront's origin header: AWS
    WAF must refuse it. What it proved, or :class:`StepFailed`."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "countersign-smoke", "version": "1"}}}
    response = await http.post(f"{origin_url}/mcp", json=body, headers={
        "Accept": "application/json, text/event-stream", "Content-Type": "application/json"})
    try:
        answer = response.json()
    except ValueError:
        answer = None
    code = (answer.get("error") or {}).get("code") if isinstance(answer, dict) and isinstance(
        answer.get("error"), dict) else None
    if response.status_code == 403 and code == NOT_THROUGH_CLOUDFRONT:
        return "a direct request to the REST API refused by AWS WAF"
    if response.status_code == 403 and code == "forbidden":
        raise StepFailed("origin", "a direct request to the REST API reached the function (its own 403): AWS WAF "
                                   "is not on the API's stage, so such requests spend invocations and the throttle")
    said = f" ({code})" if code else ""
    raise StepFailed("origin", f"a direct request to the REST API answered {response.status_code}{said}, not AWS "
                               "WAF's 403")


def parse_credentials(text: str, where: str) -> dict[str, str]:
    try:
        found = json.loads(text)
    except ValueError:
        found = None
    needed = ("agent_token", "session", "csrf_token")
    if not isinstance(found, dict) or not all(isinstance(found.get(k), str) and found[k] for k in needed):
        raise ConfigError(where, f"not the smoke credentials `countersign smoke setup` writes (JSON with "
                                 f"{', '.join(needed)})")
    return {k: found[k] for k in needed}


# -- the run --------------------------------------------------------------------------------------


async def run_smoke(origin: str, credentials: dict[str, str], *, timeout: float = TIMEOUT_SECONDS,
                    origin_url: str | None = None) -> Outcome:
    """The smoke test against ``origin`` (as :func:`check_url` gives it), and with ``origin_url``
    (:func:`check_origin_url`) the check that the REST API answers only CloudFront. Never raises
    for what the deployment does: a failure is an :class:`Outcome` naming the step."""
    # Here, not at the CLI's start: the MCP client and the HTTP library.
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    started = time.monotonic()
    run = new_id("smoke_")
    filed: str | None = None
    step = "connect"
    agent_http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {credentials['agent_token']}"},
                                    timeout=timeout, follow_redirects=False)
    page_http = httpx2.AsyncClient(base_url=origin, timeout=timeout, follow_redirects=False, headers={
        "Cookie": f"{SESSION_COOKIE}={credentials['session']}", "Origin": origin,
        "X-CSRF-Token": credentials["csrf_token"], "Accept": "application/json"})
    try:
        async with agent_http, page_http, Client(streamable_http_client(f"{origin}/mcp", http_client=agent_http),
                                                 read_timeout_seconds=timeout) as agent:
            async def tool(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
                result = await agent.call_tool(name, arguments)
                content = result.structured_content
                if result.is_error or not isinstance(content, dict):
                    text = " ".join(getattr(block, "text", "") for block in result.content)
                    raise StepFailed(step, f"{name} answered an error: {text[:300]}")
                return content

            step = "clear"
            left = await _withdraw_waiting(tool)
            step = "file"
            held = await tool("request_confirmation", {"tool": SMOKE_TOOL, "arguments": {"run": run}})
            filed = held.get("confirmationId")
            if held.get("status") != "pending" or not isinstance(filed, str):
                raise StepFailed(step, f"request_confirmation did not hold a card: status {held.get('status')!r}")
            step = "read"
            card = await _page(page_http, "GET", f"/api/cards/{filed}", 200, step)
            if card.get("state") != "pending" or card.get("tool") != SMOKE_TOOL:
                raise StepFailed(step, f"the card reads {card.get('state')!r} for {card.get('tool')!r}, not a "
                                       "pending smoke card")
            step = "confirm"
            card = await _page(page_http, "POST", f"/api/cards/{filed}/confirm", 200, step)
            if card.get("state") != "completed":
                raise StepFailed(step, f"confirmed, the card reads {card.get('state')!r}, not 'completed'")
            step = "status"
            status = await tool("get_confirmation_status", {"confirmation_id": filed})
            if status.get("status") != "completed" or (status.get("result") or {}).get("run") != run:
                raise StepFailed(step, f"the agent's status says {status.get('status')!r} with result "
                                       f"{status.get('result')!r}, not completed for run {run}")
            step = "once"
            again = await _page(page_http, "POST", f"/api/cards/{filed}/confirm", 409, step)
            if (again.get("error") or {}).get("code") != "already_answered":
                raise StepFailed(step, f"a second confirm was refused as {again.get('error')!r}, not "
                                       "already_answered")
            status = await tool("get_confirmation_status", {"confirmation_id": filed})
            if status.get("status") != "completed":
                raise StepFailed(step, f"after a second confirm the status says {status.get('status')!r}")
            step = "cleanup"
            if await _withdraw_waiting(tool):
                raise StepFailed(step, "smoke cards were still waiting after the run; withdrawn")
            listed = await tool("list_confirmations", {})
            if listed.get("total") != 0:
                raise StepFailed(step, f"{listed.get('total')} smoke card(s) still wait")
            done, filed = filed, None  # nothing left to withdraw
            closed = ""
            if origin_url is not None:
                step = "origin"
                async with httpx2.AsyncClient(timeout=timeout, follow_redirects=False) as direct:
                    closed = f"; {await check_origin_closed(direct, origin_url)}"
    except Exception as exc:  # noqa: BLE001  # the deployment's trouble, named by the step it broke
        failed = _step_failed(exc)
        if failed is not None:
            return Outcome(False, _failed(origin, failed.step, failed.message, started, filed))
        return Outcome(False, _failed(origin, step, _describe(exc), started, filed))
    extra = f"; withdrew {left} left by an earlier run" if left else ""
    return Outcome(True, f"smoke ok: {origin} card {done} filed over MCP, confirmed on the confirm API, "
                         f"completed once, nothing waiting{extra}{closed} ({time.monotonic() - started:.1f} s)")


async def _withdraw_waiting(tool) -> int:
    """Withdraw every card the smoke connection has waiting (its own earlier runs'): how many."""
    withdrawn = 0
    listed = await tool("list_confirmations", {})
    for entry in listed.get("confirmations") or []:
        await tool("cancel_confirmation", {"confirmation_id": entry["confirmationId"]})
        withdrawn += 1
    return withdrawn


async def _page(http, method: str, path: str, expected: int, step: str) -> dict[str, Any]:
    response = await http.request(method, path)
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.status_code != expected or not isinstance(body, dict):
        code = (body or {}).get("error", {}).get("code") if isinstance(body, dict) else None
        said = f" ({code})" if code else ""
        raise StepFailed(step, f"{method} {path} answered {response.status_code}{said}, expected {expected}")
    return body


def _step_failed(exc: BaseException) -> StepFailed | None:
    """The :class:`StepFailed` ``exc`` is or carries (the MCP client's task group wraps what its
    body raised in an exception group)."""
    if isinstance(exc, StepFailed):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _step_failed(inner)
            if found is not None:
                return found
    return None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        return _describe(exc.exceptions[0])
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


def _failed(origin: str, step: str, message: str, started: float, filed: str | None) -> str:
    left = f"; card {filed} may still wait (the next run withdraws it)" if filed else ""
    return f"smoke FAILED at {step}: {message} ({origin}{left}, {time.monotonic() - started:.1f} s)"


# -- the commands ---------------------------------------------------------------------------------


def load_credentials(args) -> dict[str, str]:
    if args.credentials:
        path = Path(args.credentials).expanduser()
        try:
            return parse_credentials(path.read_text(encoding="utf-8"), "--credentials")
        except OSError as exc:
            raise ConfigError("--credentials", f"cannot read {path}: {exc.strerror or exc}") from None
    if args.secret:
        from ..platform.secrets_manager import read_secret  # the aws extra, only when asked

        return parse_credentials(read_secret(args.secret), "--secret")
    if os.environ.get(CREDENTIALS_VARIABLE):
        return parse_credentials(os.environ[CREDENTIALS_VARIABLE], CREDENTIALS_VARIABLE)
    raise ConfigError("--credentials", "name the smoke credentials: --credentials FILE or --secret ARN (what "
                                       "`countersign smoke setup` wrote)")


def cmd_smoke(args) -> int:
    if args.action == "setup":
        return cmd_smoke_setup(args)
    if not args.url:
        raise ConfigError("--url", "the deployment's public URL is needed, e.g. --url https://confirm.example.com")
    origin = check_url(args.url)
    credentials = load_credentials(args)
    import anyio  # the run only

    origin_url = check_origin_url(args.origin_url) if args.origin_url else None
    outcome = anyio.run(functools.partial(run_smoke, origin, credentials, origin_url=origin_url))
    print(outcome.line)
    return 0 if outcome.ok else 1


def cmd_smoke_setup(args) -> int:
    # When the command runs, not at the CLI's start (the gate's and the server's modules).
    from ..identity.smoke import set_up_smoke
    from ..runtime import keyless_desk
    from .common import existing_settings

    if args.out and args.secret:
        raise ConfigError("--out", "give --out FILE or --secret ARN, not both")
    settings = existing_settings(args)
    credentials = set_up_smoke(keyless_desk(settings)).to_json()
    text = json.dumps(credentials, indent=2) + "\n"
    run = f"countersign smoke --url {settings.public_url}"
    if args.out:
        path = Path(args.out).expanduser()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IRUSR | stat.S_IWUSR)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        print(f"smoke credentials for {SMOKE_EMAIL} written to {path} (mode 0600); run: {run} --credentials {path}")
    elif args.secret:
        from ..platform.secrets_manager import write_secret  # the aws extra, only when asked

        write_secret(args.secret, text)
        print(f"smoke credentials for {SMOKE_EMAIL} stored in {args.secret}; run: {run} --secret {args.secret}")
    else:
        print(text, end="")
        print("# shown once: keep it as the --credentials file of `countersign smoke`", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    smoke = sub.add_parser(
        "smoke", help="file and confirm a smoke card at a running deployment; `smoke setup` makes its credentials",
        description=("countersign smoke --url URL (--credentials FILE | --secret ARN): file a card over MCP, confirm "
                     "it on the confirm API as the smoke person, check it completed once, clean up; one line, exit "
                     "0 when it passed. countersign smoke setup (--data | --store) [--out FILE | --secret ARN]: the "
                     "smoke workspace and new credentials (the earlier ones stop)."),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    smoke.add_argument("action", nargs="?", choices=["setup"], help="setup: make the smoke workspace and credentials")
    smoke.add_argument("--url", help="the deployment's public URL (https; http only to localhost)")
    smoke.add_argument("--origin-url", help="the stack's OriginApiUrl: also check that a request straight to the "
                                            "REST API is refused by AWS WAF")
    smoke.add_argument("--credentials", help="the smoke credentials file (`smoke setup --out`)")
    smoke.add_argument("--secret", help="a Secrets Manager secret holding them (the stack's SmokeSecretArn)")
    smoke.add_argument("--out", help="setup: write the credentials to this file (mode 0600)")
    store_options(smoke)
    smoke.set_defaults(func=cmd_smoke)
