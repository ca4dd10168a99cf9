"""Upstream changes are asked for by a person, never an agent: from Settings the card says "You"
(askedBy person), from ``countersign upstream`` it says the command line; the filed audit entry
names the same."""

import json

from countersign import cli, settings as settings_mod
from countersign.core.askers import CLI, PERSON, Asker
from countersign.identity import accounts
from countersign.runtime import build


def test_a_change_from_the_settings_page_was_asked_by_you(gw, upstream):
    page = gw.page()
    filed = page.post("/api/settings/upstreams", {"name": "web", "url": upstream.url})
    assert filed.status_code == 200, filed.text
    card_id = filed.json()["confirmationId"]
    view = page.get(f"/api/cards/{card_id}").json()
    assert view["askedBy"] == {"kind": "person", "name": gw.person.name or gw.person.email, "you": True}
    card = gw.store.cards.get_card(gw.workspace_id, card_id, gw.runtime.desk.now())
    assert card.asker == Asker(PERSON, gw.person.id) and card.connection_id == ""
    assert gw.store.cards.audit_trail(gw.workspace_id, card_id)[0].actor == f"person:{gw.person.id}"


def test_a_change_from_the_command_line_says_so(upstream, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COUNTERSIGN_UPSTREAM_PRIVATE", "1")
    data = tmp_path / "data"
    settings = settings_mod.load({"COUNTERSIGN_DATA": str(data)})
    runtime = build(settings, deliver_inline=False)
    store = runtime.store
    workspace, owner = accounts.create_workspace(store.workspaces, "Acme", "owner@example.com")
    code = cli.main(["upstream", "add", "fs", "--url", upstream.url, "--data", str(data),
                     "--email", "owner@example.com"])
    out = capsys.readouterr()
    assert code == 0, out.err
    card_id = json.loads(out.out)["confirmation_id"]
    card = store.cards.get_card(workspace.id, card_id, runtime.desk.now())
    assert card.asker == Asker(CLI) and card.filed_by == "cli" and card.person_id == owner.id
    assert store.cards.audit_trail(workspace.id, card_id)[0].actor == "cli"
