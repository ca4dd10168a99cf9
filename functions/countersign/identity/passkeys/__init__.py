"""Passkeys: registration, sign-in and confirmations signed by the person's own authenticator.

The WebAuthn ceremony (:mod:`.ceremony`), the single-use challenges and the check of an assertion
against a person's passkeys (:mod:`.challenges`), and the receipts (:mod:`.receipts`): they import
py_webauthn and cryptography, and only the confirm API and the CLI's ``verify-receipt`` import
them (docs/passkeys.md). What the gate needs of passkeys is the gate's and core's: the
workspace's policy (:mod:`countersign.gate.passkey_policy`) and the statement a passkey signs
(:mod:`countersign.core.statement`), both pure, which the MCP function imports.
"""
