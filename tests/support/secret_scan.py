"""Which secrets occur in a text: the end-of-run scan of MCP responses and log lines (tests/conftest.py).

The same answer as ``[s for s in secrets if s in text]``, without its cost: that is one pass over
the whole text per secret, and a whole run holds thousands of secrets and tens of megabytes of
responses, which took minutes. Here the text is read once:

- every secret is made of the characters of ``alphabet`` (all characters of all the secrets), so
  any occurrence lies inside a maximal run of those characters in the text;
- each distinct run at least as long as the shortest secret is looked at once, however often it
  occurs: at each position, its next ``shortest`` characters are looked up among the secrets'
  first ``shortest`` characters, and only a secret starting with them is compared whole.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable


def occurring(secrets: Iterable[str], *texts: str) -> set[str]:
    """The secrets that occur (as substrings) in any of ``texts``."""
    wanted = {s for s in secrets if s}
    if not wanted:
        return set()
    shortest = min(len(s) for s in wanted)
    alphabet = sorted(set().union(*wanted))
    runs_of = re.compile("[" + "".join(re.escape(c) for c in alphabet) + f"]{{{shortest},}}")
    by_start: dict[str, list[str]] = defaultdict(list)
    for s in wanted:
        by_start[s[:shortest]].append(s)
    found: set[str] = set()
    runs: set[str] = set()
    for text in texts:
        runs.update(runs_of.findall(text))
    for run in runs:
        get = by_start.get
        for i in range(len(run) - shortest + 1):
            starting = get(run[i:i + shortest])
            if starting:
                found.update(s for s in starting if run.startswith(s, i))
    return found
