"""Approving is an action of its own, and a tool that sends what it makes "to the line
manager for approval" (提交后由直属上级审批, 待审批) does not approve: "approve Li Na's
leave request" is refused by a catalogue that only files and looks up requests, instead of
being filed as a new one. A question about an approval ("审批了吗", "审批人") asks for none."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.intent import does, own_words
from gateway.routing.text import own_actions_text
from gateway.routing.vocabulary import offered_actions, requested_actions
from tests.gateway.routing.conftest import dry_run, manifest

EMPLOYEE = {"type": "string", "pattern": "^E\\d{5}$", "description": "employee id"}
DAY = {"type": "string", "format": "date"}
CATALOGUE = [
    manifest(
        "leave_submit",
        "POST",
        "Creates a leave request and sends it to the line manager for approval.",
        {"employee_id": EMPLOYEE, "start_date": DAY, "end_date": DAY},
        name="Leave request",
    ),
    manifest(
        "expense_file",
        "POST",
        "提交一笔报销，提交后由部门经理审批，通过后财务打款。",
        {"employee_id": EMPLOYEE, "amount": {"type": "number", "minimum": 0}},
        name="报销提交",
    ),
    manifest(
        "leave_balance",
        "GET",
        "How many days of annual and sick leave an employee has left this year.",
        {"employee_id": EMPLOYEE},
        name="Leave balance",
    ),
]


def test_what_others_do_next_is_not_the_tools_own_action() -> None:
    text = "Creates a leave request and sends it to the line manager for approval."
    assert "approval" not in own_actions_text(text)
    assert "审批" not in own_actions_text("提交后由直属上级审批。可以撤回待审批的申请。")
    assert not does(own_words(CATALOGUE[0]), "approve")
    # a tool that approves still does
    approver = {"tool_id": "leave_decide", "description": "Approves or rejects a leave request."}
    assert does(own_words(approver), "approve")
    described = {**CATALOGUE[1], "aliases": ["报销", "报账", "交报销"]}
    offered = offered_actions(described)
    assert offered is not None
    assert "approve" not in offered


def test_approving_is_asked_for_and_asking_about_it_is_not() -> None:
    assert "approve" in requested_actions("approve Li Na's leave request")
    assert "approve" in requested_actions("帮我审批李娜的请假")
    assert "approve" not in requested_actions("报销单 EXP-20311 审批了吗")
    assert "approve" not in requested_actions("这张单的审批人是谁")


@pytest.mark.parametrize(
    "query",
    [
        "approve Li Na's leave request",
        "approve E20931's leave from 2026-12-21 to 2026-12-24",
        "帮我审批李娜的报销",
    ],
)
async def test_an_approval_no_tool_gives_is_refused(gateway: httpx.AsyncClient, query: str) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 404, response.text
    assert response.json()["reason"] == "no_matching_tool"


async def test_filing_still_reaches_the_tool(gateway: httpx.AsyncClient) -> None:
    query = "request leave for E20931 from 2026-12-21 to 2026-12-24"
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == "leave_submit"
