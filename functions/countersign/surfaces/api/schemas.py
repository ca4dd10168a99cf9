"""Request and response shapes of the API (they are also its OpenAPI document).

Requests are strict: unknown fields and wrong JSON types are refused with 422 naming the field,
before anything is written. ``"true"`` is not a boolean here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool

from ...store.passkeys import MAX_PASSKEY_NAME
from ...toolkit.arguments import without_nulls


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# -- requests -----------------------------------------------------------------------------------


EMAIL_PATTERN = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"

# What the server enforces past pydantic, stated in the OpenAPI document. The checks stay where
# they are (the store, the action, the route: this changes nothing the server accepts or refuses);
# stated() only writes them into the document, in the regular-expression syntax Python's ``re``
# and JSON Schema share. tests/api/test_schema_constraints.py holds each to the server's answers.


def stated(**rules: Any) -> Callable[[dict[str, Any]], None]:
    """A ``json_schema_extra`` that writes ``rules`` (``pattern``, ``maxLength``, ``enum``) into a
    field's string schema: the field's own, or its string branch when it may also be null."""

    def write(schema: dict[str, Any]) -> None:
        for branch in schema.get("anyOf", [schema]):
            if branch.get("type") == "string":
                branch.update(rules)

    return write


#: Control characters (Unicode Cc): C0, DEL and C1.
_CONTROL = r"\x00-\x1f\x7f-\x9f"
#: Control characters but those ``str.split()`` takes for whitespace (a passkey name's runs of
#: whitespace become one space before it is checked).
_CONTROL_NOT_SPACE = r"\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f"

#: A card listing's ``nextCursor``: URL-safe base64 (the SQLite store pads it, the DynamoDB store
#: does not). Empty means the first page.
CURSOR_PATTERN = r"^[A-Za-z0-9_-]*={0,2}$"
#: A connection's name once stripped is printable (``str.isprintable``), so: not blank, and no
#: control character but whitespace at either end. Format and separator characters (a bidi
#: override, a no-break space) are refused too; the description says so.
CONNECTION_NAME_PATTERN = rf"^\s*[^\s{_CONTROL}](?:[^{_CONTROL}]*[^\s{_CONTROL}])?\s*$"
#: A passkey name (:func:`~countersign.store.passkeys.check_passkey_name`): at most
#: MAX_PASSKEY_NAME characters once each run of whitespace is one space, with no control character
#: but whitespace; renaming also refuses a blank one (registering names it "Passkey").
PASSKEY_NAME_PATTERN = rf"^[^{_CONTROL_NOT_SPACE}]*$"
PASSKEY_RENAME_PATTERN = rf"^[^{_CONTROL_NOT_SPACE}]*[^\s{_CONTROL_NOT_SPACE}][^{_CONTROL_NOT_SPACE}]*$"
PASSKEY_NAME_RULE = (f"At most {MAX_PASSKEY_NAME} characters once each run of spaces and line breaks is one "
                     "space (none at either end); no control or formatting characters (escapes, bidi "
                     "overrides), but the joiners U+200C and U+200D.")
#: An upstream's credential once stripped: not blank, one line, no NUL.
CREDENTIAL_PATTERN = r"^\s*[^\s\x00](?:[^\r\n\x00]*[^\s\x00])?\s*$"


class SigninRequestBody(Strict):
    email: str = Field(max_length=254, pattern=EMAIL_PATTERN, description="The member's email address")


class SigninCompleteBody(Strict):
    token: str = Field(max_length=512, description="The token from the sign-in link's fragment")


class DeclineBody(Strict):
    reason: str | None = Field(default=None, max_length=500, description="Why the person said no (shown to the agent)")


class EditBody(Strict):
    arguments: dict[str, Any] = Field(description=(
        "The values to change, by argument name: only those the card's action declares editable (its "
        "view's editable list); they go through the same argument checker as an agent's call"))


#: A time of day as quiet hours take it: HH:MM, 24-hour.
CLOCK_TIME_PATTERN = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"


class QuietHoursBody(Strict):
    start: str = Field(pattern=CLOCK_TIME_PATTERN, description="When quiet hours begin, HH:MM (24-hour), local time")
    end: str = Field(pattern=CLOCK_TIME_PATTERN,
                     description="When they end, HH:MM; before the start means the next day (22:00 to 07:00)")
    zone: str = Field(min_length=1, max_length=64, description="An IANA time zone name, e.g. Europe/Berlin")


class ChannelsBody(Strict):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"minProperties": 1})

    # Omitted means "leave as is"; an explicit null is refused like any non-boolean.
    email: StrictBool = None  # type: ignore[assignment]
    slack: StrictBool = None  # type: ignore[assignment]
    push: StrictBool = None  # type: ignore[assignment]


class MeChanges(Strict):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"minProperties": 1})

    # Omitted means "leave as is"; quiet_hours null turns quiet hours off.
    agent_requests_email: StrictBool = None  # type: ignore[assignment]
    quiet_hours: QuietHoursBody | None = Field(
        default=None, description="No card email while these run; the email goes out when they end (null: none)")
    channels: ChannelsBody = Field(default=None,  # type: ignore[assignment]
                                   description="Which channels tell you a card waits (email is "
                                               "agent_requests_email); each left out stays as it is")


class WorkspaceChanges(Strict):
    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"minProperties": 1})

    # Omitted means "leave as is"; an explicit null is refused like any non-boolean.
    ask_before_drafting: StrictBool = None  # type: ignore[assignment]
    ask_before_approvals: StrictBool = None  # type: ignore[assignment]
    confirm_in_client: StrictBool = None  # type: ignore[assignment]


class NewConnectionBody(Strict):
    name: str = Field(
        max_length=100, pattern=r"\S", json_schema_extra=stated(pattern=CONNECTION_NAME_PATTERN),
        description="What the person calls this agent, e.g. 'Claude on laptop': one line of printable text "
                    "(no control, format or separator characters but the space; spaces and line breaks at "
                    "either end are dropped)",
    )


# -- responses ----------------------------------------------------------------------------------


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    error: ErrorDetail
    field: str | None = None


class MessageBody(BaseModel):
    message: str


class PersonView(BaseModel):
    id: str
    email: str
    name: str
    role: str


class WorkspaceView(BaseModel):
    id: str
    name: str


class EmailNotice(BaseModel):
    reason: Literal["bounce", "complaint"]
    since: str
    message: str


class SessionView(BaseModel):
    person: PersonView
    workspace: WorkspaceView
    csrfToken: str
    emailNotice: EmailNotice | None = Field(
        default=None, description="Set when card emails to the person's address stopped (a bounce or a complaint)")


CardStateName = Literal["pending", "running", "completed", "failed", "declined", "withdrawn", "expired", "edited"]


class AskedBy(BaseModel):
    kind: Literal["agent", "person", "cli"] = Field(
        description="An agent (through a connection), a member from Settings, or the command line")
    name: str | None = Field(description="The connection's name (an agent), the member's name or email (a person)")
    you: bool = Field(description="The member who asked is the one viewing")


class EditableField(BaseModel):
    name: str = Field(description="The argument's name, as the edit body takes it")
    label: str = Field(description="What it is, in words")
    kind: Literal["whole number", "amount", "text"] = Field(description="What the input takes")
    value: Any = Field(default=None, description="Its value on this card, as the arguments spell it")
    shown: str = Field(description="Its value as the preview shows it")


class EditChange(BaseModel):
    field: str
    label: str
    from_: str = Field(alias="from")
    to: str


class EditedView(BaseModel):
    from_: str | None = Field(default=None, alias="from", description="The card this one replaced")
    into: str | None = Field(default=None, description="The card that replaced this one")
    by: str = Field(description="Who edited it (name or email)")
    changes: list[EditChange]


class QuorumView(BaseModel):
    rule: str | None = Field(default=None, description="The quorum rule's name")
    needs: int = Field(description="How many approvals it takes")
    of: str = Field(description="Whose, in words: owners, admins")
    approvedBy: list[str] = Field(description="Who approved so far, in order (names)")
    declinedBy: list[str] = Field(default_factory=list, description="Who said no so far (under decline: majority)")
    more: int = Field(description="How many more approvals it needs")
    you: Literal["yes", "no"] | None = Field(default=None, description="What you answered, if you did")
    youMayApprove: bool = Field(description="Whether your approval would count (you may approve and have not)")
    addedByEscalation: bool = Field(default=False, description=(
        "Whether you were added to this card by an escalation after it was filed (it went unanswered)"))
    yourApproval: int = Field(description="Which approval your click would be (the last one runs it)")
    decline: Literal["any", "majority"] = Field(description="any: one no declines it; majority")


class CardView(BaseModel):
    id: str
    tool: str
    title: str
    lines: list[str]
    sections: list[dict[str, Any]] = Field(
        default_factory=list, description="The parts of a change the lines sum up (an upstream's tools), bound "
        "by the card's ticket with its title and lines; empty for most cards")
    state: CardStateName = Field(description="The card's state (expiry applied)")
    status: Literal["pending", "completed", "failed", "declined", "expired", "edited"] = Field(
        description="What the agent's get_confirmation_status reports (for an edited card: the status of the "
                    "card it continues as)")
    lapse: Literal["declined"] | None = Field(default=None, description=(
        "An expired card the workspace counts as declined (a lifetime rule's lapse: declined): its status is "
        "declined, its reason the sentence the agent is told"))
    connectionName: str | None
    askedBy: AskedBy = Field(description="Who asked for it")
    irreversible: bool = Field(default=False, description="Its action cannot be undone once it ran")
    createdAt: str
    expiresAt: str
    result: Any = None
    next: list[dict[str, Any]] | None = None
    reason: str | None = None
    refusal: Literal["changed"] | None = Field(
        default=None, description="Set when the card was closed at a click because what it describes changed")
    passkeyRequired: bool = Field(default=False, description="Only a passkey can confirm it (the workspace's policy)")
    passkeySigned: bool = Field(default=False, description="Confirmed with a passkey: its receipt has the assertion")
    outcome: list[str] | None = Field(default=None, description=(
        "What happened, in the person's words: the tool's lines for a completed card, why a failed one "
        "failed (a line may hold line breaks)"))
    signedWith: str | None = Field(default=None, description=(
        "Confirmed with a passkey: the sentence naming it (or saying it was removed since)"))
    grant: dict[str, str] | None = Field(default=None, description=(
        "Ran under a standing grant, without a click: its id and name (docs/policy.md)"))
    editable: list[EditableField] = Field(default_factory=list, description=(
        "What the person may change before confirming (a pending card whose action declares it; "
        "POST /api/cards/{id}/edit); empty otherwise"))
    canEdit: bool = Field(default=False, description=(
        "A pending card whose action declares what a person may change: the page offers Edit (its one view "
        "lists the fields in editable)"))
    canGrant: bool = Field(default=False, description=(
        "A pending card an agent filed that a standing grant could cover for that connection: the page offers "
        "Allow this again… (GET /api/standing-grants/options?card= drafts it)"))
    more: bool = Field(default=False, description=(
        "The page draws more for this card than its lines and answers: Edit, Allow this again…, what an edit "
        "changed, which standing grant ran it (canEdit, canGrant, edited or grant is set)"))
    edited: EditedView | None = Field(default=None, description=(
        "A person's edit: on the card it filed, the card it replaced (from); on the card it replaced (state "
        "edited), the new card (into); who, and what changed"))
    quorum: QuorumView | None = Field(default=None, description=(
        "A card several people approve (docs/policy.md, \"Quorum\"): who approved, how many more of whom, "
        "which approval your Confirm would be"))


class CardPage(BaseModel):
    cards: list[CardView] = Field(description="Each card leaves out the fields at their default (an absent "
                                  "``passkeyRequired`` is false, an absent ``result`` null...)")
    nextCursor: str | None
    waiting: int | None = Field(default=None, description="How many cards wait on you in all (the pending list)")


class RefusalBody(BaseModel):
    error: ErrorDetail
    card: CardView


class QuietHoursView(BaseModel):
    start: str
    end: str
    zone: str


class ChannelsView(BaseModel):
    email: bool = Field(description="Card emails (the same as agent_requests_email)")
    slack: bool = Field(description="Card messages in Slack (if the workspace connected Slack)")
    push: bool = Field(description="Push notifications to the devices that turned them on")


class MySettings(BaseModel):
    agent_requests_email: bool
    quiet_hours: QuietHoursView | None = Field(default=None, description="When card emails wait (none: never)")
    quiet_until: str | None = Field(default=None,
                                    description="Quiet hours run now: when they end (ISO 8601, UTC); else null")
    email_interval: int = Field(default=0, description="At most one card email per this many seconds (0: no limit)")
    channels: ChannelsView


class TestSlackView(BaseModel):
    outcome: Literal["sent"] = Field(description="sent: Slack took the message")
    message: str = Field(description="What happened, in a sentence or two for the person")


class TestEmailView(BaseModel):
    outcome: Literal["sent", "suppressed"] = Field(
        description="sent: handed to the mail service; suppressed: not sent, the address no longer gets email")
    to: str = Field(description="The address it went (or would have gone) to")
    message: str = Field(description="What happened, in a sentence or two for the person")


class WorkspaceSettings(BaseModel):
    ask_before_drafting: bool
    ask_before_approvals: bool
    confirm_in_client: bool


class SettingsView(BaseModel):
    me: MySettings
    workspace: WorkspaceSettings | None
    canEditWorkspace: bool


class MemberView(BaseModel):
    email: str
    name: str
    role: str = Field(description="owner, admin, approver or member")
    addedAt: str
    you: bool = Field(description="The signed-in person")


class MemberList(BaseModel):
    members: list[MemberView] = Field(description="Every member of the workspace, in the order they were added")


class OAuthClientView(BaseModel):
    clientId: str = Field(description="The client's id: a metadata document's URL, or the id it registered with")
    redirectHost: str = Field(description="Where the client was sent back to when the person allowed it")
    connected: bool = Field(description="Whether the client finished connecting (spent the code Allow gave "
                                        "it); one that has not within five minutes is revoked")
    earlierOf: str | None = Field(default=None, description="Set on an earlier authorization of a client the "
                                  "person allowed again (the same metadata document, or the same name and "
                                  "redirect host): the id of that client's latest connection, which Settings "
                                  "lists this one under")


class ConnectionView(BaseModel):
    id: str
    name: str
    createdAt: str
    revoked: bool
    revokedReason: str | None = Field(default=None, description="Why it was revoked: person, operator, "
                                      "member_removed, client_revoked, refresh_token_reused, code_reused, "
                                      "never_finished or not_stored (None if not recorded)")
    revokedWhy: str | None = Field(default=None, description="The reason in the person's words")
    lastUsedAt: str | None = Field(default=None, description="When an agent last used it (to the minute)")
    oauth: OAuthClientView | None = Field(default=None, description="Set when an OAuth client connected itself")


class ConnectionList(BaseModel):
    connections: list[ConnectionView]


class NewConnectionView(BaseModel):
    connection: ConnectionView
    token: str = Field(description="Shown once; only its hash is stored")
    mcpUrl: str


class RevokedView(BaseModel):
    connection: ConnectionView
    withdrawnCards: int


def errors(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for error statuses."""
    return {status: documented(ErrorBody) for status in statuses}


# Bodies the OpenAPI document names in ``responses`` entries (by reference; see documented()).
DOCUMENTED: tuple[type[BaseModel], ...] = (ErrorBody, RefusalBody)


def documented(model: type[BaseModel]) -> dict[str, Any]:
    """A ``responses`` entry whose body is ``model`` (one of :data:`DOCUMENTED`), by reference.

    Not ``{"model": model}``: for each such entry FastAPI builds a validator it never uses, and the
    API's 112 of them were 26 ms of a cold start. :func:`add_documented` puts their schemas in."""
    assert model in DOCUMENTED, model
    return {"content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}


def add_documented(openapi: dict[str, Any]) -> dict[str, Any]:
    """``openapi`` (FastAPI's document) with the schemas of :data:`DOCUMENTED` among its components,
    as FastAPI would have put them there (it renders without None values, and sorted)."""
    schemas = openapi.setdefault("components", {}).setdefault("schemas", {})
    for model in DOCUMENTED:
        schema = without_nulls(model.model_json_schema(ref_template="#/components/schemas/{model}",
                                                        mode="serialization"))
        for name, nested in schema.pop("$defs", {}).items():
            schemas.setdefault(name, nested)  # FastAPI's own rendering of a model it documents anyway
        schemas.setdefault(model.__name__, schema)
    openapi["components"]["schemas"] = dict(sorted(schemas.items()))
    return openapi


class ConsentClient(BaseModel):
    name: str
    clientId: str
    host: str = Field(description="The host of the client_id URL, or of the redirect URI for a registered client")
    metadataDocument: bool = Field(description="The client_id is the URL of its metadata document")
    verified: bool = Field(description="A host vouches for the client: its metadata document's host, to which it "
                                       "also returns over https. Otherwise its name is only its own claim")
    verifiedBy: str | None = Field(default=None, description="That host, when verified")
    namedItself: bool = Field(description="The client gave a name (else name is the host it is known by)")


class ConsentWorkspace(BaseModel):
    id: str
    name: str


class ConsentView(BaseModel):
    client: ConsentClient
    redirectUri: str
    redirectHost: str
    loopback: bool = Field(description="The client is sent back to an app on this device (127.0.0.1 or localhost)")
    workspaces: list[ConsentWorkspace]
    expiresAt: str


class AllowBody(Strict):
    workspaceId: str = Field(min_length=1, max_length=64, description="The workspace the connection is made in")


class ConsentAnswer(BaseModel):
    redirectTo: str = Field(description="Where the page sends the person: the client's redirect URI with its answer")
    connection: ConnectionView | None = None
