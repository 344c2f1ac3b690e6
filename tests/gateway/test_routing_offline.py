"""Offline routing: example vectors, coverage for text the embedder cannot read, routing on
the instruction, and the nudges of the offline choice (identifiers, the session's tool)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.routing.choose import FOLLOW_BONUS, choose, identifier_parameters
from gateway.routing.index import Candidate, ToolIndex, example_texts
from gateway.routing.lexical import BM25Index
from gateway.routing.text import instruction, positive_description
from reach_common.embeddings import Embedder, VectorCache

REPO = Path(__file__).resolve().parents[2]


def tool(tool_id: str, description: str, **extra: Any) -> dict[str, Any]:
    schema = extra.pop("input_schema", {"type": "object", "properties": {}})
    return {"tool_id": tool_id, "description": description, "input_schema": schema, **extra}


def shipped() -> list[dict[str, Any]]:
    manifests = [json.loads(p.read_text("utf-8")) for p in (REPO / "manifests").glob("*.json")]
    return [m for m in manifests if "tool_id" in m]


@pytest.fixture(scope="module")
def shipped_index(embedder: Embedder) -> ToolIndex:
    return ToolIndex(shipped(), VectorCache(embedder))


def top(index: ToolIndex, embedder: Embedder, query: str) -> Candidate:
    from gateway.routing.cache import abstract

    vector, shape = embedder.embed([query, abstract(query)])
    return index.search(query, vector, shape_vector=shape, k=1)[0]


# -- the text a request is routed by ------------------------------------------------------


def test_a_payload_after_a_colon_does_not_decide_the_tool() -> None:
    payload = "add this to the knowledge base as faq.md: How do refunds work? Within 30 days."
    assert instruction(payload) == "add this to the knowledge base as faq.md"
    chinese = "把这段内容存进知识库，名字叫 faq.md：七天无理由退货，拆封商品不退。"
    assert instruction(chinese) == "把这段内容存进知识库，名字叫 faq.md"
    # A short tail is part of the request, not a payload.
    for query in ("create an order: Ada, SKU2024001, 2 units", "quick one: SKU2024006 stock"):
        assert instruction(query) == query
    assert instruction("no colon here at all") == "no colon here at all"
    # A label before the colon says nothing of what to do: the request is what follows.
    for query in (
        "Turn 185: how much stock does SKU2024003 have left?",
        "Q2: which orders did Ada place last month and what did they cost?",
        # nor does a greeting or a heads-up (it routed on "Hey, quick one" alone)
        "Hey, quick one: is ACC-21330 billed monthly or annually?",
        "Quick question for the team: what is the stock of SKU2024001 right now please",
    ):
        assert instruction(query) == query


def test_what_a_tool_cannot_do_is_not_what_it_is_found_by() -> None:
    text = "Places a new order. Not for stock (use inventory_query); it cannot cancel orders."
    assert positive_description(text) == "Places a new order."
    # Without its subject too: "close incident INC-…" went to the tool that cannot close.
    terse = "Declares a new incident. Cannot update or close incidents. Doesn't page anyone."
    assert positive_description(terse) == "Declares a new incident."


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # A Chinese sentence or clause about what the tool will not do ("不会删除…" named
        # delete, and "delete the lead" went to the subscription canceller).
        (
            "为客户取消订阅，并记录原因。不会删除客户账户和数据；退款请另外处理，也不能用来升级套餐。",
            "为客户取消订阅，并记录原因。退款请另外处理，",
        ),
        ("只读，不会新建、修改或取消会议。", "只读，"),
    ],
)
def test_what_a_tool_will_not_do_in_chinese_is_not_what_it_is_found_by(
    text: str, kept: str
) -> None:
    assert positive_description(text) == kept


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "Rolls a build out. Use it for a new version; to go back to an older one use "
            "release_revert. Canary optional.",
            "Rolls a build out. Use it for a new version; Canary optional.",
        ),
        ("重启服务的全部实例；要上新版本请走发布。", "重启服务的全部实例；"),
        # A clause anywhere that names the other tool to use, or the one that does it.
        (
            "Finds appointments by number. Changes nothing: use appointment_cancel to "
            "cancel and appointment_reschedule to move.",
            "Finds appointments by number.",
        ),
        (
            "Lists loans with due dates. Look-up only; renewing is library_renew.",
            "Lists loans with due dates. Look-up only;",
        ),
        (
            "Cancels a booking. This does not move it (that is booking_move) and does not refund.",
            "Cancels a booking.",
        ),
        # A parameter named mid-sentence is no redirect.
        ("Looks up orders. Use order_id from order_create.", None),
        ("Cancels a booking. The guest is told unless notify_guest is false.", None),
        # A kept sentence up to where it turns to what the tool does not do.
        (
            "Returns a student's marks for a term. This is not an official transcript and "
            "it cannot change or appeal a grade.",
            "Returns a student's marks for a term. This",
        ),
    ],
)
def test_a_clause_that_sends_requests_elsewhere_is_not_what_a_tool_is_found_by(
    text: str, kept: str | None
) -> None:
    assert positive_description(text) == (kept or text)


def test_examples_and_aliases_become_abstracted_vectors_of_their_own() -> None:
    manifest = tool(
        "stock",
        "Stock of one product.",
        aliases=["in stock"],
        examples=["Is SKU2024005 in stock?", "Is SKU2024006 in stock?"],
    )
    # Two examples that differ only in their value are one vector.
    assert example_texts(manifest) == ["in stock", "is <id:sku> in stock"]


# -- coverage: the confidence for text the embedder cannot read ----------------------------


def test_coverage_is_the_idf_weighted_share_of_the_query_a_document_holds() -> None:
    index = BM25Index(["订单物流 快递", "库存 还剩", "知识库 文档"])
    both = index.coverage("订单物流")
    assert both[0] == pytest.approx(1.0)
    assert both[1] == 0.0
    # 取消 (cancel) is in no document: the most informative word is unexplained.
    cancel = index.coverage("取消订单")
    assert 0.0 < cancel[0] < 0.5
    # Values are not words: digits change nothing.
    assert index.coverage("订单物流 2024")[0] == pytest.approx(1.0)


# -- the coarse stage over the shipped tools ----------------------------------------------


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("do we have enough SKU2024009 to ship 12 today?", "inventory_query"),
        ("SKU2024009 的销量这两周怎么样", "sales_query"),
        ("订单 SO20250101001 现在在哪", "order_query"),
        ("put this text in the knowledge base as pto.md: Staff get 20 days of leave a year.", None),
    ],
)
def test_shipped_tools_are_found_in_either_language(
    shipped_index: ToolIndex, embedder: Embedder, query: str, tool_id: str | None
) -> None:
    best = top(shipped_index, embedder, instruction(query))
    assert best.tool_id == (tool_id or "rag_ingest")
    assert best.confidence >= 0.3


@pytest.mark.parametrize("query", ["讲个笑话", "明年春节是几号", "what's the capital of Peru"])
def test_requests_no_shipped_tool_serves_stay_below_the_threshold(
    shipped_index: ToolIndex, embedder: Embedder, query: str
) -> None:
    assert top(shipped_index, embedder, query).confidence < 0.3


def test_without_examples_the_scores_are_the_description_ones(embedder: Embedder) -> None:
    plain = [tool("weather", "Weather forecast for a city."), tool("stock", "Stock prices.")]
    with_examples = [{**plain[0], "examples": ["will it rain in Oslo tomorrow"]}, plain[1]]
    vector = embedder.embed(["will it rain in Paris tomorrow"])[0]
    before = ToolIndex(plain, VectorCache(embedder)).search("rain", vector, k=2)
    after = ToolIndex(with_examples, VectorCache(embedder)).search("rain", vector, k=2)
    # The stock tool has no examples: its evidence is its description, unchanged.
    assert before[1].confidence == pytest.approx(after[1].confidence)
    # The weather tool's example is a near paraphrase: its evidence grows.
    assert after[0].tool_id == "weather"
    assert after[0].confidence > before[0].confidence


# -- the offline choice -------------------------------------------------------------------


def candidate(tool_id: str, score: float, confidence: float) -> Candidate:
    return Candidate(tool_id, score, dense=0.0, lexical=0.0, confidence=confidence)


def test_a_follow_up_stays_with_the_sessions_tool_unless_another_fits_clearly() -> None:
    candidates = [candidate("kb_list", 1.0, 0.36), candidate("report", 0.9, 0.28)]
    chosen = choose(candidates, threshold=0.3, fits=lambda _: False, last_tool="report")
    assert chosen.candidate is not None
    assert chosen.candidate.tool_id == "report"
    assert chosen.candidate.confidence == pytest.approx(0.38)
    assert "last tool" in chosen.why
    far = [candidate("kb_list", 1.0, 0.7), candidate("report", 1.0 - 2 * FOLLOW_BONUS, 0.3)]
    far_choice = choose(far, threshold=0.3, fits=lambda _: False, last_tool="report")
    assert far_choice.candidate is not None
    assert far_choice.candidate.tool_id == "kb_list"


def test_the_tool_whose_identifier_the_request_carries_wins_a_close_call() -> None:
    candidates = [candidate("order_create", 1.0, 0.45), candidate("order_query", 0.95, 0.42)]
    chosen = choose(candidates, threshold=0.3, fits=lambda t: t == "order_query")
    assert chosen.candidate is not None
    assert chosen.candidate.tool_id == "order_query"
    assert "required arguments" in chosen.why


def test_a_tie_goes_to_the_surer_candidate() -> None:
    """A Chinese request is searched as written and in its English reading; each reading
    can put a different tool first at 1.0. The tie is the surer one's, not the first
    listed: "会员卡号 M3948571 的积分余额" went to the points-award tool (first by its
    Chinese words) over the balance lookup (first in English, and surer)."""
    tied = [candidate("award_points", 1.0, 0.54), candidate("points_balance", 1.0, 0.65)]
    chosen = choose(tied, threshold=0.3, fits=lambda _: True)
    assert chosen.candidate is not None
    assert chosen.candidate.tool_id == "points_balance"
    # not a tie: the fused score still ranks
    apart = [candidate("award_points", 1.0, 0.54), candidate("points_balance", 0.99, 0.65)]
    assert choose(apart, threshold=0.3, fits=lambda _: True).candidate.tool_id == "award_points"  # type: ignore[union-attr]
    # an exact tie of equal confidence keeps the first
    even = [candidate("a", 1.0, 0.5), candidate("b", 1.0, 0.5)]
    assert choose(even, threshold=0.3, fits=lambda _: True).candidate.tool_id == "a"  # type: ignore[union-attr]


def test_a_follow_up_asking_what_the_last_tool_does_not_offer_leaves_it() -> None:
    """ "那帮我约一个下午的，病历号…" after "今天皮肤科谁在班": the schedule (the session's last
    tool) ranks first by the follow-up bonus, then falls below the threshold for what its
    words do not offer (booking). It is not taken back as "a new value for the session's
    last tool": the confident booking tool is."""
    candidates = [candidate("booking", 1.0, 0.81), candidate("schedule", 0.98, 0.33)]
    chosen = choose(
        candidates,
        threshold=0.3,
        fits=lambda _: False,
        last_tool="schedule",
        continues=lambda _: True,
        drop=lambda tool_id: 0.35 if tool_id == "schedule" else 0.0,
    )
    assert chosen.candidate is not None
    assert chosen.candidate.tool_id == "booking", chosen.why
    # With nothing asked that it does not offer, a new value still goes to the last tool.
    again = choose(
        [candidate("booking", 1.0, 0.2), candidate("schedule", 0.98, 0.1)],
        threshold=0.3,
        fits=lambda _: False,
        last_tool="schedule",
        continues=lambda _: True,
    )
    assert again.candidate is not None
    assert again.candidate.tool_id == "schedule"
    assert "session's last tool" in again.why


def test_the_threshold_applies_after_the_nudges() -> None:
    candidates = [candidate("a", 1.0, 0.08), candidate("b", 0.5, 0.1)]
    chosen = choose(candidates, threshold=0.3, fits=lambda _: True, last_tool="a")
    assert chosen.candidate is None
    assert chosen.best is not None
    assert chosen.best.tool_id == "a"
    assert choose([], threshold=0.3, fits=lambda _: True).candidate is None


def test_identifier_parameters_are_those_with_a_known_shape() -> None:
    schema = {
        "type": "object",
        "properties": {
            "sku": {"type": "string", "pattern": "^SKU\\d{7}$"},
            "order_id": {"type": "string", "description": "Order id, e.g. SO20240715001."},
            "customer": {"type": "string", "description": "Who it is for."},
            "quantity": {"type": "integer"},
        },
        "required": ["sku", "order_id", "customer", "quantity"],
    }
    assert identifier_parameters(schema) == ["sku", "order_id"]
    assert identifier_parameters({"type": "object", "properties": {}}) == []
