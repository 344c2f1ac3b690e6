"""约一下 / 约一个 / 约个 ("set up", "book one") open a Chinese order as 预约 does, and a
follow-up's 那 ("那帮我开个工单吧", "那就取消吧") comes before an order without hiding it
(``intent._CJK_PLEASE``, ``_CJK_WRITE``). "约一下 ACC-10234 的客户做产品演示，3月25号下午两点半"
had gone to the subscription cancel, "那帮我开个工单吧" to the priority change. A
question after 那 is still no order. Catalogue: tests/data/crm, written blind to the
router."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("crm")


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("约一下 ACC-10234 的客户做产品演示，3月25号下午两点半", "约一下"),
        ("帮我约个时间跟王总聊续约", "约个"),
        ("那帮我约一个下午的，病历号MRN-004512", "约一个"),
        ("那帮我开个工单吧", "开个工单"),
        ("那就取消吧", "取消"),
    ],
)
def test_a_chinese_booking_or_a_follow_up_order_is_an_order(text: str, verb: str) -> None:
    assert intent.order_verb(text) == verb


@pytest.mark.parametrize(
    "text", ["那这个 SKU 最近卖得怎么样", "那李强的呢", "约定的交付日期是哪天"]
)
def test_a_question_after_na_is_no_order(text: str) -> None:
    assert intent.order_verb(text) is None


async def test_setting_up_a_demo_is_the_meeting_schedulers(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "约一下 ACC-10234 的客户做产品演示，3月25号下午两点半", "u1")
    body = response.json()
    assert body.get("tool_id") == "meeting_schedule", response.text
