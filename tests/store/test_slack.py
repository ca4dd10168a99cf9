"""The slack role on both stores: one app per workspace and one workspace per Slack team, links
(one Slack user per person, one person per Slack user), single-use expiring link codes, and one
post per card."""

from __future__ import annotations

import secrets

import pytest

from countersign.store.errors import BadInput, Conflict, NotFound
from countersign.store.hashes import secret_hash
from countersign.store.slack import POSTED, POSTING, SlackApp, SlackLink, SlackLinkCode, SlackPost
from countersign.store.sqlite import SQLiteStore
from tests.store._factories import as_released_before


def team() -> str:
    return "T" + secrets.token_hex(4).upper()


def user() -> str:
    return "U" + secrets.token_hex(4).upper()


def app(ws: str, team_id: str, channel: str | None = None) -> SlackApp:
    return SlackApp(ws, team_id, "Acme Slack", "UBOT1", "s1.token", "s1.secret", "p_owner", 100, channel)


def ws() -> str:
    return "ws_" + secrets.token_hex(6)


def test_connect_read_by_workspace_and_team_pick_a_channel_disconnect(store):
    w, t = ws(), team()
    assert store.slack.get_app(w) is None and store.slack.app_for_team(t) is None
    store.slack.connect_app(app(w, t))
    assert store.slack.get_app(w) == app(w, t) == store.slack.app_for_team(t)
    assert store.slack.set_channel(w, "C0123ABC") == app(w, t, "C0123ABC")
    assert store.slack.get_app(w).channel == "C0123ABC"
    assert store.slack.set_channel(w, None).channel is None and store.slack.get_app(w).channel is None
    assert store.slack.disconnect_app(w) is True
    assert store.slack.get_app(w) is None and store.slack.app_for_team(t) is None
    assert store.slack.disconnect_app(w) is False
    with pytest.raises(NotFound):
        store.slack.set_channel(w, "C0123ABC")


def test_a_team_belongs_to_one_workspace(store):
    a, b, t = ws(), ws(), team()
    store.slack.connect_app(app(a, t))
    with pytest.raises(Conflict):
        store.slack.connect_app(app(b, t))
    assert store.slack.get_app(b) is None and store.slack.app_for_team(t).workspace_id == a
    # the same workspace moving to another team frees the first one
    t2 = team()
    store.slack.connect_app(app(a, t2))
    assert store.slack.app_for_team(t) is None and store.slack.app_for_team(t2).workspace_id == a
    store.slack.connect_app(app(b, t))
    assert store.slack.app_for_team(t).workspace_id == b


@pytest.mark.parametrize("bad", [
    {"team_id": "acme"}, {"bot_user_id": "bot"}, {"channel": "#general"}, {"channel": "D0123ABC"},
    {"token_sealed": ""},
])
def test_a_bad_app_writes_nothing(store, bad):
    w, t = ws(), team()
    values = {**app(w, t).__dict__, **bad}
    with pytest.raises(BadInput):
        store.slack.connect_app(SlackApp(**values))
    assert store.slack.get_app(w) is None and store.slack.app_for_team(values["team_id"]) is None


def test_link_codes_are_single_use_and_expire(store):
    code = SlackLinkCode(secret_hash("ABCD2345"), "ws_1", "p_1", 1000)
    store.slack.put_link_code(code)
    assert store.slack.take_link_code(secret_hash("WRONG"), 10) is None
    assert store.slack.take_link_code(code.code_hash, 999) == code
    assert store.slack.take_link_code(code.code_hash, 999) is None  # spent
    store.slack.put_link_code(code)
    assert store.slack.take_link_code(code.code_hash, 1000) is None  # expired reads as absent
    assert store.slack.take_link_code(code.code_hash, 10) is None  # and is gone


def test_links_one_user_per_person_and_one_person_per_user(store):
    w, t, u1, u2 = ws(), team(), user(), user()
    first = SlackLink(w, "p_a", t, u1, 10)
    assert store.slack.link(first) == first
    assert store.slack.get_link(w, "p_a") == first == store.slack.link_of_user(t, u1)
    with pytest.raises(Conflict):  # u1 is p_a's
        store.slack.link(SlackLink(w, "p_b", t, u1, 11))
    with pytest.raises(Conflict):  # nor in another workspace
        store.slack.link(SlackLink(ws(), "p_c", t, u1, 11))
    assert store.slack.get_link(w, "p_b") is None
    moved = SlackLink(w, "p_a", t, u2, 12)  # p_a links another user: the first is free again
    store.slack.link(moved)
    assert store.slack.link_of_user(t, u1) is None and store.slack.link_of_user(t, u2) == moved
    store.slack.link(SlackLink(w, "p_b", t, u1, 13))
    assert store.slack.link_of_user(t, u1).person_id == "p_b"
    assert store.slack.unlink(w, "p_a") is True and store.slack.unlink(w, "p_a") is False
    assert store.slack.get_link(w, "p_a") is None and store.slack.link_of_user(t, u2) is None
    with pytest.raises(BadInput):
        store.slack.link(SlackLink(w, "p_d", t, "bob", 14))
    assert store.slack.get_link(w, "p_d") is None


def test_a_link_keeps_the_slack_name_and_an_older_one_has_none(store):
    w, t, u1, u2 = ws(), team(), user(), user()
    named = store.slack.link(SlackLink(w, "p_a", t, u1, 10, user_name="pat.o-neil_2"))
    assert store.slack.get_link(w, "p_a") == named == store.slack.link_of_user(t, u1)
    assert store.slack.get_link(w, "p_a").user_name == "pat.o-neil_2"
    store.slack.link(SlackLink(w, "p_b", t, u2, 11))  # a link made before names were kept
    assert store.slack.get_link(w, "p_b").user_name is None
    for bad in ("", "two words", "@pat", "<!channel>", "x" * 81):
        with pytest.raises(BadInput) as refused:
            store.slack.link(SlackLink(w, "p_c", t, user(), 12, user_name=bad))
        assert refused.value.field == "user_name"
    assert store.slack.get_link(w, "p_c") is None


def test_a_card_is_posted_once(store):
    assert store.slack.get_post("card_1") is None
    assert store.slack.claim_post("card_1", "ws_1", 100, lease=60) is True
    assert store.slack.claim_post("card_1", "ws_1", 159, lease=60) is False  # held
    assert store.slack.get_post("card_1") == SlackPost("card_1", "ws_1", POSTING, 100)
    assert store.slack.claim_post("card_1", "ws_1", 160, lease=60) is True  # its poster died: lapsed
    store.slack.finish_post("card_1", "C0123ABC", "1700000000.000100")
    assert store.slack.get_post("card_1") == SlackPost("card_1", "ws_1", POSTED, 160, "C0123ABC", "1700000000.000100")
    assert store.slack.claim_post("card_1", "ws_1", 10_000, lease=60) is False  # posted: never again
    store.slack.release_post("card_1")  # a posted card keeps its record
    assert store.slack.get_post("card_1").state == POSTED


def test_a_failed_post_is_released_and_claimed_again(store):
    assert store.slack.claim_post("card_2", "ws_1", 100, lease=60) is True
    store.slack.release_post("card_2")
    assert store.slack.get_post("card_2") is None
    assert store.slack.claim_post("card_2", "ws_1", 101, lease=60) is True


def test_a_slack_link_of_the_release_before_opens_without_a_name(tmp_path):
    """SQLite: a database made before links kept the Slack name (schema 8) gains the column on open;
    its links read with no name, and a new link keeps one."""
    path = str(tmp_path / "countersign.db")
    first = SQLiteStore(path)
    first.slack.link(SlackLink("ws_1", "p_a", "T0TEAM1", "U0OLD01", 10))
    first.close()
    as_released_before(path, "slack_links", "user_name", 8)

    reopened = SQLiteStore(path)
    try:
        assert reopened.slack.get_link("ws_1", "p_a") == SlackLink("ws_1", "p_a", "T0TEAM1", "U0OLD01", 10)
        reopened.slack.link(SlackLink("ws_1", "p_b", "T0TEAM1", "U0NEW01", 11, user_name="pat"))
        assert reopened.slack.link_of_user("T0TEAM1", "U0NEW01").user_name == "pat"
    finally:
        reopened.close()
