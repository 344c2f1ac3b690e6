"""A 把 or 给 clause orders whatever its action word, so no reader takes it even when the
word is none the router knows ("给 ACC-30407 加 10 个席位" went to the subscription
lookup; ``intent.ba_order`` in ``Router._misread``). A clause that only reads out ("把
ACC-… 的所有发票列出来", "…的发票发到 fin@…") is still a reader's. Catalogue: tests/data/crm,
written blind to the router."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("crm")


@pytest.mark.parametrize(
    "text",
    ["给 ACC-30407 加 10 个席位", "帮我把 LOT-24061501 判定报废", "把我下周的值班换给张伟"],
)
def test_a_ba_or_gei_clause_orders_whatever_its_word(text: str) -> None:
    assert intent.ba_order(text)


@pytest.mark.parametrize(
    "text",
    [
        "把 ACC-30609 的所有发票列出来",
        "请把合同 RA20250227018 的发票发到 fin@huaxin.cn",
        "给我看看 ACC-30407 的订阅",  # 给我: shown to me
        "ACC-30407 加了几个席位",
    ],
)
def test_reading_out_is_no_ba_order(text: str) -> None:
    assert not intent.ba_order(text)


async def test_an_order_of_an_unknown_word_is_no_readers(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "给 ACC-30407 加 10 个席位", "u1")
    assert response.json().get("tool_id") != "subscription_get", response.text


async def test_a_clause_that_lists_is_still_the_readers(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "把 ACC-30609 的所有发票列出来", "u1")
    body = response.json()
    assert body.get("tool_id") == "invoice_list", response.text
    assert body["arguments"]["account_id"] == "ACC-30609"
