"""What the owner's held setting changes share: ``set_passkey_policy``, ``set_card_lifetimes``,
``set_quorum_rules``, ``set_escalation_rules`` and ``set_standing_grants_never``.

Each changes one workspace setting, and only the workspace's owner may file it (each says in its
own words what the owner alone may do). Its plan's subject is the setting with its value as the
plan read it (``from``) and as it is to be (``to``): the fingerprint covers what was read, so a
change made meanwhile is drift, and the effect is one :class:`SettingWrite` that expects ``from``,
so a change that slipped in between the re-plan and the commit is refused rather than lost. A
list setting's rules travel the subject as a JSON list and are written as a tuple.
"""

from __future__ import annotations

from typing import Any, ClassVar

from ..core.preview import Preview
from ..toolkit import Action, ActionContext, ActionError, Effect, Plan, SettingWrite


class OwnerSettingChange(Action):
    """A held request that changes the workspace setting ``setting`` (the owner only).

    A subclass names the setting, ``owner_can`` (what only the owner can do: "Only the workspace's
    owner can <owner_can>; you are <role>.") and the field that refusal names, calls
    :meth:`refuse_unless_owner` and :meth:`change` from its ``plan``, and says in :meth:`result`
    what a change to a value did (the effect's result)."""

    setting: ClassVar[str]
    owner_can: ClassVar[str]
    owner_field: ClassVar[str] = "rules"

    def refuse_unless_owner(self, ctx: ActionContext) -> None:
        if ctx.person.role != "owner":
            raise ActionError(f"Only the workspace's owner can {self.owner_can}; you are {ctx.person.role}.",
                              field=self.owner_field)

    def change(self, current: Any, after: Any, preview: Preview) -> Plan:
        """The plan of changing the setting from ``current`` (as read) to ``after``."""
        return Plan({"setting": self.setting, "from": current, "to": after}, preview)

    def result(self, after: Any) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply(self, plan: Plan, ctx: ActionContext) -> Effect:
        change = plan.subject
        return Effect.writes(self.result(change["to"]), [
            SettingWrite(self.setting, expected=_as_stored(change["from"]), value=_as_stored(change["to"]))])


def _as_stored(value: Any) -> Any:
    """A value of the plan's subject as a :class:`SettingWrite` takes it (a list setting's rules: a tuple)."""
    return tuple(value) if isinstance(value, list) else value
