"""A held change of a list setting (what no standing grant may cover, ``set_standing_grants_never``):
a :class:`SettingWrite` of a tuple of rules, stored as the list the setting holds, written only if
the setting still reads the rules expected — unset reads as no rule — on both stores."""

from __future__ import annotations

import pytest

from countersign.store.docs import SettingWrite
from countersign.store.errors import BadInput, Conflict
from tests.store._factories import World

SETTING = "standing_grants_never"


def test_a_list_setting_is_written_only_if_it_still_reads_the_rules_expected(store):
    w = World(store)
    assert store.workspaces.get_workspace(w.ws.id).setting(SETTING) == ()
    store.docs.write_docs(w.ws.id, [SettingWrite(SETTING, expected=(), value=("tool:buy_credits", "over:900"))])
    assert store.workspaces.get_workspace(w.ws.id).setting(SETTING) == ["tool:buy_credits", "over:900"]
    with pytest.raises(Conflict):  # read before that write: refused, nothing written
        store.docs.write_docs(w.ws.id, [SettingWrite(SETTING, expected=(), value=("risky",))])
    with pytest.raises(Conflict):  # the same rules in another order are other rules
        store.docs.write_docs(w.ws.id, [SettingWrite(SETTING, expected=("over:900", "tool:buy_credits"),
                                                     value=("risky",))])
    with pytest.raises(BadInput):
        store.docs.write_docs(w.ws.id, [SettingWrite(SETTING, expected=("tool:buy_credits", "over:900"),
                                                     value=("sometimes",))])
    assert store.workspaces.get_workspace(w.ws.id).setting(SETTING) == ["tool:buy_credits", "over:900"]
    store.docs.write_docs(w.ws.id, [SettingWrite(SETTING, expected=("tool:buy_credits", "over:900"), value=())])
    assert list(store.workspaces.get_workspace(w.ws.id).setting(SETTING)) == []


def test_a_list_setting_set_at_once_is_expected_as_written(store):
    """The owner's rules written at once (as a store caller may) and then changed by a
    held card: the card expects what was written."""
    w = World(store)
    store.workspaces.update_workspace_settings(w.ws.id, {SETTING: ["class:always"]})
    store.docs.write_docs(w.ws.id, [SettingWrite(SETTING, expected=("class:always",), value=("class:always", "risky"))])
    assert store.workspaces.get_workspace(w.ws.id).setting(SETTING) == ["class:always", "risky"]
