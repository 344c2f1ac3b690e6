"""An order that refers back and names no identifier ("ok cancel it, that press was
scrapped…") fits the writer that gets every identifier it needs from the session's last
call, as a request naming them would (``Router._fits_the_last_call``): after a look at
WO-104233, "cancel it" was refused (the cancel tool first, at 0.24: the request alone
holds no work order). A request that names an identifier of its own, or refers to
nothing, fits by its own words only. Catalogue: tests/data/factory, written blind to the
router."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("factory")


async def looked_up(gateway: httpx.AsyncClient, app: FastAPI, session: str) -> None:
    """The session's last call: the work order looked up (a dry run records nothing)."""
    first = await dry_run(gateway, "what's the status on WO-104233?", "planner", session)
    assert first.json()["tool_id"] == "workorder_lookup", first.text
    context = app.state.runtime.run.context
    await context.remember("planner", session, "workorder_lookup", first.json()["arguments"], "ok")


async def test_cancel_it_after_a_lookup_cancels_that_work_order(
    gateway: httpx.AsyncClient, app: FastAPI
) -> None:
    await looked_up(gateway, app, "s-cancel")
    query = "ok cancel it, that press was scrapped and replaced last week"
    response = await dry_run(gateway, query, "planner", "s-cancel")
    body = response.json()
    assert body.get("tool_id") == "workorder_cancel", response.text
    assert body["arguments"]["work_order_id"] == "WO-104233"
    assert "session's previous call" in body["route"]["why"]


async def test_without_a_last_call_cancel_it_is_refused(gateway: httpx.AsyncClient) -> None:
    """Alone, the request names no work order: the cancel tool is not confident enough."""
    query = "ok cancel it, that press was scrapped and replaced last week"
    response = await dry_run(gateway, query, "planner", "s-alone")
    assert response.status_code == 404, response.text
    assert response.json()["reason"] == "no_matching_tool"


async def test_naming_another_work_order_is_a_request_of_its_own(
    gateway: httpx.AsyncClient, app: FastAPI
) -> None:
    await looked_up(gateway, app, "s-other")
    response = await dry_run(gateway, "cancel WO-104299 please", "planner", "s-other")
    body = response.json()
    assert body.get("tool_id") == "workorder_cancel", response.text
    assert body["arguments"]["work_order_id"] == "WO-104299"
