"""Requests asking for what no tool offers: an action none of a tool's own words name
("cancel order SO…" of an order lookup), or an object the tool does not take ("给 SO… 退款"
of a document search); and long quoted passages, which are payloads, not the request."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from gateway.routing import vocabulary
from gateway.routing.choose import choose, identifier_values, takes_none_of
from gateway.routing.extract import ArgumentExtractor
from gateway.routing.index import Candidate
from gateway.routing.text import instruction
from tests.gateway.conftest import shipped

SHIPPED = ["order_query", "order_create", "rag_delete_source", "rag_ingest", "rag_retrieve"]
STAFF: dict[str, Any] = {
    "user_id": "staff_unoffered",
    "roles": ["admin", "ops_admin", "kb_admin", "finance", "order_manager"],
}


# -- the request's actions and the tool's ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "actions"),
    [
        ("cancel order SO20261130004", {"cancel"}),
        ("can you delete faq.md", {"delete"}),
        ("I want to update the price of SKU2024003", {"update"}),
        ("Save the following as notes.md", {"store"}),
        ("取消订单 SO20261130005", {"cancel"}),
        ("作废发票 INV-2026-00042", {"cancel"}),
        ("把 SKU2024002 的价格改成 199", {"update"}),
        # Setting a new thing up makes it; setting a thing's value changes it.
        ("Please set a wakeup for 2702 at 06:00", {"create"}),
        ("set up a 30 min demo with jane@acme.io", {"create"}),
        ("set the price of LS-0048213 to 24.50", {"update"}),
        # Merging two records, leaving a mailing list, writing a document out.
        ("merge ACC-10234 and ACC-10877, same company", {"merge"}),
        ("把我们两个工作区合并成一个", {"merge"}),
        ("unsubscribe jane@acme.io from all our marketing emails", {"unsubscribe"}),
        ("export November's invoices to Excel", {"export"}),
        ("把所有项目数据导出一份给我", {"export"}),
        # Ending or terminating a thing cancels it.
        ("end coupon WELCOME5 early, people are sharing it", {"cancel"}),
        ("I'm done with my locker, please end the rental", {"cancel"}),
        ("terminate my policy AU-8840271 on 2025-12-31", {"cancel"}),
        ("cancel at the end of the month", {"cancel"}),
        # A phrasal verb is read whole: firing off a send sends, signing up enrols.
        ("Can you fire off a test send of CMP-2327?", {"notify"}),
        ("sign me up for the Friday yoga class", {"create"}),
        ("sign my daughter up for swim lessons", {"create"}),
        ("fire the contractor from the project", {"dismiss"}),
        # Not imperatives: a noun, a possessive, a past participle, a verb mid-clause.
        ("what's the change in sales this week", set()),
        ("give me the whole store's numbers for 2026-06", set()),
        ("was order SO20261130004 cancelled?", set()),
        ("who sets up a new hire's email account?", set()),
        ("where is order SO20261130004", set()),
    ],
)
def test_requested_actions_are_imperative_verbs_or_chinese_action_words(
    text: str, actions: set[str]
) -> None:
    assert vocabulary.requested_actions(text) == actions


def test_a_tool_offers_the_actions_its_own_words_name_in_any_form_or_language() -> None:
    offered = {t: vocabulary.offered_actions(shipped(t)) for t in SHIPPED}
    assert offered["order_query"] == frozenset()  # a lookup: no write action at all
    # "it cannot change or cancel orders" aside:
    assert offered["order_create"] == frozenset({"create"})
    assert "delete" in (offered["rag_delete_source"] or ())  # "Deletes", "forget document"
    assert {"create", "store", "update"} <= (offered["rag_ingest"] or frozenset())
    # A manifest that does not describe its requests does not list its verbs either.
    assert vocabulary.offered_actions({"tool_id": "t", "description": "Shows orders."}) is None


def test_the_gap_is_an_action_asked_that_the_tool_offers_none_of() -> None:
    assert vocabulary.action_gap(frozenset({"cancel"}), frozenset()) == vocabulary.ACTION_PENALTY
    assert vocabulary.action_gap(frozenset({"refund", "update"}), frozenset({"update"})) == 0.0
    assert vocabulary.action_gap(frozenset(), frozenset()) == 0.0
    assert vocabulary.action_gap(frozenset({"cancel"}), None) == 0.0


# -- identifiers of a type another tool takes ------------------------------------------


def test_only_values_of_a_declared_shape_are_identifiers_of_a_type() -> None:
    extractor = ArgumentExtractor()
    schemas = {t: shipped(t)["input_schema"] for t in SHIPPED}
    text = "给 SO20261125001 退款"
    assert identifier_values(extractor, text, schemas["order_query"]) == {"SO20261125001"}
    # rag_ingest's source says "e.g. auth-v2.md": a file name read for it is no typed id.
    assert identifier_values(extractor, "在 faq.md 里找一下发票", schemas["rag_ingest"]) == set()
    ids = {"SO20261125001"}
    assert takes_none_of(extractor, text, schemas["rag_retrieve"], ids)
    assert not takes_none_of(extractor, text, schemas["order_query"], ids)
    assert not takes_none_of(extractor, text, schemas["rag_retrieve"], set())


def test_a_plain_word_a_loose_pattern_takes_is_no_identifier_of_a_type() -> None:
    # A service name pattern takes any lowercase word: "qa" is as much a team as a
    # service, and must not count against a roster tool that takes no service.
    service = {"type": "string", "pattern": "^[a-z][a-z0-9-]{1,40}$"}
    schema = {"type": "object", "properties": {"service": service}, "required": ["service"]}
    extractor = ArgumentExtractor()
    assert identifier_values(extractor, "qa 组明天谁值班", schema) == set()
    assert identifier_values(extractor, "qa 组的 mailer-api 挂了吗", schema) == {"mailer-api"}
    currency = {"type": "string", "pattern": "^[A-Z]{3}$"}
    schema = {"type": "object", "properties": {"currency": currency}, "required": ["currency"]}
    assert identifier_values(extractor, "rates for USD today", schema) == {"USD"}


# -- the choice ------------------------------------------------------------------------


def candidate(tool_id: str, score: float, confidence: float) -> Candidate:
    return Candidate(tool_id, score, dense=0.0, lexical=0.0, confidence=confidence)


def test_a_drop_can_reject_the_best_candidate() -> None:
    candidates = [candidate("order_query", 1.0, 0.5), candidate("order_create", 0.9, 0.2)]
    chosen = choose(candidates, threshold=0.3, fits=lambda _: False, drop=lambda _: 0.35)
    assert chosen.candidate is None
    assert "do not offer" in chosen.why


def test_an_unconfident_best_gives_way_to_a_confident_other_candidate() -> None:
    candidates = [candidate("order_query", 1.0, 0.18), candidate("rag_retrieve", 0.8, 0.33)]
    chosen = choose(candidates, threshold=0.3, fits=lambda _: False)
    assert chosen.candidate is not None
    assert chosen.candidate.tool_id == "rag_retrieve"
    assert "surer" in chosen.why
    # ... unless it too asks what that tool does not offer.
    dropped = choose(
        candidates, threshold=0.3, fits=lambda _: False, drop=lambda t: 0.35 * (t != "x")
    )
    assert dropped.candidate is None


def test_long_quoted_passages_do_not_decide_the_tool() -> None:
    assert instruction("把“订单已发货”翻译成英文") == "把 翻译成英文"
    assert instruction("translate 'the parcel is delayed' into Spanish") == "translate into Spanish"
    # Short quotes (a name, a file) stay; so does a request that is all quote.
    assert instruction('delete "faq.md" please') == 'delete "faq.md" please'
    assert instruction("'the parcel is delayed'") == "'the parcel is delayed'"


# -- through POST /run -----------------------------------------------------------------


async def dry_run(gateway: httpx.AsyncClient, query: str) -> httpx.Response:
    body = {"user_query": query, "user_context": STAFF, "dry_run": True}
    return await gateway.post("/run", json=body)


@pytest.mark.parametrize(
    "query",
    [
        "cancel order SO20261130004",
        "取消订单 SO20261130005",
        "update the price of SKU2024003 to 129 yuan",
        "把 SKU2024002 的价格改成 199",
        # Went to the stock and order lookups before "restock" and "mark" were orders.
        "restock SKU2024555 with 200 units",
        "mark SO20250215033 as delivered",
        "给 SO20261125001 退款",
        "set a reminder to call the supplier at 3pm",
        "merge orders SO20261130004 and SO20261130005",
        "把订单 SO20261130004 和 SO20261130005 合并",
        "export all orders of November to Excel",
    ],
)
async def test_requests_for_what_no_tool_offers_are_rejected(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query)
    assert response.status_code == 404, response.text
    assert response.json()["reason"] == "no_matching_tool"


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("where is order SO20261130001?", "order_query"),
        ("查一下订单 SO20261126004", "order_query"),
        ("How many SKU2024003 are left?", "inventory_query"),
        ("delete pricing-2025.md from the knowledge base", "rag_delete_source"),
        ("更新知识库里的 pricing.md，内容如下：SKU2024001 单价 99 元", "rag_ingest"),
    ],
)
async def test_requests_a_tool_offers_still_reach_it(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    response = await dry_run(gateway, query)
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == tool_id


async def test_a_cached_lookup_is_not_served_for_an_action_it_does_not_offer(
    gateway: httpx.AsyncClient,
) -> None:
    first = await dry_run(gateway, "查一下订单 SO20261126004 的状态")
    assert first.json()["tool_id"] == "order_query"
    again = await dry_run(gateway, "查一下订单 SO20261126009 的状态")
    assert again.json()["route"]["route_hint"] == "route_cache"
    response = await dry_run(gateway, "取消订单 SO20261126004")
    assert response.status_code == 404, response.text
