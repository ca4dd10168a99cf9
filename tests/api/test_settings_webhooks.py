"""Webhooks in Settings, on the live local server: an owner adds an endpoint (its secret shown once),
the server's webhook loop posts card events to it signed (verified with the Standard Webhooks
library, on a receiver on 127.0.0.1), the delivery log lists them; bad input is refused with a
sentence and nothing is written; only owners manage webhooks."""

from __future__ import annotations

import dataclasses
import time

import jsonschema
import pytest
from standardwebhooks.webhooks import Webhook

from countersign.store.webhook_deliveries import EVENTS
from countersign.store.webhook_endpoints import MAX_ENDPOINTS
from tests.api.pages import Page
from tests.api.test_cards import file
from tests.api.test_edits import held
from tests.budget.ledger import seed_small
from tests.support.webhook_receiver import webhook_receiver

pytestmark = pytest.mark.anyio

HOOKS = "/api/settings/webhooks"


@pytest.fixture
def receiver():
    with webhook_receiver() as r:
        yield r


def wait_for(predicate, timeout: float = 15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError("timed out")


async def test_an_owner_adds_an_endpoint_and_card_events_reach_it_signed(signed, tenant, configure, receiver):
    configure(upstream_private=True)  # the receiver is on 127.0.0.1 (as the gateway's tests allow upstreams)
    added = signed.post(HOOKS, {"url": receiver.url, "events": ["card.filed"]})
    assert added.status_code == 201, added.text
    body = added.json()
    secret, endpoint = body["secret"], body["endpoint"]
    assert secret.startswith("whsec_")
    assert set(endpoint) == {"id", "url", "events", "everyEvent", "enabled", "createdAt", "disabledAt",
                             "disabledReason", "disabledBy", "failuresInARow", "lastSuccessAt"}
    assert (endpoint["url"], endpoint["events"], endpoint["everyEvent"], endpoint["enabled"]) == (
        receiver.url, ["card.filed"], False, True)
    listed = signed.get(HOOKS)
    assert listed.json() == {"endpoints": [endpoint], "events": list(EVENTS), "limit": MAX_ENDPOINTS}
    assert secret not in listed.text and "s1." not in listed.text  # never shown again, sealed or not

    card_id = await file(tenant)
    (got,) = wait_for(lambda: list(receiver.received))
    data = Webhook(secret).verify(got.body, got.headers)
    assert data["type"] == "card.filed" and data["data"]["card_id"] == card_id
    assert data["data"]["asked_by"] == {"connection": "Test agent"} and data["data"]["workspace_id"] == \
        tenant.workspace_id
    card = tenant.store.cards.get_card(tenant.workspace_id, card_id, int(time.time()))
    assert card.ticket not in got.body.decode()

    log = wait_for(lambda: [d for d in signed.get(f"{HOOKS}/{endpoint['id']}/deliveries").json()["deliveries"]
                            if d["state"] == "delivered"])
    assert [(d["event"], d["cardId"], d["statusCode"], d["attempts"], d["nextRetryAt"], d["error"], d["id"])
            for d in log] == [("card.filed", card_id, 200, 1, None, None, got.headers["webhook-id"])]

    removed = signed.request("DELETE", f"{HOOKS}/{endpoint['id']}")
    assert removed.status_code == 200 and removed.json()["endpoints"] == []
    assert signed.get(f"{HOOKS}/{endpoint['id']}/deliveries").status_code == 404


async def test_a_person_s_edit_reaches_the_endpoint_as_card_edited_naming_the_new_card(signed, tenant, configure,
                                                                                         receiver):
    """A card edited on the confirm page: the endpoint is sent ``card.edited`` for it, whose
    ``replaced_by`` is the new card (the id the page shows), and ``card.filed`` for the new card."""
    configure(upstream_private=True)
    seed_small(tenant.store, tenant.workspace_id)
    added = signed.post(HOOKS, {"url": receiver.url, "events": ["card.edited", "card.filed"]})
    assert added.status_code == 201, added.text
    secret = added.json()["secret"]
    asked = await held(tenant)
    old_id = asked["confirmationId"]
    wait_for(lambda: len(receiver.received) == 1)  # the held card's card.filed
    edited = tenant.page().post(f"/api/cards/{old_id}/edit", {"arguments": {"amount": "80.00"}})
    assert edited.status_code == 200, edited.text
    new_id = edited.json()["id"]
    wait_for(lambda: len(receiver.received) == 3)
    got = {(body["type"], body["data"]["card_id"]): body["data"]
           for body in (Webhook(secret).verify(r.body, r.headers) for r in receiver.received)}
    assert sorted(got) == sorted([("card.filed", old_id), ("card.edited", old_id), ("card.filed", new_id)])
    assert (got[("card.edited", old_id)]["state"], got[("card.edited", old_id)]["replaced_by"]) == ("edited", new_id)
    assert (got[("card.filed", new_id)]["replaced_by"], got[("card.filed", new_id)]["replaces"]) == (None, old_id)
    now = int(time.time())
    for card_id in (old_id, new_id):
        ticket = tenant.store.cards.get_card(tenant.workspace_id, card_id, now).ticket
        assert all(ticket not in r.body.decode() for r in receiver.received)


@pytest.mark.parametrize("body, field, message", [
    ({"url": "http://hooks.example.com/x"}, "url",
     "url: a webhook endpoint must be https (plain http only with COUNTERSIGN_UPSTREAM_PRIVATE)."),
    ({"url": "https://127.0.0.1:9/hook"}, "url",
     "url: the host resolves to a private or reserved address; set COUNTERSIGN_UPSTREAM_PRIVATE=1 to allow one."),
    ({"url": "https://10.1.2.3/hook"}, "url",
     "url: the host resolves to a private or reserved address; set COUNTERSIGN_UPSTREAM_PRIVATE=1 to allow one."),
    ({"url": "hooks.example.com"}, "url",
     "url: a webhook endpoint is an http(s) URL such as https://hooks.example.com/countersign."),
    ({"url": "https://user:pw@93.184.215.14/x"}, "url",
     "url: a webhook URL carries no user name or password (check each request's signature instead)."),
    ({"url": "https://93.184.215.14/x", "events": ["card.filed", "card.exploded"]}, "events",
     "events: 'card.exploded' is no event a webhook is sent for; the events are card.filed, card.answered, "
     "card.completed, card.failed, card.lapsed, card.edited."),
    ({"url": "https://93.184.215.14/x", "events": []}, "events",
     "events: name at least one of card.filed, card.answered, card.completed, card.failed, card.lapsed, "
     "card.edited."),
])
def test_bad_endpoints_are_refused_with_a_sentence_and_nothing_is_written(signed, body, field, message):
    refused = signed.post(HOOKS, body)
    assert refused.status_code == 422, refused.text
    assert refused.json()["field"] == field and refused.json()["error"]["message"] == message
    assert signed.get(HOOKS).json()["endpoints"] == []


def test_a_workspace_has_at_most_five_endpoints(signed, configure):
    configure(upstream_private=True)
    for i in range(MAX_ENDPOINTS):
        assert signed.post(HOOKS, {"url": f"http://127.0.0.1:9/{i}"}).status_code == 201
    refused = signed.post(HOOKS, {"url": "http://127.0.0.1:9/more"})
    assert refused.status_code == 422 and refused.json()["error"]["message"] == (
        "url: this workspace has 5 webhook endpoints already, the most it may have; remove one first.")
    assert len(signed.get(HOOKS).json()["endpoints"]) == MAX_ENDPOINTS


@pytest.mark.parametrize("role", ["admin", "approver", "member"])
def test_only_owners_manage_webhooks(page, tenant, role):
    page.sign_in(tenant.runtime, tenant.add_person(role))
    for answer in (page.get(HOOKS), page.post(HOOKS, {"url": "https://93.184.215.14/x"})):
        assert answer.status_code == 403
        assert answer.json()["error"] == {"code": "forbidden",
                                          "message": "Only the workspace's owners manage its webhooks."}
    assert tenant.store.webhook_endpoints.list_endpoints(tenant.workspace_id) == []


def test_another_workspaces_endpoint_is_not_found(signed, other_tenant, live, configure):
    configure(upstream_private=True)
    other_page = Page(live[1].origin)
    theirs = other_page.sign_in(other_tenant.runtime, other_tenant.person).post(HOOKS, {"url": "http://127.0.0.1:9/x"})
    other_page.close()
    their_id = theirs.json()["endpoint"]["id"]
    for answer in (signed.get(f"{HOOKS}/{their_id}/deliveries"), signed.request("DELETE", f"{HOOKS}/{their_id}"),
                   signed.post(f"{HOOKS}/{their_id}/enable")):
        assert answer.status_code == 404
    assert [e.id for e in other_tenant.store.webhook_endpoints.list_endpoints(other_tenant.workspace_id)] == [their_id]


def add_private(signed, configure, events=None) -> dict:
    configure(upstream_private=True)  # a loopback URL: checked, never reached
    added = signed.post(HOOKS, {"url": "http://127.0.0.1:9/hook", **({"events": events} if events else {})})
    assert added.status_code == 201, added.text
    return added.json()["endpoint"]


def test_an_owner_changes_an_endpoints_events_in_place(signed, tenant, configure):
    """The answer is the endpoint as the list shows it; the URL, the sealed secret, the off state
    stay; every event is stored as an endpoint added without events is."""
    endpoint = add_private(signed, configure)
    assert signed.post(f"{HOOKS}/{endpoint['id']}/disable").status_code == 200
    before = tenant.store.webhook_endpoints.get_endpoint(tenant.workspace_id, endpoint["id"])
    assert before.events == ()

    narrowed = signed.patch(f"{HOOKS}/{endpoint['id']}", {"events": ["card.lapsed", "card.answered"]})
    assert narrowed.status_code == 200, narrowed.text
    listed = signed.get(HOOKS).json()["endpoints"]
    assert narrowed.json() == listed[0] == {
        **endpoint, "events": ["card.answered", "card.lapsed"], "everyEvent": False, "enabled": False,
        "disabledAt": listed[0]["disabledAt"], "disabledBy": "owner",
        "disabledReason": f"turned off by {tenant.person.email}"}
    stored = tenant.store.webhook_endpoints.get_endpoint(tenant.workspace_id, endpoint["id"])
    assert stored == dataclasses.replace(before, events=("card.answered", "card.lapsed"))

    every = signed.patch(f"{HOOKS}/{endpoint['id']}", {"everyEvent": True})
    assert every.status_code == 200, every.text
    assert (every.json()["events"], every.json()["everyEvent"]) == (list(EVENTS), True)
    assert every.json() == signed.get(HOOKS).json()["endpoints"][0]
    assert tenant.store.webhook_endpoints.get_endpoint(tenant.workspace_id, endpoint["id"]) == before


@pytest.mark.parametrize("role", ["admin", "approver", "member"])
def test_only_owners_change_an_endpoints_events(page, signed, tenant, configure, role):
    endpoint = add_private(signed, configure, events=["card.filed"])
    page.sign_in(tenant.runtime, tenant.add_person(role))
    refused = page.patch(f"{HOOKS}/{endpoint['id']}", {"everyEvent": True})
    assert refused.status_code == 403
    assert refused.json()["error"] == {"code": "forbidden",
                                       "message": "Only the workspace's owners manage its webhooks."}
    assert tenant.store.webhook_endpoints.get_endpoint(tenant.workspace_id, endpoint["id"]).events == ("card.filed",)


def test_changing_an_endpoints_events_needs_the_csrf_token(signed, tenant, configure):
    endpoint = add_private(signed, configure, events=["card.filed"])
    refused = signed.patch(f"{HOOKS}/{endpoint['id']}", {"everyEvent": True}, csrf=None)
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "csrf")
    assert tenant.store.webhook_endpoints.get_endpoint(tenant.workspace_id, endpoint["id"]).events == ("card.filed",)


@pytest.mark.parametrize("body, field, message", [
    ({"events": ["card.filed", "card.exploded"]}, "events",
     "events: 'card.exploded' is no event a webhook is sent for; the events are card.filed, card.answered, "
     "card.completed, card.failed, card.lapsed, card.edited."),
    ({"events": []}, "events",
     "events: name at least one of card.filed, card.answered, card.completed, card.failed, card.lapsed, "
     "card.edited."),
    ({"events": ["card.filed"], "everyEvent": True}, "everyEvent",
     "everyEvent: send everyEvent: true (every event, those added later too) or a list of events, not both."),
    ({}, "events",
     "events: name the events to send (card.filed, card.answered, card.completed, card.failed, card.lapsed, "
     "card.edited), or send everyEvent: true for every event, those added later too."),
    ({"everyEvent": False}, "events",
     "events: name the events to send (card.filed, card.answered, card.completed, card.failed, card.lapsed, "
     "card.edited), or send everyEvent: true for every event, those added later too."),
    ({"everyEvent": "true"}, "everyEvent",
     'everyEvent: must be true or false (a JSON boolean; "true" and 1 are not booleans).'),
    ({"events": ["card.filed"], "url": "https://93.184.215.14/x"}, "url",
     "url: is not a field this request accepts."),
])
def test_bad_event_changes_are_refused_with_a_sentence_and_nothing_is_written(signed, tenant, configure, body, field,
                                                                               message):
    endpoint = add_private(signed, configure, events=["card.filed"])
    refused = signed.patch(f"{HOOKS}/{endpoint['id']}", body)
    assert refused.status_code == 422, refused.text
    assert (refused.json()["field"], refused.json()["error"]["message"]) == (field, message)
    assert signed.get(HOOKS).json()["endpoints"] == [endpoint]
    assert tenant.store.webhook_endpoints.get_endpoint(tenant.workspace_id, endpoint["id"]).events == ("card.filed",)


def test_changing_the_events_of_an_unknown_or_another_workspaces_endpoint_is_not_found(signed, other_tenant, live,
                                                                                      configure):
    configure(upstream_private=True)
    other_page = Page(live[1].origin)
    theirs = other_page.sign_in(other_tenant.runtime, other_tenant.person).post(
        HOOKS, {"url": "http://127.0.0.1:9/x", "events": ["card.filed"]})
    other_page.close()
    their_id = theirs.json()["endpoint"]["id"]
    for endpoint_id in (their_id, "wh_unknown"):
        answer = signed.patch(f"{HOOKS}/{endpoint_id}", {"everyEvent": True})
        assert answer.status_code == 404, answer.text
        assert answer.json()["error"]["code"] == "not_found"
    assert other_tenant.store.webhook_endpoints.get_endpoint(other_tenant.workspace_id, their_id).events == (
        "card.filed",)


def test_the_document_states_what_an_event_change_may_be(page, signed, tenant, configure):
    """Each body the published schema refuses, the server refuses (422), and each it allows the
    server takes: a list of one to six known events, or everyEvent: true, exactly one of them."""
    document = page.get("/api/openapi.json").json()
    operation = document["paths"]["/api/settings/webhooks/{endpoint_id}"]["patch"]
    assert set(operation["responses"]) == {"200", "401", "403", "404", "422"}
    ref = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    schema = {**document["components"]["schemas"][ref.rsplit("/", 1)[1]], "components": document["components"]}
    validator = jsonschema.Draft202012Validator(schema)
    endpoint = add_private(signed, configure, events=["card.filed"])
    refused = [{}, {"events": []}, {"events": ["card.exploded"]}, {"events": ["card.filed"], "everyEvent": True},
               {"everyEvent": False}, {"everyEvent": None}, {"events": None}, {"events": list(EVENTS) + ["card.filed"]},
               {"everyEvent": True, "url": "https://93.184.215.14/x"}]
    for body in refused:
        assert not validator.is_valid(body), body
        assert signed.patch(f"{HOOKS}/{endpoint['id']}", body).status_code == 422, body
    for body in [{"events": ["card.lapsed", "card.filed"]}, {"events": list(EVENTS)}, {"everyEvent": True},
                 {"events": ["card.answered"], "everyEvent": False}]:
        assert validator.is_valid(body), body
        assert signed.patch(f"{HOOKS}/{endpoint['id']}", body).status_code == 200, body
