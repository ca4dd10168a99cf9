"""Ed25519 tickets (docs/guarantees.md, "Tickets"): ticket_matches names the fields where verified
claims differ from the stored ones, sorted and type-strict."""

from __future__ import annotations

import pytest

from countersign.core.tickets import ticket_matches
from tests.unit.tickets import CLAIMS, FIELDS, altered


def test_ticket_matches_no_difference(ring):
    claims = ring.verify(ring.sign(CLAIMS))
    assert ticket_matches(claims, dict(CLAIMS)) == []
    assert ticket_matches(claims, {}) == []


@pytest.mark.parametrize("field", FIELDS)
def test_ticket_matches_names_each_differing_field(ring, field):
    claims = ring.verify(ring.sign(CLAIMS))
    expected = dict(claims.to_dict())
    expected[field] = altered(expected[field])
    assert ticket_matches(claims, expected) == [field]


def test_ticket_matches_names_several_fields_sorted(ring):
    claims = ring.verify(ring.sign(CLAIMS))
    stored = dict(CLAIMS, tool="delete_everything", fingerprint="0" * 64, workspace="ws_2")
    assert ticket_matches(claims, stored) == ["fingerprint", "tool", "workspace"]


def test_ticket_matches_is_type_strict(ring):
    claims = ring.verify(ring.sign(CLAIMS))
    assert ticket_matches(claims, {"issued_at": str(CLAIMS["issued_at"])}) == ["issued_at"]
