"""One workspace with every kind of view the person meets, for the every-width tests
(test_every_width.py) and the visual snapshots (test_snapshots.py): waiting cards of the notes,
budget and mail toolsets and of the gateway, a card filed from Settings, cards confirmed and
declined (their outcomes), a standing grant with a call run under it, History, each section of
Settings, and an OAuth consent request.

Everything in it is fixed (names, amounts, the day) so a screenshot of it is the same on every
run: :func:`build` takes the person's email and runs under a clock the caller may freeze.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import httpx2

from countersign.core.card_states import CardState
from countersign.core.ids import new_id
from countersign.identity import accounts
from countersign.store.slack import SlackApp
from countersign.store.webhook_deliveries import EVENTS
from countersign.store.webhook_endpoints import WebhookEndpoint, disabled_reason, turned_off_by
from countersign.surfaces import upstream_requests
from countersign.toolkit import ActionContext, DocWrite
from countersign.toolsets.budget.demo import seed as seed_budget
from countersign.toolsets.gateway.config import KIND as UPSTREAM, Upstream, class_from_annotations, tool_digest
from countersign.toolsets.mail.demo import seed as seed_mail
from tests.browser.pages import call_tools
from tests.oauth.conftest import REDIRECT, pkce
from tests.support.harness import TENANTS, Tenant
from tests.support.sample_toolset import seed_notes

# The upstream the snapshots show: written straight into the workspace (as an approved add leaves
# it), at an address nothing ever connects to (its remove and policy cards call no upstream).
WRITE_SCHEMA = {"type": "object", "properties": {"path": {"type": "string", "description": "A file name"},
                                                 "content": {"type": "string"}},
                "required": ["path", "content"], "additionalProperties": False}
FILES_TOOLS = [
    {"name": "read_file", "title": "Read a file", "description": "Read a file.",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
     "annotations": {"readOnlyHint": True}},
    {"name": "write_file", "title": "Write a file", "description": "Write a file.", "inputSchema": WRITE_SCHEMA,
     "annotations": {"destructiveHint": True}},
]


@dataclass
class Scene:
    tenant: Tenant
    pending: dict[str, str] = field(default_factory=dict)  # what -> card id, waiting
    answered: dict[str, str] = field(default_factory=dict)  # what -> card id, confirmed or declined
    spare: list[str] = field(default_factory=list)  # waiting notes cards the tests may answer

    @property
    def origin(self) -> str:
        return self.tenant.origin


def tenant_with_email(runtime, origin: str, email: str, name: str) -> Tenant:
    """A tenant like :func:`tests.support.harness.new_tenant`, but with a fixed email and name."""
    store = runtime.store
    workspace, person = accounts.create_workspace(store.workspaces, "Acme", email, name)
    # Created at the server's clock (frozen by the snapshot test), not the machine's.
    new = accounts.create_connection(store.workspaces, store.connections, workspace.id, person.id, "Claude on laptop",
                                     now=int(runtime.desk.clock()))
    notes = seed_notes(store, workspace.id)
    tenant = Tenant(runtime, origin, workspace.id, person, new.token, new.connection.id, notes)
    TENANTS.append(tenant)
    return tenant


def build(tenant: Tenant, *, spare: int = 0, live_upstream: Path | None = None) -> Scene:
    """Fill ``tenant``'s workspace; ``spare`` more waiting notes cards; with ``live_upstream`` (a
    folder) also the gateway's add, refresh and call cards of a real stdio upstream (its command
    names this machine's paths: never in a snapshot)."""
    scene = Scene(tenant)
    runtime, store, ws = tenant.runtime, tenant.store, tenant.workspace_id
    workspace = store.workspaces.get_workspace(ws)
    now = runtime.desk.now()
    ctx = ActionContext.reading(store.docs, store.workspaces, workspace, tenant.person, None, now)
    seed_budget(store.docs, ctx)
    mail = seed_mail(store.docs, ctx)
    store.docs.write_docs(ws, [DocWrite("note", f"s{i}", {"title": f"Spare {i}", "text": "x"}, 0)
                               for i in range(spare)])

    # Outcomes first (no passkey is asked for them): confirmed, failed on the way, declined.
    bought, declined = call_tools(tenant, [
        ("buy_credits", {"credits": 250}),
        ("publish_note", {"note_id": "n2", "text": "Holiday hours: closed 24–26 December"}),
    ])
    scene.answered["completed"] = bought["confirmationId"]
    tenant.confirm_on_page(bought["confirmationId"])
    scene.answered["declined"] = declined["confirmationId"]
    tenant.decline_on_page(declined["confirmationId"], "Wait until the shop confirms the dates")

    if live_upstream is not None:
        live_gateway(scene, live_upstream)

    # A standing grant (Settings, Grants) and one call the agent made under it.
    month = datetime.fromtimestamp(now, UTC).strftime("%Y-%m")
    filed = tenant.page().post("/api/standing-grants", {
        "connectionId": tenant.connection_id, "tool": "set_category_budget", "name": "Groceries top-up",
        "limits": {"amount": "500.00", "category_id": ["cat_groceries"]}, "uses": 3, "days": 7, "cap": "1200.00"})
    assert filed.status_code == 201, filed.text
    assert tenant.confirm_on_page(filed.json()["id"]).state is CardState.COMPLETED
    (ran,) = call_tools(tenant, [("set_category_budget", {"category_id": "cat_groceries", "month": month,
                                                          "amount": 450})])
    assert ran.get("answeredVia") == "grant", ran
    scene.answered["granted"] = ran["confirmationId"]

    # Then a passkey for what spends, sends, grants or cannot be undone, and the cards that wait.
    store.workspaces.update_workspace_settings(ws, {"passkey_policy": "risky"})
    replies = call_tools(tenant, [
        ("publish_note", {"note_id": "n1", "text": "Pay Acme Wholesale Ltd. 1,250.00 from Checking"}),
        ("set_category_budget", {"category_id": "cat_groceries", "month": month, "amount": 600}),
        ("send_piece", {"contact_id": mail["contact_ids"][0], "design_id": mail["design_id"],
                        "message": "Hi Ada, thanks for a great conversation this quarter."}),
        # (a change of class client is no risk: these need no passkey, so a test can answer them)
        *[("edit_note", {"note_id": f"s{i}", "text": f"spare {i}"}) for i in range(spare)],
    ])
    for what, reply in zip(("notes", "budget", "mail"), replies, strict=False):
        assert reply.get("status") == "pending", reply
        scene.pending[what] = reply["confirmationId"]
    scene.spare = [r["confirmationId"] for r in replies[3:]]

    # The gateway: an upstream as an approved add leaves it; removing it and changing a tool's class.
    pins = {t["name"]: {"definition": t, "digest": tool_digest(t), "class": class_from_annotations(t), "witness": []}
            for t in FILES_TOOLS}
    files = Upstream.from_data(ws, {"name": "files", "url": "https://files.example.com/mcp", "command": [],
                                    "sealed": None, "tools": pins}, 0)
    store.docs.write_docs(ws, [DocWrite(UPSTREAM, "files", files.to_data(), 0)])
    desk, person = runtime.desk, tenant.person
    scene.pending["gateway-remove"] = upstream_requests.file_change(
        desk, ws, person, "upstream_remove", {"name": "files"}).id
    scene.pending["gateway-policy"] = upstream_requests.file_change(
        desk, ws, person, "upstream_policy", {"name": "files", "tool": "write_file", "cls": "client"}).id
    # Filed by the person from Settings.
    page = tenant.page()
    answer = page.post("/api/settings/passkey-policy", {"policy": "every"})
    assert answer.status_code in (200, 201), answer.text
    scene.pending["settings"] = answer.json()["id"]
    return scene


def spare_cards(scene: Scene, count: int) -> list[str]:
    """``count`` more waiting notes cards, each on a note of its own, that a test may answer (added
    to ``scene.spare``): a test files the cards it answers, so it needs no other test's."""
    tenant = scene.tenant
    notes = [f"s{len(scene.spare) + i}" for i in range(count)]
    tenant.store.docs.write_docs(tenant.workspace_id, [DocWrite("note", n, {"title": f"Spare {n}", "text": "x"}, 0)
                                                       for n in notes])
    replies = call_tools(tenant, [("edit_note", {"note_id": n, "text": f"spare {n}"}) for n in notes])
    assert [r.get("status") for r in replies] == ["pending"] * count, replies
    filed = [r["confirmationId"] for r in replies]
    scene.spare.extend(filed)
    return filed


def waiting(scene: Scene) -> set[str]:
    """The scene's cards that wait on its person now, read from the store card by card (not from
    the listing the page shows)."""
    store, ws, now = scene.tenant.store, scene.tenant.workspace_id, scene.tenant.runtime.desk.now()
    return {c for c in (*scene.pending.values(), *scene.spare)
            if store.cards.get_card(ws, c, now).state is CardState.PENDING}


def live_gateway(scene: Scene, folder: Path) -> None:
    """A stdio upstream (tests/gateway/upstream.py): its add confirmed, a refresh after its
    write_file changed (the rug pull), and an agent's call of that tool, each waiting."""
    tenant = scene.tenant
    desk, ws, person = tenant.runtime.desk, tenant.workspace_id, tenant.person
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "tests.gateway.upstream", str(folder), "stdio"]
    added = upstream_requests.file_change(desk, ws, person, "upstream_add",
                                          upstream_requests.add_arguments(desk, ws, "live", None, command, {}))
    assert tenant.confirm_on_page(added.id).state is CardState.COMPLETED
    scene.answered["gateway-add"] = added.id
    (folder / ".rugpull").write_text("")
    scene.pending["gateway-refresh"] = upstream_requests.file_change(
        desk, ws, person, "upstream_refresh", {"name": "live"}).id
    (folder / ".rugpull").unlink()
    (reply,) = call_tools(tenant, [("live__write_file", {"path": "notes/q4.txt", "content": "line one\nline two"})])
    assert reply.get("status") == "pending", reply
    scene.pending["gateway-call"] = reply["confirmationId"]


def consent_url(origin: str, client_name: str = "Claude Desktop") -> str:
    """An /oauth/authorize request of a freshly registered client: the consent view's URL."""
    with httpx2.Client(base_url=origin, timeout=30) as http:
        client_id = http.post("/oauth/register", json={"client_name": client_name, "redirect_uris": [REDIRECT]}
                              ).json()["client_id"]
        _, challenge = pkce()
        answer = http.get("/oauth/authorize", params={
            "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT, "state": "s",
            "code_challenge": challenge, "code_challenge_method": "S256"})
    assert answer.status_code == 302, answer.text
    return answer.headers["location"]


def frozen(runtime, at: int):
    """Freeze the live server's clock at ``at`` (seconds); call the result to let it run again."""
    desk = runtime.desk
    real = desk.clock
    desk.clock = lambda: at
    return lambda: setattr(desk, "clock", real)




def pin_last_use(tenant: Tenant, at: int) -> None:
    """Set when ``tenant``'s connections were last used to ``at``: the MCP endpoint records a use at
    the machine's time, which a frozen page would show as hours (then days) away, changing the
    snapshot as the real clock moves. SQLite only (the live server's store)."""
    with tenant.runtime.store.connections.db.write() as db:
        db.execute("UPDATE connection_uses SET last_used_at = ? WHERE workspace_id = ?", (at, tenant.workspace_id))


def channels(tenant: Tenant, at: int, *, slack_connected: bool) -> None:
    """Settings' Slack and Webhooks with something to show: two webhook endpoints, both turned off
    (one by an owner, one by a day of failures: no delivery is ever made or sent), and, with
    ``slack_connected``, a Slack app (no channel, nobody linked: nothing is ever posted)."""
    store, ws = tenant.store, tenant.workspace_id
    for days, host, reason in ((3, "hooks.example.com", turned_off_by(tenant.person.email)),
                               (2, "ci.example.org", disabled_reason(6, at - 86_400))):  # listed oldest first
        store.webhook_endpoints.add_endpoint(WebhookEndpoint(
            id=new_id("wh_", now_ms=at * 1000), workspace_id=ws, url=f"https://{host}/countersign",
            events=EVENTS, secret_sealed="never-sent", created_at=at - days * 86_400, created_by=tenant.person.id,
            enabled=False, disabled_at=at, disabled_reason=reason))
    if slack_connected:
        token, secret = tenant.runtime.slack.credentials.seal(ws, "T0ACME001", "xoxb-0000000000-scene",
                                                              "scenesigningsecret0000")
        store.slack.connect_app(SlackApp(ws, "T0ACME001", "Acme Slack", "U0BOT0001", token, secret,
                                         tenant.person.id, at))
