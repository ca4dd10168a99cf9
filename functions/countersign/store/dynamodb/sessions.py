"""Sign-in tokens and sessions on DynamoDB."""

from __future__ import annotations

from ..errors import Conflict
from ..sessions import Session, SessionStore, SignInToken
from . import codec
from .client import Table


class DynamoSessions(SessionStore):
    def __init__(self, table: Table):
        self.table = table

    def put_signin_token(self, token: SignInToken) -> None:
        self.table.client.put_item(TableName=self.table.name, Item=codec.signin_item(token))

    def consume_signin_token(self, token_hash: str, now: int) -> SignInToken | None:
        try:
            out = self.table.client.delete_item(
                TableName=self.table.name,
                Key=codec.single_key("SIGNIN", token_hash),
                ConditionExpression="expires_at > :now",
                ExpressionAttributeValues=codec.values({":now": now}),
                ReturnValues="ALL_OLD",
            )
        except self.table.errors.ConditionalCheckFailedException:
            return None
        raw = out.get("Attributes")
        return codec.signin_from(codec.plain(raw)) if raw else None

    def create_session(self, session: Session) -> None:
        if not self.table.put_new(codec.session_item(session)):
            raise Conflict("That session already exists.")

    def get_session(self, session_hash: str, now: int) -> Session | None:
        found = self.table.get(codec.single_key("SESSION", session_hash))
        if found is None or found["expires_at"] <= now:
            return None
        return codec.session_from(found)

    def delete_session(self, session_hash: str) -> None:
        self.table.client.delete_item(TableName=self.table.name, Key=codec.single_key("SESSION", session_hash))
