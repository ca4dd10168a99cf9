"""Slack apps, links, link codes and posts on DynamoDB.

Items (see :mod:`countersign.store.table`)::

    Slack app          WS#<ws>                        SLACK
    team → workspace   SLACKTEAM#<team>               SLACKTEAM      (keeps a team to one workspace)
    Slack link         WS#<ws>                        SLACKLINK#<person>
    user → link        SLACKUSER#<team>#<user>        SLACKUSER      (a full copy; keeps a user to one person)
    link code          SLACKCODE#<code hash>          SLACKCODE      (TTL)
    Slack post         SLACKPOST#<card>               SLACKPOST      (TTL)
"""

from __future__ import annotations

from typing import Any

from ..errors import Conflict, NotFound, StoreError
from ..slack import (
    POST_RETENTION,
    POSTED,
    POSTING,
    SlackApp,
    SlackLink,
    SlackLinkCode,
    SlackPost,
    SlackStore,
    check_app,
    check_channel,
    check_link,
)
from . import codec
from .client import Cancelled, Table

APP_FIELDS = ("workspace_id", "team_id", "team_name", "bot_user_id", "token_sealed", "secret_sealed", "connected_by",
              "connected_at", "channel")
LINK_FIELDS = ("workspace_id", "person_id", "team_id", "user_id", "linked_at", "user_name")


def app_key(workspace_id: str) -> codec.Item:
    return codec.key(f"WS#{workspace_id}", "SLACK")


def team_key(team_id: str) -> codec.Item:
    return codec.single_key("SLACKTEAM", team_id)


def link_key(workspace_id: str, person_id: str) -> codec.Item:
    return codec.key(f"WS#{workspace_id}", f"SLACKLINK#{person_id}")


def user_key(team_id: str, user_id: str) -> codec.Item:
    return codec.single_key("SLACKUSER", f"{team_id}#{user_id}")


def code_key(code_hash: str) -> codec.Item:
    return codec.single_key("SLACKCODE", code_hash)


def post_key(card_id: str) -> codec.Item:
    return codec.single_key("SLACKPOST", card_id)


def _app(v: dict[str, Any] | None) -> SlackApp | None:
    return None if v is None else SlackApp(**codec.pick(v, APP_FIELDS))


def _link(v: dict[str, Any] | None) -> SlackLink | None:
    return None if v is None else SlackLink(**codec.pick(v, LINK_FIELDS))


def _fields(record: Any, names: tuple[str, ...]) -> dict[str, Any]:
    return {k: getattr(record, k) for k in names}


class DynamoSlack(SlackStore):
    def __init__(self, table: Table):
        self.table = table

    # -- the workspace's app ----------------------------------------------------------------------

    def connect_app(self, app: SlackApp) -> SlackApp:
        check_app(app)
        before = self.get_app(app.workspace_id)
        claim = {**team_key(app.team_id), **codec.item({"workspace_id": app.workspace_id})}
        items: list[dict[str, Any]] = [
            {"Put": {"Item": claim, "ConditionExpression": "attribute_not_exists(pk) OR workspace_id = :ws",
                     "ExpressionAttributeValues": codec.values({":ws": app.workspace_id})}},
            {"Put": {"Item": {**app_key(app.workspace_id), **codec.item(_fields(app, APP_FIELDS))}}},
        ]
        if before is not None and before.team_id != app.team_id:  # the old team is free again
            items.append({"Delete": {"Key": team_key(before.team_id), "ConditionExpression": "workspace_id = :ws",
                                     "ExpressionAttributeValues": codec.values({":ws": app.workspace_id})}})
        try:
            self.table.transact(items)
        except Cancelled as cancelled:
            if cancelled.code(0) == "ConditionalCheckFailed":
                raise Conflict("This Slack workspace is connected to another countersign workspace; disconnect it "
                               "there first.") from None
            raise StoreError(f"Could not connect the Slack app: {cancelled}") from None
        return app

    def get_app(self, workspace_id: str) -> SlackApp | None:
        return _app(self.table.get(app_key(workspace_id)))

    def app_for_team(self, team_id: str) -> SlackApp | None:
        claim = self.table.get(team_key(team_id))
        if claim is None:
            return None
        app = self.get_app(claim["workspace_id"])
        return app if app is not None and app.team_id == team_id else None

    def set_channel(self, workspace_id: str, channel: str | None) -> SlackApp:
        check_channel(channel)
        kwargs: dict[str, Any] = {"UpdateExpression": "REMOVE channel"}
        if channel is not None:
            kwargs = {"UpdateExpression": "SET channel = :c",
                      "ExpressionAttributeValues": codec.values({":c": channel})}
        out = self.table.update(app_key(workspace_id), ConditionExpression="attribute_exists(pk)",
                                ReturnValues="ALL_NEW", **kwargs)
        if out is None:
            raise NotFound("slack app", workspace_id)
        app = _app(out)
        assert app is not None
        return app

    def disconnect_app(self, workspace_id: str) -> bool:
        app = self.get_app(workspace_id)
        if app is None:
            return False
        try:
            self.table.transact([
                {"Delete": {"Key": app_key(workspace_id), "ConditionExpression": "team_id = :team",
                            "ExpressionAttributeValues": codec.values({":team": app.team_id})}},
                {"Delete": {"Key": team_key(app.team_id), "ConditionExpression": "workspace_id = :ws",
                            "ExpressionAttributeValues": codec.values({":ws": workspace_id})}},
            ])
        except Cancelled:
            return self.disconnect_app(workspace_id)  # changed meanwhile: as it is now
        return True

    # -- links ------------------------------------------------------------------------------------

    def put_link_code(self, code: SlackLinkCode) -> None:
        self.table.put(code_key(code.code_hash), {"workspace_id": code.workspace_id, "person_id": code.person_id,
                                                  "expires_at": code.expires_at})

    def take_link_code(self, code_hash: str, now: int) -> SlackLinkCode | None:
        out = self.table.client.delete_item(TableName=self.table.name, Key=code_key(code_hash), ReturnValues="ALL_OLD")
        raw = out.get("Attributes")
        if not raw:
            return None
        v = codec.plain(raw)
        if v["expires_at"] <= now:
            return None
        return SlackLinkCode(code_hash, v["workspace_id"], v["person_id"], v["expires_at"])

    def link(self, link: SlackLink) -> SlackLink:
        check_link(link)
        before = self.get_link(link.workspace_id, link.person_id)
        values = codec.item(_fields(link, LINK_FIELDS))
        mine = codec.values({":ws": link.workspace_id, ":p": link.person_id})
        items: list[dict[str, Any]] = [
            {"Put": {"Item": {**user_key(link.team_id, link.user_id), **values},
                     "ConditionExpression": "attribute_not_exists(pk) OR (workspace_id = :ws AND person_id = :p)",
                     "ExpressionAttributeValues": mine}},
            {"Put": {"Item": {**link_key(link.workspace_id, link.person_id), **values}}},
        ]
        if before is not None and (before.team_id, before.user_id) != (link.team_id, link.user_id):
            items.append({"Delete": {"Key": user_key(before.team_id, before.user_id),
                                     "ConditionExpression": "workspace_id = :ws AND person_id = :p",
                                     "ExpressionAttributeValues": mine}})
        try:
            self.table.transact(items)
        except Cancelled as cancelled:
            if cancelled.code(0) == "ConditionalCheckFailed":
                raise Conflict("This Slack user is linked to another member; they can unlink it in their "
                               "Settings.") from None
            raise StoreError(f"Could not link the Slack user: {cancelled}") from None
        return link

    def get_link(self, workspace_id: str, person_id: str) -> SlackLink | None:
        return _link(self.table.get(link_key(workspace_id, person_id)))

    def link_of_user(self, team_id: str, user_id: str) -> SlackLink | None:
        return _link(self.table.get(user_key(team_id, user_id)))

    def unlink(self, workspace_id: str, person_id: str) -> bool:
        link = self.get_link(workspace_id, person_id)
        if link is None:
            return False
        mine = codec.values({":ws": workspace_id, ":p": person_id})
        try:
            self.table.transact([
                {"Delete": {"Key": link_key(workspace_id, person_id), "ConditionExpression": "user_id = :u",
                            "ExpressionAttributeValues": codec.values({":u": link.user_id})}},
                {"Delete": {"Key": user_key(link.team_id, link.user_id),
                            "ConditionExpression": "workspace_id = :ws AND person_id = :p",
                            "ExpressionAttributeValues": mine}},
            ])
        except Cancelled:
            return self.unlink(workspace_id, person_id)  # relinked meanwhile: as it is now
        return True

    # -- posts ------------------------------------------------------------------------------------

    def claim_post(self, card_id: str, workspace_id: str, now: int, lease: int) -> bool:
        item = {**post_key(card_id), **codec.item({"workspace_id": workspace_id, "state": POSTING, "claimed_at": now,
                                                   "expires_at": now + POST_RETENTION})}
        try:
            self.table.client.put_item(
                TableName=self.table.name, Item=item,
                ConditionExpression="attribute_not_exists(pk) OR (#state = :posting AND claimed_at <= :cutoff)",
                ExpressionAttributeNames={"#state": "state"},
                ExpressionAttributeValues=codec.values({":posting": POSTING, ":cutoff": now - lease}),
            )
            return True
        except self.table.errors.ConditionalCheckFailedException:
            return False

    def finish_post(self, card_id: str, channel: str, ts: str) -> None:
        self.table.update(post_key(card_id), UpdateExpression="SET #state = :posted, channel = :c, ts = :ts",
                          ConditionExpression="attribute_exists(pk)", ExpressionAttributeNames={"#state": "state"},
                          ExpressionAttributeValues=codec.values({":posted": POSTED, ":c": channel, ":ts": ts}))

    def release_post(self, card_id: str) -> None:
        try:
            self.table.client.delete_item(TableName=self.table.name, Key=post_key(card_id),
                                          ConditionExpression="#state = :posting",
                                          ExpressionAttributeNames={"#state": "state"},
                                          ExpressionAttributeValues=codec.values({":posting": POSTING}))
        except self.table.errors.ConditionalCheckFailedException:
            pass  # posted meanwhile, or gone: leave it

    def get_post(self, card_id: str) -> SlackPost | None:
        v = self.table.get(post_key(card_id))
        if v is None:
            return None
        return SlackPost(card_id, v["workspace_id"], v["state"], v["claimed_at"], v.get("channel"), v.get("ts"))
