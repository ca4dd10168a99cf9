"""The signing keys that signed cards still answerable (both stores): what start-up checks."""

from __future__ import annotations


def test_keys_in_use_until_their_last_card_lapses(store):
    store.signing_keys.note_signing_key("k1", until=2000)
    store.signing_keys.note_signing_key("k2", until=1500)
    assert store.signing_keys.signing_keys_in_use(now=1000) == {"k1": 2000, "k2": 1500}
    assert store.signing_keys.signing_keys_in_use(now=1500) == {"k1": 2000}
    assert store.signing_keys.signing_keys_in_use(now=2000) == {}


def test_a_note_never_lowers_the_time(store):
    store.signing_keys.note_signing_key("k1", until=2000)
    store.signing_keys.note_signing_key("k1", until=1200)
    assert store.signing_keys.signing_keys_in_use(now=1000) == {"k1": 2000}
    store.signing_keys.note_signing_key("k1", until=3000)
    assert store.signing_keys.signing_keys_in_use(now=1000) == {"k1": 3000}


def test_a_key_can_be_forgotten(store):
    store.signing_keys.note_signing_key("k1", until=2000)
    store.signing_keys.forget_signing_key("k1")
    assert store.signing_keys.signing_keys_in_use(now=1000) == {}
