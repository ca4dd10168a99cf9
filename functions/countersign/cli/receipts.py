"""``countersign verify-receipt FILE``: check a completed card's receipt offline (docs/passkeys.md)
and say what it proves and what it does not."""

from __future__ import annotations

import json
import sys


def cmd_verify_receipt(args) -> int:
    # When verifying, not at the CLI's start (the passkey modules and their cryptography).
    from ..identity.passkeys.receipts import ReceiptError, verify_receipt

    try:
        with open(args.file, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {args.file}: {getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return 2
    try:
        receipt = json.loads(text)
    except ValueError as exc:
        print(f"FAILED: the receipt does not verify: {args.file} is not JSON ({exc})")
        return 1
    try:
        report = verify_receipt(receipt, args.server_key)
    except (ReceiptError, ValueError) as exc:
        print(f"FAILED: the receipt does not verify: {exc}")
        return 1
    print(f"OK: the receipt verifies.\nKind: {report.kind}.\nIt proves:")
    for line in report.proves:
        print(f"  - {line}")
    print("It does not prove:")
    for line in report.does_not_prove:
        print(f"  - {line}")
    return 0


def add_parser(sub) -> None:
    verify = sub.add_parser("verify-receipt", help="check a completed card's receipt offline")
    verify.add_argument("file", metavar="FILE", help="the receipt JSON downloaded from the confirm page")
    verify.add_argument("--server-key", help="the deployment's public key (base64url) to trust instead of the "
                                            "receipt's own copy")
    verify.set_defaults(func=cmd_verify_receipt)
