"""A request for a thing to be made ("I need an official transcript …", "need a new
read-only api key …") is for no reader, whichever writer makes it
(``intent.later_order_verb``): the transcript request went to the grades reader. A copy,
a list or a record of what exists is still read. Catalogue: tests/data/school, written
blind to the router."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("school")


@pytest.mark.parametrize(
    "text",
    [
        "I need an official transcript for my grad school application, S20221107",
        "need a new read-only api key for metabase",
        "we'd like another parking permit for unit ELM-221",
    ],
)
def test_asking_for_a_thing_made_is_for_no_reader(text: str) -> None:
    assert intent.later_order_verb(text) == "create"


@pytest.mark.parametrize(
    "text",
    [
        "I need a copy of invoice INV-2024-00451",
        "I need a record of all my membership payments for 2026",
        "I need a full list of my loans",
        "I need to cancel BK-1120457",  # an order of its own
    ],
)
def test_a_copy_a_list_or_a_record_is_not_made(text: str) -> None:
    assert intent.later_order_verb(text) != "create"


async def test_the_transcript_request_is_not_the_grade_readers(gateway: httpx.AsyncClient) -> None:
    query = (
        "I need an official transcript for my grad school application, S20221107, "
        "electronic copy please"
    )
    response = await dry_run(gateway, query, "u1")
    assert response.json().get("tool_id") == "transcript_request", response.text
