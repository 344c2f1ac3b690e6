"""Reporting a fault, a loss or a claim files it: 报个 / 报一个 (报个修, 报个质量问题, 报个
incident), 报失 and 报案 ask for something to be created (``vocabulary._ACTIONS``,
``intent._CJK_WRITE``). "报个质量问题 LOT-24052999 尺寸超差 20件" had gone to the inspection
results, "行李丢了，要报失" to the baggage claim's status. A word before 价 names a price
(报个价 asks for a quote), and 报案号 is a claim's number. Catalogue: tests/data/factory,
written blind to the router."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent, vocabulary
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("factory")


@pytest.mark.parametrize(
    "text",
    [
        "报个质量问题 LOT-24052999 尺寸超差 20件",
        "打印机又卡纸了，帮我报个修",
        "行李丢了，要报失，预订号 J8VC2R",
        "开车撞到护栏了，我要报案 AU-7730914",
    ],
)
def test_reporting_asks_for_something_made(text: str) -> None:
    assert vocabulary.requested_actions(text) == {"create"}


@pytest.mark.parametrize(
    "text", ["帮我报个价", "报案号出来了 CLM-20250617", "上个月报的案子一直没消息", "预订价是多少"]
)
def test_a_price_a_claim_number_or_a_past_report_asks_for_nothing_made(text: str) -> None:
    assert "create" not in vocabulary.requested_actions(text)
    assert intent.order_verb(text) is None


def test_a_request_that_begins_by_reporting_is_an_order() -> None:
    assert intent.order_verb("报个质量问题 LOT-24052999 尺寸超差 20件") == "报个"
    assert intent.order_verb("报个 incident，notification-worker 短信都没发出去") == "报个"


async def test_a_quality_problem_reported_is_a_defect_record(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "报个质量问题 LOT-24052999 尺寸超差 20件", "qa")
    body = response.json()
    assert body.get("tool_id") == "defect_record_create", response.text
