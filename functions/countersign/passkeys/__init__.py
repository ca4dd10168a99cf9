"""Passkeys: registration, sign-in and confirmations signed by the person's own authenticator.

Import-light on purpose: :mod:`.policy` and :mod:`.statement` are pure and used by the gate (the
MCP function imports them); only :mod:`.ceremony` and :mod:`.receipts` import py_webauthn and
cryptography, and only the confirm API and the CLI's ``verify-receipt`` import those
(docs/passkeys.md).
"""
