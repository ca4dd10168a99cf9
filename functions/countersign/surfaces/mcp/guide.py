"""The guide every agent can read: the MCP resource ``countersign://guide``, and the server's
instructions that point to it. Written for an agent, in the words of docs/how-a-held-write-travels.md.
"""

from __future__ import annotations

from ...gate.desk import ANSWER_MEMORY_SECONDS
from ...settings import Settings

GUIDE_URI = "countersign://guide"
GUIDE_TITLE = "How confirmation works"
SEE_GUIDE = f"How confirmation works: {GUIDE_URI}."

INSTRUCTIONS = (
    "Reads run at once. Writes that spend, send, grant authority or cannot be undone wait for a person: "
    "the call returns a preview and either asks in your client or returns a held reply with a link. "
    "Never pass a confirmation code back unless the person agreed to the preview. To have the person "
    "approve something, call request_confirmation, even when a setting would let the tool run at once. "
    "Read the resource " + GUIDE_URI + " for when a person "
    "is asked, what each status means, and what calling again does."
)


def _minutes(seconds: int) -> str:
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return "1 hour" if hours == 1 else f"{hours} hours"
    minutes = max(1, seconds // 60)
    return "1 minute" if minutes == 1 else f"{minutes} minutes"


def guide(settings: Settings) -> str:
    """The guide's text (Markdown), with this deployment's lifetimes."""
    memory = _minutes(ANSWER_MEMORY_SECONDS)
    codes = settings.fallback == "code"
    return f"""# {GUIDE_TITLE}

countersign runs reads at once and holds writes that spend, send, grant authority or cannot be
undone until a person says yes. Each tool's description says when it waits.

## When a person is asked

A held call never runs on the call. The person is asked in one of these ways:

1. **In your client**, when your client can ask questions (form elicitation) and the tool accepts
   an answer given there: a question with the preview and one box, "Apply these changes". A ticked
   yes runs the change at once; an unticked box or a no declines it; a dismissed question falls back
   to the next way.
2. **On the confirm page** (a card): you get a held reply with `status: "pending"`, a
   `confirmationId`, a `confirmationUrl` for this request and a `pendingUrl` for everything waiting.
   The person gets an email and confirms on the page. Tools that need a signed-in person are
   always confirmed this way, whatever your client can do.
{"3. **With a confirmation code** (this deployment): see below." if codes else
 "3. **With a confirmation code**, on deployments that use codes instead of the confirm page."}

## Confirmation codes

A reply with `status: "confirmation_required"` carries a preview (`title`, `lines`) and a
`confirmation` code. Show the person the preview. Only if they agree, call the same tool with the
same arguments plus `"confirmation": "<code>"`. Never pass a code back on your own: the code stands
for the person's yes. A code works once, for exactly these changes, for {_minutes(settings.code_ttl)}.

## Asking a person to approve something

When the person should approve an action, call `request_confirmation` with the tool's name and its
arguments. It files a card on the confirm page whatever the tool's own rule is (even for a tool that
would run at once), and the action runs only when the person confirms it there. Prefer it to asking
in the chat and then running the tool yourself.

Prefer it for an approval even when the workspace lets agents approve at once (a tool whose
description says a setting lets it run on the call): the person approves on their confirm page.
Give them the link, then poll `get_confirmation_status` until it resolves.

## What each status means

- `pending`: waiting for the person; nothing has run. Give them the `confirmationUrl` (or the
  `pendingUrl`), then poll `get_confirmation_status`. Keep working on what does not need the answer.
  A card waits up to {_minutes(settings.card_ttl)} (`expiresAt`).
- `completed`: it ran, exactly once. `result` says what changed; `next` suggests follow-up calls,
  and `personMustAct: true` marks one the person will have to confirm too.
  With `answeredVia: "grant"` a standing grant the person gave this connection ran it without
  asking them: `message` names the grant and says how many uses are left and when it expires.
  A call a grant did not cover waits as usual, and `standingGrants` says why (over a bound, used
  up, expired, revoked). No tool grants one: only the person can, on their confirm page.
- `declined`: nothing ran. Either the person said no (`reason` may say why), or the card was refused
  because what it shows changed before the answer (`instructions` say so). A withdrawn card reads as
  declined too.
- `expired`: nobody answered in time; nothing ran.
- `failed`: the person said yes but the action could not run; `error` says what was and was not done.
- `confirmation_required`: a code, see above.

## Calling again

- The same call while its card waits returns that same card: calling again does not hurry the
  person and sends no second email.
- The same call within {memory} of the person's answer returns that answer (a yes that ran, or a
  no) instead of asking again, so a call retried after a lost reply never runs twice. After a no,
  the person can reopen the request from History on the confirm page; after {memory} the same call
  asks them afresh.
- After a card was refused because its data changed, or expired, or was withdrawn, the same call
  makes a new preview and asks again.
- A tool error (`isError`) means nothing was written; its text names the argument at fault, as in
  `transactions[0].payee`.

## Listing

`list_confirmations` lists the requests waiting on the person behind this connection, oldest
first, 100 at a time, with `total` and a `nextCursor` for the next page.
"""
