"""An enum option meant by one clause of a request (``routing/options._by_clause``):
when the whole request leads no option clearly, each clause that says something in
words is compared too. "I'm travelling for work" means ``travel``; the whole request,
with its dates, member number and "pause my membership", led no reason by the margin a
tool that changes something needs. Catalogue: tests/data/fitness, written blind to the
router."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np
import pytest

from gateway.routing.options import _by_clause
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("fitness")


@pytest.mark.parametrize(
    ("query", "tool_id", "reason"),
    [
        (
            "pause my membership for a month from next Monday, I'm travelling for work. MB-330917",
            "freeze_membership",
            "travel",
        ),
        (
            "Hey, money's tight right now. Could I put my gym membership on hold for a month "
            "starting today? Member MB-207744",
            "freeze_membership",
            "financial",
        ),
        (
            "感冒了，明天的普拉提去不了，预约号 BK-0877342，麻烦取消一下",
            "cancel_class_booking",
            "illness",
        ),
    ],
)
async def test_a_reason_said_in_one_clause_is_chosen(
    gateway: httpx.AsyncClient, query: str, tool_id: str, reason: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    body = response.json()
    assert body.get("tool_id") == tool_id, response.text
    assert body["arguments"].get("reason") == reason, response.text


def test_clauses_with_numbers_or_no_words_are_left_out() -> None:
    seen: list[str] = []

    def vectors(texts: Sequence[str]) -> np.ndarray:  # one batch
        seen.extend(texts)
        return np.ones((len(texts), 2), dtype=np.float32) / np.sqrt(2)

    options = np.eye(2, dtype=np.float32)
    # an amount ("5000 … early" paid the loan off, read alone), and an id with one word left
    assert _by_clause("pay off 5000 of it early, loan LN2023004512", options, vectors) is None
    assert seen == []
    found = _by_clause(
        "pay off 5000 of it early, loan LN2023004512, thanks a lot", options, vectors
    )
    assert found is not None
    assert seen == ["thanks a lot"]
    seen.clear()
    found = _by_clause(
        "I'm sick and can't make spin tonight, please cancel BK-1120457", options, vectors
    )
    assert found is not None
    assert seen == ["I'm sick and can't make spin tonight", "please cancel"]


def test_an_address_or_a_decimal_is_not_split() -> None:
    seen: list[str] = []

    def vectors(texts: Sequence[str]) -> np.ndarray:
        seen.extend(texts)
        return np.ones((len(texts), 2), dtype=np.float32)

    _by_clause("send it to li.hua@ourco.com as a gift", np.eye(2, dtype=np.float32), vectors)
    assert seen == ["send it to li.hua@ourco.com as a gift"]
