"""A 200-turn conversation never overflows: every model request stays under
CONTEXT_TOKEN_BUDGET, the history sent stays valid for the vendor, and the summaries
cover exactly the folded messages, nothing lost. Offline, and with the recorded
payloads of both vendors through the real SDKs."""

from __future__ import annotations

import itertools
import json
from typing import Any

import httpx

from agent.sessions.tokens import estimate_tokens
from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.agent.wire import ANTHROPIC_ROUNDS, OPENAI_ROUNDS, ModelScript

TURNS = 200
CALLER = {"user_id": "u1", "roles": ["ops_admin"]}
AS_U1 = {"X-User-Id": "u1"}
# Tool definitions and system prompt take ~1,800 tokens: room for a few turns beside them.
# The tools are offered whole (share 1.0), as a catalogue that fits is; a shortlist is
# tests/agent/test_tool_shortlist.py's.
BUDGET = {
    "context_token_budget": 3000,
    "summary_token_budget": 200,
    "turn_token_reserve": 300,
    "tools_token_share": 1.0,
}
SKUS = ("SKU2024001", "SKU2024002", "SKU2024003")


def _text(content: Any) -> list[str]:
    """Every text a vendor message's content carries (blocks, tool inputs and results)."""
    if isinstance(content, str):
        return [content]
    texts: list[str] = []
    for block in content or ():
        if block.get("type") == "tool_use":
            texts.append(json.dumps(block.get("input"), ensure_ascii=False))
        elif block.get("type") == "tool_result":
            texts.extend(_text(block.get("content")))
        else:
            texts.append(str(block.get("text", "")))
    return texts


def request_tokens(body: dict[str, Any]) -> int:
    """The request as the vendor receives it, estimated piece by piece."""
    pieces = _text(body.get("system") or [])
    pieces.append(json.dumps(body.get("tools") or [], ensure_ascii=False))
    for message in body["messages"]:
        pieces.extend(_text(message.get("content")))
        for call in message.get("tool_calls") or ():
            pieces.append(call["function"]["arguments"])
    return sum(estimate_tokens(piece) for piece in pieces)


async def converse(client: httpx.AsyncClient, session_id: str) -> dict[str, Any]:
    for n in range(TURNS):
        sku = SKUS[n % len(SKUS)]
        response = await client.post(
            "/chat",
            json={
                "session_id": session_id,
                "message": f"Turn {n}: how much stock does {sku} have left?",
                "user_context": CALLER,
            },
        )
        assert response.status_code == 200, (n, response.text)
    session = (await client.get(f"/sessions/{session_id}", headers=AS_U1)).json()
    assert isinstance(session, dict)
    return session


def assert_folds_cover_exactly(session: dict[str, Any], per_turn: int) -> None:
    messages = session["messages"]
    assert len(messages) == TURNS * per_turn  # nothing deleted by folding
    assert [m["seq"] for m in messages] == list(range(1, len(messages) + 1))
    folds = session["summaries"]
    assert folds, "200 turns never fit the budget: something must have been folded"
    assert folds[0]["from_seq"] == 1
    for before, after in itertools.pairwise(folds):
        assert after["from_seq"] == before["to_seq"] + 1  # no gap, no overlap
    start = session["context_start_seq"]
    assert folds[-1]["to_seq"] == start - 1
    by_seq = {m["seq"]: m for m in messages}
    for fold in folds:  # every fold ends at a turn boundary: no call split from its result
        assert by_seq[fold["from_seq"]]["role"] == "user"
        assert by_seq[fold["to_seq"] + 1]["role"] == "user"
        assert fold["token_count"] <= BUDGET["summary_token_budget"]
    assert session["summary"]


async def test_two_hundred_turns_offline_fold_into_an_extractive_summary(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    async with agent(**BUDGET) as client:
        session = await converse(client, "s-long-offline")
    assert_folds_cover_exactly(session, per_turn=4)
    assert {fold["method"] for fold in session["summaries"]} == {"extractive"}
    # The summary keeps the newest folded requests and what the tools answered.
    last_folded = next(
        m for m in reversed(session["messages"]) if m["seq"] < session["context_start_seq"]
    )
    assert last_folded["role"] == "assistant"
    assert "inventory_query" in session["summary"]
    assert "Turn 0:" not in session["summary"]  # the oldest lines gave way to the budget
    window = [m for m in session["messages"] if m["seq"] >= session["context_start_seq"]]
    assert sum(estimate_tokens(m["content"]) for m in window) < BUDGET["context_token_budget"]


async def test_two_hundred_turns_with_a_model_stay_under_the_budget(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    # One tool round a turn: the model calls inventory_query, then answers.
    model.rounds = ((ANTHROPIC_ROUNDS if vendor == "anthropic" else OPENAI_ROUNDS)[0],)
    async with agent(**llm_settings, **BUDGET) as client:
        session = await converse(client, f"s-long-{vendor}")
    # Every request reached the vendor valid (ModelScript answers a broken history with the
    # vendor's 400, which would have failed the turn) and under the budget.
    streamed = [r for r in model.requests if r.get("stream")]
    assert len(streamed) == TURNS * 2
    sizes = [request_tokens(r) for r in streamed]
    assert max(sizes) <= BUDGET["context_token_budget"], max(sizes)
    assert min(sizes) > 1500  # the estimate counts what was really sent, tools included
    assert_folds_cover_exactly(session, per_turn=4)
    assert "model" in {fold["method"] for fold in session["summaries"]}
    summaries = [
        r for r in model.requests if not r.get("stream") and "running summary" in json.dumps(r)
    ]
    assert len(summaries) == len(session["summaries"])
