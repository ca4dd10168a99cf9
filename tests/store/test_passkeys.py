"""Passkeys, their single-use challenges, a passkey confirmation recorded with the card's move,
and the passkey policy setting (both stores)."""

from __future__ import annotations

import pytest

from countersign.core.card_states import CardState, Refusal
from countersign.store.cards import CardCommit
from countersign.store.docs import SettingWrite
from countersign.store.errors import BadInput, Conflict, NotFound
from countersign.store.passkeys import Passkey, PasskeyChallenge
from tests.store._factories import World, audit


def _passkey(w: World, who, cred: str = "cred-1", created_at: int = 100, **kw) -> Passkey:
    return Passkey(credential_id=cred, workspace_id=w.ws.id, person_id=who.id, user_handle="uh-" + who.id,
                   public_key="pQECAyYgASFYIA", name=kw.pop("name", "Laptop"), created_at=created_at,
                   transports=("internal",), **kw)


def test_register_list_rename_remove(store):
    w = World(store)
    me, other = w.add_person(), w.add_person()
    first, second = _passkey(w, me, "cred-a", 100), _passkey(w, me, "cred-b", 200, name="Phone")
    store.passkeys.put_passkey(second)
    store.passkeys.put_passkey(first)
    store.passkeys.put_passkey(_passkey(w, other, "cred-c"))
    assert store.passkeys.list_passkeys(w.ws.id, me.id) == [first, second]
    assert store.passkeys.get_passkey("cred-b") == second
    assert store.passkeys.rename_passkey(w.ws.id, me.id, "cred-a", "  Work   laptop ").name == "Work laptop"
    store.passkeys.note_passkey_use("cred-a", 3, now=500)
    got = store.passkeys.get_passkey("cred-a")
    assert (got.sign_count, got.last_used_at, got.transports) == (3, 500, ("internal",))
    store.passkeys.note_passkey_use("cred-a", 0, now=600)  # a synced passkey reports 0: the counter never goes back
    assert (store.passkeys.get_passkey("cred-a").sign_count, store.passkeys.get_passkey("cred-a").last_used_at) == (3,
                                                                                                                    600)
    store.passkeys.remove_passkey(w.ws.id, me.id, "cred-a")
    assert store.passkeys.get_passkey("cred-a") is None
    assert [p.credential_id for p in store.passkeys.list_passkeys(w.ws.id, me.id)] == ["cred-b"]


def test_a_credential_is_registered_once_and_only_its_owner_changes_it(store):
    w = World(store)
    me, other = w.add_person(), w.add_person()
    store.passkeys.put_passkey(_passkey(w, me))
    with pytest.raises(Conflict):
        store.passkeys.put_passkey(_passkey(w, other))
    with pytest.raises(NotFound):
        store.passkeys.rename_passkey(w.ws.id, other.id, "cred-1", "Mine now")
    with pytest.raises(NotFound):
        store.passkeys.remove_passkey(w.ws.id, other.id, "cred-1")
    with pytest.raises(NotFound):
        store.passkeys.remove_passkey("ws_elsewhere", me.id, "cred-1")
    assert store.passkeys.get_passkey("cred-1").name == "Laptop"


@pytest.mark.parametrize("name", ["", "   ", "x" * 65])
def test_a_passkey_name_is_refused_when_empty_or_long(store, name):
    w = World(store)
    me = w.add_person()
    with pytest.raises(BadInput):
        store.passkeys.put_passkey(_passkey(w, me, name=name))
    assert store.passkeys.get_passkey("cred-1") is None and store.passkeys.list_passkeys(w.ws.id, me.id) == []
    store.passkeys.put_passkey(_passkey(w, me))
    with pytest.raises(BadInput):
        store.passkeys.rename_passkey(w.ws.id, me.id, "cred-1", name)
    assert store.passkeys.get_passkey("cred-1") == _passkey(w, me)  # still called Laptop


def test_a_challenge_is_spent_once_and_not_after_it_expires(store):
    ch = PasskeyChallenge("h1", "confirm", "ws_1", "p_1", "Y2hhbGxlbmdl", expires_at=300, card_id="c_1",
                          statement='{"v":1}')
    store.passkeys.put_passkey_challenge(ch)
    assert store.passkeys.take_passkey_challenge("h1", now=100) == ch
    assert store.passkeys.take_passkey_challenge("h1", now=101) is None
    store.passkeys.put_passkey_challenge(PasskeyChallenge("h2", "signin", "", "", "AA", expires_at=300))
    assert store.passkeys.take_passkey_challenge("h2", now=300) is None  # expired: refused (and gone)
    assert store.passkeys.take_passkey_challenge("unknown", now=1) is None


def test_the_passkey_assertion_commits_with_the_cards_move(store):
    w = World(store)
    c = w.file(created_at=1000)
    evidence = {"statement": "eyJ2IjoxfQ", "signature": "MEUCIQ"}
    done = store.cards.commit_card(CardCommit(c, CardState.COMPLETED, 1001, (audit(c, "completed", 1001),),
                                        result={"ok": True}, channel="page", passkey=evidence))
    assert done.passkey == evidence
    assert store.cards.get_card(w.ws.id, c.id, 1002).passkey == evidence
    with pytest.raises(Refusal):  # a second move of the same card (stale version) writes nothing
        store.cards.commit_card(CardCommit(c, CardState.COMPLETED, 1003, (audit(c, "completed", 1003),),
                                     passkey={"other": True}))
    assert store.cards.get_card(w.ws.id, c.id, 1004).passkey == evidence


def test_the_passkey_policy_is_a_choice_setting(store):
    w = World(store)
    assert store.workspaces.get_workspace(w.ws.id).setting("passkey_policy") == "never"
    store.docs.write_docs(w.ws.id, [SettingWrite("passkey_policy", expected="never", value="risky")])
    assert store.workspaces.get_workspace(w.ws.id).setting("passkey_policy") == "risky"
    with pytest.raises(Conflict):
        store.docs.write_docs(w.ws.id, [SettingWrite("passkey_policy", expected="never", value="every")])
    with pytest.raises(BadInput):
        store.docs.write_docs(w.ws.id, [SettingWrite("passkey_policy", expected="risky", value="sometimes")])
    assert store.workspaces.get_workspace(w.ws.id).setting("passkey_policy") == "risky"
