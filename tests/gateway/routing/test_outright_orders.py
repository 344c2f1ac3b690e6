"""A Chinese order asked for outright (after 帮我, 可以帮我, 请, or in a 把 or 给 clause) or an
English one after "please" or "can you" is no reader's, whatever the reader is named for
(``intent.asked_outright``): "给订单 7788 发起退款 30 元" went to the refund-status reader,
whose words name refunds. A 给 clause orders as a 把 clause does, and 预约 after a
please-word books. Catalogues: tests/data/backoffice and tests/data/travel, written blind
to the router."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("backoffice") + blind_set("travel")


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("给订单 7788 发起退款 30 元", "退款"),
        ("给客户发个消息说货到了", "发个消息"),
        ("可以帮我预约明天上午10点去 PVG-T2 门店看车吗", "预约"),
        ("能不能帮我取消 RSV-1234", "取消"),
    ],
)
def test_a_gei_clause_and_a_polite_chinese_order_are_orders(text: str, verb: str) -> None:
    assert intent.order_verb(text) == verb
    assert intent.asked_outright(text)


@pytest.mark.parametrize(
    "text",
    [
        "给我看看退款进度",  # 给我: shown to me
        "预约号 APT0001 是几点",  # 预约 as a noun
        "refund RF-1001 status",  # a reader's name, not asked for outright
        "取消 SO20261125001",  # an order, not asked for outright
    ],
)
def test_reading_and_bare_orders_are_not_asked_outright(text: str) -> None:
    assert not intent.asked_outright(text)


@pytest.mark.parametrize(
    ("query", "reader"),
    [
        ("给订单 7788 发起退款 30 元", "refund_status"),
        ("帮我申请一下去美国的签证，B1/B2 那种", "visa_requirements"),
    ],
)
async def test_an_order_asked_outright_is_no_readers(
    gateway: httpx.AsyncClient, query: str, reader: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.json().get("tool_id") != reader, response.text
