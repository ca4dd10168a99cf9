"""Visual regression: each view at 360 px (light, and the waiting list dark too) compared with its
PNG baseline in tests/browser/snapshots/, pixel by pixel (Pillow), on every run.

The data are fixed (tests/browser/scene.py, a fixed person) and the clock frozen, on the server
and in the page, so a screenshot is the same on every run of the same Chromium with the same fonts
(Debian's fonts-dejavu-core). A change of the page's look is made on purpose:

    COUNTERSIGN_UPDATE_SNAPSHOTS=1 python -m pytest tests/browser/test_snapshots.py

rewrites the baselines (and snapshots/CHROMIUM, the version they were taken with); review the PNGs
in the diff before committing them. A missing baseline fails, saying that; it never skips.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from PIL import Image, ImageChops
from playwright.sync_api import expect

from tests.browser import scene as scenes
from tests.browser.pages import ARTIFACTS, card, new_context, ready, sign_in

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
VERSION_FILE = SNAPSHOTS / "CHROMIUM"
UPDATE = os.environ.get("COUNTERSIGN_UPDATE_SNAPSHOTS") == "1"
HOW = "COUNTERSIGN_UPDATE_SNAPSHOTS=1 python -m pytest tests/browser/test_snapshots.py"
FROZEN = int(datetime(2026, 12, 5, 9, 30, tzinfo=UTC).timestamp())
PHONE = {"viewport": {"width": 360, "height": 740}, "device_scale_factor": 1, "is_mobile": True, "has_touch": True,
         "locale": "en-US", "timezone_id": "UTC", "reduced_motion": "reduce"}
GREY_TOLERANCE = 16  # a pixel counts as changed when its grey difference exceeds this (of 255)
PIXEL_TOLERANCE = 20  # and the shot as changed when more pixels than this did


@pytest.fixture(scope="module")
def scene(live):
    runtime, server = live
    thaw = scenes.frozen(runtime, FROZEN)
    try:
        tenant = scenes.tenant_with_email(runtime, server.origin, "ada@example.com", "Ada Lovelace")
        built = scenes.build(tenant)
        scenes.channels(tenant, FROZEN, slack_connected=True)
        scenes.pin_last_use(tenant, FROZEN)
        yield built
    finally:
        thaw()


def compare(page, name: str, browser_version: str) -> str | None:
    """None when ``name``'s screenshot matches its baseline (or was just written), else why not."""
    shot = page.screenshot(full_page=True, animations="disabled", caret="hide")
    baseline = SNAPSHOTS / f"{name}.png"
    if UPDATE:
        SNAPSHOTS.mkdir(exist_ok=True)
        baseline.write_bytes(shot)
        return None
    out = ARTIFACTS / "snapshots"
    out.mkdir(parents=True, exist_ok=True)
    actual_path = out / f"{name}.actual.png"
    actual_path.write_bytes(shot)
    if not baseline.exists():
        return f"{name}: no baseline {baseline.name}; create it with {HOW} (this shot: {actual_path})"
    with Image.open(baseline) as b, Image.open(actual_path) as a:
        expected, actual = b.convert("RGB"), a.convert("RGB")
    taken = VERSION_FILE.read_text().strip() if VERSION_FILE.exists() else "an unrecorded version"
    versions = f"baselines taken with Chromium {taken}, this run Chromium {browser_version}"
    if expected.size != actual.size:
        return f"{name}: size {actual.size[0]}x{actual.size[1]}, baseline {expected.size[0]}x{expected.size[1]} " \
               f"({versions}; this shot: {actual_path})"
    difference = ImageChops.difference(expected, actual)
    grey = difference.convert("L")
    changed = sum(grey.histogram()[GREY_TOLERANCE + 1:])
    if changed <= PIXEL_TOLERANCE:
        return None
    box = grey.point(lambda v: 255 if v > GREY_TOLERANCE else 0).getbbox()
    diff_path = out / f"{name}.diff.png"
    difference.point(lambda v: min(255, v * 4)).save(diff_path)
    return (f"{name}: {changed} pixels changed in the box {box} (left, top, right, bottom) ({versions}); "
            f"this shot: {actual_path}, the difference: {diff_path}. If the change is meant, {HOW}")


def test_every_view_looks_as_it_did(scene, browser):
    origin, tenant = scene.origin, scene.tenant
    version = browser.version
    failures: list[str] = []
    ctx = new_context(browser, **PHONE)
    ctx.clock.set_fixed_time(datetime.fromtimestamp(FROZEN, UTC))
    try:
        page = ctx.new_page()

        def shoot(name: str) -> None:
            failure = compare(page, name, version)
            if failure:
                failures.append(failure)

        def snap(path: str, view: str, name: str) -> None:
            page.goto(origin + path)
            ready(page, view)
            shoot(name)

        snap(scenes.consent_url(origin).removeprefix(origin), "signin", "signin")
        sign_in(page, tenant)
        snap("/confirm", "confirm", "waiting")
        expect(page.locator("article.card[data-state=pending]")).to_have_count(len(scene.pending))
        page.emulate_media(color_scheme="dark")
        snap("/confirm", "confirm", "waiting-dark")
        page.emulate_media(color_scheme="light")
        snap(f"/confirm?card={scene.pending['mail']}", "card", "card-mail")
        card(page, scene.pending["mail"]).get_by_role("button", name="Decline").click()
        shoot("card-mail-decline-form")
        snap(f"/confirm?card={scene.pending['budget']}", "card", "card-budget")
        card(page, scene.pending["budget"]).get_by_role("button", name="Edit").click()
        shoot("card-budget-edit-form")
        workspaces = tenant.store.workspaces  # "Allow this again…" is offered where no passkey is needed to grant
        workspaces.update_workspace_settings(tenant.workspace_id, {"passkey_policy": "never"})
        try:
            snap(f"/confirm?card={scene.pending['budget']}", "card", "card-budget-no-passkey")
            card(page, scene.pending["budget"]).get_by_role("button", name="Allow this again…").click()
            expect(page.get_by_label("Name of the grant")).to_be_focused()
            shoot("card-budget-grant-form")
        finally:
            workspaces.update_workspace_settings(tenant.workspace_id, {"passkey_policy": "risky"})
        snap(f"/confirm?card={scene.answered['granted']}", "card", "outcome-granted")
        snap(f"/confirm?card={scene.answered['completed']}", "card", "outcome-confirmed")
        snap(f"/confirm?card={scene.answered['declined']}", "card", "outcome-declined")
        snap("/history", "history", "history")
        snap("/settings", "settings", "settings")
        for section in ("notifications", "passkeys", "connections", "grants", "members", "upstreams", "workspace",
                        "slack", "webhooks"):
            snap(f"/settings/{section}", "settings", f"settings-{section}")
        workspaces.update_workspace_settings(tenant.workspace_id, {  # the policy, with a rule of each kind
            "quorum_rules": '[{"id":"q_big","name":"Big budgets","when":"over:500","needs":1,"of":["owner"],'
                            '"decline":"any"}]', "standing_grants_never": ["risky"],
            "escalation_rules": '[{"id":"e_slow","name":"Slow answers","when":"any","after":30,"add":["owner"]}]'})
        snap("/settings/policy", "settings", "settings-policy")
        snap(scenes.consent_url(origin).removeprefix(origin), "consent", "consent")
    finally:
        ctx.close()
    if UPDATE:
        VERSION_FILE.write_text(version + "\n")
    assert not failures, "\n".join(failures)
