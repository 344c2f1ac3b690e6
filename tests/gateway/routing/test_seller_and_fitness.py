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

from gateway.routing import intent
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


async def test_a_price_change_for_a_listing_typed_in_lower_case_reaches_the_price_tool(
    gateway: httpx.AsyncClient,
) -> None:
    response = await dry_run(gateway, "帮我把 ls-0049955 售价改为199", "seller")
    body = response.json()
    assert body.get("tool_id") == "update_listing_price", response.text
    assert body["arguments"] == {"listing_id": "LS-0049955", "new_price": 199}


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


async def test_whether_an_order_has_shipped_is_asked_of_the_status_lookup(
    gateway: httpx.AsyncClient,
) -> None:
    response = await dry_run(gateway, "订单 OR2611226604 发出去了吗？", "seller")
    body = response.json()
    assert body.get("tool_id") == "get_order_status", response.text
    assert body["arguments"] == {"order_id": "OR2611226604"}
