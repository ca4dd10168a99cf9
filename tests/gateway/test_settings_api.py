"""The Settings page's view of upstreams: listed for owners and admins without any credential;
adding one, approving tools again and removing are held requests like every other change."""

import json

import pytest

from countersign.core.card_states import CardState
from countersign.surfaces.upstream_requests import sealer_of
from countersign.toolsets.gateway.config import KIND, load

from .conftest import PAGE_SECRET, UPSTREAM_SECRET
from .flows import add
from .support import free_port


def test_the_settings_api_lists_upstreams_and_files_changes_as_cards(gw, upstream):
    add(gw, url=upstream.url, headers={"Authorization": f"Bearer {UPSTREAM_SECRET}"})
    page = gw.page()
    listed = page.get("/api/settings/upstreams")
    assert listed.status_code == 200 and UPSTREAM_SECRET not in listed.text and "s1." not in listed.text
    fs = listed.json()["upstreams"][0]
    assert fs["name"] == "fs" and fs["credential"] is True and fs["transport"] == "http"
    assert {"name": "fs__read_file", "title": "Read a file", "cls": "read", "witness": []} in fs["tools"]
    member = gw.add_person("member")
    assert gw.page(member).get("/api/settings/upstreams").status_code == 403
    assert page.post("/api/settings/upstreams/nope/refresh").status_code == 404
    same = page.post("/api/settings/upstreams/fs/refresh")
    assert same.status_code == 422 and "nothing to approve" in same.json()["error"]["message"]
    filed = page.request("DELETE", "/api/settings/upstreams/fs")
    assert filed.status_code == 200 and filed.json()["title"] == "Remove the MCP server fs?"
    assert page.get("/api/settings/upstreams").json()["upstreams"]  # still there: the card waits
    assert gw.confirm_on_page(filed.json()["confirmationId"]).state is CardState.COMPLETED
    assert page.get("/api/settings/upstreams").json() == {"upstreams": []}


def test_the_settings_page_adds_an_upstream_as_a_held_request_and_never_shows_its_credential(gw, upstream):
    page = gw.page()
    filed = page.post("/api/settings/upstreams", {"name": "web", "url": upstream.url,
                                                  "credential": f"Bearer {PAGE_SECRET}"})
    assert filed.status_code == 200, filed.text
    assert filed.json()["title"] == "Put the MCP server web behind the gate?" and PAGE_SECRET not in filed.text
    assert page.get("/api/settings/upstreams").json() == {"upstreams": []}  # nothing until a person confirms
    card_id = filed.json()["confirmationId"]
    shown = page.get(f"/api/cards/{card_id}")
    assert "A credential is set (not shown)." in shown.text and PAGE_SECRET not in shown.text
    assert "s1." not in shown.text
    done = gw.confirm_on_page(card_id)
    assert done.state is CardState.COMPLETED and PAGE_SECRET not in json.dumps(done.result)
    listed = page.get("/api/settings/upstreams")
    assert PAGE_SECRET not in listed.text and "s1." not in listed.text
    web = listed.json()["upstreams"][0]
    assert web["name"] == "web" and web["credential"] is True and web["where"] == upstream.url
    assert {"name": "web__write_file", "title": "Write a file", "cls": "held", "witness": []} in web["tools"]
    sealed = load(gw.runtime.desk.context(gw.workspace_id, gw.person, None, gw.runtime.desk.now()), "web").sealed
    assert sealed and PAGE_SECRET not in sealed
    assert sealer_of(gw.runtime.desk).unseal(gw.workspace_id, "web", sealed) == {
        "Authorization": f"Bearer {PAGE_SECRET}"}
    again = page.post("/api/settings/upstreams", {"name": "web", "url": upstream.url})
    assert again.status_code == 422 and again.json()["field"] == "name" and "exists" in again.json()["error"]["message"]


@pytest.mark.parametrize(("body", "field", "words"), [
    ({"name": "Web!", "url": "URL"}, "name", "lowercase letters and digits"),
    ({"name": "web\n", "url": "URL"}, "name", "lowercase letters and digits"),  # `$` matches before a final \n
    ({"name": "web", "url": "URL", "credentialHeader": "X-Api-Key\n", "credential": PAGE_SECRET},
     "credentialHeader", "a header name"),
    ({"name": "web", "url": "ftp://files.example.com/mcp"}, "url", "http(s) URL"),
    ({"name": "web", "url": "http://127.0.0.1:9/mcp\n"}, "url", "http(s) URL"),
    ({"name": "web", "url": "http://127.0.0.1:9/m cp"}, "url", "http(s) URL"),
    ({"name": "web", "url": f"https://me:{PAGE_SECRET}@files.example.com/mcp"}, "url", "not in the URL"),
    ({"name": "web"}, "url", "required"),
    # A stdio command runs on the server's machine: only its CLI adds one, never the page.
    ({"name": "web", "url": "URL", "command": ["python"]}, "command", "not a field"),
    ({"name": "web", "url": "URL", "headers": {"X": PAGE_SECRET}}, "headers", "not a field"),
    ({"name": "web", "url": "URL", "credentialHeader": "X-Api-Key"}, "credential", "give the credential"),
    ({"name": "web", "url": "URL", "credentialHeader": "Bad Header", "credential": PAGE_SECRET}, "credentialHeader",
     "a header name"),
    ({"name": "web", "url": "URL", "credential": f"{PAGE_SECRET}\r\nX-Evil: 1"}, "credential", "one line"),
    ({"name": "web", "url": "URL", "credential": 5}, "credential", "must be text"),
])
def test_adding_from_the_page_refuses_bad_input_naming_the_field(gw, upstream, body, field, words):
    if body.get("url") == "URL":
        body = dict(body, url=upstream.url)
    refused = gw.page().post("/api/settings/upstreams", body)
    assert refused.status_code == 422, refused.text
    assert refused.json()["field"] == field and words in refused.json()["error"]["message"]
    assert PAGE_SECRET not in refused.text and upstream.calls() == []
    assert gw.page().get("/api/cards").json()["cards"] == []  # nothing filed


def test_adding_from_the_page_is_for_owners_and_admins_and_an_unreachable_upstream_files_nothing(gw, upstream):
    member = gw.add_person("member")
    body = {"name": "web", "url": upstream.url, "credential": PAGE_SECRET}
    assert gw.page(member).post("/api/settings/upstreams", body).status_code == 403
    assert gw.page().post("/api/settings/upstreams", body, csrf=None).status_code == 403
    down = gw.page().post("/api/settings/upstreams", dict(body, url=f"http://127.0.0.1:{free_port()}/mcp"))
    assert down.status_code == 503 and down.json()["error"]["code"] == "upstream_unavailable"
    assert "web could not be reached" in down.json()["error"]["message"] and PAGE_SECRET not in down.text
    now = gw.runtime.desk.now()
    for person in gw.store.workspaces.list_persons(gw.workspace_id):  # nothing filed for anyone, in any state
        assert gw.store.cards.list_pending_cards(gw.workspace_id, person.id, now) == ([], None)
        assert gw.store.cards.list_card_history(gw.workspace_id, person.id, now) == ([], None)
    assert gw.store.docs.list_docs(gw.workspace_id, KIND) == []  # nor any upstream stored
    assert upstream.calls() == []


def test_without_the_private_setting_the_page_refuses_http_and_private_addresses(tenant):
    page = tenant.page()
    plain = page.post("/api/settings/upstreams", {"name": "web", "url": "http://files.example.com/mcp"})
    assert plain.status_code == 422 and plain.json()["field"] == "url" and "must be https" in plain.text
    private = page.post("/api/settings/upstreams", {"name": "web", "url": "https://127.0.0.1:8443/mcp"})
    assert private.status_code == 422 and "private or reserved address" in private.json()["error"]["message"]
