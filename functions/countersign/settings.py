"""Settings, parsed once from the environment into a typed object (docs/operations.md, "Configuration").

A wrong value stops start-up with a :class:`ConfigError` naming the variable.
"""

from __future__ import annotations

import importlib.util
import ipaddress
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

KNOWN_PACKS = ("budget", "mail", "gateway")


class ConfigError(ValueError):
    def __init__(self, variable: str, problem: str):
        super().__init__(f"{variable}: {problem}")
        self.variable = variable


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "countersign"


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=default_data_dir)
    store_url: str = ""
    public_url: str = "http://localhost:8000"
    packs: tuple[str, ...] = KNOWN_PACKS
    mail: str = "outbox"
    signing_key: str | None = None
    state_keys: tuple[str, ...] = ()
    fallback: str = "card"
    require_elicitation: bool = False
    card_ttl: int = 24 * 3600
    code_ttl: int = 600
    email_interval: int = 900
    # How long a step of a running action (or an email being sent) may take before its process is
    # presumed dead and recovery takes over; and how often the local server runs that upkeep.
    run_lease: int = 120
    sweep_interval: int = 60
    # Proof a request came through the deployment's CloudFront (its X-Countersign-Origin header):
    # a secret or a Secrets Manager ARN, resolved at build (Runtime.origin_secret). None: the
    # CloudFront-Viewer-Address header is never trusted.
    origin_secret: str | None = None
    # Requests per LIMIT_WINDOW seconds the product itself lets through (0: no limit; the
    # template sets all three): per agent connection and per address on /mcp, per address on
    # /api (the confirm page). Over a limit: 429 with Retry-After (countersign.surfaces.http.request_limits).
    limit_connection: int = 0
    limit_address: int = 0
    limit_page: int = 0
    # AWS: the SES configuration set card emails are sent with (its bounce and complaint events,
    # and the account-level suppression list). None: plain sends.
    ses_configuration_set: str | None = None
    # The local server: the addresses (or networks) of reverse proxies whose X-Forwarded-For and
    # X-Forwarded-Proto are believed. Empty: the connecting address is the client, always.
    trusted_proxies: tuple[str, ...] = ()
    # The gateway (docs/gateway.md): how long one upstream call may take, whether an upstream URL
    # may point at a private or loopback address (tests, a home lab), and whether a stdio command
    # may be configured (local servers only; never on Lambda).
    upstream_timeout: int = 30
    upstream_private: bool = False
    upstream_stdio: bool = True
    # Slack's Web API (docs/channels.md, "Slack"): where the Slack app's calls go (a stand-in on
    # loopback in the tests).
    slack_api_url: str = "https://slack.com/api/"
    # Web Push (docs/channels.md, "Push to your phone"): the secret the server's VAPID key is derived
    # from, or a Secrets Manager ARN (read at the first push). None: keys/vapid.key in the data folder.
    vapid_key: str | None = None

    @property
    def store(self) -> str:
        return self.store_url or f"sqlite:///{self.data_dir / 'countersign.db'}"

    @property
    def pending_url(self) -> str:
        return f"{self.public_url}/confirm"

    def card_url(self, card_id: str) -> str:
        return f"{self.public_url}/confirm?card={card_id}"


def _int(env: Mapping[str, str], name: str, default: int, minimum: int = 1) -> int:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(name, f"expected a whole number of seconds, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(name, f"must be at least {minimum}, got {value}")
    return value


def _bool(env: Mapping[str, str], name: str, default: bool) -> bool:
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ConfigError(name, f"expected 1 or 0 (true/false), got {raw!r}")


def _store(env: Mapping[str, str]) -> str:
    raw = env.get("COUNTERSIGN_STORE", "")
    if raw and not (raw.startswith("sqlite:///") or raw.startswith("dynamodb://")):
        raise ConfigError("COUNTERSIGN_STORE", f"expected sqlite:///PATH or dynamodb://TABLE, got {raw!r}")
    if raw.startswith("dynamodb://") and not raw[len("dynamodb://"):]:
        raise ConfigError("COUNTERSIGN_STORE", "dynamodb:// needs a table name")
    if raw.startswith("sqlite:///") and not raw[len("sqlite:///"):]:
        raise ConfigError("COUNTERSIGN_STORE", "sqlite:/// needs a file path")
    return raw


def _public_url(env: Mapping[str, str], default: str) -> str:
    raw = env.get("COUNTERSIGN_PUBLIC_URL", "") or default
    if not (raw.startswith("http://") or raw.startswith("https://")) or not urlsplit(raw).netloc:
        raise ConfigError("COUNTERSIGN_PUBLIC_URL", f"expected an http(s):// URL, got {raw!r}")
    parts = urlsplit(raw)
    if parts.query or parts.fragment or raw.endswith(("?", "#")):
        raise ConfigError("COUNTERSIGN_PUBLIC_URL", "expected a URL without a query or fragment (every link and the "
                          f"MCP URL are made by adding a path to it), got {raw!r}")
    if "@" in parts.netloc:
        raise ConfigError("COUNTERSIGN_PUBLIC_URL", "expected a URL without a user name or password (it is put in "
                          "every email and answer)")
    return raw.rstrip("/")


def _packs(env: Mapping[str, str]) -> tuple[str, ...]:
    raw = env.get("COUNTERSIGN_PACKS")
    if raw is None or raw.strip() == "":
        return KNOWN_PACKS
    packs = tuple(p.strip() for p in raw.split(",") if p.strip())
    unknown = [p for p in packs if p not in KNOWN_PACKS]
    if unknown:
        raise ConfigError("COUNTERSIGN_PACKS", f"unknown toolset {unknown[0]!r}; known: {', '.join(KNOWN_PACKS)}")
    return packs


def _mail(env: Mapping[str, str]) -> str:
    raw = env.get("COUNTERSIGN_MAIL", "") or "outbox"
    if raw == "outbox" or raw.startswith("smtp://") or raw.startswith("smtps://"):
        return raw
    if raw.startswith("ses:") and "@" in raw[4:]:
        return raw
    raise ConfigError("COUNTERSIGN_MAIL", f"expected outbox, smtp://HOST[:PORT] or ses:FROM_ADDRESS, got {raw!r}")


def _state_keys(env: Mapping[str, str]) -> tuple[str, ...]:
    raw = env.get("COUNTERSIGN_STATE_KEYS", "")
    keys = tuple(k.strip() for k in raw.split(",") if k.strip())
    for key in keys:
        if not key.startswith("arn:") and len(key.encode("utf-8")) < 32:
            raise ConfigError("COUNTERSIGN_STATE_KEYS", "each key must be at least 32 bytes")
    return keys


def _signing_key(env: Mapping[str, str]) -> str | None:
    raw = env.get("COUNTERSIGN_SIGNING_KEY") or None
    if raw is None:
        return None
    # A blank or short secret would be hashed into a guessable Ed25519 seed.
    secret = raw.strip()
    if not secret.startswith("arn:") and len(secret.encode("utf-8")) < 32:
        raise ConfigError(
            "COUNTERSIGN_SIGNING_KEY",
            "expected a secret of at least 32 bytes (countersign keys prints one) or a Secrets Manager ARN",
        )
    return raw


def _vapid_key(env: Mapping[str, str]) -> str | None:
    raw = (env.get("COUNTERSIGN_VAPID_KEY") or "").strip()
    if not raw:
        return None
    if not raw.startswith("arn:") and (len(raw.encode("utf-8")) < 32 or "," in raw):
        raise ConfigError("COUNTERSIGN_VAPID_KEY",
                          "expected one secret of at least 32 bytes (countersign keys prints one) or a Secrets "
                          "Manager ARN")
    return raw


def _origin_secret(env: Mapping[str, str]) -> str | None:
    raw = env.get("COUNTERSIGN_ORIGIN_SECRET") or None
    if raw is None:
        return None
    raw = raw.strip()
    if raw.startswith("arn:"):
        return raw
    # Compared with a header value: long enough not to be guessed, and only characters a header
    # carries unchanged (visible ASCII; leading or trailing spaces would be trimmed in transit).
    if len(raw.encode("utf-8")) < 32 or not all("!" <= c <= "~" for c in raw):
        raise ConfigError(
            "COUNTERSIGN_ORIGIN_SECRET",
            "expected a secret of at least 32 visible ASCII characters or a Secrets Manager ARN",
        )
    return raw


def _configuration_set(env: Mapping[str, str]) -> str | None:
    raw = (env.get("COUNTERSIGN_SES_CONFIGURATION_SET") or "").strip()
    if not raw:
        return None
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", raw):
        raise ConfigError("COUNTERSIGN_SES_CONFIGURATION_SET", f"expected an SES configuration set name, got {raw!r}")
    return raw


def _trusted_proxies(env: Mapping[str, str]) -> tuple[str, ...]:
    raw = env.get("COUNTERSIGN_TRUSTED_PROXIES", "")
    proxies = tuple(p.strip() for p in raw.split(",") if p.strip())
    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            raise ConfigError(
                "COUNTERSIGN_TRUSTED_PROXIES",
                f"expected IP addresses or networks of your reverse proxies (e.g. 127.0.0.1 or 10.0.0.0/8), "
                f"got {proxy!r}",
            ) from None
    return proxies


def _data_dir(env: Mapping[str, str]) -> Path:
    raw = env.get("COUNTERSIGN_DATA")
    if not raw:
        return default_data_dir()
    if "\x00" in raw:
        raise ConfigError("COUNTERSIGN_DATA", "the path contains a NUL character")
    path = Path(raw)
    if path.exists() and not path.is_dir():
        raise ConfigError("COUNTERSIGN_DATA", f"expected a directory, but {raw!r} is a file")
    return path


def _fallback(env: Mapping[str, str]) -> str:
    raw = env.get("COUNTERSIGN_FALLBACK", "") or "card"
    if raw not in ("card", "code"):
        raise ConfigError("COUNTERSIGN_FALLBACK", f"expected card or code, got {raw!r}")
    return raw


AWS_EXTRA = "pip install -e '.[aws]' in the repository (scripts/bootstrap does), or pip install 'countersign[aws]'"


def _aws_installed() -> bool:
    return all(importlib.util.find_spec(m) is not None for m in ("boto3", "botocore", "aws_lambda_powertools"))


def _check_aws(values: Mapping[str, Any]) -> None:
    """A value that reaches AWS needs the ``aws`` extra, which serving alone does not install: say
    so at start-up, naming the variable, rather than fail at the first email or key read."""
    needs = [
        ("COUNTERSIGN_STORE", str(values["store_url"]).startswith("dynamodb://")),
        ("COUNTERSIGN_MAIL", str(values["mail"]).startswith("ses:")),
        ("COUNTERSIGN_SIGNING_KEY", "arn:" in str(values["signing_key"] or "")),
        ("COUNTERSIGN_STATE_KEYS", any(k.startswith("arn:") for k in values["state_keys"])),
        ("COUNTERSIGN_ORIGIN_SECRET", str(values["origin_secret"] or "").startswith("arn:")),
        ("COUNTERSIGN_VAPID_KEY", str(values["vapid_key"] or "").startswith("arn:")),
    ]
    for variable, needed in needs:
        if needed and not _aws_installed():
            raise ConfigError(variable, f"this value needs the AWS libraries (boto3, Powertools): {AWS_EXTRA}")


def _slack_api_url(env: Mapping[str, str]) -> str:
    raw = env.get("COUNTERSIGN_SLACK_API_URL") or "https://slack.com/api/"
    parts = urlsplit(raw)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if not parts.hostname or not (parts.scheme == "https" or (parts.scheme == "http" and loopback)):
        raise ConfigError("COUNTERSIGN_SLACK_API_URL", f"expected an https URL (http only on loopback), got {raw!r}")
    return raw if raw.endswith("/") else raw + "/"


def load(env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Parse ``env`` (default: the process environment) into :class:`Settings`."""
    env = os.environ if env is None else env
    data_dir = _data_dir(env)
    values: dict[str, Any] = dict(
        data_dir=data_dir,
        store_url=_store(env),
        public_url=_public_url(env, "http://localhost:8000"),
        packs=_packs(env),
        mail=_mail(env),
        signing_key=_signing_key(env),
        state_keys=_state_keys(env),
        fallback=_fallback(env),
        require_elicitation=_bool(env, "COUNTERSIGN_REQUIRE_ELICITATION", False),
        card_ttl=_int(env, "COUNTERSIGN_CARD_TTL", 24 * 3600, minimum=60),
        code_ttl=_int(env, "COUNTERSIGN_CODE_TTL", 600, minimum=10),
        email_interval=_int(env, "COUNTERSIGN_EMAIL_INTERVAL", 900, minimum=0),
        run_lease=_int(env, "COUNTERSIGN_RUN_LEASE", 120, minimum=1),
        sweep_interval=_int(env, "COUNTERSIGN_SWEEP_INTERVAL", 60, minimum=1),
        origin_secret=_origin_secret(env),
        limit_connection=_int(env, "COUNTERSIGN_LIMIT_CONNECTION", 0, minimum=0),
        limit_address=_int(env, "COUNTERSIGN_LIMIT_ADDRESS", 0, minimum=0),
        limit_page=_int(env, "COUNTERSIGN_LIMIT_PAGE", 0, minimum=0),
        ses_configuration_set=_configuration_set(env),
        trusted_proxies=_trusted_proxies(env),
        upstream_timeout=_int(env, "COUNTERSIGN_UPSTREAM_TIMEOUT", 30, minimum=1),
        upstream_private=_bool(env, "COUNTERSIGN_UPSTREAM_PRIVATE", False),
        upstream_stdio=_bool(env, "COUNTERSIGN_UPSTREAM_STDIO", "AWS_LAMBDA_FUNCTION_NAME" not in env),
        slack_api_url=_slack_api_url(env),
        vapid_key=_vapid_key(env),
    )
    values.update(overrides)
    _check_aws(values)
    return Settings(**values)


# -- the public URL a local server last served on ---------------------------------------------------

SERVED_FILE = "server.json"


def record_public_url(data_dir: Path, public_url: str) -> None:
    """Note in ``DATA/server.json`` the origin a local server on this data folder serves."""
    path = data_dir / SERVED_FILE
    tmp = path.with_name(f".{SERVED_FILE}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"public_url": public_url}) + "\n")
    tmp.chmod(0o600)
    os.replace(tmp, path)


def recorded_public_url(data_dir: Path) -> str | None:
    """The origin :func:`record_public_url` noted for ``data_dir``, if any (and if it still reads as one)."""
    try:
        url = json.loads((data_dir / SERVED_FILE).read_text()).get("public_url")
        return _public_url({"COUNTERSIGN_PUBLIC_URL": url}, "") if isinstance(url, str) else None
    except (OSError, ValueError, AttributeError):
        return None
