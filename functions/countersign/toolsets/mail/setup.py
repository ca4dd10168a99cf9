"""Setup: workspace name, brand kit, finishing setup (class never) and the return address
(class ``when``: runs at once until a campaign or piece exists, held from then on)."""

from __future__ import annotations

import re

from pydantic import Field

from ...core.preview import Preview, one_line
from ...toolkit import (
    MAX_WORKSPACE_NAME,
    NEVER,
    ActionContext,
    ActionError,
    Arguments,
    Effect,
    Step,
    WorkspaceNameWrite,
    when,
)
from .action import MailAction, put
from .snapshot import Mail
from .text import address_line, q
from .validation import check_https_url, validate_name

COLOR_RE = re.compile(r"^#[0-9a-fA-F]{6}$")


class SetWorkspaceNameArgs(Arguments):
    name: str = Field(min_length=1, max_length=MAX_WORKSPACE_NAME, description="The workspace's new name")


class SetWorkspaceName(MailAction):
    name = "set_workspace_name"
    title = "Renaming the workspace"
    description = "Set the workspace name printed in the app, on confirm pages and in emails."
    arguments = SetWorkspaceNameArgs
    gate = NEVER
    destructive = False
    drift_message = "The workspace name changed between the preview and the answer; nothing was renamed."

    def prepare(self, args: SetWorkspaceNameArgs, ctx: ActionContext):
        # The name lives on the workspace record (what confirm pages, emails and every toolset
        # read). The subject carries the current name, so a rename in between is drift.
        new = validate_name(args.name, "name", MAX_WORKSPACE_NAME)
        old = Mail(ctx).workspace_name()
        if new == old:
            raise ActionError(f"name: the workspace is already called {q(old)}.", field="name")
        subject = {"workspace_name": {"from": old, "to": new}}
        preview = Preview(f"Rename the workspace {q(old)} to {q(new)}")
        return subject, preview, Effect.writes({"name": new}, [WorkspaceNameWrite(expected=old, name=new)])

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"The workspace is now called {q(result['name'])}"]

    def next_steps(self, result, ctx):
        return [Step("update_brand_kit", "Set the brand colours, logo and font.")]


class BrandKitArgs(Arguments):
    primary_color: str | None = Field(default=None, description="Hex colour, e.g. #1a2b3c")
    accent_color: str | None = Field(default=None, description="Hex colour, e.g. #ff8800")
    logo_url: str | None = Field(default=None, max_length=500, description="https:// URL of the logo")
    font: str | None = Field(default=None, max_length=60, description="Font family name")
    tagline: str | None = Field(default=None, max_length=140, description="Short tagline")


BRAND_LABELS = {"primary_color": "primary colour", "accent_color": "accent colour", "logo_url": "logo",
                "font": "font", "tagline": "tagline"}


class UpdateBrandKit(MailAction):
    name = "update_brand_kit"
    title = "Updating the brand kit"
    description = "Change brand colours, logo, font or tagline used by new designs."
    arguments = BrandKitArgs
    gate = NEVER
    destructive = False
    drift_message = "The brand kit changed between the preview and the answer; nothing was written."

    def prepare(self, args: BrandKitArgs, ctx: ActionContext):
        mail = Mail(ctx)
        given = args.model_dump(exclude_none=True)
        if not given:
            raise ActionError("Give at least one of primary_color, accent_color, logo_url, font, tagline.")
        for key in ("primary_color", "accent_color"):
            if key in given and not COLOR_RE.fullmatch(given[key]):
                raise ActionError(f"{key}: {given[key]!r} is not a hex colour like #1a2b3c.", field=key)
            if key in given:
                given[key] = given[key].lower()
        if "logo_url" in given:
            check_https_url(given["logo_url"], "logo_url")
        for key in ("font", "tagline"):
            if key in given:
                given[key] = validate_name(given[key], key, 140)
        kit = dict(mail.profile.data.get("brand_kit") or {})
        changes = [{"field": k, "from": kit.get(k), "to": v} for k, v in sorted(given.items()) if kit.get(k) != v]
        if not changes:
            raise ActionError("The brand kit already has these values; nothing to change.")
        kit.update({c["field"]: c["to"] for c in changes})
        lines = [f"{BRAND_LABELS[c['field']].capitalize()}: {c['from'] or '(none)'} → {c['to']}" for c in changes]
        subject = {"brand_kit": changes}
        preview = Preview(f"Update the brand kit of {q(mail.workspace_name())}", lines)
        data = dict(mail.profile.data, brand_kit=kit)
        return subject, preview, Effect.writes({"brand_kit": kit}, [put(mail.profile, data)])

    def outcome_lines(self, result: dict) -> list[str]:
        kit = result["brand_kit"]
        return ["Brand kit saved", *(f"{label.capitalize()}: {kit[key]}" for key, label in BRAND_LABELS.items()
                                     if kit.get(key))]


class NoArgs(Arguments):
    pass


class FinishSetup(MailAction):
    name = "finish_setup"
    title = "Finishing setup"
    description = "Mark workspace setup as finished once it has a return address and a sender."
    arguments = NoArgs
    gate = NEVER
    destructive = False
    drift_message = "The workspace profile changed between the preview and the answer; setup was not finished."

    def prepare(self, args, ctx: ActionContext):
        mail = Mail(ctx)
        profile = mail.profile.data
        if profile.get("setup_finished"):
            raise ActionError("Setup is already finished.")
        missing = []
        if not profile.get("return_address"):
            missing.append("a return address (set_return_address)")
        if not mail.senders:
            missing.append("a sender (update_workspace_preferences)")
        if missing:
            raise ActionError("Setup cannot finish yet: the workspace needs " + " and ".join(missing) + ".")
        subject = {"setup_finished": {"from": False, "to": True}, "return_address": profile["return_address"]}
        preview = Preview(f"Finish setting up {q(mail.workspace_name())}",
                          [f"Return address: {address_line(profile['return_address'])}",
                           f"Senders: {', '.join(sorted(s.data['name'] for s in mail.senders.values()))}"])
        data = dict(profile, setup_finished=True)
        return subject, preview, Effect.writes({"setup_finished": True}, [put(mail.profile, data)])

    def outcome_lines(self, result: dict) -> list[str]:
        return ["Setup is finished"]

    def next_steps(self, result, ctx):
        return [Step("import_contacts", "Import the people to mail."),
                Step("list_designs", "Check the designs before the first campaign.")]


class ReturnAddressArgs(Arguments):
    name: str = Field(min_length=1, max_length=120, description="Company or person on the return address")
    line1: str = Field(min_length=1, max_length=120)
    line2: str | None = Field(default=None, max_length=120)
    city: str = Field(min_length=1, max_length=80)
    region: str | None = Field(default=None, max_length=80)
    postal_code: str = Field(min_length=1, max_length=20)
    country: str = Field(min_length=2, max_length=2, description="ISO 3166 two-letter country code, e.g. US")


def _mail_exists(args, ctx: ActionContext) -> bool:
    return Mail(ctx).anything_mailable_exists()


class SetReturnAddress(MailAction):
    name = "set_return_address"
    title = "Preparing a return-address change"
    description = "Set the return address printed on every piece."
    arguments = ReturnAddressArgs
    gate = when("a campaign or piece exists", _mail_exists)
    drift_message = ("The return address, or the campaigns and pieces that print it, changed between the preview "
                     "and the answer; the address was not changed.")

    def prepare(self, args: ReturnAddressArgs, ctx: ActionContext):
        mail = Mail(ctx)
        new = {k: (v.strip() if isinstance(v, str) else v) for k, v in args.model_dump(exclude_none=True).items()}
        for key in ("name", "line1", "city", "postal_code"):
            new[key] = validate_name(new[key], key)
        for key in ("line2", "region"):  # optional: one line too, and may be left empty
            if key in new:
                new[key] = one_line(new[key])
        new["country"] = new["country"].upper()
        if not new["country"].isalpha():
            raise ActionError("country: use a two-letter country code such as US or GB.", field="country")
        old = mail.profile.data.get("return_address")
        if old == new:
            raise ActionError("The return address is already exactly this; nothing to change.")
        in_use = mail.anything_mailable_exists()
        lines = [f"New: {address_line(new)}", f"Was: {address_line(old)}"]
        if in_use:
            live = sum(1 for c in mail.campaigns.values() if c.data.get("status") in ("live", "paused"))
            lines.append(f"Printed on every piece from now on ({live} live or paused campaigns)")
        subject = {"return_address": {"from": old, "to": new}, "in_use": in_use}
        preview = Preview(f"Set the return address to {address_line(new)}", lines)
        data = dict(mail.profile.data, return_address=new)
        return subject, preview, Effect.writes({"return_address": new}, [put(mail.profile, data)])

    def outcome_lines(self, result: dict) -> list[str]:
        return [f"Return address: {address_line(result['return_address'])}"]

    def next_steps(self, result, ctx):
        if not Mail(ctx).profile.data.get("setup_finished"):
            return [Step("finish_setup", "Finish setting up the workspace.")]
        return []


ACTIONS = [SetWorkspaceName(), UpdateBrandKit(), FinishSetup(), SetReturnAddress()]
__all__ = ["ACTIONS"]
