"""The Settings page's view of upstreams: listed for owners and admins without any credential;
approving tools again and removing are held requests like every other change."""

from countersign.core.cards import CardState

from .conftest import UPSTREAM_SECRET
from .flows import add


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
