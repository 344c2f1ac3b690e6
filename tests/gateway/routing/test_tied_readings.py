"""A Chinese request is searched as written and in its English reading, and each reading
can put a different tool first at the same fused score (1.0): the tie goes to the surer
tool (``choose``). "会员卡号 M3948571 的积分余额" went to the points-award tool, first by
its Chinese words (and by "也不用于查询余额", its own not-for clause, which was read as what
it does: ``text._NEGATIVE_SENTENCE``), over the balance lookup. Catalogue: tests/data/hotel,
written blind to the router; the award tool is an admin one, so the caller holds its role."""

from __future__ import annotations

import httpx

from tests.gateway.routing.conftest import blind_set

CATALOGUE = blind_set("hotel")


async def loyalty_desk(client: httpx.AsyncClient, query: str) -> httpx.Response:
    context = {"user_id": "desk", "roles": ["loyalty_desk"]}
    return await client.post(
        "/run", json={"user_query": query, "user_context": context, "dry_run": True}
    )


async def test_a_balance_asked_in_chinese_is_the_balance_lookups(
    gateway: httpx.AsyncClient,
) -> None:
    response = await loyalty_desk(gateway, "会员卡号 M3948571 的积分余额")
    body = response.json()
    assert body.get("tool_id") == "loyalty_balance", response.text
    assert body["arguments"] == {"member_id": "M3948571"}


async def test_awarding_points_in_chinese_is_still_the_award_tools(
    gateway: httpx.AsyncClient,
) -> None:
    response = await loyalty_desk(gateway, "给 M6019283 加 3000 积分，双十一活动奖励")
    assert response.json().get("tool_id") == "loyalty_award_points", response.text
