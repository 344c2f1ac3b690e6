"""What the marketplace-seller set (tests/data/seller, written blind to the router) showed:

- an identifier typed in the other case from its example is still that identifier;
- "…了吗" asks whether something has happened ("订单 OR2611226604 发出去了吗？": has it
  shipped?): a question, which a tool that writes (the buyer-message sender) does not
  answer; unless it asks for the thing to be done ("能直接帮我批了吗").

"帮我把 ls-0049955 售价改为199" names listing LS-0049955, whose parameter has no pattern,
only "例如 LS-0048213": the example's shape had been matched case for case, so the price
tool found no listing in the request, lost confidence as a tool the request names no
identifier of, and the stock tool took "ls-0049955" as its SKU.
"""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent, vocabulary
from gateway.routing.extract import ArgumentExtractor
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("seller")
LISTING = {
    "type": "object",
    "properties": {"listing_id": {"type": "string", "description": "商品编号，例如 LS-0048213"}},
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("帮我把 ls-0049955 售价改为199", {"listing_id": "LS-0049955"}),
        ("details of Ls-0049955", {"listing_id": "LS-0049955"}),
        ("details of LS-0049955", {"listing_id": "LS-0049955"}),
        ("details of ls-00499", {}),  # not the example's shape in any case
        ("details of my listing", {}),
    ],
)
def test_an_identifier_typed_in_the_other_case_takes_its_examples_case(
    query: str, expected: dict[str, str]
) -> None:
    assert ArgumentExtractor().extract(query, LISTING).arguments == expected


def test_a_lower_case_example_gives_lower_case() -> None:
    schema = {
        "type": "object",
        "properties": {"ref": {"type": "string", "description": "e.g. inv-20931"}},
    }
    assert ArgumentExtractor().extract("open INV-55120", schema).arguments == {"ref": "inv-55120"}


@pytest.mark.parametrize(
    ("query", "tool_id", "arguments"),
    [
        # a listing typed in lower case, for the price tool
        (
            "帮我把 ls-0049955 售价改为199",
            "update_listing_price",
            {"listing_id": "LS-0049955", "new_price": 199},
        ),
        # whether an order has shipped, of the status lookup, not the buyer-message sender
        ("订单 OR2611226604 发出去了吗？", "get_order_status", {"order_id": "OR2611226604"}),
    ],
)
async def test_the_requests_reach_their_tools(
    gateway: httpx.AsyncClient, query: str, tool_id: str, arguments: dict[str, object]
) -> None:
    response = await dry_run(gateway, query, "seller")
    body = response.json()
    assert body.get("tool_id") == tool_id, response.text
    assert body["arguments"] == arguments


@pytest.mark.parametrize(
    ("query", "question"),
    [
        ("订单 OR2611226604 发出去了吗？", True),
        ("PR-2024-0831 批了吗", True),
        ("能直接帮我批了吗，急用", False),
        ("麻烦把 OR2611226604 取消了吗", False),
    ],
)
def test_has_it_happened_is_a_question(query: str, question: bool) -> None:
    assert intent.asks_to_read(query) is question


STOCK = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "description": "Your seller SKU."},
        "quantity": {"type": "integer", "minimum": 0, "description": "Number of units."},
    },
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("把 SKU 10045-RED 的库存改成 15", {"sku": "10045-RED", "quantity": 15}),
        ("set 10045-RED to 15 units", {"sku": "10045-RED", "quantity": 15}),
        ("add 30 units of TSHIRT-BLK-L", {"sku": "TSHIRT-BLK-L", "quantity": 30}),
    ],
)
def test_a_codes_number_is_no_count(query: str, expected: dict[str, object]) -> None:
    """The 10045 of "10045-RED" had been read as 10,045 units."""
    assert ArgumentExtractor().extract(query, STOCK).arguments == expected


async def test_ending_a_coupon_is_not_creating_one(gateway: httpx.AsyncClient) -> None:
    """Ending a coupon ("end coupon …") cancels it: the coupon maker, whose description
    says coupons "cannot be … ended from here", is not given it."""
    query = "end coupon WELCOME5 early, people are sharing it on deal sites"
    response = await dry_run(gateway, query, "seller")
    assert response.json().get("tool_id") != "create_coupon", response.text


def test_setting_up_a_coupon_makes_one_and_offers_no_change() -> None:
    """A description that "Sets up a new … code" creates, and one that says coupons
    "cannot be edited" too disclaims changing them."""
    maker = {
        "tool_id": "create_coupon",
        "description": "Sets up a new store-wide discount code. Existing coupons cannot be "
        "edited or ended from here.",
    }
    assert vocabulary.disclaimed_actions(maker) == {"update"}


async def test_changing_a_coupon_is_not_given_to_the_coupon_maker(
    gateway: httpx.AsyncClient,
) -> None:
    response = await dry_run(gateway, "优惠券 XMAS15 改成打八折", "seller")
    assert response.json().get("tool_id") != "create_coupon", response.text


@pytest.mark.parametrize(
    "query",
    [
        "给订单 OR2611279310 的买家发个消息，说周一统一发货",
        "回复 OR2611226604 的买家：已经补发了，请注意查收",
        "Can you reply to the buyer of OR2611150392 and let them know the label is in the box",
    ],
)
async def test_a_message_or_a_reply_to_a_buyer_is_sent_by_the_message_tool(
    gateway: httpx.AsyncClient, query: str
) -> None:
    # 发个消息, 回复 and "reply" are sending: the order canceller (described in Chinese)
    # and the label maker took them before, by the order number alone
    response = await dry_run(gateway, query, "u1")
    assert response.json().get("tool_id") == "reply_buyer_message", response.text
    assert vocabulary.requested_actions(query) == {"notify"}
