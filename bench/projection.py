"""What gsi1's projection costs: the index entry of a card as the store writes it, under three
projections, and the DynamoDB units one card's life and its listings take.

    .venv/bin/python bench/projection.py

Items are built by the store's own codec (countersign.store.dynamodb.codec) and sized with
DynamoDB's rules (attribute names count; a string is its UTF-8 length; a number about one byte per
two digits plus one; a list three bytes plus one per element). Per card: filing puts it in the
index, the answer moves it (an index delete and a put: its key changes), and it is listed
``LISTINGS`` times while it waits (the page, the notifier's email) and ``LISTINGS`` times in
history. Index writes cost 1 write unit per KB of the entry, reads 0.5 per 4 KB (eventually
consistent). ``KEYS_ONLY`` lists from the index and then reads each card from the table
(BatchGetItem, 0.5 per 4 KB of the whole item). It prints; it asserts nothing.
"""

from __future__ import annotations

import math

import bench_paths  # noqa: F401  (the project first on sys.path, bench/ last)

from countersign.core.card_states import CardState
from countersign.store.cards import Card
from countersign.store.dynamodb import codec
from countersign.store.table import GSI1_ATTRIBUTES

LISTINGS = 4
KEYS = ("pk", "sk", "gsi1pk", "gsi1sk")


def size(value: dict) -> int:
    """Bytes of one attribute value (low-level form) as DynamoDB counts them."""
    [(kind, v)] = value.items()
    if kind == "S":
        return len(v.encode("utf-8"))
    if kind == "N":
        return math.ceil(len(v.lstrip("-").replace(".", "")) / 2) + 1
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "L":
        return 3 + sum(1 + size(x) for x in v)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + size(x) for k, x in v.items())
    raise ValueError(kind)


def item_size(item: dict, names=None) -> int:
    return sum(len(k.encode()) + size(v) for k, v in item.items() if names is None or k in names)


def card(arguments_bytes: int) -> Card:
    body = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * (arguments_bytes // 57 + 1)
    return Card(
        id="c_" + "x" * 22, workspace_id="w_" + "y" * 22, person_id="p_" + "z" * 22, connection_id="k_" + "q" * 22,
        tool="send_campaign", arguments={"campaign_id": "cmp_123", "body": body[:arguments_bytes]},
        subject={"campaign": {"id": "cmp_123", "version": 7, "recipients": 1200}},
        title="Send the campaign 'December news' to 1,200 subscribers?",
        lines=("Audience: Newsletter (1,200)", "Subject: December news", "From: news@example.com"),
        fingerprint="f" * 64, ticket="t" * 190 + "." + "s" * 86, state=CardState.PENDING,
        created_at=1_800_000_000, expires_at=1_800_086_400, updated_at=1_800_000_000,
    )


def main() -> None:
    include = set(GSI1_ATTRIBUTES) | set(KEYS)
    print(f"{'arguments':>10} {'item B':>7} | {'ALL: idx B':>10} {'WCU':>4} {'RCU':>5} | "
          f"{'INCLUDE: idx B':>14} {'WCU':>4} {'RCU':>5} | {'KEYS_ONLY: WCU':>14} {'RCU':>5}")
    for arguments in (40, 2_000, 16_000, 60_000):
        raw = codec.card_item(card(arguments), purge_at=1_831_622_400, txn_id="0" * 36)
        whole = item_size(raw)
        projected = item_size(raw, include)
        keys = item_size(raw, KEYS)
        life = 3  # filed (put), answered (delete + put)
        all_w, inc_w, key_w = (life * math.ceil(b / 1024) for b in (whole, projected, keys))
        reads = 2 * LISTINGS
        all_r, inc_r = (reads * 0.5 * b / 4096 for b in (whole, projected))
        key_r = reads * (0.5 * keys / 4096 + 0.5 * math.ceil(whole / 4096))
        print(f"{arguments:>10} {whole:>7} | {whole:>10} {all_w:>4} {all_r:>5.2f} | {projected:>14} {inc_w:>4} "
              f"{inc_r:>5.2f} | {key_w:>14} {key_r:>5.2f}")
    print(f"(WCU: index write units over a card's life; RCU: read units of its {2 * LISTINGS} listings; "
          "a write unit costs 5 times a read unit on demand)")


if __name__ == "__main__":
    main()
