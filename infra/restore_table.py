#!/usr/bin/env python3
"""Copy the items of a restored table back into the stack's table (docs/operations.md, "Restoring
the table on AWS").

    python infra/restore_table.py RESTORED_TABLE STACK_TABLE [--overwrite] [--dry-run]

DynamoDB restores a point in time (or an AWS Backup recovery point) only into a new table, which
the stack does not use. This copies it back, with the operator's own credentials:

* default: only items whose key is missing from the stack's table (what was deleted since),
  each with a conditional put, so nothing written since the restore point is touched - no card
  answered since goes back to waiting, no spent ticket is unspent;
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


def copy(client: Any, source: str, target: str, *, overwrite: bool = False, dry_run: bool = False) -> dict[str, int]:
    """Copy every item of ``source`` into ``target``; counts of ``copied``, ``kept`` (present in
    ``target`` and left alone) and ``scanned``."""
    counts = {"scanned": 0, "copied": 0, "kept": 0}
    for page in client.get_paginator("scan").paginate(TableName=source, ConsistentRead=True):
        for item in page.get("Items", []):
            counts["scanned"] += 1
            if dry_run:
                present = "Item" in client.get_item(TableName=target, Key={"pk": item["pk"], "sk": item["sk"]},
                                                    ConsistentRead=True)
                counts["kept" if present and not overwrite else "copied"] += 1
                continue
            condition = {} if overwrite else {"ConditionExpression": "attribute_not_exists(pk)"}
            try:
                client.put_item(TableName=target, Item=item, **condition)
                counts["copied"] += 1
            except client.exceptions.ConditionalCheckFailedException:
                counts["kept"] += 1
    return counts


def main(argv: list[str] | None = None, client: Any = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("restored", help="the table DynamoDB restored into")
    parser.add_argument("target", help="the stack's table (the TableName output)")
    parser.add_argument("--overwrite", action="store_true", help="replace items present in the target too")
    parser.add_argument("--dry-run", action="store_true", help="count what would be copied; write nothing")
    args = parser.parse_args(argv)
    if args.restored == args.target:
        parser.error("the restored table and the stack's table must differ")
    if client is None:
        import boto3

        client = boto3.client("dynamodb")
    counts = copy(client, args.restored, args.target, overwrite=args.overwrite, dry_run=args.dry_run)
    verb = "would copy" if args.dry_run else "copied"
    print(f"{args.restored} -> {args.target}: {counts['scanned']} items read, {verb} {counts['copied']}, "
          f"left {counts['kept']} as they are")
    return 0


if __name__ == "__main__":
    sys.exit(main())
