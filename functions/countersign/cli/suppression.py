"""``countersign suppression show`` and ``lift``: an address that bounced or complained, and sending
card emails to it again (docs/alarms.md)."""

from __future__ import annotations

import json
import sys

from ..identity.accounts import email_address
from .common import iso, open_command_store, store_options


def cmd_suppression(args) -> int:
    """Show or lift the suppression of an address that bounced or complained (docs/alarms.md)."""
    email = email_address(args.email).lower()  # (an address that is none is refused before the store is opened)
    _, store = open_command_store(args)
    current = store.suppressions.address_suppression(email)
    if args.action == "lift" and current is not None:
        store.suppressions.lift_suppression(email)
    view = {"email": email, "suppressed": current is not None and args.action == "show"}
    if current is not None:
        view.update(reason=current.reason, since=iso(current.at), detail=current.detail)
    if args.action == "lift":
        view["lifted"] = current is not None
    print(json.dumps(view, indent=2))
    if args.action == "lift" and current is not None:
        print("# card emails go to this address again. On AWS, SES's account-level suppression list may still hold "
              f"it: aws sesv2 delete-suppressed-destination --email-address {email}", file=sys.stderr)
    elif args.action == "lift":
        print("# this address was not suppressed: nothing changed", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    suppression = sub.add_parser("suppression", help="show or lift the suppression of an address that bounced")
    suppression.add_argument("action", choices=("show", "lift"),
                             help="show: whether card emails to it are suppressed, and why; lift: send to it again")
    suppression.add_argument("--email", required=True)
    store_options(suppression)
    suppression.set_defaults(func=cmd_suppression)
