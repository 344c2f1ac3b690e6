"""A long request cannot hold the gateway's event loop while the router reads it.

Reading a request (its model run, then its values for each candidate tool's
parameters) is linear in its length (test_16) but costs about 0.1 ms a character: a
4,000-character /run held the event loop 0.4-0.8 s with the twelve tools of a blind
set, so every other call of that gateway (invokes, health checks, other callers'
routes) waited behind it, and a caller sending such requests at the routing limit
could keep the gateway stalled. A request over ``OFF_LOOP_CHARS`` is now read in the
router's reader thread, one at a time; shorter ones stay on the loop (no thread hop).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from gateway.routing.extract import ArgumentExtractor
from gateway.routing.service import OFF_LOOP_CHARS, OFF_LOOP_PER_CALLER, OFF_LOOP_WAITING
from reach_common.embeddings import Embedder
from tests.conftest import app_client, app_clients
from tests.gateway.conftest import GatewayFactory
from tests.security.loop_probe import probed, record_threads

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"
ASK = "How many units of SKU2024003 are left in stock?"
# Everyday words, so the request still reads as a stock question however long it is.
PADDING = " I am asking for the warehouse team, who plan the week's orders from it."
LONG = ASK + PADDING * ((OFF_LOOP_CHARS + 200) // len(PADDING))
# One of test_16's slowest pieces for the reader: a 4,000-character run of "4pm-".
HOSTILE = ("x " + "4pm-" * 1_000)[:4_000]
USER = {"user_id": "reader", "roles": ["user"]}


@pytest.fixture
def threads_reading(monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> list[str]:
    """The names of the threads that ran the router's argument reading and model runs."""
    seen: list[str] = []
    record_threads(monkeypatch, seen, ArgumentExtractor, "extract")
    record_threads(monkeypatch, seen, embedder, "embed")
    return seen


def shipped(make_gateway: GatewayFactory, shop_url: str) -> Any:
    return make_gateway(tool_auto_discovery=True, manifests_dir=str(MANIFESTS), shop_url=shop_url)


async def run(client: httpx.AsyncClient, query: str) -> httpx.Response:
    body = {"user_query": query, "dry_run": True, "user_context": USER}
    return await client.post("/run", json=body)


async def admitted(router: Any, count: int) -> None:
    """Wait until ``count`` long requests are admitted (routing starts after admission)."""
    for _ in range(1_000):
        if router._long_requests == count:
            return
        await asyncio.sleep(0.005)
    assert router._long_requests == count


async def test_a_long_request_is_read_off_the_loop_and_a_short_one_on_it(
    make_gateway: GatewayFactory, shop_url: str, threads_reading: list[str]
) -> None:
    assert len(ASK) <= OFF_LOOP_CHARS < len(LONG) <= 4_000
    async with app_client(shipped(make_gateway, shop_url)) as client:
        loop_thread = threading.current_thread().name
        for query, on_loop in ((ASK, True), (LONG, False), (LONG, False)):  # then a cache hit
            threads_reading.clear()
            response = await run(client, query)
            assert response.status_code == 200, response.text
            body = response.json()
            assert body["tool_id"] == "inventory_query", body
            assert body["arguments"] == {"sku": "SKU2024003"}, body
            assert threads_reading, "the request was not read at all"
            if on_loop:
                assert set(threads_reading) == {loop_thread}, threads_reading
            else:
                assert loop_thread not in threads_reading, threads_reading
                assert all(t.startswith("route-reader") for t in threads_reading)
        assert body["route"]["route_hint"] == "route_cache", body["route"]  # read off it too

        # The ranked tool list reads its ``q`` the same way (a text not embedded yet).
        threads_reading.clear()
        ranked = await client.get("/tools/list", params={"q": LONG + " Thanks!"})
        assert ranked.status_code == 200, ranked.text
        assert ranked.json()["tools"][0]["tool_id"] == "inventory_query"
        assert threads_reading, "the ranked list embedded nothing"
        assert loop_thread not in threads_reading, threads_reading


async def test_the_loop_answers_other_calls_while_a_long_request_is_read(
    make_gateway: GatewayFactory, shop_url: str
) -> None:
    """A hostile 4,000 characters: while the router reads them, the event loop keeps
    turning (a ticker's longest wait is a small part of the reading) and a health check
    sent meanwhile is answered before the long request is."""
    async with app_client(shipped(make_gateway, shop_url)) as client:
        await run(client, ASK)  # the index built and the model warm
        await run(client, LONG)  # and the reader thread started (its first read is slower)
        probe = await probed(client, run(client, HOSTILE), health_after=0.01)
    assert probe.response.status_code in (200, 404, 422), probe.response.text  # not crashed
    assert probe.health_at < probe.took / 2, probe
    assert probe.longest_wait < probe.took / 4, probe


async def test_long_requests_past_the_waiting_bound_are_refused_at_once(
    make_gateway: GatewayFactory, shop_url: str
) -> None:
    """Long requests wait their turn in the reader, at most ``OFF_LOOP_WAITING`` at once:
    one more is refused straight away (503 router_busy, Retry-After), not queued without
    bound; short requests are not held up; the waiting ones are then all answered."""
    app = shipped(make_gateway, shop_url)
    addresses = [f"10.0.0.{n}" for n in range(OFF_LOOP_WAITING + 1)]
    async with app_clients(app, addresses) as (client, *others):
        router = app.state.runtime.router
        await run(client, ASK)  # the index built
        async with router._reading:  # the reader busy with a long request
            waiting = [
                asyncio.create_task(run(other, LONG + f" ({n})")) for n, other in enumerate(others)
            ]
            await admitted(router, OFF_LOOP_WAITING)
            refused = await run(client, LONG + " (one more)")
            short = await run(client, ASK)
            ranked = await client.get("/tools/list", params={"q": LONG + " (ranked)"})
            assert not any(task.done() for task in waiting)
        answered = await asyncio.gather(*waiting)
    assert refused.status_code == 503, refused.text
    body = refused.json()
    assert body["reason"] == "router_busy", body
    assert body["success"] is False
    assert refused.headers["Retry-After"] == "1"
    assert ranked.status_code == 503, ranked.text
    assert ranked.json()["reason"] == "router_busy"
    assert short.status_code == 200, short.text
    assert [r.status_code for r in answered] == [200] * OFF_LOOP_WAITING
    assert {r.json()["tool_id"] for r in answered} == {"inventory_query"}
    assert router._long_requests == 0


async def test_one_caller_cannot_hold_every_place_for_long_requests(
    make_gateway: GatewayFactory, shop_url: str
) -> None:
    """One caller sending long requests without pause gets ``OFF_LOOP_PER_CALLER`` places;
    its next is refused (router_busy) while another caller's long request is still
    admitted and answered: the places are shared, not taken by whoever sends fastest."""
    app = shipped(make_gateway, shop_url)
    async with app_clients(app, ["10.0.0.1", "10.0.0.2"]) as (greedy, other):
        router = app.state.runtime.router
        await run(greedy, ASK)
        async with router._reading:
            held = [
                asyncio.create_task(run(greedy, LONG + f" ({n})"))
                for n in range(OFF_LOOP_PER_CALLER)
            ]
            await admitted(router, OFF_LOOP_PER_CALLER)
            refused = await run(greedy, LONG + " (one more)")
            ranked = await greedy.get("/tools/list", params={"q": LONG + " (ranked)"})
            theirs = asyncio.create_task(run(other, LONG + " (another caller)"))
            await admitted(router, OFF_LOOP_PER_CALLER + 1)
        answered = await asyncio.gather(*held, theirs)
        again = await run(greedy, LONG + " (once its own are read)")
    assert OFF_LOOP_PER_CALLER < OFF_LOOP_WAITING
    body = refused.json()
    assert refused.status_code == 503, body
    assert body["reason"] == "router_busy", body
    assert "of yours" in body["message"], body
    assert refused.headers["Retry-After"] == "1"
    assert ranked.status_code == 503
    assert ranked.json()["reason"] == "router_busy"
    assert [r.status_code for r in answered] == [200] * (OFF_LOOP_PER_CALLER + 1)
    assert again.status_code == 200, again.text
    assert router._long_requests == 0
    assert not router._long_by_owner
