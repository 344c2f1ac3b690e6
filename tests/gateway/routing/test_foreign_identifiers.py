"""A request naming an identifier that none of a tool's id parameters takes is about
another object: "SKU2024003 还有多少库存" reached the leave-balance tool of a helpdesk
catalogue ("还有多少" is how its users ask for days left), which needs an employee id."""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.routing.conftest import dry_run, manifest

EMPLOYEE = {"type": "string", "description": "员工工号，例如 E10482"}
CATALOGUE = [
    manifest(
        "leave_balance",
        "GET",
        "查询员工还有多少天假期：年假、病假、调休的剩余天数。",
        {"employee_id": EMPLOYEE},
        name="假期余额",
    ),
    manifest(
        "ticket_create",
        "POST",
        "Opens an IT helpdesk ticket for something broken.",
        {"summary": {"type": "string"}},
    ),
]


@pytest.mark.parametrize("query", ["SKU2024003 还有多少库存", "INC0044120 还有多少天到期"])
async def test_a_request_for_another_object_is_refused(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "foreign")
    assert response.status_code == 404, response.text
    assert response.json()["reason"] == "no_matching_tool"


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("E10482 还有多少年假", "leave_balance"),
        # A tool that needs no id still takes a request that names one in passing.
        ("my laptop TAG004711 will not boot, please open a ticket", "ticket_create"),
    ],
)
async def test_a_request_the_tool_takes_still_reaches_it(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    response = await dry_run(gateway, query, "foreign")
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == tool_id


async def test_a_bare_number_may_be_the_tool_s_own_id_typed_without_its_prefix(
    gateway: httpx.AsyncClient,
) -> None:
    """ "I need to cancel my reservation, the number is 44190268" (for RSV44190268): a
    number alone says nothing of which object it identifies."""
    response = await dry_run(gateway, "我还有多少天年假？工号 10482345", "foreign")
    assert response.json().get("tool_id") == "leave_balance", response.text  # not refused
