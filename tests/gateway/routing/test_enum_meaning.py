"""An enum option the request means in other words (``routing/options.py``): chosen when
it is clearly the closest, left for the caller to give when no option is."""

from __future__ import annotations

from typing import Any

import httpx
import numpy as np
import pytest

from gateway.routing.extract import Extraction
from gateway.routing.options import MIN_MARGIN, best_option, choose_options, open_choices
from tests.gateway.routing.conftest import dry_run, manifest

PHONE = {"type": "string", "description": "手机号码，例如 0412345678"}
CATALOGUE = [
    manifest(
        "sim_suspend",
        "POST",
        "暂停一张手机卡的服务，号码停机后不能打电话和上网。",
        {"number": PHONE, "reason": {"type": "string", "enum": ["丢失", "被盗", "临时停机"]}},
        name="停机",
    ),
    manifest(
        "outage_lookup",
        "GET",
        "Look up current and planned service interruptions in a street.",
        {
            "street": {"type": "string", "description": "street name, e.g. Elm Street"},
            "service": {"type": "string", "enum": ["electricity", "water", "gas", "broadband"]},
        },
        required=["street"],
    ),
    manifest(
        "order_cancel",
        "POST",
        "Cancel a customer order before it ships; the customer is refunded in full.",
        {
            "order_id": {"type": "string", "description": "order number, e.g. OR2611045821"},
            "reason": {
                "type": "string",
                "enum": ["out_of_stock", "customer_request", "address_unreachable", "wrong_price"],
            },
        },
    ),
]


@pytest.mark.parametrize(
    ("query", "tool_id", "expected"),
    [
        ("0412888999 这张卡被人偷了，马上停机", "sim_suspend", {"reason": "被盗"}),
        (
            "the taps are dry in Elm Street, any works planned?",
            "outage_lookup",
            {"service": "water"},
        ),
        (
            "cancel OR2611045821, the courier cannot reach that island",
            "order_cancel",
            {"reason": "address_unreachable"},
        ),
    ],
)
async def test_an_option_said_in_other_words_is_chosen(
    gateway: httpx.AsyncClient, query: str, tool_id: str, expected: dict[str, str]
) -> None:
    # No word of these requests is an option's: the rules leave the parameter empty.
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_id"] == tool_id
    assert expected.items() <= body["arguments"].items()
    assert "closest to the request's meaning" in body["route"]["why"]


@pytest.mark.parametrize(
    "query",
    [
        # "customer_request" restates what the tool does (cancel): it is near every
        # request for the tool, and is not chosen for a request that gives no reason.
        "please cancel order OR2611045821",
        # "wrong_price" leads, but not by enough for a tool that acts on it.
        "cancel OR2611045821, listed it at 5 dollars instead of 50",
    ],
)
async def test_a_tool_that_acts_asks_unless_one_option_clearly_leads(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 422, response.text
    assert response.json()["reason"] == "invalid_arguments"
    assert "'reason'" in response.json()["message"]


def test_only_a_clear_best_is_taken() -> None:
    assert best_option([0.40, 0.40 - MIN_MARGIN - 0.01, 0.1]) == 0
    assert best_option([0.40, 0.40 - MIN_MARGIN + 0.01]) is None  # two near each other
    assert best_option([0.05, -0.5]) is None  # far ahead but close to nothing


def test_only_short_lists_of_words_are_read() -> None:
    schema: dict[str, Any] = {
        "properties": {
            "given": {"enum": ["a", "b"]},
            "numbers": {"enum": [1, 2, 3]},
            "one": {"enum": ["only"]},
            "catalogue": {"enum": [f"item {n}" for n in range(200)]},
            "blank": {"enum": ["", "x"]},
            "open": {"enum": ["fast_track", "standard"]},
            "broken": "not a schema",
        }
    }
    choices = open_choices(schema, Extraction(arguments={"given": "a"}))
    assert choices == {"open": ["fast track", "standard"]}


def test_nothing_is_embedded_for_a_tool_without_open_choices() -> None:
    def refuse(_: object) -> np.ndarray:
        raise AssertionError("no model run expected")

    extraction = Extraction(arguments={"reason": "lost"})
    schema = {"properties": {"reason": {"enum": ["lost", "stolen"]}}}
    choose_options(extraction, "x", schema, "y", acts=False, request_vector=refuse, embed=refuse)
    assert extraction.arguments == {"reason": "lost"}
    assert extraction.by_meaning == []
