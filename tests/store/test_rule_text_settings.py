"""The settings holding rules as JSON text (``card_lifetimes``, ``quorum_rules``,
``escalation_rules``), on both stores: each reads as its default before it is written; a malformed
value is refused naming the setting, whether set at once or by a held change, and nothing is
written; a held change expecting the default writes where the setting was never written."""

from __future__ import annotations

import pytest

from countersign.core import lifetimes
from countersign.store.docs import SettingWrite
from countersign.store.errors import BadInput
from countersign.store.workspaces import MAX_RULES_TEXT
from tests.store._factories import World

DEFAULTS = {"card_lifetimes": "", "quorum_rules": "[]", "escalation_rules": "[]"}
WELL_FORMED = {
    "card_lifetimes": lifetimes.as_text({"default": {"wait": "2h"}}),
    "quorum_rules": '[{"name":"big spends","need":2,"of":["owner","admin"],"over":500}]',
    "escalation_rules": '[{"after":"1h","to":"admin"}]',
}
MALFORMED = {
    "card_lifetimes": ["not json", '{"default": {"wait": 7200}}', 7],
    "quorum_rules": ["not json", '{"need":2}', "[1]", "", 7, "[" + " " * MAX_RULES_TEXT + "]"],
    "escalation_rules": ["not json", '{"after":"1h"}', '["admin"]', "", None, "[" + " " * MAX_RULES_TEXT + "]"],
}
CASES = [(name, value) for name, values in MALFORMED.items() for value in values]
CASE_IDS = [f"{name}-{i}" for name, values in MALFORMED.items() for i in range(len(values))]


@pytest.mark.parametrize("name", list(DEFAULTS))
def test_a_rule_text_setting_reads_its_default_until_written(store, name):
    w = World(store)
    assert store.workspaces.get_workspace(w.ws.id).setting(name) == DEFAULTS[name]
    store.workspaces.update_workspace_settings(w.ws.id, {name: WELL_FORMED[name]})
    assert store.workspaces.get_workspace(w.ws.id).setting(name) == WELL_FORMED[name]


@pytest.mark.parametrize(("name", "value"), CASES, ids=CASE_IDS)
def test_a_malformed_rule_text_set_at_once_is_refused_and_nothing_is_written(store, name, value):
    w = World(store)
    with pytest.raises(BadInput) as refused:
        store.workspaces.update_workspace_settings(w.ws.id, {name: value})
    assert refused.value.field == name
    assert store.workspaces.get_workspace(w.ws.id).setting(name) == DEFAULTS[name]


@pytest.mark.parametrize(("name", "value"), CASES, ids=CASE_IDS)
def test_a_malformed_rule_text_in_a_held_change_is_refused_and_nothing_is_written(store, name, value):
    w = World(store)
    with pytest.raises(BadInput) as refused:
        store.docs.write_docs(w.ws.id, [SettingWrite(name, expected=DEFAULTS[name], value=value)])
    assert refused.value.field == name
    assert store.workspaces.get_workspace(w.ws.id).setting(name) == DEFAULTS[name]


@pytest.mark.parametrize("name", list(DEFAULTS))
def test_a_held_change_expecting_the_default_writes_where_the_setting_was_never_written(store, name):
    w = World(store)
    store.docs.write_docs(w.ws.id, [SettingWrite(name, expected=DEFAULTS[name], value=WELL_FORMED[name])])
    assert store.workspaces.get_workspace(w.ws.id).setting(name) == WELL_FORMED[name]
