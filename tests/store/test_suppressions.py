"""Suppressed addresses (bounces, complaints), on both stores."""

from __future__ import annotations

import pytest

from countersign.core.ids import new_id
from countersign.store.errors import BadInput
from countersign.store.suppressions import Suppression


def address() -> str:
    return f"{new_id('u').lower()}@example.com"


def test_suppress_read_in_any_case_replace_and_lift(store):
    email = address()
    assert store.suppressions.address_suppression(email) is None
    store.suppressions.suppress_address(Suppression(email, "bounce", 100, "General"))
    assert store.suppressions.address_suppression(email.upper()) == Suppression(email, "bounce", 100, "General")
    store.suppressions.suppress_address(Suppression(email, "complaint", 200))  # the latest feedback wins
    assert store.suppressions.address_suppression(email) == Suppression(email, "complaint", 200, None)
    store.suppressions.lift_suppression(email.upper())
    assert store.suppressions.address_suppression(email) is None
    store.suppressions.lift_suppression(email)  # lifting twice is harmless


def test_suppressions_are_per_address(store):
    a, b = address(), address()
    store.suppressions.suppress_address(Suppression(a, "complaint", 1))
    assert store.suppressions.address_suppression(b) is None


@pytest.mark.parametrize("bad", [
    Suppression("Someone@Example.com", "bounce", 1),
    Suppression("not-an-address", "bounce", 1),
    Suppression("a@example.com", "transient", 1),
])
def test_bad_suppressions_write_nothing(store, bad):
    with pytest.raises(BadInput):
        store.suppressions.suppress_address(bad)
    assert store.suppressions.address_suppression(bad.email) is None
