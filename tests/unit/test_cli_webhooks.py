"""``countersign webhook add``, ``list``, ``events``, ``log``, ``enable`` and ``remove``: the Settings page's webhooks
from the command line, with the same checks (nothing written when refused) and the secret printed once."""

from __future__ import annotations

import json

import pytest

from countersign import cli, settings as settings_mod
from countersign.identity import accounts
from countersign.notify.webhooks import unseal_secret, webhook_sealer
from countersign.runtime import build
from countersign.surfaces.local.demo import seed_demo

PUBLIC = "https://93.184.215.14/hooks"  # a public address literal: checked, never reached


@pytest.fixture
def demo(tmp_path, clean_env):
    data = tmp_path / "data"
    runtime = build(settings_mod.load({"COUNTERSIGN_DATA": str(data)}))
    info = seed_demo(runtime)
    return str(data), runtime, info


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_an_owner_adds_lists_logs_and_removes_an_endpoint(capsys, demo):
    data, runtime, info = demo
    email = info["person_email"]
    code, out, err = _run(capsys, "webhook", "add", PUBLIC, "--event", "card.completed", "--event", "card.filed",
                          "--data", data, "--email", email)
    assert code == 0, err
    added = json.loads(out)
    secret, endpoint = added["secret"], added["endpoint"]
    assert secret.startswith("whsec_") and "shown once" in err
    assert (endpoint["url"], endpoint["events"], endpoint["enabled"]) == (PUBLIC, ["card.filed", "card.completed"],
                                                                         True)
    workspace_id = runtime.store.workspaces.get_person_by_email(email).workspace_id
    stored = runtime.store.webhook_endpoints.get_endpoint(workspace_id, endpoint["id"])
    assert secret not in stored.secret_sealed
    assert unseal_secret(webhook_sealer(runtime.state_keys), stored.workspace_id, stored.id,
                         stored.secret_sealed) == secret  # sealed with the server's own keys
    code, out, _ = _run(capsys, "webhook", "list", "--data", data, "--email", email)
    assert code == 0 and [e["id"] for e in json.loads(out)["endpoints"]] == [endpoint["id"]] and secret not in out
    code, out, _ = _run(capsys, "webhook", "log", endpoint["id"], "--data", data, "--email", email)
    assert code == 0 and json.loads(out) == []
    code, out, _ = _run(capsys, "webhook", "remove", endpoint["id"], "--data", data, "--email", email)
    assert code == 0 and json.loads(out)["endpoints"] == []
    code, _, err = _run(capsys, "webhook", "log", endpoint["id"], "--data", data, "--email", email)
    assert code == 2 and f"this workspace has no webhook endpoint {endpoint['id']!r}" in err


@pytest.mark.parametrize("argv, message", [
    (["http://hooks.example.com/x"],
     "error: url: a webhook endpoint must be https (plain http only with COUNTERSIGN_UPSTREAM_PRIVATE).\n"),
    (["https://192.168.1.10/x"],
     "error: url: the host resolves to a private or reserved address; set COUNTERSIGN_UPSTREAM_PRIVATE=1 to "
     "allow one.\n"),
    ([PUBLIC, "--event", "card.exploded"],
     "error: events: 'card.exploded' is no event a webhook is sent for; the events are card.filed, card.answered, "
     "card.completed, card.failed, card.lapsed, card.edited.\n"),
])
def test_bad_endpoints_are_refused_and_nothing_is_written(capsys, demo, argv, message):
    data, runtime, info = demo
    code, out, err = _run(capsys, "webhook", "add", *argv, "--data", data, "--email", info["person_email"])
    assert (code, out, err) == (2, "", message)
    person = runtime.store.workspaces.get_person_by_email(info["person_email"])
    assert runtime.store.webhook_endpoints.list_endpoints(person.workspace_id) == []


def test_only_an_owner_manages_webhooks(capsys, demo):
    data, runtime, info = demo
    owner = runtime.store.workspaces.get_person_by_email(info["person_email"])
    accounts.add_person(runtime.store.workspaces, owner.workspace_id, "ada@example.com", "admin", "Ada")
    code, out, err = _run(capsys, "webhook", "add", PUBLIC, "--data", data, "--email", "ada@example.com")
    assert (code, out, err) == (2, "", "error: Only the workspace's owners manage its webhooks.\n")
    assert runtime.store.webhook_endpoints.list_endpoints(owner.workspace_id) == []


def _add(capsys, data: str, email: str, *events: str) -> dict:
    code, out, err = _run(capsys, "webhook", "add", PUBLIC, *[a for e in events for a in ("--event", e)],
                          "--data", data, "--email", email)
    assert code == 0, err
    return json.loads(out)["endpoint"]


def test_an_owner_changes_an_endpoints_events_in_place(capsys, demo):
    data, runtime, info = demo
    email = info["person_email"]
    endpoint = _add(capsys, data, email, "card.filed")
    workspace_id = runtime.store.workspaces.get_person_by_email(email).workspace_id
    before = runtime.store.webhook_endpoints.get_endpoint(workspace_id, endpoint["id"])
    code, out, err = _run(capsys, "webhook", "events", endpoint["id"], "--event", "card.lapsed", "--event",
                          "card.answered", "--data", data, "--email", email)
    assert (code, err) == (0, "")
    _, listed, _ = _run(capsys, "webhook", "list", "--data", data, "--email", email)
    assert json.loads(out) == json.loads(listed)["endpoints"][0] == {
        **endpoint, "events": ["card.answered", "card.lapsed"], "everyEvent": False}
    stored = runtime.store.webhook_endpoints.get_endpoint(workspace_id, endpoint["id"])
    assert (stored.events, stored.secret_sealed, stored.url) == (("card.answered", "card.lapsed"),
                                                                 before.secret_sealed, PUBLIC)
    code, out, err = _run(capsys, "webhook", "events", endpoint["id"], "--every-event", "--data", data,
                          "--email", email)
    assert (code, err) == (0, "")
    assert (json.loads(out)["events"], json.loads(out)["everyEvent"]) == (
        ["card.filed", "card.answered", "card.completed", "card.failed", "card.lapsed", "card.edited"], True)
    assert runtime.store.webhook_endpoints.get_endpoint(workspace_id, endpoint["id"]).events == ()


@pytest.mark.parametrize("argv, message", [
    (["--event", "card.exploded"],
     "error: events: 'card.exploded' is no event a webhook is sent for; the events are card.filed, card.answered, "
     "card.completed, card.failed, card.lapsed, card.edited.\n"),
    (["--event", "card.filed", "--every-event"], "argument --every-event: not allowed with argument --event"),
    ([], "one of the arguments --event --every-event is required"),
])
def test_bad_event_changes_are_refused_and_nothing_is_written(capsys, demo, argv, message):
    data, runtime, info = demo
    email = info["person_email"]
    endpoint = _add(capsys, data, email, "card.filed")
    try:
        code, out, err = _run(capsys, "webhook", "events", endpoint["id"], *argv, "--data", data, "--email", email)
    except SystemExit as exit_:  # argparse refuses the command line itself
        code, out, err = exit_.code, *capsys.readouterr()
    assert (code, out) == (2, "")
    assert err == message if message.startswith("error: ") else f"countersign webhook events: error: {message}" in err
    workspace_id = runtime.store.workspaces.get_person_by_email(email).workspace_id
    assert runtime.store.webhook_endpoints.get_endpoint(workspace_id, endpoint["id"]).events == ("card.filed",)


def test_only_an_owner_changes_events_and_an_unknown_endpoint_is_named(capsys, demo):
    data, runtime, info = demo
    email = info["person_email"]
    endpoint = _add(capsys, data, email, "card.filed")
    owner = runtime.store.workspaces.get_person_by_email(email)
    accounts.add_person(runtime.store.workspaces, owner.workspace_id, "ada@example.com", "admin", "Ada")
    code, out, err = _run(capsys, "webhook", "events", endpoint["id"], "--every-event", "--data", data, "--email",
                          "ada@example.com")
    assert (code, out, err) == (2, "", "error: Only the workspace's owners manage its webhooks.\n")
    code, out, err = _run(capsys, "webhook", "events", "wh_unknown", "--every-event", "--data", data, "--email",
                          email)
    assert (code, out) == (2, "") and err.startswith("error: this workspace has no webhook endpoint 'wh_unknown'; `")
    assert runtime.store.webhook_endpoints.get_endpoint(owner.workspace_id, endpoint["id"]).events == ("card.filed",)
