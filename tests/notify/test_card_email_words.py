"""The card email word for word, as each sender delivers it (the local outbox, SMTP, SES on moto):
the one card it links when one waits, the list when several do; who asked, in the confirm page's
words; the workspace; and whether a passkey will be needed. Both stores."""

from __future__ import annotations

import re

from countersign.notify import CardNotifier, render
from countersign.runtime import build
from tests.store._factories import World
from tests.support.sample_toolset import TOOLSET as NOTES

from ._helpers import file_card, parts
from .conftest import PUBLIC_URL

WHY = ('You receive this email because "Email me when an agent asks" is on for you. '
       "You can turn it off in Settings on that page.")
TICKET, ARGUMENT = "TICKET-MARKER-31c7", "ARGUMENT-MARKER-8d02"


def notifier_for(store, sender, settings, clock, passkey_rule=None) -> CardNotifier:
    return CardNotifier(store, sender, settings, clock, needs_passkey=passkey_rule)


def passkey_rule(store, settings):
    """The deployment's own rule (the desk's), over this store, knowing the notes toolset."""
    return build(settings, toolsets=[NOTES], store=store, deliver_inline=False).desk.card_needs_passkey


def delivered(message) -> tuple[str, str]:
    """(text, html) as delivered, line ends as written (a file or SMTP carries CRLF)."""
    text, html = parts(message)
    return text.replace("\r\n", "\n"), html.replace("\r\n", "\n")


def note(text: str = "new text") -> dict:
    return {"note_id": "n1", "text": text}


def test_one_waiting_card_links_that_card_and_says_who_asked_and_where(store, channel, settings, clock):
    world = World(store, name="Acme Mail")
    card = file_card(world, clock.now, title="Buy 20.00 credits for 20.00 USD", ticket=TICKET,
                     arguments={"credits": 20, "memo": ARGUMENT})
    assert notifier_for(store, channel.sender, settings, clock)(card) == "email_sent"

    [message] = channel.sent()
    text, html = delivered(message)
    link = f"{PUBLIC_URL}/confirm?card={card.id}"
    assert text.rstrip("\n") == "\n".join([
        "Hello Pat,",
        "",
        "1 request waits for your confirmation in Acme Mail:",
        "",
        "  - Buy 20.00 credits for 20.00 USD",
        "    Asked by Claude on laptop",
        "",
        "Review it, then confirm or decline it:",
        link,
        "",
        "Nothing runs until you confirm it.",
        "",
        "-- ",
        WHY,
    ])
    assert message["Subject"] == "1 request waits for your confirmation"
    assert re.findall(r'href="([^"]*)"', html) == [link]
    assert ">Review the request</a>" in html
    assert "<strong>1 request waits for your confirmation in Acme Mail:</strong>" in html
    assert ('<li>Buy 20.00 credits for 20.00 USD<br><span style="font-size:14px;color:#555">'
            "Asked by Claude on laptop</span></li>") in html
    raw = message.as_string()
    for secret in (TICKET, ARGUMENT, world.conn.token_hash, card.fingerprint):
        assert secret not in raw


def test_several_waiting_cards_link_the_list_and_say_who_asked_each(store, channel, settings, clock):
    world = World(store, name="Acme")
    admin = world.add_person("admin")
    store.workspaces.update_person(world.ws.id, admin.id, name="Ada Admin")
    start = clock.now
    file_card(world, start - 30, title="Publish note ‘Spring’")
    file_card(world, start - 20, title="Require a passkey for every card", connection_id="",
              filed_by=f"person:{world.person.id}")
    file_card(world, start - 10, title="Require a passkey for risky cards", connection_id="",
              filed_by=f"person:{admin.id}")
    last = file_card(world, start, title="Put the MCP server fs behind the gate?", connection_id="", filed_by="cli")
    assert notifier_for(store, channel.sender, settings, clock)(last) == "email_sent"

    [message] = channel.sent()
    text, html = delivered(message)
    assert text.rstrip("\n") == "\n".join([
        "Hello Pat,",
        "",
        "4 requests wait for your confirmation in Acme:",
        "",
        "  - Publish note ‘Spring’",
        "    Asked by Claude on laptop",
        "  - Require a passkey for every card",
        "    You, from Settings",
        "  - Require a passkey for risky cards",
        "    Ada Admin, from Settings",
        "  - Put the MCP server fs behind the gate?",
        "    An owner, from the command line",
        "",
        "Review them, then confirm or decline each one:",
        f"{PUBLIC_URL}/confirm",
        "",
        "Nothing runs until you confirm it.",
        "",
        "-- ",
        WHY,
    ])
    assert re.findall(r'href="([^"]*)"', html) == [f"{PUBLIC_URL}/confirm"]
    assert ">Review requests</a>" in html
    for words in ("You, from Settings", "Ada Admin, from Settings", "An owner, from the command line"):
        assert f'<span style="font-size:14px;color:#555">{words}</span>' in html


def test_the_email_says_which_cards_need_a_passkey_under_the_workspaces_policy(store, channel, settings, clock):
    world = World(store, name="Acme")
    rule = passkey_rule(store, settings)
    store.workspaces.update_workspace_settings(world.ws.id, {"passkey_policy": "risky"})
    file_card(world, clock.now - 10, title="Publish note 1", tool="publish_note", arguments=note())
    edit = file_card(world, clock.now, title="Edit note 1", tool="edit_note", arguments=note("edited"))
    assert notifier_for(store, channel.sender, settings, clock, rule)(edit) == "email_sent"

    [message] = channel.sent()
    text, html = delivered(message)
    assert "\n".join([
        "  - Publish note 1",
        "    Asked by Claude on laptop · needs your passkey",  # class always: risky
        "  - Edit note 1",
        "    Asked by Claude on laptop",  # class client: a click confirms it
    ]) in text
    assert "Asked by Claude on laptop · needs your passkey</span>" in html


def test_one_card_under_every_card_policy_says_so(store, settings, clock, tmp_path):
    from countersign.notify import OutboxSender

    world = World(store, name="Acme")
    store.workspaces.update_workspace_settings(world.ws.id, {"passkey_policy": "every"})
    outbox = OutboxSender(tmp_path / "outbox")
    card = file_card(world, clock.now, title="Edit note 1", tool="edit_note", arguments=note())
    assert notifier_for(store, outbox, settings, clock, passkey_rule(store, settings))(card) == "email_sent"
    text = render_text(outbox)
    assert "  - Edit note 1\n    Asked by Claude on laptop · needs your passkey\n" in text


def test_without_the_policy_nothing_is_said_of_passkeys(store, settings, clock):
    from ._helpers import Recorder

    world = World(store, name="Acme")
    sender = Recorder()
    card = file_card(world, clock.now, title="Publish note 1", tool="publish_note", arguments=note())
    notifier_for(store, sender, settings, clock, passkey_rule(store, settings))(card)
    [email] = sender.emails
    assert "passkey" not in email.text and "passkey" not in email.html
    assert "passkey" not in render(email).decode()


def test_the_workspace_name_is_data_escaped_in_html(store, settings, clock):
    from ._helpers import Recorder

    world = World(store, name="<b>Tom & Jerry</b>")
    sender = Recorder()
    notifier_for(store, sender, settings, clock)(file_card(world, clock.now, title="T"))
    [email] = sender.emails
    assert "1 request waits for your confirmation in <b>Tom & Jerry</b>:" in email.text
    assert "in &lt;b&gt;Tom &amp; Jerry&lt;/b&gt;:" in email.html and "<b>Tom" not in email.html


def render_text(outbox) -> str:
    from .conftest import parse

    [path] = list(outbox.files())
    return delivered(parse(path.read_bytes()))[0]


def test_a_card_filed_by_the_gate_is_emailed_by_the_runtimes_notifier_with_its_passkey_line(store, settings):
    """End to end on one runtime: the desk files an agent's card, its notifier (wired by ``build``)
    writes the email to the local outbox, linking that card and saying a passkey will be needed."""
    from countersign.gate.question import Question
    from countersign.store.docs import DocWrite

    world = World(store, name="Acme")
    store.docs.write_docs(world.ws.id, [DocWrite("note", "n1", {"title": "Note 1", "text": "old"}, 0)])
    store.workspaces.update_workspace_settings(world.ws.id, {"passkey_policy": "risky"})
    runtime = build(settings, toolsets=[NOTES], store=store)
    desk = runtime.desk
    ctx = desk.context(world.ws.id, world.person, world.conn.id, desk.now())
    card, filed = desk.file(Question.of(desk.registry.action("publish_note"), note(), ctx))
    assert filed
    desk.notify(card)
    text = render_text(runtime.notifier.sender)
    assert "\n".join([
        "1 request waits for your confirmation in Acme:",
        "",
        "  - Change note ‘Note 1’?",
        "    Asked by Claude on laptop · needs your passkey",
        "",
        "Review it, then confirm or decline it:",
        f"{PUBLIC_URL}/confirm?card={card.id}",
    ]) in text
    assert card.ticket not in text
