"""A tool described in Chinese offers the actions its Chinese verbs name, across languages:
续办 renews a permit, 结清 and 还款 pay a loan off, 开具 issues (creates) a pass. Without
them an English order ("renew my parking permit …") found no action of its class in the
tool's words and cost the right tool its confidence (``vocabulary.action_gap``)."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.vocabulary import offered_actions, requested_actions
from tests.gateway.routing.conftest import dry_run, manifest

UNIT = {"type": "string", "pattern": "^MPL-\\d{4}$", "description": "房号，例如 MPL-1204"}
LOAN = {"type": "string", "pattern": "^LN\\d{10}$", "description": "贷款合同号，例如 LN2023004512"}
CATALOGUE = [
    manifest(
        "parking_permit",
        "POST",
        "为住户车辆申请或续办月度停车证，审核通过后电子停车证与车牌绑定。",
        {"unit_id": UNIT, "plate_number": {"type": "string", "description": "车牌号"}},
        name="停车证",
    ),
    manifest(
        "visitor_pass",
        "POST",
        "为来访的亲友或服务人员开具临时访客通行证，访客凭二维码进入大堂。",
        {"unit_id": UNIT, "visitor_name": {"type": "string", "description": "访客姓名"}},
        name="访客通行证",
    ),
    manifest(
        "loan_repayment",
        "POST",
        "从本人账户扣款偿还贷款：按期还当期月供、部分提前还款，或一次性提前结清。",
        {"loan_id": LOAN, "amount": {"type": "number", "minimum": 0}},
        ["loan_id"],
        name="贷款还款",
    ),
    manifest(
        "lease_lookup",
        "GET",
        "查询住户的租约：租期、月租金、押金和车位。",
        {"unit_id": UNIT},
        name="租约查询",
    ),
]


@pytest.mark.parametrize(
    ("description", "action"),
    [
        (CATALOGUE[0]["description"], "renew"),
        (CATALOGUE[1]["description"], "create"),
        (CATALOGUE[2]["description"], "pay"),
    ],
)
def test_a_chinese_verb_offers_its_action(description: str, action: str) -> None:
    # (a manifest's verbs are read when it describes its requests: aliases and examples)
    described = {"tool_id": "t", "description": description, "aliases": ["甲", "乙", "丙"]}
    offered = offered_actions(described)
    assert offered is not None
    assert action in offered


def test_the_same_verbs_are_asked_for_in_chinese() -> None:
    assert "pay" in requested_actions("帮我把 LN2023004512 一次性结清")
    assert "renew" in requested_actions("帮我续办 MPL-1204 的停车证")


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("renew the monthly parking permit for MPL-1204, plate 粤B12345", "parking_permit"),
        ("settle loan LN2022118873 in full please", "loan_repayment"),
    ],
)
async def test_an_english_order_reaches_the_tool_its_chinese_verb_names(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == tool_id
