"""Service words that CC-CEDICT reads literally or lacks: 工单 is a work order (its gloss
was "work bill"), 报修 reporting a fault for repair ("announce decorate"), 漫游 roaming
("travel around"), 补办 reissuing ("do sth after the time it should have been done"),
排班 a shift schedule ("arrange in order"). Everyday words whose first sense is a rarer
one: 停车 parking ("pull up"), 积分 points ("integral"), 单号 an order number ("odd
number"). A Chinese request using them reaches the tool an English description gives."""

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
        "permit_lookup",
        "GET",
        "Look up a residential parking permit: its status and expiry date.",
        {"permit": {"type": "string", "pattern": "^PP-\\d{6}$"}},
        name="Parking permit lookup",
    ),
    manifest(
        "points_balance",
        "GET",
        "A loyalty member's points balance and the points expiring soon.",
        {"member": {"type": "string", "pattern": "^M\\d{6}$"}},
        name="Points balance",
    ),
    manifest(
        "shift_schedule",
        "GET",
        "The shift schedule of a team for the coming week.",
        {"team": {"type": "string"}},
        name="Shift schedule",
    ),
    manifest(
        "mobile_plan_change",
        "POST",
        "把手机号现有的套餐换成另一种套餐（升级或降级），新月费从下个账单周期开始扣取。",
        {
            "line": {"type": "string", "pattern": "^04\\d{8}$", "description": "手机号"},
            "plan": {"type": "string", "description": "新套餐"},
        },
        name="变更套餐",
    ),
    manifest(
        "locker_rent",
        "POST",
        "Rents a locker at a club for a number of months.",
        {"club": {"type": "string"}, "months": {"type": "integer"}},
        name="Rent a locker",
    ),
]


def test_service_words_read_as_a_service_means_them() -> None:
    assert "work order" in gloss("工单")
    assert "repair" in gloss("报修")
    assert gloss("漫游") == "roaming"
    assert "reissue" in gloss("补办")
    assert "schedule" in gloss("排班")


def test_everyday_words_read_in_their_common_sense() -> None:
    assert gloss("停车") == "park"
    assert gloss("积分") == "points"
    assert gloss("单号") == "order number"
    assert gloss("老公") == "husband"
    assert gloss("酒店") == "hotel"
    assert gloss("坏了") == "broken"


def test_software_words_read_as_software_means_them() -> None:
    assert gloss("登录") == "log in"
    assert gloss("密码") == "password"
    assert gloss("新建") == "create new"
    assert gloss("默认") == "default"
    assert "target" not in gloss("列表中的")  # 中 / 的 in running text, not "hit the target"


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("工单 WO-204518 现在到哪一步了", "work_order_status"),
        ("报修：3 号楼 502 的门锁坏了", "fault_report"),
        ("帮我开通去日本的漫游", "roaming_pass"),
        ("帮我查一下停车证什么时候到期", "permit_lookup"),
        ("我的积分还有多少", "points_balance"),
        # English requests, refused when 套餐 read "set meal" and 新月费 "new moon cost"
        ("my monthly fee is too high, downgrade 0412345678", "mobile_plan_change"),
        ("I want to change my package for 0412345678", "mobile_plan_change"),
        ("帮我租一个柜子，三个月", "locker_rent"),
        ("我的卡丢了，帮我补一张", "badge_reissue"),  # refused when 卡 read "stop", 补 "repair"
    ],
)
async def test_a_request_in_service_words_reaches_its_tool(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code in (200, 422), response.text
    assert response.json()["tool_id"] == tool_id, response.text


def test_words_of_descriptions_read_in_the_trade_they_describe() -> None:
    # 套餐 is "set meal" first, 降级 "demote", 骑手 "horse rider", 包裹 "wrap up".
    assert gloss("套餐") == "plan package"
    assert gloss("降级") == "downgrade"
    assert gloss("账户") == "account"
    assert "horse" not in gloss("骑手")
    assert gloss("新月费") == "new monthly fee"  # not "new moon cost"
    assert "parcel" in gloss("包裹")


def test_characters_of_requests_read_in_the_sense_a_service_means() -> None:
    # 卡 is "stop" first, 柜 a willow ("Salix multinervis"), 课 "subject", 微信 "tiny letter".
    assert gloss("卡") == "card"
    assert gloss("租个柜子") == "rent locker cabinet"
    assert gloss("私教课") == "personal training session"
    assert gloss("微信") == "WeChat"
    assert "pay" in gloss("交")


def test_words_a_dictionary_reads_in_another_trade() -> None:
    # 状态 "condition state", 缩容 "withdraw hold", 撤回 "recall", 抬头 "raise one's head"
    assert gloss("状态") == "status"
    assert gloss("缩容") == "scale in"
    assert gloss("撤回") == "withdraw"
    assert "invoice" in gloss("发票抬头")
    assert "approve" in gloss("PR-2024-0831 批了吗")


def test_characters_of_running_text_read_as_they_are_used() -> None:
    # 后 is "empress" first in the file, 当 "dong", 按 "press", 不 "no not so".
    assert gloss("两天后") == "two days after"  # not "two Tin Hau"
    assert "empress" not in gloss("下单后三天内发货")
    assert gloss("按") == "by"
    assert gloss("不") == "not"
    assert "dong" not in gloss("当订单取消时")


def test_single_characters_of_requests_read_as_requests_mean_them() -> None:
    assert gloss("查") == "look up"  # not "research"
    assert gloss("订") == "book"  # not "agree"
    assert gloss("约") == "appointment"  # not "weigh in a balance or on a scale"
    assert gloss("月") == "month"  # not "moon"
    assert gloss("日") == "day"  # not "sun"
