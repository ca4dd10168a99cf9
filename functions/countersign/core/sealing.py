"""Secrets at rest, sealed with the server's request-state keys (XChaCha20-Poly1305).

The first key seals, every key unseals (so a key rotated in as ``[new, old]`` keeps old secrets
readable until they are sealed again). Each use derives its own key from every request-state key
(``purpose``, at most 16 bytes: ``cs-upstream-key`` for the gateway's upstream credentials,
``cs-webhook-key`` for webhook signing secrets), and the sealed text is bound to what it belongs
to (``label`` and the context given, as associated data): a sealed value copied onto another
record does not open. Pure: no I/O, nothing logged.
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
    """A sealed value that no key of this server opens."""


class Sealer:
    """Seals and unseals values of one kind (``label``) with keys derived for one ``purpose``."""

    def __init__(self, keys: list[bytes], *, purpose: bytes, label: str):
        if not keys:
            raise ValueError("sealing needs at least one key")
        self._keys = [hashlib.blake2b(k, digest_size=32, person=purpose).digest() for k in keys]
        self.label = label

    @property
    def first_key(self) -> bytes:
        """The derived key that seals (for a keyed digest of a use's own)."""
        return self._keys[0]

    def associated(self, *context: str) -> bytes:
        """What a sealed value is bound to: its label and ``context`` (a workspace, a name…)."""
        return json.dumps([self.label, *context]).encode()

    def seal(self, context: tuple[str, ...], plain: bytes) -> str:
        nonce = secrets.token_bytes(NONCE_BYTES)
        box = crypto_aead_xchacha20poly1305_ietf_encrypt(plain, self.associated(*context), nonce, self._keys[0])
        return PREFIX + base64.urlsafe_b64encode(nonce + box).decode().rstrip("=")

    def unseal(self, context: tuple[str, ...], sealed: str, what: str) -> bytes:
        """The plain bytes; :class:`SealError` naming ``what`` if it is not sealed or no key opens it."""
        if not sealed.startswith(PREFIX):
            raise SealError(f"not a sealed {what}")
        raw = sealed[len(PREFIX):]
        try:
            data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        except ValueError:
            raise SealError(f"not a sealed {what}") from None
        nonce, box = data[:NONCE_BYTES], data[NONCE_BYTES:]
        for key in self._keys:
            try:
                return crypto_aead_xchacha20poly1305_ietf_decrypt(box, self.associated(*context), nonce, key)
            except CryptoError:
                continue
        raise SealError(f"no key of this server opens the {what} (was a request-state key dropped?)")
