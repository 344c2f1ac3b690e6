"""A catalogue larger than the tools' share of a model request is shortlisted each turn:
the tools the last turns called, then the gateway's ranking for the message, while they
fit. Every request stays within the share, the right tool is offered, and the history
sent stays valid for the vendor when it calls a tool this turn does not offer."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from agent.clients.gateway import GatewayClient
from agent.clients.schemas import Caller, GatewayTool
from agent.react.context import Budget
from agent.react.shortlist import Offer, offer
from agent.sessions.tokens import estimate_tokens
from agent.settings import Settings
from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.agent.wire import ModelScript

CALLER = {"user_id": "u1", "roles": ["ops_admin"]}
AS_U1 = {"X-User-Id": "u1", "X-User-Roles": "ops_admin"}
AS_TOOL_ADMIN = {"X-User-Id": "root", "X-User-Roles": "tool_admin"}
STOCK = "How much stock does SKU2024001 have left?"
ONE_ROUND = {"anthropic": ("stream_tool_use.sse",), "openai": ("stream_tool_calls.sse",)}
THINGS = (
    "meeting room", "expense report", "vacation request", "support ticket", "parking permit",
    "employee badge", "server certificate", "newsletter subscription", "forklift booking",
    "customer survey", "training course", "travel visa",
)  # fmt: skip
ACTIONS = ("Create", "Cancel", "Look up", "Update", "Archive")


def catalogue(shop_url: str) -> list[dict[str, Any]]:
    """Sixty tools of an office, each described like a real one (about 130 tokens)."""
    manifests = []
    for thing in THINGS:
        for action in ACTIONS:
            slug = f"{action}_{thing}".lower().replace(" ", "_")
            manifests.append(
                {
                    "tool_id": slug,
                    "name": f"{action} {thing}",
                    "description": (
                        f"{action} a {thing} in the office system. Use it when someone asks "
                        f"to {action.lower()} a {thing}; it answers with the {thing}'s "
                        "status, owner and the time of the last change."
                    ),
                    "input_schema": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "string", "description": f"The {thing}'s id."},
                            "note": {"type": "string", "description": "Why, in a sentence."},
                            "owner": {"type": "string", "description": "Who it is for."},
                        },
                        "required": ["id"],
                    },
                    "endpoint": {
                        "type": "http",
                        "method": "GET",
                        "url": f"{shop_url}/api/office/{slug}/{{id}}",
                        "auth": {"type": "none"},
                    },
                    "permission": "public",
                    "idempotent": True,
                }
            )
    return manifests


async def register(gateway: GatewayTap, shop_url: str) -> int:
    async with httpx.AsyncClient(timeout=30) as http:
        body = {"tools": catalogue(shop_url)}
        response = await http.post(f"{gateway.url}/tools:batch", json=body, headers=AS_TOOL_ADMIN)
        assert response.status_code in (200, 201), response.text
        listed = await http.get(f"{gateway.url}/tools/list", headers=AS_U1)
    return len(listed.json()["tools"])


@pytest.fixture
def gateway_overrides() -> dict[str, Any]:
    """The span store on: the agent's steps are read back from the gateway's traces."""
    return {"otel_span_store": True}


async def steps(gateway: GatewayTap, trace_id: str, count: int) -> list[dict[str, Any]]:
    """The ``agent.step`` spans of a trace, once ``count`` reached the store (batched)."""
    found: list[dict[str, Any]] = []
    async with httpx.AsyncClient(timeout=10) as http:
        for _ in range(200):
            response = await http.get(f"{gateway.url}/traces/{trace_id}", headers=AS_U1)
            if response.status_code == 200:
                found = [s for s in walk(response.json()["spans"]) if s["name"] == "agent.step"]
                if len(found) >= count:
                    break
            await asyncio.sleep(0.1)
    return found


def walk(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [n for node in nodes for n in (node, *walk(node["children"]))]


async def chat(client: httpx.AsyncClient, session_id: str, message: str) -> httpx.Response:
    body = {"session_id": session_id, "message": message, "user_context": CALLER}
    return await client.post("/chat", json=body)


def offered(body: dict[str, Any], vendor: str) -> dict[str, dict[str, Any]]:
    """The tools a vendor request declares (name → name, description, schema)."""
    tools = {}
    for tool in body.get("tools") or ():
        if vendor == "openai":
            tool = tool["function"]
            tool = {**tool, "input_schema": tool.get("parameters")}
        tools[tool["name"]] = {
            "name": tool["name"],
            "description": tool["description"],
            "input_schema": tool["input_schema"],
        }
    return tools


async def test_a_large_catalogue_is_shortlisted_within_the_share(
    agent: AgentClient,
    gateway: GatewayTap,
    shop_server: str,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    total = await register(gateway, shop_server)
    assert total == 60 + 9  # and the shipped tools this caller may use
    share = Budget(16000, 800, 4000, 0.5).tools  # the defaults
    assert Settings.model_fields["tools_token_share"].default == 0.5
    model.rounds = ONE_ROUND[vendor]  # the model calls inventory_query, then answers
    async with agent(**llm_settings, otel_span_store=True) as client:
        first = await chat(client, "s-many", STOCK)
        second = await chat(client, "s-many", "Thanks! Please cancel my parking permit PP-1")
    assert first.status_code == 200, first.text
    assert second.status_code == 200, second.text
    assert first.json()["tool_calls"][0]["tool_id"] == "inventory_query"
    assert first.json()["tool_calls"][0]["is_error"] is False  # the shop answered
    streamed = [r for r in model.requests if r.get("stream")]
    assert len(streamed) == 4  # two rounds a turn
    for body in streamed:
        tools = offered(body, vendor)
        assert 0 < len(tools) < total
        assert (
            sum(estimate_tokens(json.dumps(t, ensure_ascii=False)) for t in tools.values()) <= share
        )
    first_turn, second_turn = offered(streamed[0], vendor), offered(streamed[2], vendor)
    assert "inventory_query" in first_turn
    assert "cancel_parking_permit" not in first_turn
    # The follow-up: the tool just used first, then the ranking for the new message.
    assert "cancel_parking_permit" in second_turn
    assert next(iter(second_turn)) == "inventory_query"
    ranked = [r for r in gateway.to("/tools/list") if "q=" in r["query"]]
    assert len(ranked) == 2  # one ranking a turn, not a round
    # The trace says how many tools each step offered, of how many the caller has.
    recorded = await steps(gateway, first.json()["trace_id"], 2)
    assert len(recorded) == 2
    for step in recorded:
        attributes = step["attributes"]
        assert attributes["agent.tools_listed"] == total
        assert 0 < attributes["agent.tools_count"] < total


async def test_a_catalogue_within_the_share_is_offered_whole_without_a_ranking(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    model.rounds = ONE_ROUND[vendor]
    async with agent(**llm_settings) as client:
        reply = await chat(client, "s-few", STOCK)
    assert reply.status_code == 200, reply.text
    listings = gateway.to("/tools/list")
    assert listings
    assert not [r for r in listings if "q=" in r["query"]]
    async with httpx.AsyncClient(timeout=10) as http:
        listed = await http.get(f"{gateway.url}/tools/list", headers=AS_U1)
    # The caller's shipped tools, all of them.
    assert set(offered(model.requests[0], vendor)) == {t["tool_id"] for t in listed.json()["tools"]}


def tool(tool_id: str, words: int) -> GatewayTool:
    return GatewayTool(tool_id=tool_id, description="word " * words)


async def test_without_a_ranking_the_listing_order_fills_the_share_and_recent_tools_lead() -> None:
    """The gateway refuses the ranking (an older gateway, or a fault) or ranks nothing: the
    turn still gets the tools that fit, the recent ones first; a ranked id the listing
    lacks is never offered; with no room for tools, nothing is ranked or offered."""
    tools = [tool(f"t{n}", 40) for n in range(20)]
    per_tool = tools[0].definition_tokens
    ranked_calls: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        q = request.url.params["q"]
        ranked_calls.append(q)
        if q.startswith("fail"):
            return httpx.Response(503, json={"reason": "unavailable", "message": "down"})
        ranked = [] if q == "nothing" else [{"tool_id": "secret_tool"}, {"tool_id": "t7"}]
        return httpx.Response(200, json={"revision": 1, "tools": ranked})

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        gateway = GatewayClient(http, "http://gateway.test", timeout_s=5)
        caller = Caller({"user_id": "u1"})

        async def offered(message: str, recent: list[str], fits: int) -> Offer:
            return await offer(gateway, caller, message, tools, recent, per_tool * fits, int)

        whole = await offered("anything", [], 20)
        failed = await offered("fail\x00\ud800", ["t9"], 3)
        ranked = await offered("rank", ["t9"], 3)
        nothing = await offered("nothing", [], 2)
        no_room = await offered("rank", ["t9"], 0)
        await offered("a" * 5000 + "the question", [], 3)
    assert not whole.shortlisted
    assert len(whole.tools) == 20
    assert [t.tool_id for t in failed.tools] == ["t9", "t0", "t1"]
    assert failed.shortlisted
    assert failed.listed == 20
    assert [t.tool_id for t in ranked.tools] == ["t9", "t7"]  # never secret_tool
    assert [t.tool_id for t in nothing.tools] == ["t0", "t1"]
    assert no_room.tools == []
    assert no_room.shortlisted
    # No NUL and no lone surrogate on the wire; a long message is ranked by both ends.
    assert ranked_calls[:3] == ["fail ?", "rank", "nothing"]
    assert len(ranked_calls) == 4  # none for "anything" (it fits) or for no room
    assert len(ranked_calls[3]) <= 2000
    assert ranked_calls[3].startswith("aaa")
    assert ranked_calls[3].endswith("the question")
