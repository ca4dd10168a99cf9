#!/usr/bin/env python3
"""Copy the items of a restored table back into the stack's table (docs/operations.md, "Restoring
the table on AWS").

    python infra/restore_table.py RESTORED_TABLE STACK_TABLE [--overwrite] [--dry-run]

DynamoDB restores a point in time (or an AWS Backup recovery point) only into a new table, which
the stack does not use. This copies it back, with the operator's own credentials:

* default: only items whose key is missing from the stack's table (what was deleted since),
  each with a conditional put, so nothing written since the restore point is touched - no card
  answered since goes back to waiting, no spent ticket is unspent. Left out: the items whose
  deletion is how something ended (:data:`ENDED_BY_DELETION`: a session signed out, a sign-in
  link or a code or a passkey challenge used, an OAuth request answered, a member removed, a
  passkey removed), which a copy would bring back to life; ``--include-ended`` copies them too;
* ``--overwrite``: every item of the restored table replaces the current one (the data as it
  was at the restore point; items created since stay). A card answered since can then be
  answered again, unless its ticket's spent record (kept: it is not in the backup) refuses it.

Writes go through the stack's table, so its stream hands restored notifications to the notifier
like new ones (a pending one is emailed; a done one is left alone). Prints what it did.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

# (partition key prefix, sort key prefix) of items that end by being deleted (the store's DynamoDB
# keys, countersign.store.dynamodb.codec and its neighbours)
ENDED_BY_DELETION = (
    ("SESSION#", ""), ("SIGNIN#", ""), ("CODE#", ""), ("PKCHALLENGE#", ""), ("OAUTHREQ#", ""),
    ("WS#", "PERSON#"), ("EMAIL#", ""), ("PASSKEY#", ""), ("WS#", "PASSKEYOF#"),
)


def ended_by_deletion(item: dict[str, Any]) -> bool:
    pk, sk = item["pk"].get("S", ""), item["sk"].get("S", "")
    return any(pk.startswith(p) and sk.startswith(s) for p, s in ENDED_BY_DELETION)


def copy(client: Any, source: str, target: str, *, overwrite: bool = False, dry_run: bool = False,
         include_ended: bool = False) -> dict[str, int]:
    """Copy every item of ``source`` into ``target``; counts of ``copied``, ``kept`` (present in
    ``target`` and left alone), ``ended`` (missing from ``target``, where their deletion ended
    something: not copied unless ``include_ended``, in either mode) and ``scanned``."""
    counts = {"scanned": 0, "copied": 0, "kept": 0, "ended": 0}
    for page in client.get_paginator("scan").paginate(TableName=source, ConsistentRead=True):
        for item in page.get("Items", []):
            counts["scanned"] += 1
            ended = not include_ended and ended_by_deletion(item)
            if ended and not overwrite:  # missing from the target: it ended; present: it stays as it is
                present = "Item" in client.get_item(TableName=target, Key={"pk": item["pk"], "sk": item["sk"]},
                                                    ConsistentRead=True)
                counts["kept" if present else "ended"] += 1
                continue
            if dry_run:
                present = "Item" in client.get_item(TableName=target, Key={"pk": item["pk"], "sk": item["sk"]},
                                                    ConsistentRead=True)
                counts["ended" if ended and not present else "kept" if present and not overwrite else "copied"] += 1
                continue
            if ended:  # --overwrite: replaced where it still exists, never brought back where it ended
                condition = {"ConditionExpression": "attribute_exists(pk)"}
            else:
                condition = {} if overwrite else {"ConditionExpression": "attribute_not_exists(pk)"}
            try:
                client.put_item(TableName=target, Item=item, **condition)
                counts["copied"] += 1
            except client.exceptions.ConditionalCheckFailedException:
                counts["ended" if ended else "kept"] += 1
    return counts


def main(argv: list[str] | None = None, client: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("restored", help="the table DynamoDB restored into")
    parser.add_argument("target", help="the stack's table (the TableName output)")
    parser.add_argument("--overwrite", action="store_true", help="replace items present in the target too")
    parser.add_argument("--dry-run", action="store_true", help="count what would be copied; write nothing")
    parser.add_argument("--include-ended", action="store_true",
                        help="also copy items whose deletion ended something (sessions, used sign-in links and "
                             "codes, removed members and passkeys)")
    args = parser.parse_args(argv)
    if args.restored == args.target:
        parser.error("the restored table and the stack's table must differ")
    if client is None:
        import boto3

        client = boto3.client("dynamodb")
    counts = copy(client, args.restored, args.target, overwrite=args.overwrite, dry_run=args.dry_run,
                  include_ended=args.include_ended)
    verb = "would copy" if args.dry_run else "copied"
    print(f"{args.restored} -> {args.target}: {counts['scanned']} items read, {verb} {counts['copied']}, "
          f"left {counts['kept']} as they are, left out {counts['ended']} that ended by their deletion "
          "(--include-ended copies them)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
