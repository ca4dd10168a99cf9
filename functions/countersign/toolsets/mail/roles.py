"""Granting and revoking roles (class always: they grant or revoke authority).

Only an owner or admin may change roles; only an owner may make or unmake an owner; nobody changes
their own role; the last owner stays an owner. Roles live on the person records of the store.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from ...core.preview import Preview
from ...toolkit import ALWAYS, MANAGERS, ActionContext, ActionError, Arguments, Effect, RoleWrite, Step
from .action import MailAction

POWERS = {
    "owner": "everything, including roles of owners and workspace settings",
    "admin": "workspace settings, roles (except owners), publishing designs",
    "approver": "publishing designs when confirming launches and sends, approving designs",
    "member": "confirming their own agents' requests; cannot publish designs",
}


def _article(role: str) -> str:
    return "an" if role[0] in "aeiou" else "a"


def _find(ctx: ActionContext, email: str):
    wanted = email.strip().lower()
    for person in ctx.members():
        if person.email.lower() == wanted:
            return person
    raise ActionError(f"email: nobody with the email {email!r} is a member of this workspace.", field="email")


def _check_authority(ctx: ActionContext, target, new_role: str) -> None:
    me = ctx.person
    if me.role not in MANAGERS:
        raise ActionError(f"Only an owner or admin can change roles; you are {me.role}.", field="email")
    if target.id == me.id:
        raise ActionError("Nobody changes their own role; ask another owner or admin.", field="email")
    if me.role != "owner" and "owner" in (target.role, new_role):
        raise ActionError("Only an owner can make someone an owner or change an owner's role.", field="role")
    if target.role == "owner" and new_role != "owner":
        owners = [p for p in ctx.members() if p.role == "owner"]
        if len(owners) <= 1:
            raise ActionError("The workspace's last owner stays an owner.", field="email")


class GrantRoleArgs(Arguments):
    email: str = Field(min_length=3, max_length=254, description="The member's email")
    role: Literal["owner", "admin", "approver"] = Field(description="The role to grant")


class GrantRole(MailAction):
    name = "grant_role"
    title = "Preparing a role grant confirmation"
    description = "Give a workspace member the owner, admin or approver role."
    arguments = GrantRoleArgs
    gate = ALWAYS
    drift_message = "The member's role changed between the preview and the answer; nothing was granted."

    def prepare(self, args: GrantRoleArgs, ctx: ActionContext):
        target = _find(ctx, args.email)
        if target.role == args.role:
            raise ActionError(f"role: {target.email} is already {_article(args.role)} {args.role}.", field="role")
        _check_authority(ctx, target, args.role)
        subject = {"person": target.id, "email": target.email, "from": target.role, "to": args.role}
        title = f"Make {target.email} {_article(args.role)} {args.role} (now {target.role})"
        lines = [f"{args.role.capitalize()}s can: {POWERS[args.role]}"]
        return subject, Preview(title, lines), Effect.writes(
            {"person_id": target.id, "email": target.email, "role": args.role},
            [RoleWrite(target.id, expected=target.role, role=args.role)])

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"{result['email']} is now {_article(result['role'])} {result['role']}"]

    def next_steps(self, result, ctx):
        return [Step("grant_role", "Grant or revoke other roles if needed.")]


class RevokeRoleArgs(Arguments):
    email: str = Field(min_length=3, max_length=254, description="The member's email")


class RevokeRole(MailAction):
    name = "revoke_role"
    title = "Preparing a role removal confirmation"
    description = "Take a member's owner, admin or approver role away (they stay a member)."
    arguments = RevokeRoleArgs
    gate = ALWAYS
    drift_message = "The member's role changed between the preview and the answer; nothing was revoked."

    def prepare(self, args: RevokeRoleArgs, ctx: ActionContext):
        target = _find(ctx, args.email)
        if target.role == "member":
            raise ActionError(f"email: {target.email} is a member already; there is no role to revoke.", field="email")
        _check_authority(ctx, target, "member")
        subject = {"person": target.id, "email": target.email, "from": target.role, "to": "member"}
        title = f"Revoke the {target.role} role of {target.email}: back to member"
        lines = [f"They can no longer do: {POWERS[target.role]}", f"Members can: {POWERS['member']}"]
        return subject, Preview(title, lines), Effect.writes(
            {"person_id": target.id, "email": target.email, "role": "member"},
            [RoleWrite(target.id, expected=target.role, role="member")])

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"{result['email']} is a member again, with no other role"]


ACTIONS = [GrantRole(), RevokeRole()]
__all__ = ["ACTIONS"]
