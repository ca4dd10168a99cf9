"""``countersign keys``: new signing and request-state keys, the keys that waiting cards still need,
and forgetting a lost one."""

from __future__ import annotations

import secrets
import sys
import time

from ..core.tickets import Keyring, new_secret
from .common import command_line, iso, open_command_store, store_options


def cmd_keys(args) -> int:
    """Print a fresh signing key and request-state key, in the form the environment takes; or
    (``keys in-use``) list the keys that signed cards still answerable; or (``keys forget ID``)
    drop a lost key from that record, so a server without it may start."""
    if args.action == "in-use":
        _, store = open_command_store(args)
        for key_id, until in sorted(store.signing_keys.signing_keys_in_use(int(time.time())).items()):
            print(f"{key_id}  cards answerable until {iso(until)}")
        return 0
    if args.action == "forget":
        if not args.key_id:
            print(f"error: name the key: {command_line(args, 'keys forget KEY_ID')}", file=sys.stderr)
            return 2
        _, store = open_command_store(args)
        if args.key_id not in store.signing_keys.signing_keys_in_use(int(time.time())):
            print(f"error: no card that can still be answered was signed by key {args.key_id!r}", file=sys.stderr)
            return 2
        store.signing_keys.forget_signing_key(args.key_id)
        print(f"# forgot key {args.key_id}: the cards it signed will be refused as tampered if clicked",
              file=sys.stderr)
        return 0
    secret = new_secret()
    key_id = Keyring.from_secrets([secret]).key_id
    print(f"COUNTERSIGN_SIGNING_KEY={secret}")
    print(f"COUNTERSIGN_STATE_KEYS={secrets.token_urlsafe(48)}")
    print(f"# signing key id: {key_id}. To rotate, list the new key first: NEW,OLD", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    keys = sub.add_parser("keys", help="print a new signing key and request-state key (or: in-use, forget KEY_ID)")
    keys.add_argument("action", nargs="?", choices=("new", "in-use", "forget"), default="new",
                      help="new (default): print new keys; in-use: the keys live cards need; forget: drop a lost key")
    keys.add_argument("key_id", nargs="?", help="with forget: the key id the start-up error named")
    store_options(keys)
    keys.set_defaults(func=cmd_keys)
