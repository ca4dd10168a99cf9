"""The load test in the suite: 32 agents, 2 people, 8 % contested, the server killed 4 times.
Zero lost cards, double or missing effects, twin live cards, false drift, cards left running or
waiting, or emails owed. ``bench/exactly_once.py`` prints the same counts."""

from __future__ import annotations

from .load import Load, run


def test_exactly_once_under_load_through_four_kills(tmp_path):
    counts = run(tmp_path, Load())
    print(counts.as_dict())
    assert counts.kills == 4
    assert counts.cards == counts.requests == counts.held_replies  # one card per request, every reply given
    assert counts.completed > 0 and counts.declined > 0
    assert counts.problems() == {}, counts.as_dict()
    assert counts.emails_sent >= 1
