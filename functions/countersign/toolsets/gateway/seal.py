"""Upstream credentials at rest: sealed with the server's request-state keys.

The first key seals, every key unseals (so a key rotated in as ``[new, old]`` keeps old
credentials readable until they are sealed again). The sealed text names the upstream it belongs
to (workspace and name, as associated data): a credential copied onto another upstream or into
another workspace does not open. Nothing here is logged, and a sealed value never leaves the
server: it is stored in the upstream's document and in the arguments of the held request that
adds it, and neither reaches the agent or the page.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets

from nacl.bindings import crypto_aead_xchacha20poly1305_ietf_decrypt, crypto_aead_xchacha20poly1305_ietf_encrypt
from nacl.exceptions import CryptoError

PREFIX = "s1."
NONCE_BYTES = 24


class SealError(Exception):
    """A sealed credential that no key of this server opens."""


def _key(secret: bytes) -> bytes:
    return hashlib.blake2b(secret, digest_size=32, person=b"cs-upstream-key").digest()


def _aad(workspace_id: str, name: str) -> bytes:
    return json.dumps(["countersign-upstream", workspace_id, name]).encode()


class Sealer:
    def __init__(self, keys: list[bytes]):
        if not keys:
            raise ValueError("sealing upstream credentials needs at least one key")
        self._keys = [_key(k) for k in keys]

    def seal(self, workspace_id: str, name: str, headers: dict[str, str]) -> str:
        nonce = secrets.token_bytes(NONCE_BYTES)
        plain = json.dumps(headers, sort_keys=True).encode()
        box = crypto_aead_xchacha20poly1305_ietf_encrypt(plain, _aad(workspace_id, name), nonce, self._keys[0])
        return PREFIX + base64.urlsafe_b64encode(nonce + box).decode().rstrip("=")

    def digest(self, workspace_id: str, name: str, sealed: str) -> str:
        """What names the credential inside ``sealed`` in a request's subject, so that the same
        credential sealed twice is one request and another credential another: a keyed hash of
        the headers (with a key of its own, derived from the sealing key), from which nothing of
        them can be learnt. :class:`SealError` if no key opens it."""
        plain = json.dumps(self.unseal(workspace_id, name, sealed), sort_keys=True).encode()
        key = hashlib.blake2b(self._keys[0], digest_size=32, person=b"cs-upstream-dig").digest()
        return hashlib.blake2b(_aad(workspace_id, name) + b"\0" + plain, key=key, digest_size=16).hexdigest()

    def unseal(self, workspace_id: str, name: str, sealed: str) -> dict[str, str]:
        if not sealed.startswith(PREFIX):
            raise SealError("not a sealed upstream credential")
        raw = sealed[len(PREFIX):]
        try:
            data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        except ValueError:
            raise SealError("not a sealed upstream credential") from None
        nonce, box = data[:NONCE_BYTES], data[NONCE_BYTES:]
        for key in self._keys:
            try:
                plain = crypto_aead_xchacha20poly1305_ietf_decrypt(box, _aad(workspace_id, name), nonce, key)
            except CryptoError:
                continue
            return dict(json.loads(plain))
        raise SealError("no key of this server opens the upstream's credential (was a request-state key dropped?)")
