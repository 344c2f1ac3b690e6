"""An identifier the request names by its kind ("claim CLM-611940") belongs to the tool
whose id parameter is named for that kind, even when that parameter has no pattern or
example: the English writer of new claims lost "Any update on claim CLM-611940?" to
nothing, though only the Chinese status reader takes a claim's number."""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.routing.conftest import blind_set, dry_run

# A catalogue written blind to the router (tests/data/travel): the claim writer is
# described in English, the status reader only in Chinese, its claim_id with no shape.
CATALOGUE = blind_set("travel")


@pytest.mark.parametrize(
    "query",
    [
        "Any update on claim CLM-611940? still waiting on my bag",
        "where is my bag now, claim number CLM-290375, last name Dubois",
    ],
)
async def test_an_identifier_named_by_its_kind_reaches_the_tool_that_takes_that_kind(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "named")
    assert response.json().get("tool_id") == "baggage_claim_status", response.text


async def test_the_writer_still_takes_its_own_request(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "my bag was damaged, booking ZK3P8M, open a claim", "named")
    assert response.json().get("tool_id") == "baggage_claim_file", response.text
