"""Two readings of what a request asks, on a catalogue written blind to the router
(tests/data/insurance):

- an order whose verb only sets up the action its noun names ("schedule a payment") asks
  the tool for the noun's verb: the payment tool pays, it never says "schedule";
- a Chinese question stays a question in its English reading: "理赔 CLM-… 现在到哪一步了？"
  reads word by word "settle a claim … now how one step?", whose "settle" had ruled out
  every English reader, the claim-status lookup included, and nothing was left to route to.
"""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("insurance")


@pytest.mark.parametrize(
    ("query", "verb"),
    [
        ("schedule a payment of $96.15 for 2025-09-01 on RN-6620481", "pay"),
        ("submit a monthly repayment", "repay"),
        ("request a replacement card", "replac"),  # Porter's stem of "replace"
        ("schedule a meeting with my agent", "schedule"),
        ("issue a refund", "issue"),
    ],
)
def test_a_light_verb_takes_its_action_nouns_verb(query: str, verb: str) -> None:
    assert (intent.order_verb(query) or "").startswith(verb)


async def test_scheduling_a_payment_reaches_the_payment_tool(gateway: httpx.AsyncClient) -> None:
    query = "schedule a payment of $96.15 for 2025-09-01 on RN-6620481"
    response = await dry_run(gateway, query, "insurance")
    assert response.json().get("tool_id") == "make_premium_payment", response.text


async def test_a_chinese_question_about_a_claim_reaches_the_status_lookup(
    gateway: httpx.AsyncClient,
) -> None:
    response = await dry_run(gateway, "理赔 CLM-19930442 现在到哪一步了？", "insurance")
    body = response.json()
    assert body.get("tool_id") == "get_claim_status", response.text
    assert body["arguments"] == {"claim_id": "CLM-19930442"}


@pytest.mark.parametrize(
    "query", ["把我儿子从车险里删掉，他已经搬出去了 AU-7730914", "remove my son from AU-7730914"]
)
async def test_a_tool_that_only_adds_is_not_given_a_removal(
    gateway: httpx.AsyncClient, query: str
) -> None:
    """add_driver: "Only adds: removing a driver … has to go through an agent"."""
    response = await dry_run(gateway, query, "insurance")
    assert response.json().get("tool_id") != "add_driver", response.text


async def test_it_still_adds_a_driver(gateway: httpx.AsyncClient) -> None:
    query = "add driver to AU-4471023 - Tomás Ruiz, my roommate"
    response = await dry_run(gateway, query, "insurance")
    assert response.json().get("tool_id") == "add_driver", response.text


async def test_reinstating_is_not_given_to_the_tool_that_cannot(
    gateway: httpx.AsyncClient,
) -> None:
    """cancel_policy: "this service cannot reinstate a policy"."""
    query = "Can you reinstate AU-1029384? It got cancelled for non-payment"
    response = await dry_run(gateway, query, "insurance")
    assert response.json().get("tool_id") != "cancel_policy", response.text
