"""``countersign webhook add``, ``list``, ``events``, ``remove``, ``enable`` and ``log``: a
workspace's signed webhooks (docs/channels.md, "Webhooks"), as its owners manage them in Settings.
``add`` prints the new endpoint's signing secret once; ``events`` changes the events an endpoint
takes, in place (its secret stays); the same checks as the page's (an https URL on a public
address, known events, at most five endpoints)."""

from __future__ import annotations

import json
import sys
import time

from ..settings import ConfigError, Settings
from ..store.errors import NotFound
from .common import command_line, existing_settings, member, store_options


def cmd_webhook(args) -> int:
    # When the command runs, not at the CLI's start (the server's modules).
    from ..runtime import load_keys
    from ..store.opening import open_store
    from ..surfaces import webhook_endpoints as endpoints

    s = existing_settings(args)
    store = open_store(s.store)
    person = member(store, args.email, may=endpoints.may_manage, refusal=endpoints.ONLY_OWNERS)
    if person is None:
        return 2
    ws = person.workspace_id
    if args.action == "list":
        print(json.dumps(endpoints.listing(store.webhook_endpoints, ws), indent=2))
        return 0
    if args.action == "add":
        _need_state_keys(s)
        _, state_keys = load_keys(s)
        added, secret = endpoints.add_endpoint(store.webhook_endpoints, state_keys, s, person, args.url, args.event,
                                               int(time.time()))
        print(json.dumps({"endpoint": endpoints.endpoint_view(added), "secret": secret}, indent=2))
        print("# the secret is shown once: give it to the receiver to check each request's webhook-signature",
              file=sys.stderr)
        return 0
    try:
        if args.action == "remove":
            store.webhook_endpoints.remove_endpoint(ws, args.endpoint_id)
            print(json.dumps(endpoints.listing(store.webhook_endpoints, ws), indent=2))
        elif args.action == "events":
            changed = endpoints.set_events(store.webhook_endpoints, person, args.endpoint_id, args.event,
                                           args.every_event)
            print(json.dumps(endpoints.endpoint_view(changed), indent=2))
        elif args.action == "enable":
            enabled = store.webhook_endpoints.enable_endpoint(ws, args.endpoint_id)
            print(json.dumps(endpoints.endpoint_view(enabled), indent=2))
        else:
            found = store.webhook_deliveries.list_deliveries(ws, args.endpoint_id)
            print(json.dumps([endpoints.delivery_view(d) for d in found], indent=2))
    except NotFound:
        print(f"error: this workspace has no webhook endpoint {args.endpoint_id!r}; "
              f"`{command_line(args, 'webhook list', '--email', args.email)}` shows its endpoints", file=sys.stderr)
        return 2
    return 0


def _need_state_keys(s: Settings) -> None:
    """In front of a DynamoDB table, the secret must be sealed with the deployment's own
    request-state keys (a key made here would leave every delivery unsigned and failing)."""
    if s.store.startswith("sqlite:///") or s.state_keys or (s.data_dir / "keys" / "state.key").is_file():
        return
    raise ConfigError("COUNTERSIGN_STATE_KEYS", (
        "an endpoint's signing secret is sealed with the deployment's request-state keys: set "
        "COUNTERSIGN_STATE_KEYS to the stack's StateKeysSecretArn output (your AWS credentials must be allowed "
        "to read it)"))


def add_parser(sub) -> None:
    webhook = sub.add_parser("webhook", help="signed webhooks of a workspace's card events (owners)")
    actions = webhook.add_subparsers(dest="action", required=True)
    for action, helptext in (("list", "the workspace's webhook endpoints"),
                             ("add", "add an endpoint; prints its signing secret once"),
                             ("events", "change the events an endpoint is sent (its secret stays)"),
                             ("remove", "remove an endpoint: nothing more is sent to it"),
                             ("enable", "turn on again an endpoint turned off after a day of failures"),
                             ("log", "an endpoint's latest deliveries, newest first")):
        one = actions.add_parser(action, help=helptext)
        one.add_argument("--email", required=True, help="an owner of the workspace")
        store_options(one)
        one.set_defaults(func=cmd_webhook)
        if action == "add":
            one.add_argument("url", help="where events are posted: https, on a public address")
            one.add_argument("--event", action="append",
                             help="an event to send (repeat; default: every event, those added later too): card.filed, "
                                  "card.answered, card.completed, card.failed, card.lapsed, card.edited")
        elif action != "list":
            one.add_argument("endpoint_id", metavar="ENDPOINT_ID", help="its id (wh_…), from `webhook list`")
        if action == "events":
            which = one.add_mutually_exclusive_group(required=True)
            which.add_argument("--event", action="append",
                               help="an event to send from now on (repeat): card.filed, card.answered, "
                                    "card.completed, card.failed, card.lapsed, card.edited")
            which.add_argument("--every-event", action="store_true",
                               help="every event, those added later too (as an endpoint added without --event)")
