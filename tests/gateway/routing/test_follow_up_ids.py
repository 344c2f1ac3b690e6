"""A follow-up that names its own new value ("same for CC-1300", "那 CC-1300 呢") is put
as a continuation: the tool just used stays among the candidates, though the request's
words alone do not rank it (``extract.continues_previous``), and the last call's other
values, optional ones too, are kept (``service._carry_on``)."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("backoffice")


async def run(gateway: httpx.AsyncClient, query: str, session: str) -> httpx.Response:
    return await dry_run(gateway, query, "clerk", session)


@pytest.mark.parametrize("follow_up", ["same for CC-1300", "那 CC-1300 呢", "what about CC-1300?"])
async def test_a_follow_up_naming_its_own_id_continues_the_last_tool(
    gateway: httpx.AsyncClient, app: FastAPI, follow_up: str
) -> None:
    session = f"s-{follow_up}"
    first = await run(gateway, "budget left for CC-1200 in 2026", session)
    assert first.json()["tool_id"] == "budget_remaining", first.text
    context = app.state.runtime.run.context
    await context.remember("clerk", session, "budget_remaining", first.json()["arguments"], "ok")

    again = await run(gateway, follow_up, session)
    assert again.status_code == 200, again.text
    assert again.json()["tool_id"] == "budget_remaining"
    # The same question for another cost centre: the year asked about is kept.
    assert again.json()["arguments"] == {"cost_center": "CC-1300", "fiscal_year": 2026}


async def test_a_new_request_to_the_same_tool_keeps_nothing_it_does_not_say(
    gateway: httpx.AsyncClient, app: FastAPI
) -> None:
    session = "s-new"
    first = await run(gateway, "budget left for CC-1200 in 2026", session)
    context = app.state.runtime.run.context
    await context.remember("clerk", session, "budget_remaining", first.json()["arguments"], "ok")

    again = await run(gateway, "budget left for CC-1400", session)
    assert again.json()["tool_id"] == "budget_remaining", again.text
    assert again.json()["arguments"] == {"cost_center": "CC-1400"}


async def test_a_request_of_its_own_is_not_a_continuation(gateway: httpx.AsyncClient) -> None:
    # Naming an id without a continuing word is a request of its own, as before.
    response = await run(gateway, "track SF1000000002", "s-own")
    assert response.json()["tool_id"] == "shipment_track", response.text
