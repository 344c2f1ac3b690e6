"""Routes and arguments found by the online-grocery and fleet-telematics sets
(``tests/data/grocery``, ``tests/data/fleet``, written blind to the router): a question
is not answered by an idempotent POST that writes (assigning a trailer), and a Chinese
enum's options say whether they add or take away in their first word (添加商品 /
移除商品 beside 修改数量 and 跳过一次).
"""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.routing.conftest import blind_set, dry_run, extracted, object_schema

CATALOGUE = blind_set("fleet")


@pytest.mark.parametrize(
    "query",
    [
        "pull the active critical DTCs for truck TRK-0815",
        "which trailer is currently hooked to TRK-0950?",
    ],
)
async def test_a_question_is_not_sent_to_an_idempotent_writer(
    gateway: httpx.AsyncClient, query: str
) -> None:
    """``assign_trailer`` is a POST marked idempotent (safe to repeat), and assigns: it
    answers no question, whatever its words have in common with one."""
    response = await dry_run(gateway, query, "fleet")
    assert response.json().get("tool_id") != "assign_trailer", response.text


async def test_its_own_orders_still_reach_it(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "hook trailer DV-1120 to TRK-2040", "fleet")
    assert response.json().get("tool_id") == "assign_trailer", response.text


BASKET = object_schema(
    {
        "action": {
            "type": "string",
            "enum": ["添加商品", "移除商品", "修改数量", "跳过一次", "更改配送日"],
        }
    }
)


@pytest.mark.parametrize(
    ("query", "action"),
    [
        ("定期购里帮我加上鸡蛋，每周两盒", "添加商品"),
        ("add 2 bags of bananas to my weekly basket", "添加商品"),
        ("weekly basket 里的可乐删掉，太不健康了", "移除商品"),
        ("take the sparkling water out of my subscription box", "移除商品"),
        ("what's in my weekly basket?", None),
    ],
)
def test_a_chinese_option_adds_or_takes_away_by_its_first_word(
    query: str, action: str | None
) -> None:
    assert extracted(query, BASKET).get("action") == action
