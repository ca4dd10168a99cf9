"""Assembling the service from :class:`Settings`: store, keys, toolsets and the gate's desk.

Built once per process (a Lambda instance builds it at import). Keys come from the environment
or Secrets Manager when configured; locally they are generated on first run into the data
folder and reused, so a restart loses no card and no in-flight question.
"""

from __future__ import annotations

import importlib
import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .core.tickets import Keyring, new_secret
from .gate.actions import Registry, Toolset
from .gate.cards import CardDesk
from .settings import ConfigError, Settings
from .store import Store, open_store
from .store.records import Card

log = logging.getLogger("countersign")


@dataclass
class Runtime:
    settings: Settings
    store: Store
    keyring: Keyring
    state_keys: list[bytes]
    registry: Registry
    desk: CardDesk
    # What CloudFront sends in X-Countersign-Origin (settings.origin_secret, an ARN resolved).
    origin_secret: str | None = None


def _local_secret(path: Path, make: Callable[[], str]) -> str:
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    value = make()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value + "\n")
    return value


def _loader(secret_loader: Callable[[str], str] | None) -> Callable[[str], str]:
    if secret_loader is None:
        from .infra_secrets import load_secret

        secret_loader = load_secret
    return secret_loader


def _resolve(value: str, secret_loader: Callable[[str], str] | None) -> list[str]:
    """A comma-separated list of secrets; ``arn:`` entries are read from Secrets Manager."""
    out = []
    for item in (v.strip() for v in value.split(",")):
        if not item:
            continue
        if item.startswith("arn:"):
            out.extend(v.strip() for v in _loader(secret_loader)(item).split(",") if v.strip())
        else:
            out.append(item)
    return out


def load_keys(settings: Settings, secret_loader: Callable[[str], str] | None = None) -> tuple[Keyring, list[bytes]]:
    if settings.signing_key:
        signing = _resolve(settings.signing_key, secret_loader)
    else:
        signing = [_local_secret(settings.data_dir / "keys" / "signing.key", new_secret)]
    if settings.state_keys:
        state = _resolve(",".join(settings.state_keys), secret_loader)
    else:
        state = [_local_secret(settings.data_dir / "keys" / "state.key", lambda: secrets.token_urlsafe(48))]
    return Keyring.from_secrets(signing), [s.encode("utf-8") for s in state]


def load_origin_secret(settings: Settings, secret_loader: Callable[[str], str] | None = None) -> str | None:
    """The value CloudFront sends in ``X-Countersign-Origin``, read once (an ARN from Secrets
    Manager, as the keys are). One value, compared whole: never split on commas, because
    CloudFront sends exactly what the secret holds. None when not configured."""
    value = settings.origin_secret
    if not value:
        return None
    if value.startswith("arn:"):
        value = _loader(secret_loader)(value).strip()
        if len(value.encode("utf-8")) < 32:
            raise ConfigError("COUNTERSIGN_ORIGIN_SECRET", "the secret's value is shorter than 32 bytes")
    return value


def load_toolsets(packs: tuple[str, ...]) -> list[Toolset]:
    toolsets = []
    for name in packs:
        try:
            module = importlib.import_module(f"countersign.toolsets.{name}")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith(f"countersign.toolsets.{name}"):
                log.warning("toolset %s is not part of this build; skipped", name)
                continue
            raise
        toolsets.append(module.TOOLSET)
    return toolsets


def build(
    settings: Settings,
    *,
    toolsets: list[Toolset] | None = None,
    store: Store | None = None,
    on_filed: Callable[[Card], None] | None = None,
    secret_loader: Callable[[str], str] | None = None,
) -> Runtime:
    if store is None:
        if settings.store.startswith("sqlite:///"):
            settings.data_dir.mkdir(parents=True, exist_ok=True)
        store = open_store(settings.store)
    keyring, state_keys = load_keys(settings, secret_loader)
    origin_secret = load_origin_secret(settings, secret_loader)
    registry = Registry(load_toolsets(settings.packs) if toolsets is None else toolsets)
    desk = CardDesk(store=store, keyring=keyring, settings=settings, registry=registry, on_filed=on_filed)
    if on_filed is None:
        from . import notify

        # Follow the desk's clock and settings, which tests (and a reconfigured server) replace.
        desk.on_filed = notify.from_settings(
            settings, store, lambda: desk.clock(), current_settings=lambda: desk.settings
        )
    return Runtime(settings, store, keyring, state_keys, registry, desk, origin_secret)
