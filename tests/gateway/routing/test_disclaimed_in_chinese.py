"""A Chinese description's nouns do not undo what it disclaims: an invoice lookup that
returns "付款状态" (payment status) and "不处理付款" (does not take payments) is not
given "pay invoice INV-…"; an audit log that records who "删除了内容" and "不能删除日志"
is not given "删除审计日志里…". English verbs of a description still offer what they
name ("Approving refunds the buyer"). A Chinese clause asking who did something ("谁把
Q3 项目删了？") tells of a past action and asks for none.
Catalogue: tests/data/saasadmin, written blind to the router."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import vocabulary
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("saasadmin")

INVOICES = {
    "tool_id": "get_invoice",
    "name": "查询发票",
    "description": "按发票号查找账单发票，返回金额、付款状态（已付/未付）。不处理付款和退款。",
    "aliases": ["发票", "账单下载"],
    "examples": ["把三月份的发票发我一下"],
}
RETURNS = {
    "tool_id": "process_return_request",
    "description": "Approve or reject a return. Approving refunds the buyer. Only works on "
    "existing return requests; it cannot refund an order that has no return open.",
}


def test_a_chinese_description_disclaims_what_its_nouns_name() -> None:
    assert {"pay", "refund"} <= vocabulary.disclaimed_actions(INVOICES)
    # an English verb of the description offers its action, disclaimed later or not
    assert "refund" not in vocabulary.disclaimed_actions(RETURNS)
    # and so do the tool's name, aliases and examples, in either language
    assert "pay" not in vocabulary.disclaimed_actions({**INVOICES, "name": "发票付款"})


def test_asking_who_did_it_asks_for_no_action() -> None:
    assert vocabulary.requested_actions("谁把 Q3 路线图项目删了？帮我翻翻日志") == frozenset()
    assert vocabulary.requested_actions("上周是谁取消的这个预约") == frozenset()
    assert vocabulary.requested_actions("谁删了？帮我删除 X") == {"delete"}
    assert vocabulary.requested_actions("把 lina@acme.cn 从工作区里踢出去") == {"delete"}


@pytest.mark.parametrize(
    ("query", "not_to"),
    [
        ("pay invoice INV-2024-00451 now with the card on file", "get_invoice"),
        ("删除审计日志里昨天那条误操作记录", "query_audit_log"),
    ],
)
async def test_an_order_the_tool_disclaims_is_not_given_to_it(
    gateway: httpx.AsyncClient, query: str, not_to: str
) -> None:
    response = await dry_run(gateway, query, "saasadmin")
    assert response.json().get("tool_id") != not_to, response.text


async def test_asking_the_log_who_deleted_a_project_still_reaches_it(
    gateway: httpx.AsyncClient,
) -> None:
    body = (await dry_run(gateway, "谁把 Q3 路线图项目删了？帮我翻翻日志", "saasadmin")).json()
    assert body.get("tool_id") == "query_audit_log", body


def test_a_long_request_costs_no_more_per_action_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """The "who did it" look-back is bounded: an action word looks back at most
    ``_WHO_DID_WITHIN`` characters, not to the start of the request (which made 8,000 of
    them quadratic)."""
    spans: list[int] = []
    pattern = vocabulary._WHO_DID

    class Counting:
        def search(self, text: str, pos: int, endpos: int) -> object:
            spans.append(endpos - pos)
            return pattern.search(text, pos, endpos)

    monkeypatch.setattr(vocabulary, "_WHO_DID", Counting())
    assert vocabulary.requested_actions("谁" + "删除" * 8000) == {"delete"}
    assert max(spans) <= vocabulary._WHO_DID_WITHIN
