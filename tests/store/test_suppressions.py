"""Suppressed addresses (bounces, complaints), on both stores."""

from __future__ import annotations

import pytest

from countersign.core.ids import new_id
from countersign.store.errors import BadInput
from countersign.store.records import Suppression


def address() -> str:
    return f"{new_id('u').lower()}@example.com"


def test_suppress_read_in_any_case_replace_and_lift(store):
    email = address()
    assert store.address_suppression(email) is None
    store.suppress_address(Suppression(email, "bounce", 100, "General"))
    assert store.address_suppression(email.upper()) == Suppression(email, "bounce", 100, "General")
    store.suppress_address(Suppression(email, "complaint", 200))  # the latest feedback wins
    assert store.address_suppression(email) == Suppression(email, "complaint", 200, None)
    store.lift_suppression(email.upper())
    assert store.address_suppression(email) is None
    store.lift_suppression(email)  # lifting twice is harmless


def test_suppressions_are_per_address(store):
    a, b = address(), address()
    store.suppress_address(Suppression(a, "complaint", 1))
    assert store.address_suppression(b) is None


@pytest.mark.parametrize("bad", [
    Suppression("Someone@Example.com", "bounce", 1),
    Suppression("not-an-address", "bounce", 1),
    Suppression("a@example.com", "transient", 1),
])
def test_bad_suppressions_write_nothing(store, bad):
    with pytest.raises(BadInput):
        store.suppress_address(bad)
    assert store.address_suppression(bad.email) is None
