"""Where an OAuth grant's client stands, from facts every release writes (oauth.grants.judge)."""

from __future__ import annotations

import pytest

from countersign.identity.oauth import CODE_TTL
from countersign.identity.oauth.grants import CONNECTED, UNFINISHED, UNFINISHED_GRACE, WAITING, judge
from countersign.store.grants import OAuthGrant

NOW = 1_800_000_000
GRANT = OAuthGrant("k_1", "w_1", "p_1", "c1", "Client", "http://127.0.0.1/cb", NOW, code_hash="h" * 64)
DEADLINE = NOW + CODE_TTL + UNFINISHED_GRACE


@pytest.mark.parametrize(("code_hash", "spent", "used", "at", "state"), [
    (None, None, False, DEADLINE + 10**6, CONNECTED),  # known connected, or recorded before codes were kept
    ("h" * 64, True, False, DEADLINE + 10**6, CONNECTED),  # spent, by whichever release: connected for good
    ("h" * 64, None, True, DEADLINE + 10**6, CONNECTED),  # the code is gone, but the connection was used
    ("h" * 64, False, False, NOW, WAITING),
    ("h" * 64, False, False, DEADLINE - 1, WAITING),  # expired, but an exchange may be under way
    ("h" * 64, False, False, DEADLINE, UNFINISHED),  # known unspent, and now it cannot be spent
    # The code is no longer kept and nothing used the connection yet: an earlier release may have
    # spent it for a client that has not called. Not revoked: a working client is not ended on a guess.
    ("h" * 64, None, False, DEADLINE, CONNECTED),
])
def test_judge(code_hash, spent, used, at, state):
    from dataclasses import replace

    assert judge(replace(GRANT, code_hash=code_hash), spent, used, at) == state
