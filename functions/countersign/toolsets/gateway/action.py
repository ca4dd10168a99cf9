"""One upstream tool, held like a built-in action.

``fs__write_file`` is the tool ``write_file`` of the workspace's upstream ``fs``. Its class, its
schema and its title come from the approved snapshot (:mod:`.config`), never from what the
upstream says now. The plan checks the arguments against the approved schema and runs the
tool's witness reads; the subject is the server, the tool's pin, the arguments and what every
witness answered, so the click re-runs the witnesses and refuses if anything moved.

The effect is one :class:`~countersign.toolkit.effects.Outside` call made once: the upstream has no
idempotency key, so it is marked not resumable and a card left running by a crash after sending
is closed as *outcome unknown*, never sent again (:mod:`countersign.gate.recovery`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ...core.canonical import canonical_json
from ...core.preview import QUESTION_LINES, Preview
from ...toolkit import (
    ALWAYS,
    CLIENT,
    NEVER,
    Action,
    ActionContext,
    ActionError,
    Effect,
    GateClass,
    Outside,
    Plan,
    Unavailable,
)
from .config import Pin, Upstream, load, split_tool, tool_digest
from .env import GatewayEnv
from .preview import MAX_LINES, answer_lines, argument_lines, result_text, shown

HEAD_LINES = 3  # a call's card: the server, the tool, "Arguments:", then a line per argument
DRIFT = ("What the card showed from the upstream server moved between the preview and the answer; nothing was "
         "sent. Call the tool again for a new preview.")


def unavailable(message: str) -> Unavailable:
    """The upstream could not be reached while planning: no drift (nothing about it is known to have moved)."""
    return Unavailable(f"{message.rstrip('. ')}. Nothing was sent; try again once it is back.",
                       code="upstream_unavailable")


def changed_sentence(upstream: str, tool: str) -> str:
    return (f"The tool {tool} of {upstream} changed since the owner approved it (its description, schema or hints "
            f"differ), so it does not run until they look again: countersign upstream refresh {upstream}.")


@dataclass(frozen=True)
class CallPlan(Plan):
    upstream: Upstream | None = field(default=None, compare=False, repr=False)
    pin: Pin | None = field(default=None, compare=False, repr=False)


def resolve(ctx: ActionContext, name: str) -> tuple[Upstream, str, Pin]:
    """The workspace's upstream and approved tool behind ``name`` (another workspace's never)."""
    parts = split_tool(name)
    upstream = load(ctx, parts[0]) if parts else None
    pin = upstream.tools.get(parts[1]) if upstream and parts else None
    if upstream is None or pin is None or parts is None:
        raise ActionError(f"Unknown tool {name!r}.", field="tool")
    return upstream, parts[1], pin


_VALIDATORS: dict[str, Any] = {}  # pin digest → its schema's validator (a pin's schema never changes)
MAX_VALIDATORS = 512


def _validator(pin: Pin) -> Any:
    """The validator of ``pin``'s approved schema, checked against its meta-schema once per pin
    rather than on every call; :class:`jsonschema.SchemaError` if it is not a schema."""
    import jsonschema  # type: ignore[import-untyped]  # here: ~60 ms a cold start needs only at an upstream call
    from referencing import Registry

    found = _VALIDATORS.get(pin.digest)
    if found is None:
        schema = pin.definition.get("inputSchema") or {"type": "object"}
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        found = cls(schema, registry=Registry())  # an empty registry: no $ref is ever fetched
        if len(_VALIDATORS) >= MAX_VALIDATORS:
            _VALIDATORS.clear()
        _VALIDATORS[pin.digest] = found
    return found


def check_arguments(pin: Pin, arguments: dict[str, Any]) -> None:
    """``arguments`` against the tool's approved input schema: :class:`ActionError` naming the first
    problems, or saying that the schema itself cannot check anything.

    A ``$ref`` resolves only inside the schema: with an empty registry, jsonschema never fetches
    one (its deprecated default would GET any URL the upstream wrote, from this server, on every
    call). A schema it cannot use (an unknown type, a ``$ref`` to nowhere or to the network, a
    pattern that is no regular expression) refuses the call with that sentence, never an internal
    error."""
    # loaded by the first upstream call checked, not at a function's cold start (jsonschema: ~60 ms)
    import jsonschema
    from referencing.exceptions import Unresolvable

    unusable = ActionError("The upstream tool's approved schema is not a JSON Schema countersign can check "
                           "arguments with (an unknown type, a $ref outside the schema, or a bad pattern); "
                           "nothing was sent. The upstream's owner must fix the tool.")
    try:
        errors = sorted(_validator(pin).iter_errors(arguments), key=str)
    except (jsonschema.SchemaError, jsonschema.exceptions.UnknownType, re.error, RecursionError, Unresolvable):
        raise unusable from None
    if errors:
        where = lambda e: ".".join(str(p) for p in e.absolute_path) or "arguments"  # noqa: E731
        raise ActionError("; ".join(f"{where(e)}: {e.message}" for e in errors[:5]) + ". Nothing was sent.",
                          field=where(errors[0]))


def pin_check(upstream: str, tool: str, pin: Pin):
    def check(live: dict | None) -> str | None:
        if live is None:
            return f"{upstream} no longer lists the tool {tool}; nothing was sent."
        return None if tool_digest(live) == pin.digest else changed_sentence(upstream, tool)
    return check


def witness_arguments(mapping: dict[str, str], arguments: dict[str, Any]) -> dict[str, Any]:
    """A witness read's arguments: ``$name`` takes the write's argument ``name``; anything else is literal."""
    return {k: arguments.get(v[1:]) if v.startswith("$") else v for k, v in mapping.items()}


class UpstreamCall(Action):
    """Base of the per-tool classes :func:`action_for` makes (``name`` is set on each)."""

    drift_message = DRIFT
    env: GatewayEnv

    def parse(self, raw: dict) -> Any:
        try:
            canonical_json(raw)
        except (TypeError, ValueError):
            raise ActionError("arguments: plain JSON values only; nothing was sent.", field="arguments") from None
        return dict(raw)

    def gate_class(self, args: Any, ctx: ActionContext) -> GateClass:
        """The tool's class; a ``client`` call whose card would not fit in a question in the client
        (which shows :data:`QUESTION_LINES` lines) is confirmed on the page, where every line is shown."""
        _, _, pin = resolve(ctx, self.name)
        if pin.cls == "client" and HEAD_LINES + max(len(args), 1) + len(pin.witness) > QUESTION_LINES:
            return ALWAYS
        return {"read": NEVER, "client": CLIENT}.get(pin.cls, ALWAYS)

    def plan(self, args: dict[str, Any], ctx: ActionContext) -> Plan:
        upstream, tool, pin = resolve(ctx, self.name)
        if len(args) > MAX_LINES:  # (a card never leaves one out: an agent could hide one after the rest)
            raise ActionError(f"arguments: {len(args)} arguments; a call countersign holds carries at most "
                              f"{MAX_LINES}, so that its card shows each one. Nothing was sent.", field="arguments")
        check_arguments(pin, args)
        seen = self._observe(upstream, tool, pin, args)
        subject = {"upstream": upstream.name, "where": upstream.where, "tool": tool, "pin": pin.digest,
                   "arguments": args, "witness": [s for s, _ in seen]}
        lines = [f"Server: {upstream.name} ({upstream.where})", f"Tool: {tool} — {pin.title}", "Arguments:"]
        lines += [f"  {line}" for line in argument_lines(args)]
        for (s, text) in seen:
            lines.append(f"Now, {s['tool']} {shown(s['arguments'])} answers: {shown(text)}")
        title = f"Run {tool} on {upstream.name}?"
        return CallPlan(subject, Preview(title, lines), upstream, pin)

    def _observe(self, upstream: Upstream, tool: str, pin: Pin, args: dict) -> list[tuple[dict, str]]:
        """One session with the upstream: the tool (and every witness) still as approved — a changed
        one refuses the call, or at an answer refuses the click — then the witness reads."""
        checks = {tool: pin_check(upstream.name, tool, pin)}
        reads = []
        for w in pin.witness:
            read = upstream.tools.get(w.tool)
            if read is None or read.cls != "read":
                raise ActionError(f"The witness {w.tool} of {tool} is not an approved read of {upstream.name}.")
            checks[w.tool] = pin_check(upstream.name, w.tool, read)
            reads.append((w.tool, witness_arguments(w.arguments, args)))
        from . import client  # the mcp client, only when an upstream is called (docs/gateway.md)

        link = self.env.link(upstream)
        try:
            results = client.run(lambda: client.observe(link, checks, reads))
        except client.Unreachable as exc:
            raise unavailable(exc.message) from None
        except client.UpstreamError as exc:
            raise ActionError(exc.message) from None
        seen = []
        for (name, arguments), result in zip(reads, results, strict=True):
            digest = hashlib.sha256(json.dumps(result, sort_keys=True).encode()).hexdigest()
            seen.append(({"tool": name, "arguments": arguments, "isError": bool(result.get("isError")),
                          "sha256": digest}, result_text(result)))
        return seen

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        assert isinstance(plan, CallPlan) and plan.upstream is not None and plan.pin is not None
        upstream, pin, subject = plan.upstream, plan.pin, plan.subject
        link = self.env.link(upstream)

        def forward(key: str) -> dict[str, Any]:
            # The MCP SDK's client side (httpx, anyio streams) loads with the first forwarded call, not
            # with the toolset: the MCP function's cold start never pays for it when no upstream is called.
            from . import client

            check = pin_check(upstream.name, subject["tool"], pin)
            try:
                result = client.run(lambda: client.call(link, subject["tool"], subject["arguments"], check))
            except client.OutcomeUnknown as exc:
                raise ActionError(
                    f"Outcome unknown: the call to {subject['tool']} was sent to {upstream.name} and no answer came "
                    f"({exc.message}). It may or may not have run; countersign does not send it again. Check "
                    f"{upstream.name} before asking again.") from None
            except client.UpstreamError as exc:
                raise ActionError(exc.message if exc.sent else f"{exc.message} Nothing was sent.") from None
            if result.get("isError"):
                raise ActionError(f"{upstream.name} answered {subject['tool']} with an error: "
                                  f"{result_text(result)[:2000]}")
            return {"upstream": result}

        label = f"send {subject['tool']} to {upstream.name}"
        return Effect({}, (), Outside(label, forward, resumable=False))

    def outcome_lines(self, result: dict) -> list[str]:
        parts = split_tool(self.name)
        return answer_lines(parts[0] if parts else self.name, result.get("upstream") or {})


def action_for(name: str, env: GatewayEnv) -> Action | None:
    """The action behind an upstream tool name (a new class per name: an action's name is a class attribute)."""
    if split_tool(name) is None:
        return None
    cls = type(f"UpstreamCall_{name}", (UpstreamCall,), {"name": name, "env": env,
                                                          "title": f"Preparing a confirmation of {name}"})
    return cls()
