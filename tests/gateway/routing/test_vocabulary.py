"""What the catalogue's own words say about requests none of its tools serves
(``routing.vocabulary``): learned per-tool tolerance of unseen words, and words the
manifests disclaim."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.routing import intent, vocabulary
from gateway.routing.cache import abstract
from gateway.routing.index import ToolIndex
from gateway.routing.lexical import BM25Index
from gateway.routing.text import tokenize
from reach_common.embeddings import Embedder, VectorCache
from tests.gateway.conftest import shipped

SHIPPED = [
    "inventory_query",
    "order_create",
    "order_query",
    "rag_delete_source",
    "rag_ingest",
    "rag_list_sources",
    "rag_retrieve",
    "rag_status",
    "report_monthly",
    "sales_query",
]
THRESHOLD = 0.3


def tool(tool_id: str, description: str, examples: list[str] | None = None) -> dict[str, Any]:
    return {"tool_id": tool_id, "description": description, "examples": examples or []}


def test_only_redirect_free_cannot_sentences_disclaim_words_no_tool_has() -> None:
    manifests = [
        tool("order_lookup", "Shows one order. It cannot cancel or refund orders."),
        tool("stock", "Stock of one product. Not for sales (use sales). It cannot forecast sales."),
        tool("docs", "Searches documents; not for live data such as prices."),
    ]
    bm25 = BM25Index(["order lookup shows one order", "stock of one product", "docs search"])
    # "order" is in a tool's text; "sales" comes with a redirect elsewhere in its tool
    # but "It cannot forecast sales." has none: its words count only if no tool has them.
    assert vocabulary.disclaimed(bm25, manifests) == {"cancel", "refund", "forecast", "sale"}
    # "not for live data such as prices" names a use (often another tool's), not an action.
    assert "data" not in vocabulary.disclaimed(bm25, manifests)


def test_a_manifest_cannot_disclaim_what_another_tool_covers() -> None:
    """A hostile or careless manifest ("It cannot check stock or track orders") must not
    suppress requests another tool's text answers: only words no tool has count."""
    manifests = [tool("noisy", "Does little. It cannot check stock, track orders or fly.")]
    bm25 = BM25Index(["stock check of one product", "track orders by id", "does little"])
    assert vocabulary.disclaimed(bm25, manifests) == {"fli"}


def test_tolerance_is_learned_leave_one_out_from_the_tools_own_examples() -> None:
    examples = ["stock of SKU2024001", "is SKU2024002 in stock", "stock on hand for SKU2024003"]
    manifest = tool("stock", "Stock of one product.", examples)
    document = " ".join([manifest["description"], *examples])
    bm25 = BM25Index([document, "orders by id"])
    # Two examples say only "stock" (and values): nothing unseen. The third alone says
    # "hand": without it the catalogue has never seen that word.
    expected = vocabulary.unseen_share(bm25, tokenize("stock on hand"), lambda t: t != "hand")
    assert expected > 0
    assert vocabulary.tolerance(bm25, 0, manifest) == pytest.approx(expected)
    # Too few examples to learn from: no tolerance, and so no penalty.
    assert vocabulary.tolerance(bm25, 0, {**manifest, "examples": examples[:2]}) is None
    assert vocabulary.penalty(["hand"], 1.0, None, frozenset()) == 0.0


@pytest.fixture(scope="module")
def shipped_index(embedder: Embedder) -> ToolIndex:
    return ToolIndex([shipped(t) for t in SHIPPED], VectorCache(embedder))


def top(index: ToolIndex, embedder: Embedder, query: str) -> tuple[str, float]:
    """The best candidate as the router searches: the query's vector and its shape's."""
    vector, shape = embedder.embed([query, abstract(query)])
    best = index.search(query, vector, k=1, shape_vector=shape)[0]
    return best.tool_id, best.confidence


@pytest.mark.parametrize(
    "query",
    [
        "cancel order SO20261130004",  # order_create: "it cannot change or cancel orders"
        "change the quantity on SO20261129002 to 5",
        "issue a refund for SO20261120007",  # beyond order_query's learned tolerance
        "translate 'the parcel is delayed' into Spanish",
    ],
)
def test_near_domain_requests_no_tool_serves_fall_below_the_threshold(
    shipped_index: ToolIndex, embedder: Embedder, query: str
) -> None:
    assert top(shipped_index, embedder, query)[1] < THRESHOLD


@pytest.mark.parametrize(
    ("query", "gold"),
    [
        ("where is order SO20261130004", "order_query"),
        ("has SO20261130001 shipped yet?", "order_query"),
        ("find the part of the security docs about rotating passwords", "rag_retrieve"),
        ("order 5 of SKU2024006 for Green Leaf Cafe", "order_create"),
    ],
)
def test_requests_a_tool_serves_keep_their_confidence(
    shipped_index: ToolIndex, embedder: Embedder, query: str, gold: str
) -> None:
    tool_id, confidence = top(shipped_index, embedder, query)
    assert tool_id == gold
    assert confidence >= THRESHOLD


def test_tools_without_examples_or_disclaimers_are_scored_as_before(embedder: Embedder) -> None:
    """MetaTool- and BFCL-like tools (a description, no examples): nothing is learned,
    so every confidence is the plain one (``ToolIndex.confidence``)."""
    manifests = [
        tool("weather_now", "Current weather for a city."),
        tool("currency_rates", "Exchange rate between two currencies."),
    ]
    index = ToolIndex(manifests, VectorCache(embedder))
    query = "what's the weather and the exchange rate in Paris today"
    assert index._unsupported(query, 0.0)("weather_now") == 0.0
    assert index._unsupported(query, 0.0)("currency_rates") == 0.0


def test_an_imperative_after_please_after_a_comma_is_read() -> None:
    """The word after a comma was taken whole, so "please" hid the verb after it."""
    asked = "my points from the february rental expired, please reinstate them"
    assert "reinstate" in vocabulary.imperatives(asked)
    assert vocabulary.requested_actions(asked) == {"restore"}
    assert vocabulary.requested_actions("ok, please cancel it") == {"cancel"}


def test_how_to_asks_how_not_for_the_action() -> None:
    """ "how to restart" asked the docs search to restart something, which no search
    offers: the right tool lost 0.35 of its confidence (tests/data/shipped_requests)."""
    assert not vocabulary.requested_actions("search the docs for how to restart the service")
    assert not vocabulary.requested_actions("where to upload a file like this?")
    assert vocabulary.requested_actions("I want to cancel, please") == {"cancel"}


def test_a_verb_with_a_hyphenated_re_is_read_whole() -> None:
    """ "re-send" was read as "re": the courier's code resend lost its request to the
    shipment tracker (tests/data/courier)."""
    asked = "Please re-send the pickup code for CX9191919191 to my e-mail address."
    assert vocabulary.requested_actions(asked) == {"notify"}
    assert intent.order_verb(asked) == "resend"
    assert intent.order_verb("Re-open ticket INC0012345") == "reopen"
    assert not vocabulary.requested_actions("the e-mail address is wrong")


def test_reinstating_and_pausing_are_actions_a_tool_can_disclaim() -> None:
    canceller = {
        "tool_id": "cancel_policy",
        "description": "Cancels a policy. It cannot reinstate a policy or pause coverage.",
    }
    assert {"restore", "pause"} <= vocabulary.disclaimed_actions(canceller)
    assert vocabulary.requested_actions("Can you reinstate AU-1029384?") == {"restore"}
    assert vocabulary.requested_actions("暂停我的保单一个月") == {"pause"}


@pytest.mark.parametrize(
    ("query", "actions"),
    [
        # a value moved to another in the same clause is changed (found by the real-estate
        # and FinOps sets): no deletion, no new ticket raised
        ("Drop the asking price on my listing LST-118204 to £475,000", {"update", "scale"}),
        ("Raise my offer OF2612088 to £360,000", {"update", "scale"}),
        ("cut the monthly budget for team data to $4000", {"update", "scale"}),
        # with no new value, the verbs keep their own sense
        ("drop my booking BK-1", {"cancel", "withdraw", "delete"}),
        ("raise a ticket for the printer", {"create"}),
    ],
)
def test_a_value_dropped_or_raised_to_another_is_changed(query: str, actions: set[str]) -> None:
    assert vocabulary.requested_actions(query) == actions


@pytest.mark.parametrize(
    ("query", "actions"),
    [
        # what is no longer wanted is to be cancelled (found by the grocery set)
        ("i dont want tomorrows groceries anymore. order GR-145530", {"cancel"}),
        ("we've bought somewhere else so won't need the viewing vw-38001 any more", {"cancel"}),
        ("I no longer need those days off, my trip got postponed", {"cancel"}),
        # not without "anymore": a wish about the action asked for
        ("I don't want to pay twice this month", {"pay"}),
        ("my card's barcode wont scan anymore", set()),
    ],
)
def test_what_is_no_longer_wanted_is_cancelled(query: str, actions: set[str]) -> None:
    assert vocabulary.requested_actions(query) == actions


@pytest.mark.parametrize(
    ("query", "actions"),
    [
        # something added into a place is added, whatever the text it quotes asks (the
        # shipped set: a document whose words hold a question is still ingested)
        (
            "帮我把这份客服话术加到知识库里，文档名 cs-script.md：您好，请问有什么可以帮您？",
            {"create"},
        ),
        ("把这个地址加进常用地址中", {"create"}),
        # a value raised to another is no addition
        ("把报价 OF2600001 加到 30 万英镑", set()),
    ],
)
def test_what_is_added_into_a_place_is_added(query: str, actions: set[str]) -> None:
    assert vocabulary.requested_actions(query) == actions
