"""Changing a workspace's upstreams: every change is itself a held request.

Filed by the CLI (``countersign upstream …``) or the Settings page, never by an agent (these
actions are no MCP tools), and confirmed on the page by a person. Adding or refreshing an upstream
lists its tools live, at the request and again at the click: the card shows every tool with the
class it will run under, and a tool list that moved in between refuses the click. What commits is
the approved snapshot, each tool pinned by the digest of its definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from ...core.canonical import canonical_json
from ...core.preview import Preview
from ...toolkit import ALWAYS, MANAGERS, Action, ActionContext, ActionError, Arguments, DocWrite, Effect, Plan
from .config import (
    CLASSES,
    KIND,
    NAME_RULE,
    Pin,
    Upstream,
    Witness,
    check_url,
    class_from_annotations,
    load,
    removed,
    stored,
    tool_digest,
)
from .env import GatewayEnv
from .review import WHAT, add_review, refresh_review
from .seal import SealError


@dataclass(frozen=True)
class ConfigPlan(Plan):
    upstream: Upstream | None = field(default=None, compare=False, repr=False)


def snapshot(env: GatewayEnv, upstream: Upstream) -> dict[str, dict[str, Any]]:
    """The upstream's tools now (tools that need task augmentation are left out: they cannot be forwarded)."""
    from . import client  # the mcp client, only when an upstream is called

    link = env.link(upstream)
    try:
        listed = client.run(lambda: client.list_tools(link))
    except client.Unreachable as exc:
        from .action import unavailable  # (cold start: the upstream call's module, loaded when one is called)

        raise unavailable(exc.message) from None
    except client.UpstreamError as exc:
        raise ActionError(exc.message) from None
    return {t["name"]: t for t in listed if (t.get("execution") or {}).get("taskSupport") != "required"}


MAX_CARD_TEXT = 200_000  # characters of tool definitions one card shows (a DynamoDB item holds 400 KB)


def check_card_size(lines: list[str], sections: list[dict[str, Any]], name: str) -> None:
    """Refuse a card whose tool definitions are too long to show whole: nothing is approved unseen."""
    size = sum(len(line) for line in lines) + len(canonical_json(sections))
    if size > MAX_CARD_TEXT:
        raise ActionError(f"name: the tools of {name} take {size:,} characters to show, more than one card shows "
                          f"({MAX_CARD_TEXT:,}); nothing is approved unseen, so it cannot be put behind the gate "
                          "as it is.", field="name")


STRICTNESS = ("read", "client", "held")


def stricter(a: str, b: str) -> str:
    """The class of the two that waits for more (``held`` over ``client`` over ``read``)."""
    return max(a, b, key=STRICTNESS.index)


def _subject(up: Upstream, credential: str | bool | None = None) -> dict:
    """What an approval of ``up`` approves: where it is, its credential (an add names it by a keyed
    digest, :meth:`.seal.Sealer.digest`, so that a request filed again with another credential is
    another request; a change that keeps it says whether there is one), each tool's pin, class and
    witnesses, and the version of its document it applies to (so a change made again after another
    is a new request, not one answered with an earlier card)."""
    return {"name": up.name, "where": up.where, "credential": bool(up.sealed) if credential is None else credential,
            "tools": {n: {"pin": p.digest, "class": p.cls, "witness": [w.to_dict() for w in p.witness]}
                      for n, p in sorted(up.tools.items())}, "version": up.version}


class _Config(Action):
    """A change of the workspace's upstreams. No agent reaches it (``agent_tool``, checked by
    :meth:`~countersign.gate.registry.Registry.agent_action`), and only an owner or admin may ask
    for it or confirm it: checked here, before anything is listed or started, as the CLI and the
    Settings page check it first."""

    gate = ALWAYS
    agent_tool = False
    env: GatewayEnv

    def plan(self, args: Any, ctx: ActionContext) -> Plan:
        if ctx.person.role not in MANAGERS:
            raise ActionError(f"Only the workspace's owners and admins manage its upstream servers; this card's "
                              f"person is {ctx.person.role}.", field="role")
        return self.change(args, ctx)

    def change(self, args: Any, ctx: ActionContext) -> Plan:  # pragma: no cover - abstract
        raise NotImplementedError

    def _existing(self, ctx: ActionContext, name: str) -> Upstream:
        up = load(ctx, name)
        if up is None:
            raise ActionError(f"name: this workspace has no upstream {name!r}.", field="name")
        return up

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        assert isinstance(plan, ConfigPlan)
        up = plan.upstream
        assert up is not None
        gone = bool(plan.subject.get("remove"))
        data = removed(up.name) if gone else up.to_data()
        return Effect.writes({"upstream": up.name, "removed" if gone else "tools": sorted(up.tools)},
                             [DocWrite(KIND, up.name, data, up.version)])


def named_tools(names: list[str], most: int = 12) -> str:
    """``read_file, write_file and 3 more``: an outcome's list of tool names."""
    shown = ", ".join(names[:most]) or "none"
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")


class AddArgs(Arguments):
    name: str = Field(description="The prefix its tools take (server__tool): lowercase letters and digits")
    url: str | None = Field(default=None, description="A Streamable HTTP URL")
    command: list[str] | None = Field(default=None, description="Locally: the command that starts a stdio server")
    sealed: str | None = Field(default=None, description="Headers sealed with the server's keys")


class AddUpstream(_Config):
    name = "upstream_add"
    arguments = AddArgs
    title = "Preparing to add an upstream server"
    description = "Put an upstream MCP server behind the gate."

    def change(self, args: AddArgs, ctx: ActionContext) -> Plan:
        if not NAME_RULE.fullmatch(args.name):
            raise ActionError("name: 1 to 16 lowercase letters and digits, starting with a letter.", field="name")
        existing, version = stored(ctx, args.name)  # (a removed one's version: adding it again is a new request)
        if existing is not None:
            raise ActionError(f"name: the upstream {args.name!r} exists; remove it first.", field="name")
        if bool(args.url) == bool(args.command):
            raise ActionError("Give either a URL or a command.", field="url")
        if args.command and not self.env.settings.upstream_stdio:
            raise ActionError("command: this server runs no stdio upstreams (only HTTP on Lambda).", field="command")
        url = check_url(args.url, allow_private=self.env.settings.upstream_private) if args.url else None
        credential = None
        if args.sealed:
            try:
                credential = self.env.sealer.digest(ctx.workspace_id, args.name, args.sealed)
            except SealError as exc:
                raise ActionError(f"sealed: {exc}; seal the credential again.", field="sealed") from None
        up = Upstream(ctx.workspace_id, args.name, url, tuple(args.command or ()), args.sealed)
        live = snapshot(self.env, up)
        up = Upstream(up.workspace_id, up.name, up.url, up.command, up.sealed,
                      {n: Pin(t, tool_digest(t), class_from_annotations(t)) for n, t in live.items()}, version)
        tools, sections = add_review(up.name, up.tools)
        lines = [f"Where: {up.where}", "A credential is set (not shown)." if up.sealed else "No credential.", *tools]
        check_card_size(lines, sections, up.name)
        return ConfigPlan(_subject(up, credential or False),
                          Preview(f"Put the MCP server {up.name} behind the gate?", lines, sections), up)

    def outcome_lines(self, result: dict) -> list[str]:
        tools = result["tools"]
        return [f"{result['upstream']} is behind the gate", f"Its {len(tools)} tools: {named_tools(tools)}"]


class NameArgs(Arguments):
    name: str = Field(description="The upstream's name (its prefix)")


class RefreshUpstream(_Config):
    name = "upstream_refresh"
    arguments = NameArgs
    title = "Preparing to approve an upstream's tools again"
    description = "Approve an upstream's tools as they are listed now (after they changed)."

    def change(self, args: NameArgs, ctx: ActionContext) -> Plan:
        before = self._existing(ctx, args.name)
        live = snapshot(self.env, before)
        pins = {}
        for n, t in live.items():
            old = before.tools.get(n)
            digest = tool_digest(t)
            if old is not None and old.digest == digest:
                pins[n] = old
            elif old is not None:  # changed: the owner's choice stands unless the tool now asks for more
                witness = tuple(w for w in old.witness if w.tool in live)
                pins[n] = Pin(t, digest, stricter(old.cls, class_from_annotations(t)), witness)
            else:
                pins[n] = Pin(t, digest, class_from_annotations(t))
        if {n: p.digest for n, p in pins.items()} == {n: p.digest for n, p in before.tools.items()}:
            raise ActionError(f"name: the tools of {args.name} are as approved; nothing to approve.", field="name")
        up = Upstream(before.workspace_id, before.name, before.url, before.command, before.sealed, pins, before.version)
        tools, sections = refresh_review(pins, before.tools)
        lines = [f"Where: {up.where}", *tools]
        check_card_size(lines, sections, up.name)
        return ConfigPlan(_subject(up), Preview(f"Approve the tools of {up.name} as they are now?", lines, sections),
                          up)

    def outcome_lines(self, result: dict) -> list[str]:
        tools = result["tools"]
        return [f"The tools of {result['upstream']} are approved as they are now",
                f"Its {len(tools)} tools: {named_tools(tools)}"]


class RemoveUpstream(_Config):
    name = "upstream_remove"
    arguments = NameArgs
    title = "Preparing to remove an upstream server"
    description = "Take an upstream MCP server out of the gate."

    def change(self, args: NameArgs, ctx: ActionContext) -> Plan:
        up = self._existing(ctx, args.name)
        subject = {"remove": up.name, "version": up.version}
        lines = [f"Where: {up.where}", f"Its {len(up.tools)} tools disappear from every agent of this workspace."]
        return ConfigPlan(subject, Preview(f"Remove the MCP server {up.name}?", lines), up)

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"{result['upstream']} is removed: its {len(result['removed'])} tools are gone from every agent "
                "of this workspace"]


class WitnessArgs(Arguments):
    tool: str = Field(description="A read tool of the same upstream")
    arguments: dict[str, str] = Field(default_factory=dict,
                                      description="The read's arguments: '$name' takes the write's argument name")


class PolicyArgs(Arguments):
    name: str = Field(description="The upstream's name (its prefix)")
    tool: str = Field(description="The tool, without the prefix")
    cls: str | None = Field(default=None, description="read, held or client")
    witness: list[WitnessArgs] | None = Field(default=None, description="Reads whose answers the card shows")


class UpstreamPolicy(_Config):
    name = "upstream_policy"
    arguments = PolicyArgs
    title = "Preparing a change to an upstream tool's policy"
    description = "Choose when an upstream tool waits, and which reads witness it."

    def change(self, args: PolicyArgs, ctx: ActionContext) -> Plan:
        up = self._existing(ctx, args.name)
        pin = up.tools.get(args.tool)
        if pin is None:
            raise ActionError(f"tool: {args.name} has no approved tool {args.tool!r}.", field="tool")
        if args.cls is not None and args.cls not in CLASSES:
            raise ActionError(f"cls: one of {', '.join(CLASSES)}.", field="cls")
        witness = pin.witness if args.witness is None else tuple(Witness(w.tool, w.arguments) for w in args.witness)
        for w in witness:
            if w.tool not in up.tools or up.tools[w.tool].cls != "read":
                raise ActionError(f"witness: {w.tool} is not an approved read of {args.name}.", field="witness")
        new = Pin(pin.definition, pin.digest, args.cls or pin.cls, witness)
        changed = Upstream(up.workspace_id, up.name, up.url, up.command, up.sealed, dict(up.tools, **{args.tool: new}),
                           up.version)
        lines = [f"{args.tool} {WHAT[new.cls]} (was: {WHAT[pin.cls]})."]
        lines += [f"Before it runs, the card shows {w.tool} {w.arguments}." for w in witness] or ["No witness reads."]
        return ConfigPlan(_subject(changed),
                          Preview(f"Change how {args.name}__{args.tool} is gated?", lines), changed)

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"The new policy for the tools of {result['upstream']} is in force"]


MANAGE = (AddUpstream, RefreshUpstream, RemoveUpstream, UpstreamPolicy)
