"""Names are one line: a contact's, a list's, a sender's, a design's, a campaign's, the workspace's
and the return address's lines are stored (and previewed) with each run of spaces, tabs and line
breaks made one space; a prompt or instructions keep their line breaks."""

from __future__ import annotations

import pytest

from countersign.toolkit import ActionError
from countersign.toolsets.mail.kinds import (
    KIND_CAMPAIGN,
    KIND_CONTACT,
    KIND_DESIGN,
    KIND_LIST,
    KIND_PROFILE,
    KIND_SENDER,
    PROFILE_ID,
)


def _named(world, kind: str, name: str) -> dict:
    found = [d.data for d in world.store.docs.list_docs(world.ws, kind) if d.data.get("name") == name]
    assert len(found) == 1, [d.data.get("name") for d in world.store.docs.list_docs(world.ws, kind)]
    return found[0]


def test_an_imported_contact_and_its_new_list_are_stored_on_one_line(world):
    contact = {"name": " Ann\nSmith ", "email": "ann@x.example", "company": "Acme\tInc",
               "line1": "1 Main\r\nStreet", "line2": "\n", "city": "Spring\nfield", "postal_code": "12\t345"}
    args = {"contacts": [contact], "new_list_name": "VIP\r\n  list"}
    plan = world.plan("import_contacts", args)
    shown = " ".join([plan.preview.title, *plan.preview.lines])
    assert "VIP list" in shown and "\n" not in shown and "\t" not in shown
    world.run("import_contacts", args)
    stored = _named(world, KIND_CONTACT, "Ann Smith")
    assert stored["company"] == "Acme Inc"
    assert stored["address"] == {"line1": "1 Main Street", "city": "Spring field", "postal_code": "12 345"}
    assert _named(world, KIND_LIST, "VIP list")


def test_a_name_of_only_spaces_and_line_breaks_is_refused_as_empty(world):
    def written():
        return [(d.id, d.version) for kind in (KIND_CONTACT, KIND_LIST, KIND_CAMPAIGN)
                for d in world.store.docs.list_docs(world.ws, kind)]
    before = written()
    for name, args, message in (
        ("import_contacts", {"contacts": [{"name": "Bo", "email": "b@x.example"},
                                          {"name": "\n\t ", "email": "c@x.example"}]},
         "contacts[1].name: must not be empty."),
        ("create_campaign", {"name": "\r\n"}, "name: must not be empty."),
    ):
        with pytest.raises(ActionError) as refused:
            world.plan(name, args)
        assert message in refused.value.message
    assert written() == before


def test_sender_campaign_design_and_workspace_names_are_stored_on_one_line(world):
    world.run("update_workspace_preferences", {"sender_name": "Bo\nBoss", "sender_email": "bo@acme.example"})
    assert _named(world, KIND_SENDER, "Bo Boss")["email"] == "bo@acme.example"
    world.run("create_campaign", {"name": "Spring\t\tpush"})
    assert _named(world, KIND_CAMPAIGN, "Spring push")
    world.run("set_workspace_name", {"name": "Acme\nMail"})
    assert world.store.workspaces.get_workspace(world.ws).name == "Acme Mail"


def test_a_prompt_keeps_its_line_breaks_and_the_new_design_name_does_not(world):
    world.run("generate_design_image", {"prompt": "Autumn leaves\non a desk", "new_design_name": "Fall\n2026"})
    design = _named(world, KIND_DESIGN, "Fall 2026")
    assert design["draft"]["image_prompt"] == "Autumn leaves\non a desk"


def test_the_return_address_is_stored_on_one_line(world):
    world.run("set_return_address", {"name": "Acme\nMail", "line1": "500 Market\tStreet", "line2": "Floor\n5",
                                     "city": "San\r\nFrancisco", "region": " CA\n", "postal_code": "94105",
                                     "country": "us"})
    address = world.data(KIND_PROFILE, PROFILE_ID)["return_address"]
    assert address == {"name": "Acme Mail", "line1": "500 Market Street", "line2": "Floor 5",
                       "city": "San Francisco", "region": "CA", "postal_code": "94105", "country": "US"}
