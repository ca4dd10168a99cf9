"""Upstream credentials at rest: sealed with the server's request-state keys
(:mod:`countersign.core.sealing`, as every secret the server keeps).

The first key seals, every key unseals (so a key rotated in as ``[new, old]`` keeps old
credentials readable until they are sealed again). The sealed text names the upstream it belongs
to (workspace and name, as associated data): a credential copied onto another upstream or into
another workspace does not open. Nothing here is logged, and a sealed value never leaves the
server: it is stored in the upstream's document and in the arguments of the held request that
adds it, and neither reaches the agent or the page.
"""

from __future__ import annotations

import hashlib
import json

from ...core import sealing
from ...core.sealing import SealError

__all__ = ["SealError", "Sealer"]

WHAT = "upstream credential"


class Sealer:
    def __init__(self, keys: list[bytes]):
        if not keys:
            raise ValueError("sealing upstream credentials needs at least one key")
        self._sealer = sealing.Sealer(keys, purpose=b"cs-upstream-key", label="countersign-upstream")

    def seal(self, workspace_id: str, name: str, headers: dict[str, str]) -> str:
        return self._sealer.seal((workspace_id, name), json.dumps(headers, sort_keys=True).encode())

    def digest(self, workspace_id: str, name: str, sealed: str) -> str:
        """What names the credential inside ``sealed`` in a request's subject, so that the same
        credential sealed twice is one request and another credential another: a keyed hash of
        the headers (with a key of its own, derived from the sealing key), from which nothing of
        them can be learnt. :class:`SealError` if no key opens it."""
        plain = json.dumps(self.unseal(workspace_id, name, sealed), sort_keys=True).encode()
        key = hashlib.blake2b(self._sealer.first_key, digest_size=32, person=b"cs-upstream-dig").digest()
        return hashlib.blake2b(self._sealer.associated(workspace_id, name) + b"\0" + plain, key=key,
                               digest_size=16).hexdigest()

    def unseal(self, workspace_id: str, name: str, sealed: str) -> dict[str, str]:
        return dict(json.loads(self._sealer.unseal((workspace_id, name), sealed, WHAT)))
