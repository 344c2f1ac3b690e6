"""What a request changes something to, and the Chinese option a Chinese request names by
a character of its own (``extract._changed_to``, ``extract._shared_character_option``)."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.routing.extract import ArgumentExtractor
from gateway.routing.gloss import dictionary
from tests.gateway.routing.conftest import blind_set

TOOLS = {m["tool_id"]: m for m in blind_set("telecom") + blind_set("saasadmin")}
TOOLS |= {m["tool_id"]: m for m in blind_set("banking") + blind_set("carrental")}
TOOLS |= {m["tool_id"]: m for m in blind_set("courier")}
extractor = ArgumentExtractor()


@pytest.fixture(autouse=True, scope="module")
def _gloss() -> None:
    dictionary()  # Chinese words are read in English where an option is English


def extracted(tool_id: str, query: str) -> dict[str, Any]:
    return extractor.extract(query, TOOLS[tool_id]["input_schema"]).arguments


@pytest.mark.parametrize(
    ("tool_id", "query", "name", "value"),
    [
        (
            "change_plan",
            "我想把家里宽带从 FBB-100 升到 FBB-500，马上生效",
            "new_plan_code",
            "FBB-500",
        ),
        (
            "change_plan",
            "move 0412558301 from PLN-5G-40 to PLN-5G-60",
            "new_plan_code",
            "PLN-5G-60",
        ),
        ("change_plan", "move 0412558301 onto PLN-5G-60 please", "new_plan_code", "PLN-5G-60"),
        (
            "change_member_role",
            "chen.jie@acme.cn 现在是管理员，权限太大了，降成访客",
            "new_role",
            "访客",
        ),
        ("change_member_role", "make anna@acme.com an admin", "new_role", "管理员"),
        # A value already after 到 is the new one; the one after the next 到 is another's.
        (
            "modify_booking",
            "把RSV-641209的取车日期推迟到2025-07-15，还车也顺延到2025-07-19",
            "new_pickup_date",
            "2025-07-15",
        ),
    ],
)
def test_a_new_value_is_the_one_a_change_ends_at(
    tool_id: str, query: str, name: str, value: str
) -> None:
    assert extracted(tool_id, query)[name] == value


@pytest.mark.parametrize(
    ("tool_id", "query", "name", "value"),
    [
        (
            "make_loan_repayment",
            "房贷想多还3000，提前还一部分本金",
            "repayment_type",
            "提前部分还款",
        ),
        # One character alone names an option only when it begins it: 清 ends 提前结清.
        ("make_loan_repayment", "帮我把房贷一次性提前还清", "repayment_type", None),
        # 还 and 款 are in two options, 提前 too: a monthly payment names none of its own.
        ("make_loan_repayment", "这个月的贷款我想手动还一下", "repayment_type", None),
        ("report_damage", "租的车左前门被刮了一道，合同号 RA20250302017", "damage_type", "刮擦"),
        ("report_damage", "后保险杠凹进去了，RA20250118044", "damage_type", "凹陷"),
        # 轮毂 is written whole, 刮 too shares a character: the whole part wins.
        ("report_damage", "轮毂刮花了，想登记一下车损，RA20250307052", "damage_type", "轮胎/轮毂"),
        # The 行 of 放行 ("release") is no 银行卡 ("bank card").
        (
            "pay_customs_duties",
            "包裹被海关扣了说要交税才放行，怎么交？单号CX1919191919",
            "payment_method",
            None,
        ),
        # Never the catch-all, and nothing from an English request.
        ("report_damage", "他倒车把车门刮了，RA20250307052", "damage_type", "刮擦"),
        ("report_damage", "there is a scratch on the door, RA20250307052", "damage_type", None),
    ],
)
def test_a_chinese_option_named_by_a_character_no_other_option_has(
    tool_id: str, query: str, name: str, value: str | None
) -> None:
    assert extracted(tool_id, query).get(name) == value
