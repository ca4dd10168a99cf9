"""``GET /api/settings/members``: the workspace's members and roles, for its owners and admins only."""

from __future__ import annotations

import pytest

from countersign.identity import accounts
from countersign.identity.members import remove_member
from tests.api.pages import Page

pytestmark = pytest.mark.anyio


def test_an_owner_sees_every_member_with_their_role_in_the_order_added(signed, tenant, other_tenant):
    bea = accounts.add_person(tenant.store.workspaces, tenant.workspace_id, "bea@example.com", "approver", "Bea")
    other_tenant.add_person("admin")  # another workspace's: never listed here
    answer = signed.get("/api/settings/members")
    assert answer.status_code == 200, answer.text
    members = answer.json()["members"]
    assert [(m["email"], m["name"], m["role"], m["you"]) for m in members] == [
        (tenant.person.email, tenant.person.name, "owner", True), ("bea@example.com", "Bea", "approver", False)]
    assert all(set(m) == {"email", "name", "role", "addedAt", "you"} for m in members)
    assert members[1]["addedAt"].endswith("Z")
    remove_member(tenant.runtime.desk, bea)  # as `countersign member remove` does
    assert [m["email"] for m in signed.get("/api/settings/members").json()["members"]] == [tenant.person.email]


@pytest.mark.parametrize("role", ["admin", "approver", "member"])
def test_only_owners_and_admins_see_the_members(page, tenant, role):
    page.sign_in(tenant.runtime, tenant.add_person(role))
    answer = page.get("/api/settings/members")
    if role == "admin":
        assert answer.status_code == 200 and len(answer.json()["members"]) == 2
        return
    assert answer.status_code == 403
    assert answer.json()["error"] == {"code": "forbidden",
                                      "message": "Only the workspace's owners and admins can see its members."}


def test_signed_out_is_401(live):
    _, server = live
    anonymous = Page(server.origin)
    try:
        assert anonymous.get("/api/settings/members").status_code == 401
    finally:
        anonymous.close()
