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
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .core.tickets import Keyring, is_signing_secret, new_secret
from .core.times import iso
from .gate import escalation, lifetimes, quorum_rules, standing_grants
from .gate.desk import CardDesk
from .gate.offload import ONE_AT_A_TIME, Offload
from .gate.passkey_policy import TOOLSET as PASSKEY_POLICY
from .gate.registry import Registry
from .gate.smoke import TOOLSET as SMOKE
from .platform import secrets_manager
from .settings import ConfigError, Settings
from .store import Store
from .store.callers import Owners
from .store.cards import Card
from .store.opening import open_store
from .toolkit import Toolset

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
    # Delivers the notifications filed cards owe (inline after filing, and by the sweep).
    notifier: Any = None
    # The origin secret's previous value (AWSPREVIOUS), accepted too while a rotation settles.
    origin_previous: str | None = None
    # Whose each confirm-page session this process has seen is (:mod:`countersign.store.callers`).
    sessions: Owners = field(default_factory=Owners)
    # Sends the webhooks card events owe (:mod:`countersign.notify.webhooks`): by the sweep, the local
    # server's webhook loop and, on AWS, the notifier function.
    webhooks: Any = None
    # Posts filed cards to the workspace's Slack app and updates the messages once answered
    # (:mod:`countersign.notify.slack`): after filing where the notifier delivers inline, on AWS
    # by the stream notifier.
    slack: Any = None
    # Pushes filed cards to their person's devices (:mod:`countersign.notify.push`): after filing where
    # the notifier delivers inline, on AWS by the stream notifier.
    push: Any = None

    def sweep(self, limit: int = 50) -> dict[str, int]:
        """The upkeep a server runs at start-up and then every minute (on AWS: a scheduled
        function): settle cards a dead process left running, deliver notifications and webhooks still owed."""
        # imported by the first sweep, not at start: a Lambda function that never sweeps never loads them
        from .gate.escalation_sweep import escalate_due
        from .gate.recovery import sweep as settle_running

        settled = settle_running(self.desk, self.desk.now(), limit)
        delivered = self.notifier.sweep(limit) if self.notifier is not None else 0
        webhooks = self.webhooks.sweep(limit) if self.webhooks is not None else 0
        escalated = escalate_due(self.desk, self.desk.now(), limit)  # cards unanswered too long: shown to more
        try:
            check_keys_in_use(self.settings, self.keyring, self.store.signing_keys.signing_keys_in_use(self.desk.now()))
        except ConfigError as problem:
            log.error("%s", problem)
            self.desk.event("signing_key_missing")
        return {"settled": settled, "delivered": delivered, "webhooks": webhooks, "escalated": escalated}


SIGNING_FILE = "signing.key"
STATE_FILE = "state.key"
VAPID_FILE = "vapid.key"
MIN_STATE_KEY_BYTES = 32


_OPEN_FOLDERS_SAID: set[Path] = set()


def _private_dir(path: Path) -> None:
    """The data folder (keys, the database, the outbox): made 0700; one that already exists open
    to others is said so once at start, not changed behind its owner's back."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o777
    if mode & 0o077 and path not in _OPEN_FOLDERS_SAID:
        _OPEN_FOLDERS_SAID.add(path)
        log.warning("the data folder %s is open to other users (mode %o): its files are 0600, but run "
                    "chmod 700 %s so that no one else can list them", path, mode, shlex.quote(str(path)))


# What making a new key in place of a lost one costs, by key (docs/operations.md, "Keys").
LOSS = {
    "signing key": "cards signed by the old one can no longer be confirmed",
    "request-state key": "answers in flight to 2026-07-28 questions are lost; their agents simply call again",
    "push key": "every device must turn notifications on again in Settings",
}


def _read_key_file(path: Path, valid: Callable[[str], bool], what: str) -> str:
    value = path.read_text().strip()
    if not valid(value):
        raise ConfigError(str(path), (
            f"the {what} in this file is {'empty' if not value else 'not a valid key'}. Restore the file from your "
            f"backup; if it is lost for good, delete it and start again (a new key is made, and "
            f"{LOSS.get(what, 'what the old key sealed can no longer be read')})."
        ))
    return value


def _local_secret(path: Path, make: Callable[[], str], valid: Callable[[str], bool], what: str,
                  may_create: bool = True) -> str:
    if path.exists():
        return _read_key_file(path, valid, what)
    if not may_create:
        raise ConfigError(str(path), (
            f"the {what} is missing, but the store holds cards it signed that can still be answered. Restore "
            f"{path.name} from your backup (see `countersign keys --help`); a new key would make every waiting "
            "card fail as tampered."
        ))
    _private_dir(path.parent)
    value = make()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(value + "\n")
    return value


def _loader(secret_loader: Callable[[str], str] | None) -> Callable[[str], str]:
    if secret_loader is None:
        secret_loader = secrets_manager.load_secret
    return secret_loader


def _resolve(value: str, secret_loader: Callable[[str], str] | None) -> list[str]:
    """A comma-separated list of secrets; ``arn:`` entries are read from Secrets Manager."""
    out: list[str] = []
    for item in (v.strip() for v in value.split(",")):
        if not item:
            continue
        if item.startswith("arn:"):
            out.extend(v.strip() for v in _loader(secret_loader)(item).split(",") if v.strip())
        else:
            out.append(item)
    return out


def load_keys(settings: Settings, secret_loader: Callable[[str], str] | None = None,
              in_use: dict[str, int] | None = None) -> tuple[Keyring, list[bytes]]:
    """The signing keyring and the request-state keys: from the settings (or Secrets Manager), or
    the data folder's key files, made on first run (mode 0600). ``in_use``: the keys that signed
    cards still answerable (from the store): a missing key file is then an error, not a new key."""
    if settings.signing_key:
        signing = _resolve(settings.signing_key, secret_loader)
    else:
        path = settings.data_dir / "keys" / SIGNING_FILE
        signing = [_local_secret(path, new_secret, is_signing_secret, "signing key", may_create=not in_use)]
    if settings.state_keys:
        state = _resolve(",".join(settings.state_keys), secret_loader)
    else:
        path = settings.data_dir / "keys" / STATE_FILE
        state = [_local_secret(path, lambda: secrets.token_urlsafe(48),
                               lambda v: len(v.encode("utf-8")) >= MIN_STATE_KEY_BYTES, "request-state key")]
    return Keyring.from_secrets(signing), [s.encode("utf-8") for s in state]


def vapid_secret(settings: Settings, secret_loader: Callable[[str], str] | None = None) -> Callable[[], str]:
    """The secret the server's VAPID key (Web Push) is derived from, read at its first use and then
    kept: ``COUNTERSIGN_VAPID_KEY`` (an ``arn:`` from Secrets Manager), else ``keys/vapid.key`` in the
    data folder, made then (mode 0600). Never read at start-up: most processes never push."""
    found: list[str] = []

    def load() -> str:
        if not found:
            if settings.vapid_key:
                found.append(_resolve(settings.vapid_key, secret_loader)[0])
            else:
                path = settings.data_dir / "keys" / VAPID_FILE
                found.append(_local_secret(path, new_secret, lambda v: len(v.encode("utf-8")) >= 32, "push key"))
        return found[0]

    return load


def keys_checked_at_start(settings: Settings) -> bool:
    return not settings.signing_key or settings.store.startswith("sqlite:///")


def check_keys_in_use(settings: Settings, keyring: Keyring, in_use: dict[str, int]) -> None:
    """Refuse to start when the store holds answerable cards signed by a key this server lacks."""
    missing = sorted(set(in_use) - set(keyring.accepted_key_ids))
    if not missing:
        return
    where = "COUNTERSIGN_SIGNING_KEY" if settings.signing_key else str(settings.data_dir / "keys" / SIGNING_FILE)
    listed = ", ".join(f"{k} (cards answerable until {iso(in_use[k])})" for k in missing)
    raise ConfigError(where, (
        f"the store holds cards signed by {listed}, and this server does not have that key. Restore it (or list it "
        "after the current key: NEW,OLD); if it is lost for good, run `countersign keys forget KEY_ID` and those "
        "cards will be refused as tampered when clicked."
    ))


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


def load_previous_origin_secret(settings: Settings,
                                previous_loader: Callable[[str], str | None] | None) -> str | None:
    """The origin secret's previous value (Secrets Manager ``AWSPREVIOUS``) when the secret is an
    ARN: accepted as well, so a rotation never refuses CloudFront's requests (docs/operations.md). None when
    there is none (a secret never rotated) or no loader."""
    value = settings.origin_secret
    if not value or not value.startswith("arn:") or previous_loader is None:
        return None
    previous = (previous_loader(value) or "").strip()
    return previous if len(previous.encode("utf-8")) >= 32 else None


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
    deliver_inline: bool = True,
    previous_loader: Callable[[str], str | None] | None = None,
    lazy_toolsets: bool = False,
    one_request_at_a_time: bool = False,
) -> Runtime:
    """Everything a process serves with. ``deliver_inline``: email right after filing (the local
    server); off where a separate notifier delivers (AWS: the table's stream). ``lazy_toolsets``:
    import the toolsets of ``settings.packs`` when a tool is first looked up, not now (the Lambda
    functions that do not serve MCP: most of their invocations plan nothing).
    ``one_request_at_a_time``: nothing else shares this process's event loop (a Lambda instance),
    so a call's store and toolset work runs on it (:mod:`countersign.gate.offload`)."""
    if store is None:
        if settings.store.startswith("sqlite:///"):
            _private_dir(settings.data_dir)
        store = open_store(settings.store)
    # Locally (key files, or the embedded store) a key that no longer matches the store stops
    # start-up. Where keys come from Secrets Manager into DynamoDB (Lambda), start-up makes no
    # call: the sweep checks instead (and says so in the logs and a metric).
    in_use = store.signing_keys.signing_keys_in_use(int(time.time())) if keys_checked_at_start(settings) else {}
    keyring, state_keys = load_keys(settings, secret_loader, in_use)
    check_keys_in_use(settings, keyring, in_use)
    origin_secret = load_origin_secret(settings, secret_loader)
    if previous_loader is None and secret_loader is None:
        previous_loader = secrets_manager.load_previous_secret
    origin_previous = load_previous_origin_secret(settings, previous_loader)

    def chosen() -> list[Toolset]:
        picked = load_toolsets(settings.packs) if toolsets is None else toolsets
        picked = [*picked, PASSKEY_POLICY] if PASSKEY_POLICY not in picked else list(picked)
        # Standing grants: the one action that grants them plans against the tools served and the store's
        # connections (``registry`` is assigned below, before any plan runs).
        picked.append(standing_grants.toolset(lambda tool: registry.agent_action(tool),
                                              store.connections.get_connection))
        picked.append(lifetimes.toolset(settings.card_ttl))  # set_card_lifetimes: filed by an owner, no MCP tool
        picked.append(quorum_rules.toolset(lambda tool: registry.agent_action(tool)))  # set_quorum_rules
        picked.append(escalation.toolset(lambda tool: registry.agent_action(tool)))  # set_escalation_rules
        picked.append(SMOKE)  # found by name only, in no tool list
        # A toolset that needs the keys or settings (the gateway seals credentials) is bound here.
        return [ts.bind(state_keys, settings) if ts.bind else ts for ts in picked]

    registry = Registry(chosen if lazy_toolsets and toolsets is None else chosen())
    desk = CardDesk(store=store, keyring=keyring, settings=settings, registry=registry, on_filed=on_filed,
                    offload=ONE_AT_A_TIME if one_request_at_a_time else Offload(lock_free=store.write_lock_free))
    # the channels' modules (email, push, Slack, webhooks) when a runtime is built, not when this module is imported
    # (the CLI imports it to open a store, and never notifies)
    from . import notify
    from .notify.card_channel import deliver_quiet_wait
    from .notify.push import PushNotifier
    from .notify.slack import SlackCredentials, SlackNotifier
    from .notify.webhooks import WebhookDeliverer

    # Follow the desk's clock and settings, which tests (and a reconfigured server) replace.
    notifier = notify.from_settings(settings, store, lambda: desk.clock(), current_settings=lambda: desk.settings,
                                    needs_passkey=desk.card_needs_passkey)
    slack = SlackNotifier(store, SlackCredentials(state_keys), lambda: desk.settings,
                          needs_passkey=desk.card_needs_passkey, clock=lambda: desk.clock(), background=deliver_inline)
    push = PushNotifier(store, vapid_secret(settings, secret_loader), lambda: desk.settings,
                        needs_passkey=desk.card_needs_passkey, clock=lambda: desk.clock(), background=deliver_inline)
    if on_filed is None and deliver_inline:
        desk.on_filed = notifier
        notifier.beside.append(slack)  # off the filing call: a worker thread posts
        notifier.beside.append(push)  # likewise
    channels = {"slack": slack, "push": push}  # the cards they held for quiet hours: shown by the sweep
    notifier.after_quiet = lambda wait_id: deliver_quiet_wait(store, channels, wait_id, int(desk.clock()))
    webhooks = WebhookDeliverer(store, state_keys, lambda: desk.settings, notifier.sender, clock=lambda: desk.clock())
    return Runtime(settings, store, keyring, state_keys, registry, desk, origin_secret, notifier,
                   origin_previous=origin_previous, webhooks=webhooks, slack=slack, push=push)


def keyless_desk(settings: Settings) -> CardDesk:
    """A desk for the commands that only read or close cards (``connection revoke``, ``member
    remove``, ``upstream list``), where the deployment's keys may not be: an operator's machine in
    front of the DynamoDB table. No key is read or made. Its keyring is a random key held only in
    memory, which no server accepts: it files nothing, and any ticket it signed would be refused
    as tampered."""
    if settings.store.startswith("sqlite:///"):
        _private_dir(settings.data_dir)
    return CardDesk(store=open_store(settings.store), keyring=Keyring.from_secrets([new_secret()]),
                    settings=settings, registry=Registry([]))


def files_cards_here(settings: Settings) -> None:
    """Refuse (:class:`ConfigError`) a command that files cards with keys this machine would make:
    in front of a DynamoDB table the deployment's own keys are needed (set, or key files the data
    folder already holds, as a local server on DynamoDB keeps them), or its functions would
    refuse every card this command filed as tampered."""
    if settings.store.startswith("sqlite:///"):
        return
    keys = settings.data_dir / "keys"
    if not ((settings.signing_key or (keys / SIGNING_FILE).is_file())
            and (settings.state_keys or (keys / STATE_FILE).is_file())):
        raise ConfigError("COUNTERSIGN_SIGNING_KEY", (
            "this command files a card that the deployment must verify, so it needs the deployment's keys: set "
            "COUNTERSIGN_SIGNING_KEY and COUNTERSIGN_STATE_KEYS to the stack's SigningKeySecretArn and "
            "StateKeysSecretArn outputs (your AWS credentials must be allowed to read both secrets)"))
