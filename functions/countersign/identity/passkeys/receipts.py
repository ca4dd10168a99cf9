"""Receipts of confirmed cards, and their offline verification (docs/passkeys.md).

A receipt is JSON: the workspace, the person, the card (tool, arguments, subject, preview,
fingerprint, result), its ticket (the server-signed claims), how it was confirmed (``confirmation``:
the method and the channel, actor and time of the audit entry that confirmed it), the WebAuthn
assertion when a passkey signed it (statement, authenticatorData, clientDataJSON bytes as
received, signature, the credential's COSE public key; ``null`` otherwise), the audit trail, and a
server seal: an Ed25519 signature over the canonical JSON of everything else. What each part proves:

* the passkey signature covers the statement (card id, fingerprint, preview digest, nonce, RP ID),
  the origin and the user-verified flag — nothing else;
* the fingerprint is recomputed from the workspace id, tool and subject, the preview digest from
  the title, lines and sections, and the ticket binds the arguments digest, so the statement pins them;
* the seal covers the rest (names, emails, result, audit trail, the unsigned assertion fields),
  and whether an assertion is present: ``confirmation.method`` must agree with it, so removing the
  assertion from a passkey receipt breaks the seal. A receipt without one proves only that this
  server's key sealed the record, nothing about which person approved;
* a quorum card's receipt (version 3) lists every approval (``approvals``: who, when, how, and the
  passkey assertion each was signed with, or ``null``), and each assertion is checked as the
  confirming one is: an earlier approver's proof is as much part of the receipt as the last one's.

Verification uses only hashlib, cryptography, cbor2 and PyNaCl; it reads no store.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from nacl.signing import VerifyKey

from ...core.canonical import arguments_digest, canonical_bytes, preview_digest, subject_fingerprint
from ...core.statement import b64u, key_fingerprint, parse_statement, statement_challenge, unb64u

RECEIPT_TYPE = "countersign-receipt"
RECEIPT_VERSION = 2  # 1: passkey receipts only, without ``confirmation`` (still verified)
# A quorum card's receipt: version 2 with ``approvals``, every approver's yes and the passkey
# assertion it was signed with (a verifier that knows only version 2 refuses it, never skips them).
QUORUM_VERSION = 3

# How a card was confirmed, from the channel of the audit entry that confirmed it.
METHODS = {"page": "session", "client": "client", "code": "code", "grant": "grant", "slack": "slack",
           "push": "push"}
HOW = {
    "passkey": "with the person's passkey on the confirm page",
    "session": "by a click on the confirm page in a signed-in session",
    "client": "by an answer given in the MCP client",
    "code": "by a confirmation code sent back through the MCP client",
    "grant": "under a standing grant the person gave this connection in advance (its audit entry names the grant)",
    "slack": "by a click on the card's Slack message, from the Slack user linked to the person",
    "push": "by a click on a push notification's button, in a signed-in session of the person on that device",
}
CONFIRMING_EVENTS = ("running", "completed")


class ReceiptError(ValueError):
    """A receipt that does not verify; the message says which check failed."""


def confirmation_of(passkey: dict | None, audit: list[dict[str, Any]]) -> dict[str, Any] | None:
    """How the card was confirmed: the first ``running``/``completed`` entry of its audit trail
    (the answer's own entry; later steps carry the same channel). None if there is none."""
    entry = next((e for e in audit if e["event"] in CONFIRMING_EVENTS), None)
    if entry is None:
        return None
    method = "passkey" if passkey is not None else METHODS.get(entry["channel"], entry["channel"])
    return {"method": method, "channel": entry["channel"], "actor": entry["actor"], "at": entry["at"]}


def receipt_body(*, workspace: Any, person: Any, card: Any, audit: list[Any], server_key: bytes,
                 key_id: str) -> dict[str, Any]:
    trail = [{"at": e.at, "event": e.event, "actor": e.actor, "channel": e.channel, "detail": e.detail}
             for e in audit]
    shown = {"title": card.title, "lines": list(card.lines)}
    if card.sections:  # (only a card that has them: other receipts keep their shape)
        shown["sections"] = list(card.sections)
    if getattr(card, "edited", None):  # a person's edit: the original arguments and what changed, sealed
        shown["edited"] = card.edited
    body = {
        "type": RECEIPT_TYPE, "v": RECEIPT_VERSION,
        "workspace": {"id": workspace.id, "name": workspace.name},
        "person": {"id": person.id, "email": person.email, "name": person.name},
        "card": {"id": card.id, "tool": card.tool, "arguments": card.arguments, "subject": card.subject,
                 **shown, "fingerprint": card.fingerprint,
                 "state": card.state.value, "created_at": card.created_at, "updated_at": card.updated_at,
                 "result": card.result},
        "ticket": card.ticket,
        "confirmation": confirmation_of(card.passkey, trail),
        "passkey": card.passkey,
        "audit": trail,
        "server_key": b64u(server_key), "server_key_id": key_id,
    }
    if getattr(card, "quorum", None):
        body["v"] = QUORUM_VERSION
        body["approvals"] = approvals_of(card)
    return body


def approvals_of(card: Any) -> list[dict[str, Any]]:
    """A quorum card's approvals, in order: who, when, through which channel, and the passkey
    assertion each was signed with (``null``: a click without one). Each vote keeps its own; a card
    run before the last vote kept it has it as the card's ``passkey``."""
    yes = [v for v in card.votes if v.get("vote") == "yes"]
    return [{"by": v.get("by"), "name": v.get("name"), "at": v.get("at"), "channel": v.get("channel"),
             "passkey": v.get("evidence") or (card.passkey if i == len(yes) - 1 and v.get("passkey") else None)}
            for i, v in enumerate(yes)]


def seal_receipt(body: dict[str, Any], sign: Any) -> dict[str, Any]:
    return {**body, "seal": sign(canonical_bytes(body))}


# -- verification ---------------------------------------------------------------------------------


def cose_key(cose: bytes) -> tuple[int, Any]:
    import cbor2  # (only verifying a receipt needs it: the confirm API's cold start does not load it)
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    k = cbor2.loads(cose)
    if k.get(1) == 2 and k.get(3) == -7 and k.get(-1) == 1:
        x, y = int.from_bytes(k[-2], "big"), int.from_bytes(k[-3], "big")
        return -7, ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
    if k.get(1) == 3 and k.get(3) == -257:
        return -257, rsa.RSAPublicNumbers(int.from_bytes(k[-2], "big"), int.from_bytes(k[-1], "big")).public_key()
    raise ReceiptError("the passkey's public key is not an ES256 or RS256 COSE key")


def check_assertion(p: dict[str, Any]) -> dict[str, Any]:
    """The WebAuthn signature over the statement: returns the statement's values."""
    statement = p["statement"]
    stmt = parse_statement(statement)
    rp_id, origin = p["rp_id"], p["origin"]
    cdj_raw, auth_data = unb64u(p["client_data_json"]), unb64u(p["authenticator_data"])
    signature = unb64u(p["signature"])
    cdj = json.loads(cdj_raw)
    if stmt.get("rp") != rp_id:
        raise ReceiptError("the statement names another relying party")
    if cdj.get("type") != "webauthn.get":
        raise ReceiptError("clientDataJSON is not an assertion")
    if unb64u(cdj.get("challenge", "")) != statement_challenge(statement):
        raise ReceiptError("the signed challenge is not SHA-256 of the statement")
    if cdj.get("origin") != origin or cdj.get("crossOrigin") is True:
        raise ReceiptError("the assertion was made on another origin")
    if auth_data[:32] != hashlib.sha256(rp_id.encode()).digest():
        raise ReceiptError("authenticatorData is for another RP ID")
    if len(auth_data) < 37 or auth_data[32] & 0x05 != 0x05:
        raise ReceiptError("the authenticator did not report user presence and verification")
    # loaded when a receipt is verified, not at the API's cold start
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding

    alg, key = cose_key(unb64u(p["public_key_cose"]))
    signed = auth_data + hashlib.sha256(cdj_raw).digest()
    try:
        if alg == -7:
            key.verify(signature, signed, ec.ECDSA(hashes.SHA256()))
        else:
            key.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
    except Exception as exc:  # InvalidSignature, or bytes that are no signature at all
        raise ReceiptError("the passkey's signature does not verify") from exc
    return stmt


@dataclass
class Verified:
    kind: str = ""
    proves: list[str] = field(default_factory=list)
    does_not_prove: list[str] = field(default_factory=list)


def verify_receipt(receipt: dict[str, Any], trusted_server_key: str | None = None) -> Verified:
    """Every check of a receipt, offline; :class:`ReceiptError` naming the first that fails."""
    try:
        return _verify(receipt, trusted_server_key)
    except ReceiptError:
        raise
    except Exception as exc:  # a missing field, a wrong type, bytes that are not base64 or CBOR
        raise ReceiptError(f"the receipt is malformed ({type(exc).__name__}: {exc})") from exc


def _strict(text: str) -> bytes:
    """base64url that re-encodes to itself (a changed padding bit is a changed field)."""
    raw = unb64u(text)
    if b64u(raw) != text:
        raise ReceiptError("a base64url field is not in canonical form")
    return raw


def _confirmation(receipt: dict[str, Any], p: Any) -> dict[str, Any]:
    """How the card was confirmed, checked against the assertion and the audit trail (both sealed)."""
    if p is not None and not isinstance(p, dict):
        raise ReceiptError("the passkey field is neither an assertion nor null")
    if receipt["v"] == 1:  # version 1 receipts were only ever made for passkey confirmations
        if p is None:
            raise ReceiptError("this version 1 receipt has no passkey assertion")
        return {"method": "passkey", "channel": "page"}
    conf = receipt["confirmation"]
    if not isinstance(conf, dict) or (conf.get("method") == "passkey") != (p is not None):
        raise ReceiptError("the receipt says it was confirmed with a passkey but carries no assertion, or the "
                           "other way round")
    if conf != confirmation_of(p, receipt["audit"]):
        raise ReceiptError("how the card was confirmed does not match its audit trail")
    return conf


def _approvals(receipt: dict[str, Any], fp: str, preview: str) -> list[str]:
    """Every approver's passkey assertion of a quorum card's receipt, checked as the confirming one
    is (signature, origin, user verification, the statement naming this card, change and preview):
    what they prove, one line each. :class:`ReceiptError` naming the approval that fails."""
    card, approvals, p = receipt["card"], receipt["approvals"], receipt["passkey"]
    if not isinstance(approvals, list) or not approvals or not all(isinstance(a, dict) for a in approvals):
        raise ReceiptError("a quorum card's receipt lists no approvals")
    if p is not None and approvals[-1]["passkey"] != p:
        raise ReceiptError("the last approval's passkey assertion is not the one that confirmed the card")
    ran = ((card.get("result") or {}).get("quorum") or {}).get("approvers")
    if ran is not None and [(a["id"], bool(a["passkey"])) for a in ran] != [
            (a["by"], a["passkey"] is not None) for a in approvals]:
        raise ReceiptError("the approvals do not match the approvers the card's result names, or which of them "
                           "signed with a passkey")
    keys = [a["passkey"]["public_key_cose"] for a in approvals if a["passkey"] is not None]
    if len(set(keys)) != len(keys) or len({a["by"] for a in approvals}) != len(approvals):
        raise ReceiptError("two approvals are of the same person or signed by the same passkey")
    lines = []
    for i, a in enumerate(approvals, 1):
        who = f"Approval {i} of {len(approvals)} ({a['name']})"
        if a["passkey"] is None:
            lines.append(f"{who}: given without a passkey ({a['channel']}): the server's sealed record only.")
            continue
        try:
            stmt = check_assertion(a["passkey"])
        except ReceiptError as exc:
            raise ReceiptError(f"approval {i} ({a['name']}): {exc}") from None
        if stmt.get("card") != card["id"] or stmt.get("fp") != fp or stmt.get("preview") != preview:
            raise ReceiptError(f"approval {i} ({a['name']}): the passkey signed a statement about another card, "
                               "change or preview")
        key = key_fingerprint(a["passkey"]["public_key_cose"])
        lines.append(f"{who}: the passkey with public key fingerprint {key} signed, with user verification, on "
                     f"{a['passkey']['origin']}, a statement naming card "
                     f"{card['id']}, its fingerprint {fp[:16]}… and the digest of its preview.")
    return lines


def _verify(receipt: dict[str, Any], trusted_server_key: str | None) -> Verified:
    if receipt.get("type") != RECEIPT_TYPE or receipt.get("v") not in (1, RECEIPT_VERSION, QUORUM_VERSION):
        raise ReceiptError(f"not a countersign receipt of version 1, {RECEIPT_VERSION} or {QUORUM_VERSION}")
    server_key = trusted_server_key or receipt["server_key"]
    if trusted_server_key and receipt["server_key"] != trusted_server_key:
        raise ReceiptError("the receipt was sealed by another server key than the one you trust")
    body = {k: v for k, v in receipt.items() if k != "seal"}
    verify_key = VerifyKey(_strict(server_key))
    try:
        verify_key.verify(canonical_bytes(body), _strict(receipt["seal"]))
    except Exception as exc:
        raise ReceiptError("the server seal does not verify: a field was changed") from exc
    card, ws, person, p = receipt["card"], receipt["workspace"], receipt["person"], receipt["passkey"]
    conf = _confirmation(receipt, p)
    payload_b64, sig_b64 = receipt["ticket"].split(".")
    try:
        verify_key.verify(unb64u(payload_b64), unb64u(sig_b64))
    except Exception as exc:
        raise ReceiptError("the card's ticket was not signed by this server key") from exc
    claims = json.loads(unb64u(payload_b64))
    fp = subject_fingerprint(ws["id"], card["tool"], card["subject"])
    expected = {"card_id": card["id"], "workspace": ws["id"], "person": person["id"], "tool": card["tool"],
                "fingerprint": fp, "arguments_digest": arguments_digest(card["tool"], card["arguments"]),
                "preview_digest": preview_digest(card["title"], card["lines"], card.get("sections") or ())}
    moved = sorted(k for k, v in expected.items() if claims.get(k) != v)
    if card["fingerprint"] != fp:
        moved.append("fingerprint (recomputed from the subject)")
    if moved:
        raise ReceiptError("the card does not match its ticket: " + ", ".join(moved))
    bound = (f"The fingerprint is the one of this tool ({card['tool']}) and subject in workspace {ws['id']}; "
             "the server's ticket binds these arguments and this preview to it.")
    trust = ("That the server key is the deployment's: pass --server-key with the key you trust "
             + ("(done)." if trusted_server_key else "(not given: the receipt's own key was used)."))
    stands = "That the effect still stands: later changes are not in this receipt."
    quorum = _approvals(receipt, fp, expected["preview_digest"]) if receipt["v"] == QUORUM_VERSION else None
    if p is None:
        verified = _sessionless(receipt, conf, bound, trust, stands)
        if quorum is not None:
            verified.proves[1:1] = quorum
        return verified
    stmt = check_assertion(p)
    if stmt.get("card") != card["id"] or stmt.get("fp") != fp or stmt.get("preview") != expected["preview_digest"]:
        raise ReceiptError("the passkey signed a statement about another card, change or preview")
    signed = quorum if quorum is not None else [
        f"The passkey with public key fingerprint {key_fingerprint(p['public_key_cose'])} signed, with user "
        f"verification, on "
        f"{p['origin']} (RP ID {p['rp_id']}), a statement naming card {card['id']}, its fingerprint {fp[:16]}… "
        f"and the digest of the preview “{card['title']}” ({len(card['lines'])} lines)."]
    whose = ("That each passkey is its approver's: compare each public key fingerprint with the one Settings lists "
             "under that approver's passkeys" if quorum is not None else
             "That the passkey is this person's: compare its public key fingerprint with the one Settings lists "
             "under each of their passkeys")
    return Verified(
        kind=("confirmed with a passkey: the approvers' passkeys signed the change, the server sealed the record"
              if quorum is not None else
              "confirmed with a passkey: the person's passkey signed the change, the server sealed the record"),
        proves=[
            *signed,
            bound,
            f"The server key {receipt['server_key_id']} sealed every other field (names, result, audit trail).",
        ],
        does_not_prove=[
            f"{whose} (countersign keeps the key; the receipt's own copy proves nothing by itself).",
            trust,
            stands,
        ],
    )


def _sessionless(receipt: dict[str, Any], conf: dict[str, Any], bound: str, trust: str, stands: str) -> Verified:
    card, ws = receipt["card"], receipt["workspace"]
    how = HOW.get(conf["method"], f"through the {conf['channel']!r} channel")
    return Verified(
        kind=f"confirmed without a passkey ({how}): a record sealed by the server, not signed by the person",
        proves=[
            f"The server key {receipt['server_key_id']} sealed this record: card {card['id']} ({card['tool']}) "
            f"in workspace {ws['id']}, its arguments, preview, result and audit trail, which says it was confirmed "
            f"{how} ({conf['actor']}).",
            bound,
        ],
        does_not_prove=[
            "Which person approved: no passkey signed this card. The person, the confirmation and the audit trail "
            "are what the server recorded; anyone holding the server's key, or the person's session or agent "
            "connection, could have produced them.",
            trust,
            stands,
        ],
    )
