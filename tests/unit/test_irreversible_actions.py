"""What cannot be undone: the actions of every toolset of the build that declare it, each one held
for a person (never run on the call), and the words the page and the card email share for who asked."""

from __future__ import annotations

from countersign import settings as settings_mod
from countersign.core.askers import AGENT, CLI, PERSON, Asker, asked_by
from countersign.runtime import build

IRREVERSIBLE = {"split_transaction", "send_piece", "buy_credits", "end_campaign", "suppress_domain"}


def test_exactly_the_actions_nothing_takes_back_declare_it(tmp_path):
    registry = build(settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path)})).registry
    assert [t.name for t in registry.toolsets] == ["budget", "mail", "gateway", "passkeys", "standing_grants",
                                                  "card_lifetimes", "quorum", "escalation", "smoke"]
    declared = {name for name, action in registry.actions.items() if action.irreversible}
    assert declared == IRREVERSIBLE
    # their undoing counterparts are not (a role is revoked, a piece not yet sent is cancelled)
    assert not any(registry.action(n).irreversible for n in ("grant_role", "revoke_role", "cancel_piece",
                                                             "launch_campaign", "apply_categories"))
    for name in IRREVERSIBLE:  # never run on the call: a person confirms each
        assert registry.action(name).gate.kind != "never", name


def test_who_asked_in_words():
    assert asked_by(AGENT, "Claude on laptop") == "Asked by Claude on laptop"
    assert asked_by(AGENT, None) == "Asked by an agent"
    assert asked_by(PERSON, "Ada", you=True) == "You, from Settings"
    assert asked_by(PERSON, "Ada") == "Ada, from Settings"
    assert asked_by(PERSON, None) == "A member, from Settings"
    assert asked_by(CLI, None) == "An owner, from the command line"


def test_an_asker_reads_back_from_its_actor():
    for asker in (Asker(AGENT, "c_1"), Asker(PERSON, "p_1"), Asker(CLI)):
        assert Asker.of_actor(asker.actor) == asker
    assert [Asker(AGENT, "c_1").actor, Asker(PERSON, "p_1").actor, Asker(CLI).actor] == [
        "connection:c_1", "person:p_1", "cli"]


def test_the_risky_passkey_policy_covers_every_action_that_cannot_be_undone(tmp_path):
    """"risky" says "cards that spend, send, grant or cannot be undone": an irreversible action is
    covered whatever its class (split_transaction may be answered in the client, yet nothing undoes
    a split); a reversible one of class client is not; "never" covers nothing."""
    from countersign.gate.passkey_policy import needs_passkey
    from countersign.store.workspaces import Workspace

    registry = build(settings_mod.load({"COUNTERSIGN_DATA": str(tmp_path)})).registry
    risky = Workspace("w_1", "Acme", {"passkey_policy": "risky"})
    never = Workspace("w_1", "Acme", {"passkey_policy": "never"})
    split = registry.action("split_transaction")
    assert split.gate.kind == "client"
    covered = {name for name, action in registry.actions.items() if needs_passkey(risky, action, action.gate)}
    assert IRREVERSIBLE <= covered
    assert "set_category_budget" not in covered and "apply_categories" not in covered
    assert {"grant_role", "launch_campaign", "set_passkey_policy"} <= covered
    assert not any(needs_passkey(never, action, action.gate) for action in registry.actions.values())
