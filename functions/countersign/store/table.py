"""The one DynamoDB table definition, as data.

``template.yaml`` declares the same table (``tests/store/test_table_definition.py`` asserts that
the two are equal, so they cannot drift), and the moto fixture in ``tests/support/aws.py`` builds
its table from the template itself.

Layout (single table, string ``pk``/``sk``, one sparse GSI ``gsi1`` on ``gsi1pk``/``gsi1sk``,
TTL on ``expires_at`` in epoch seconds; the items are built in ``store/dynamodb/codec.py``)::

    item                 pk                                        sk
    workspace            WS#<ws>                                   WS
    person               WS#<ws>                                   PERSON#<id>
    unique email         EMAIL#<lowercased email>                  EMAIL
    connection           WS#<ws>                                   CONN#<id>
    token -> connection  TOKEN#<token hash>   (a full copy)        TOKEN
    card                 CARD#<id>                                 CARD
    audit entry          CARD#<id>                                 AUDIT#<at:012d>#<seq:020d>
    request              REQ#<request key>                         REQ
    spent ticket         SPENT#<ticket digest>                     SPENT
    notification         OUTBOX#<card id>                          OUTBOX
    signing key in use   KEYS                                      <key id>
    sign-in token        SIGNIN#<hash>                             SIGNIN
    session              SESSION#<hash>                            SESSION
    confirmation code    CODE#<hash>                               CODE
    nonce                NONCE#<nonce>                             NONCE
    email slot           RATE#<person>                             EMAIL
    rate-limit window    LIMIT#<key>                               <window start:012d>
    suppressed address   SUPPRESSED#<lowercased email>             SUPPRESSED
    toolset doc          DOC#<ws>#<kind>                           <doc id>

Only cards and notifications carry ``gsi1pk``/``gsi1sk``. A card while pending:
``PENDING#<ws>#<person>`` / ``<deadline:012d>#<id>``; while running: ``RUNNING`` /
``<lease end:012d>#<id>``; once decided: ``DONE#<ws>#<person>`` / ``<updated_at:012d>#<id>``. A
notification until delivered: ``OUTBOX`` / ``<next try:012d>#<card id>``.
A card's answer deadline is ``card_expires_at``; its ``expires_at`` (the TTL) is the purge time,
deadline + retention, so decided cards and their audit trail outlive the deadline.
"""

from __future__ import annotations

import copy
from typing import Any

LOGICAL_ID = "Table"  # the resource name in template.yaml
TTL_ATTRIBUTE = "expires_at"
GSI1 = "gsi1"
STREAM_VIEW_TYPE = "NEW_IMAGE"

DEFINITION: dict[str, Any] = {
    "BillingMode": "PAY_PER_REQUEST",
    "AttributeDefinitions": [
        {"AttributeName": "pk", "AttributeType": "S"},
        {"AttributeName": "sk", "AttributeType": "S"},
        {"AttributeName": "gsi1pk", "AttributeType": "S"},
        {"AttributeName": "gsi1sk", "AttributeType": "S"},
    ],
    "KeySchema": [
        {"AttributeName": "pk", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ],
    "GlobalSecondaryIndexes": [
        {
            "IndexName": GSI1,
            "KeySchema": [
                {"AttributeName": "gsi1pk", "KeyType": "HASH"},
                {"AttributeName": "gsi1sk", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }
    ],
}


def definition() -> dict[str, Any]:
    """A copy of the key/index/billing definition (the part both template and API share)."""
    return copy.deepcopy(DEFINITION)
