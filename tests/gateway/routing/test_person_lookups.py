"""A question naming a person fits a reader that takes a name (``Router._fits``): "who is
Wang Lei's manager?" is short, mostly a name, and scored low on the directory's words."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.extract import person_names, takes_a_name
from tests.gateway.routing.conftest import blind_set, dry_run

# A helpdesk's tools written blind to the router: an employee lookup by id or name.
CATALOGUE = blind_set("helpdesk")


@pytest.mark.parametrize(
    "query",
    [
        "who is Wang Lei's manager?",
        "帮我查一下张伟，他在哪个部门",
        "desk phone for Priya Natarajan?",
    ],
)
async def test_a_question_naming_a_person_reaches_the_lookup(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == "employee_lookup"


@pytest.mark.parametrize(
    "query", ["approve Li Na's leave request", "book a meeting room for Li Na tomorrow at 10"]
)
async def test_an_order_naming_a_person_is_no_lookup(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.json().get("tool_id") != "employee_lookup"


def test_person_names_leave_places_out() -> None:
    assert person_names("who is Maria Lopez's manager?") == ["Maria Lopez"]
    assert person_names("what's the wifi password at Harbor Point") == []
    assert person_names("查一下王芳的邮箱地址") == ["王芳"]


def test_a_tool_takes_a_name_by_its_parameter_or_description() -> None:
    assert takes_a_name({"properties": {"guest_name": {"type": "string"}}})
    assert takes_a_name({"properties": {"query": {"description": "Name, email or job title."}}})
    assert not takes_a_name({"properties": {"sku": {"type": "string"}}})
