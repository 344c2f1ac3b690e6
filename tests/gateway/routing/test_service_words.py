"""Service words that CC-CEDICT reads literally or lacks: 工单 is a work order (its gloss
was "work bill"), 报修 reporting a fault for repair ("announce decorate"), 漫游 roaming
("travel around"), 补办 reissuing ("do sth after the time it should have been done"),
排班 a shift schedule ("arrange in order"). A Chinese request using them reaches the tool
an English description gives for them."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.gloss import gloss
from tests.gateway.routing.conftest import dry_run, manifest

ORDER = {"type": "string", "pattern": "^WO-\\d{6}$", "description": "work order, e.g. WO-204518"}
CATALOGUE = [
    manifest(
        "work_order_status",
        "GET",
        "Shows where a facilities work order stands: assigned technician and progress.",
        {"order_id": ORDER},
        name="Work order status",
    ),
    manifest(
        "fault_report",
        "POST",
        "Report a broken fixture (lift, light, tap, door lock) so maintenance repairs it.",
        {"location": {"type": "string", "description": "building and room"}},
        name="Report a fault",
    ),
    manifest(
        "roaming_pass",
        "POST",
        "Adds a roaming pass to a mobile line for use abroad.",
        {"country": {"type": "string"}},
        name="Roaming pass",
    ),
    manifest(
        "badge_reissue",
        "POST",
        "Reissue an employee's lost or damaged access card.",
        {"employee": {"type": "string"}},
        name="Access card reissue",
    ),
    manifest(
        "shift_schedule",
        "GET",
        "The shift schedule of a team for the coming week.",
        {"team": {"type": "string"}},
        name="Shift schedule",
    ),
]


def test_service_words_read_as_a_service_means_them() -> None:
    assert "work order" in gloss("工单")
    assert "repair" in gloss("报修")
    assert gloss("漫游") == "roaming"
    assert "reissue" in gloss("补办")
    assert "schedule" in gloss("排班")


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("工单 WO-204518 现在到哪一步了", "work_order_status"),
        ("报修：3 号楼 502 的门锁坏了", "fault_report"),
        ("帮我开通去日本的漫游", "roaming_pass"),
    ],
)
async def test_a_request_in_service_words_reaches_its_tool(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code in (200, 422), response.text
    assert response.json()["tool_id"] == tool_id, response.text
