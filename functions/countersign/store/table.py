"""The one DynamoDB table definition, as data.

``template.yaml`` declares the same table (``tests/store/test_table_definition.py`` asserts that
the two are equal, so they cannot drift), and the moto fixture in ``tests/support/aws.py`` builds
its table from the template itself.

Layout (single table, string ``pk``/``sk``, one sparse GSI ``gsi1`` on ``gsi1pk``/``gsi1sk``,
TTL on ``expires_at`` in epoch seconds; the items are built in ``store/dynamodb/codec.py``)::

    item                 pk                                        sk
    workspace            WS#<ws>                                   WS           (webhook_endpoints: how many it has)
    person               WS#<ws>                                   PERSON#<id>
    unique email         EMAIL#<lowercased email>                  EMAIL
    connection           WS#<ws>                                   CONN#<id>
    token -> connection  TOKEN#<token hash>   (a full copy)        TOKEN
    card                 CARD#<id>                                 CARD
    audit entry          CARD#<id>                                 AUDIT#<at:012d>#<seq:020d>
    request              REQ#<request key>                         REQ          (card_id, live_until, settled_at)
    spent ticket         SPENT#<ticket digest>                     SPENT
    notification         OUTBOX#<card id>                          OUTBOX
    signing key in use   KEYS                                      <key id>     (noted by the operator)
                         KEYS                                      <key id>#<until:012d>  (noted with a filing; TTL)
    sign-in token        SIGNIN#<hash>                             SIGNIN
    session              SESSION#<hash>                            SESSION
    confirmation code    CODE#<hash>                               CODE
    nonce                NONCE#<nonce>                             NONCE
    email slot           RATE#<person>                             EMAIL
    rate-limit window    LIMIT#<key>                               <window start:012d>
    suppressed address   SUPPRESSED#<lowercased email>             SUPPRESSED
    toolset doc          DOC#<ws>#<kind>                           <doc id>
    OAuth client         OAUTHCLIENT#<client id>                   OAUTHCLIENT   (a cached metadata document: TTL)
    authorization req.   OAUTHREQ#<request id hash>                OAUTHREQ      (TTL)
    authorization code   OAUTHCODE#<code hash>                     OAUTHCODE     (TTL)
    access/refresh token OAUTHTOKEN#<token hash>                   OAUTHTOKEN    (TTL)
    OAuth grant          WS#<ws>                                   GRANT#<connection id>
    connection last use  WS#<ws>                                   USED#<connection id>
    standing grant       WS#<ws>                                   SGRANT#<grant id>   (no TTL)
    standing grant use   WS#<ws>                                   SGRANTUSE#<grant id>#<at:012d>#<card id>
    webhook endpoint     WS#<ws>                                   WEBHOOK#<endpoint id>
    webhook event        WHEVENT#<card id>.<event>                 WHEVENT       (TTL)
    webhook delivery     WHOOK#<endpoint id>                       LOG#<created_at:012d>#<delivery id>  (TTL)
    Slack app            WS#<ws>                                   SLACK
    Slack team's owner   SLACKTEAM#<team id>                       SLACKTEAM     (workspace_id)
    Slack link           WS#<ws>                                   SLACKLINK#<person id>
    Slack user's link    SLACKUSER#<team id>#<user id>             SLACKUSER     (a full copy)
    Slack link code      SLACKCODE#<code hash>                     SLACKCODE     (TTL)
    Slack post           SLACKPOST#<card id>                       SLACKPOST     (TTL)
    push subscription    WS#<ws>                                   PUSH#<person id>#<subscription id>
    push endpoint owner  PUSHSUB#<subscription id>                 PUSHSUB       (workspace_id, person_id)
    person's push adds   WS#<ws>                                   PUSHADDS#<person id>  (adds: the limit's version)

Only cards, notifications and webhook events and deliveries carry ``gsi1pk``/``gsi1sk``. A card while pending:
``PENDING#<ws>#<person>`` / ``<deadline:012d>#<id>``; while running: ``RUNNING`` /
``<lease end:012d>#<id>``; once decided: ``DONE#<ws>#<person>`` / ``<updated_at:012d>#<id>``. A
notification until delivered: ``OUTBOX`` / ``<next try:012d>#<card id>``; a webhook event until
fanned out: ``WHEVENT`` / ``<due:012d>#<event id>``; a webhook delivery until finished:
``WHDELIVERY`` / ``<next try:012d>#<delivery id>`` (the index projects neither: each is read whole).
A card's answer deadline is ``card_expires_at``; its ``expires_at`` (the TTL) is the purge time,
deadline + retention, so decided cards and their audit trail outlive the deadline.

The index projects only what the listings read (:data:`GSI1_ATTRIBUTES`): a card's view (title,
preview lines with its sections, state, times, outcome) and a notification's delivery state. A card's arguments,
subject, ticket and fingerprint, the bulk of it, are written once, to the table; whatever acts
on a listed card reads it whole first (``bench/projection.py`` measures the difference).
"""

from __future__ import annotations

import copy
from typing import Any

LOGICAL_ID = "Table"  # the resource name in template.yaml
TTL_ATTRIBUTE = "expires_at"
GSI1 = "gsi1"
STREAM_VIEW_TYPE = "NEW_IMAGE"

# Non-key attributes gsi1 carries (the table's and the index's keys always are).
GSI1_ATTRIBUTES = (
    # a card in a listing (countersign.store.dynamodb.codec.LISTED)
    "id", "workspace_id", "person_id", "connection_id", "tool", "title", "lines", "status", "created_at",
    "updated_at", "card_expires_at", "decline_reason", "refusal", "channel", "version", "lease_until", "result",
    # a notification (codec.NOTIFICATION_FIELDS, beyond the shared ones)
    "card_id", "state", "due_at", "attempts", "outcome", "done_at",
)

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
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(GSI1_ATTRIBUTES)},
        }
    ],
}


def definition() -> dict[str, Any]:
    """A copy of the key/index/billing definition (the part both template and API share)."""
    return copy.deepcopy(DEFINITION)
