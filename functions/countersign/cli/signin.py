"""``countersign signin-link``: a one-time link that signs a member in to the confirm page."""

from __future__ import annotations

from ..identity.sessions import mint_signin_token
from .common import member, open_command_store, store_options


def cmd_signin_link(args) -> int:
    s, store = open_command_store(args)
    person = member(store, args.email)
    if person is None:
        return 2
    token = mint_signin_token(store.sessions, person)
    print(f"{s.public_url}/signin#token={token}")
    return 0


def add_parser(sub) -> None:
    link = sub.add_parser("signin-link", help="print a one-time sign-in link for a member (15 minutes)")
    link.add_argument("--email", required=True)
    store_options(link)
    link.set_defaults(func=cmd_signin_link)
