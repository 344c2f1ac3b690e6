"""A change request that names what it changes ("change the title of LS-…", "把 LS-… 的
主图换成…") is not given to a tool whose own words never name it: the listing is the same
object, but a price update cannot change a title (``vocabulary.attribute_gap``)."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.vocabulary import changed_attribute
from tests.gateway.routing.conftest import dry_run, manifest

LISTING = {"type": "string", "pattern": "^LS-\\d{7}$", "description": "listing, e.g. LS-0048213"}
CATALOGUE = [
    manifest(
        "listing_price_update",
        "PATCH",
        "Change the selling price of one of your product listings.",
        {"listing_id": LISTING, "price": {"type": "number", "minimum": 0}},
    ),
    manifest(
        "listing_stock_update",
        "PATCH",
        "Set how many units of a listing are in stock.",
        {"listing_id": LISTING, "quantity": {"type": "integer", "minimum": 0}},
    ),
    manifest(
        "payout_history",
        "GET",
        "List the payouts made to your bank account.",
        {"month": {"type": "string", "pattern": "^\\d{4}-\\d{2}$"}},
        [],
    ),
]


@pytest.mark.parametrize(
    "query",
    [
        "change the title of LS-0048213 to 'Handmade Blue Mug 12oz'",
        "把 LS-0048213 的主图换成新拍的那张",
        "raise the daily ad budget on LS-0048213 to $50",
    ],
)
async def test_a_change_no_tool_names_is_refused(gateway: httpx.AsyncClient, query: str) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 404, response.text
    assert response.json()["reason"] == "no_matching_tool"


@pytest.mark.parametrize(
    ("query", "tool_id", "arguments"),
    [
        ("change the price of LS-0048213 to 24.50", "listing_price_update", {"price": 24.5}),
        ("把 LS-0048213 的价格改成 19.9", "listing_price_update", {"price": 19.9}),
        ("把 LS-0048213 的库存改成 15", "listing_stock_update", {"quantity": 15}),
    ],
)
async def test_a_change_the_tool_names_still_reaches_it(
    gateway: httpx.AsyncClient, query: str, tool_id: str, arguments: dict[str, float]
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == tool_id
    assert arguments.items() <= response.json()["arguments"].items()


def test_what_a_change_request_changes() -> None:
    assert changed_attribute("raise the daily budget on AD-30917 to $50") == ("daily", "budget")
    assert changed_attribute("change bob's login email from a@x.io to b@x.io") == (
        "login",
        "email",
    )
    assert changed_attribute("increase user-profile replicas to 4") == ("replicas",)
    assert changed_attribute("OR2611226604 的收货地址改成上海市浦东新区") == ("收货地址",)
    # Nothing named: "it", or no change at all.
    assert changed_attribute("change it to tomorrow") == ()
    assert changed_attribute("what is the price of LS-0048213") == ()
    # Not an order to change something: a noun, a verb of another clause, "set up".
    assert changed_attribute("research on climate change and its effects on ecosystems") == ()
    assert changed_attribute("give me a comprehensive update on current happenings in UK") == ()
    assert changed_attribute("songs that will set the perfect ambiance for the evening") == ()
    assert changed_attribute("how do I set up regional targeting for my ads?") == ()
    assert changed_attribute("buyer moved - change the shipping address on OR2611045821") == (
        "shipping",
        "address",
    )
