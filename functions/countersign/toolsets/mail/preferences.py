"""Workspace preferences and senders, and the *Ask before drafting steps* setting.

* ``update_workspace_preferences`` runs at once (class never), except a change to a sender's
  meeting link, email or default once any mail has been sent: landing pages of mail already out
  find their sender through these, so that change is held (class ``when``).
* ``set_ask_before_drafting``: turning the setting off is class always; turning it on runs at once.
  No tool changes *Ask before approvals* (an owner or admin sets it on the settings page).
"""

from __future__ import annotations

import re
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field

from ...core.ids import new_id
from ...core.preview import Preview
from ...toolkit import (
    ALWAYS,
    MANAGERS,  # (may change roles and the drafting setting)
    NEVER,
    ActionContext,
    ActionError,
    Arguments,
    DocWrite,
    Effect,
    SettingWrite,
    Step,
    when,
)
from .action import MailAction, create, put
from .kinds import KIND_SENDER
from .snapshot import Mail
from .text import q
from .validation import check_https_url, validate_name

EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _mail_sent(args, ctx: ActionContext) -> bool:
    return Mail(ctx).mail_has_gone_out()


SENDER_GATE = when("mail has been sent", _mail_sent)


class PreferencesArgs(Arguments):
    timezone: str | None = Field(default=None, max_length=64, description="IANA time zone, e.g. Europe/London")
    signature: str | None = Field(default=None, max_length=500, description="Sign-off printed under the copy")
    default_format: Literal["postcard", "letter", "handwritten"] | None = Field(default=None)
    sender_id: str | None = Field(default=None, max_length=64, description="The sender to change (omit to add one)")
    sender_name: str | None = Field(default=None, max_length=120, description="Sender name")
    sender_email: str | None = Field(default=None, max_length=254, description="Sender email")
    sender_meeting_link: str | None = Field(default=None, max_length=500, description="https:// booking link")
    sender_default: bool | None = Field(default=None, description="Make this sender the default")


def touches_sender_routing(args: PreferencesArgs) -> bool:
    """A change to an existing sender's meeting link, email or default, or a new default sender."""
    if args.sender_id is not None:
        return any(v is not None for v in (args.sender_email, args.sender_meeting_link, args.sender_default))
    return bool(args.sender_default)


PREFERENCE_LABELS = {"timezone": "time zone", "signature": "signature", "default_format": "default format",
                     "new_sender": "a new sender", "sender_name": "sender name", "sender_email": "sender email",
                     "sender_meeting_link": "sender meeting link", "sender_default": "default sender"}


class UpdateWorkspacePreferences(MailAction):
    name = "update_workspace_preferences"
    hold_rule = (
        "Runs at once, except a change to a sender's meeting link, email or default once any mail has "
        'been sent: that waits for a person on the confirm page.')
    title = "Preparing a preferences change"
    description = ('Change time zone, signature, default format, or a sender (name, email, meeting link, '
                   'default).')
    arguments = PreferencesArgs
    gate = SENDER_GATE
    destructive = False
    drift_message = (
        "The workspace preferences or senders changed between the preview and the answer; nothing was written."
    )

    def gate_class(self, args: PreferencesArgs, ctx: ActionContext):
        return SENDER_GATE if touches_sender_routing(args) else NEVER

    def prepare(self, args: PreferencesArgs, ctx: ActionContext):
        mail = Mail(ctx)
        prefs = dict(mail.profile.data.get("preferences") or {})
        changes, lines, writes = [], [], []
        if args.timezone is not None:
            try:
                ZoneInfo(args.timezone)
            except (ZoneInfoNotFoundError, ValueError):
                raise ActionError(f"timezone: {args.timezone!r} is not an IANA time zone.", field="timezone") from None
        for key, label_ in (
            ("timezone", "Time zone"),
            ("signature", "Signature"),
            ("default_format", "Default format"),
        ):
            value = getattr(args, key)
            if value is not None and prefs.get(key) != value:
                changes.append({"field": key, "from": prefs.get(key), "to": value})
                lines.append(f"{label_}: {prefs.get(key) or '(none)'} → {value or '(none)'}")
                prefs[key] = value
        if changes:
            writes.append(put(mail.profile, dict(mail.profile.data, preferences=prefs)))
        sender_changes, sender_writes, sender_lines = self._senders(args, mail)
        changes.extend(sender_changes)
        writes.extend(sender_writes)
        lines.extend(sender_lines)
        if not changes:
            raise ActionError("Nothing to change: give at least one preference or sender field with a new value.")
        if any(c["field"] in ("sender_email", "sender_meeting_link", "sender_default") for c in sender_changes) \
                and mail.mail_has_gone_out():
            lines.append("Mail already sent finds its sender through these details: landing pages change too")
        subject = {"preferences": changes}
        preview = Preview(f"Update the preferences of {q(mail.workspace_name())}", lines)
        return subject, preview, Effect.writes({"changed": [c["field"] for c in changes]}, writes)

    def outcome_lines(self, result: dict) -> list[str]:
        changed = [PREFERENCE_LABELS.get(f, "another preference") for f in result["changed"]]
        shown = ", ".join(dict.fromkeys(changed))
        return [f"Updated: {shown[:1].upper()}{shown[1:]}"]

    def _senders(self, args: PreferencesArgs, mail: Mail) -> tuple[list[dict[str, Any]], list[DocWrite], list[str]]:
        fields = ("sender_name", "sender_email", "sender_meeting_link", "sender_default")
        if args.sender_id is None and all(getattr(args, f) is None for f in fields):
            return [], [], []
        if args.sender_email is not None and not EMAIL_RE.fullmatch(args.sender_email):
            raise ActionError(f"sender_email: {args.sender_email!r} is not an email address.", field="sender_email")
        if args.sender_meeting_link:
            check_https_url(args.sender_meeting_link, "sender_meeting_link")
        changes: list[dict[str, Any]] = []
        writes: list[DocWrite] = []
        lines: list[str] = []
        if args.sender_id is None:
            if not args.sender_name or not args.sender_email:
                raise ActionError(
                    "sender_name and sender_email: a new sender needs both (or give sender_id to change one).",
                    field="sender_id",
                )
            make_default = bool(args.sender_default) or not mail.senders
            data = {"name": validate_name(args.sender_name, "sender_name"), "email": args.sender_email,
                    "meeting_link": args.sender_meeting_link or "", "default": make_default}
            changes.append({"field": "new_sender", "from": None, "to": data})
            lines.append(
                f"Add sender {q(data['name'])} <{data['email']}>" + (" as the default" if make_default else "")
            )
            target_id = new_id("sd_")
            writes.append(create(KIND_SENDER, target_id, data))
            if make_default:
                writes.extend(self._undefault(mail, except_id=None, changes=changes, lines=lines))
            return changes, writes, lines
        sender = mail.sender(args.sender_id)
        data = dict(sender.data)
        for key, f in (("name", "sender_name"), ("email", "sender_email"), ("meeting_link", "sender_meeting_link")):
            value = getattr(args, f)
            if value is not None and data.get(key) != value:
                if key == "name":
                    value = validate_name(value, f)
                changes.append({"field": f, "sender": sender.id, "from": data.get(key), "to": value})
                lines.append(
                    f"Sender {q(sender.data['name'])} {key.replace('_', ' ')}: {data.get(key) or '(none)'} → {value}"
                )
                data[key] = value
        if args.sender_default is not None and bool(data.get("default")) != args.sender_default:
            if not args.sender_default:
                raise ActionError("sender_default: make another sender the default instead of removing it.",
                                  field="sender_default")
            changes.append({"field": "sender_default", "sender": sender.id, "from": False, "to": True})
            lines.append(f"Sender {q(sender.data['name'])} becomes the default sender")
            data["default"] = True
            writes.extend(self._undefault(mail, except_id=sender.id, changes=changes, lines=lines))
        if changes:
            writes.append(put(sender, data))
        return changes, writes, lines

    @staticmethod
    def _undefault(mail: Mail, except_id, changes, lines):
        out = []
        for other in mail.senders.values():
            if other.id != except_id and other.data.get("default"):
                out.append(put(other, dict(other.data, default=False)))
                changes.append({"field": "sender_default", "sender": other.id, "from": True, "to": False})
                lines.append(f"Sender {q(other.data['name'])} is no longer the default")
        return out


class DraftingSettingArgs(Arguments):
    enabled: bool = Field(description="true: ask before drafting steps; false: let them run at once")


DRAFTING_TOOLS = "import_contacts, generate_design_image, polish_copywriting and rewrite_waiting_drafts"


class SetAskBeforeDrafting(MailAction):
    name = "set_ask_before_drafting"
    hold_rule = 'Turning the setting off always waits for a person on the confirm page; turning it on runs at once.'
    title = "Preparing an ask-before-drafting change"
    description = 'Turn the workspace setting Ask before drafting steps on or off.'
    arguments = DraftingSettingArgs
    gate = when("turning the setting off", lambda args, ctx: not args.enabled)
    destructive = False
    drift_message = ("The setting Ask before drafting steps changed between the preview and the answer; "
                     "nothing was written.")

    def gate_class(self, args: DraftingSettingArgs, ctx: ActionContext):
        return NEVER if args.enabled else ALWAYS

    def prepare(self, args: DraftingSettingArgs, ctx: ActionContext):
        current = bool(ctx.workspace.setting("ask_before_drafting"))
        if current == args.enabled:
            raise ActionError(f"Ask before drafting steps is already {'on' if current else 'off'}.", field="enabled")
        if not args.enabled and ctx.person.role not in MANAGERS:
            raise ActionError(
                f"Only an owner or admin can turn Ask before drafting steps off; you are {ctx.person.role}.",
                field="enabled",
            )
        if args.enabled:
            preview = Preview("Ask before drafting steps again",
                              [f"{DRAFTING_TOOLS} will wait for a person on the confirm page"])
        else:
            preview = Preview("Stop asking before drafting steps", [
                f"{DRAFTING_TOOLS} will run at once, without a card",
                "Adding a list to a live campaign still waits for a person",
                "Launching, sending, spending, suppression, roles and approvals are not affected",
            ])
        subject = {"setting": "ask_before_drafting", "from": current, "to": args.enabled}
        write = SettingWrite("ask_before_drafting", expected=current, value=args.enabled)
        return subject, preview, Effect.writes({"ask_before_drafting": args.enabled}, [write])

    def outcome_lines(self, result: dict) -> list[str]:
        if result["ask_before_drafting"]:
            return ["Drafting steps now wait for a yes"]
        return ["Drafting steps now run without asking"]

    def next_steps(self, result, ctx):
        return [Step("list_campaigns", "Carry on with the drafting work.")]


ACTIONS = [UpdateWorkspacePreferences(), SetAskBeforeDrafting()]
__all__ = ["ACTIONS"]
