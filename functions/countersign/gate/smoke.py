"""``countersign_smoke``: the one action of the smoke workspace (:mod:`countersign.core.smoke`).

``countersign smoke`` files it through ``request_confirmation`` and confirms it on the confirm
API, proving the whole path of a held write against a running deployment: MCP, the gate, the
ticket, the card's one transaction, the page's answer and the agent's status. It writes nothing
but its card (the effect has no writes), is in no tool list (the registry finds it by name, as
the gateway's tools), and is refused in every workspace but the smoke workspace, where it is the
only action an agent may file (:meth:`countersign.gate.desk.CardDesk.question`).
"""

from __future__ import annotations

from pydantic import Field

from ..core.preview import Preview
from ..core.smoke import SMOKE_TOOL, is_smoke_workspace
from ..toolkit import ALWAYS, Action, ActionContext, ActionError, Arguments, Effect, Plan, Toolset


class SmokeArgs(Arguments):
    run: str = Field(min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_-]+$",
                     description="The smoke run's id: each run files a card of its own")


class SmokeCheck(Action):
    name = SMOKE_TOOL
    title = "Smoke test"
    description = "A smoke test's card: confirming it writes nothing. Only in the smoke workspace."
    arguments = SmokeArgs
    gate = ALWAYS
    destructive = False

    def plan(self, args: SmokeArgs, ctx: ActionContext) -> Plan:
        if not is_smoke_workspace(ctx.workspace.id):
            raise ActionError(f"Unknown tool {SMOKE_TOOL!r}.", field="tool")
        return Plan({"run": args.run}, Preview(f"Smoke test {args.run}",
                                               ["Confirming it writes nothing: it proves the way a card travels."]))

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        return Effect.writes({"run": plan.subject["run"]})

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"Smoke test {result.get('run', '')} confirmed; nothing was written."]


SMOKE_CHECK = SmokeCheck()
TOOLSET = Toolset("smoke", resolve=lambda name: SMOKE_CHECK if name == SMOKE_TOOL else None)
