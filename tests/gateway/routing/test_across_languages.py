"""Requests in one language for tools described in the other (``choose``: ``across``).
all-MiniLM-L6-v2 compares scripts, and the lexical index finds no shared word, so "查下
INC0066001" scored below the threshold on an English ticket lookup, and Chinese requests
went to the tools described in Chinese instead. A question's identifier chooses only a
reader, only when no other reader could take it, and only an identifier with a digit in
it; an order's verb chooses only the one writer whose words name its action class."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from tests.gateway.routing.conftest import dry_run, manifest

TICKET = {"type": "string", "pattern": "^INC\\d{7}$", "description": "like INC0012345"}
EMPLOYEE = {"type": "string", "description": "员工工号，例如 E10482"}
CATALOGUE = [
    manifest(
        "ticket_status",
        "GET",
        "Look up an existing helpdesk ticket by its number and return its state, assignee "
        "and last update.",
        {"ticket_id": TICKET},
        ["ticket_id"],
    ),
    manifest(
        "ticket_priority",
        "PATCH",
        "Changes the priority of an existing ticket (escalate or downgrade).",
        {
            "ticket_id": {"type": "string", "description": "ticket number, e.g. INC0012345"},
            "priority": {"type": "string", "enum": ["P1", "P2", "P3", "P4"]},
        },
        ["ticket_id", "priority"],
    ),
    manifest(
        "leave_balance",
        "GET",
        "查询员工剩余的假期天数（年假、病假、调休）。只查询，不提交请假。",
        {"employee_id": EMPLOYEE},
        ["employee_id"],
    ),
    manifest(
        "employee_lookup",
        "GET",
        "Finds a colleague in the company directory: department, manager, phone and email.",
        {
            "employee_id": {"type": "string", "description": "employee id, e.g. E10482"},
            "name": {"type": "string", "description": "full or partial name"},
        },
        [],
    ),
    manifest(
        "meeting_room_book",
        "POST",
        "预订会议室。需要提供会议室编号、日期和开始时间。",
        {
            "room": {"type": "string", "description": "会议室编号，例如 B3-201"},
            "date": {"type": "string", "format": "date"},
        },
        ["room", "date"],
    ),
    manifest(
        "expense_submit",
        "POST",
        "File an expense claim for reimbursement: amount, currency and the date spent.",
        {
            "amount": {"type": "number", "minimum": 0},
            "currency": {"type": "string", "enum": ["CNY", "USD", "EUR"]},
            "expense_date": {"type": "string", "format": "date"},
        },
        ["amount", "currency", "expense_date"],
    ),
    manifest(
        "password_reset",
        "POST",
        "重置员工的域账号密码，新密码通过短信发送。",
        {"username": {"type": "string", "description": "域账号用户名，例如 zhang.wei"}},
        ["username"],
    ),
]


async def routed(gateway: httpx.AsyncClient, query: str) -> httpx.Response:
    return await dry_run(gateway, query, "u1")


@pytest.mark.parametrize(
    ("query", "ticket_id"),
    [
        ("查下 INC0066001", "INC0066001"),
        ("帮我查一下工单 INC0012345 处理到哪了", "INC0012345"),
        ("工单 INC0077001 解决了没", "INC0077001"),
    ],
)
async def test_a_chinese_question_reaches_the_english_reader_of_its_identifier(
    gateway: httpx.AsyncClient, query: str, ticket_id: str
) -> None:
    # Each was refused before: the best candidate was the tool described in Chinese.
    response = await routed(gateway, query)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_id"] == "ticket_status"
    assert body["arguments"] == {"ticket_id": ticket_id}
    assert "identifiers or verb point to" in body["route"]["why"]


@pytest.mark.parametrize(
    "query",
    [
        # An order: a writer's words in English cannot confirm a Chinese verb, and a
        # reader does not close tickets.
        "关闭工单 INC0012345",
        # Another reader (employee_lookup) also takes the id, if only optionally.
        "E10233 是谁",
        # A word shaped like the example "zhang.wei" is no identifier.
        "translate 'good morning' to French",
    ],
)
async def test_the_identifier_does_not_choose_where_it_proves_nothing(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await routed(gateway, query)
    body = response.json()
    assert "identifiers or verb point to" not in str(body.get("route", {}).get("why"))
    assert body.get("tool_id") not in ("ticket_status", "leave_balance", "password_reset")


async def test_an_english_order_reaches_the_one_chinese_writer_naming_its_verb(
    gateway: httpx.AsyncClient,
) -> None:
    # Refused before: "book" and 预订 share no script; the action class joins them.
    response = await routed(gateway, "book a room for 2026-12-10, room B3-201")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_id"] == "meeting_room_book"
    assert body["arguments"] == {"room": "B3-201", "date": "2026-12-10"}
    assert "identifiers or verb point to" in body["route"]["why"]


@pytest.mark.parametrize(
    "query", ["报销打车费 86 元，2026-11-29", "出差住酒店花了 650 元，帮我报销，日期 2026-11-18"]
)
async def test_a_chinese_order_reaches_the_one_english_writer_naming_its_verb(
    gateway: httpx.AsyncClient, query: str
) -> None:
    # Refused before: the tools described in Chinese ranked first; 报销 is a reimbursement.
    response = await routed(gateway, query)
    body = response.json()
    assert body.get("tool_id") == "expense_submit", response.text


async def test_the_coarse_stage_keeps_a_tool_it_is_told_to_include(
    app: FastAPI, gateway: httpx.AsyncClient
) -> None:
    router = app.state.runtime.router
    index = await router.index()
    query = "团建吃饭 1200 元要报销"
    vector = router.embedder.embed_one(query)
    top = index.search(query, vector, k=1)
    assert [c.tool_id for c in top] != ["expense_submit"]
    kept = index.search(query, vector, k=1, include={"expense_submit", "no_such_tool"})
    assert [c.tool_id for c in kept] == [top[0].tool_id, "expense_submit"]
    # Not allowed to the caller: not included.
    alone = index.search(query, vector, k=1, allowed={top[0].tool_id}, include={"expense_submit"})
    assert [c.tool_id for c in alone] == [top[0].tool_id]
