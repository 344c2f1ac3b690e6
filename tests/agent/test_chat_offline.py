"""Offline mode: no model; the real gateway's /run routes and runs the tool, the agent answers."""

from __future__ import annotations

import asyncio
import threading

import asyncpg  # type: ignore[import-untyped]
import pytest

from agent.sessions.service import TurnStore
from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.agent.test_chat_model import parse_sse
from tests.conftest import KeyMaker

CALLER = {"user_id": "u1", "roles": ["ops_admin"]}


async def test_offline_turn_answers_from_the_tool_and_names_it(
    agent: AgentClient, gateway: GatewayTap, make_key: KeyMaker
) -> None:
    key = await make_key("u1", ["ops_admin"])
    auth = {"Authorization": f"Bearer {key}"}
    async with agent() as client:
        response = await client.post(
            "/chat",
            json={
                "session_id": "s-off",
                "message": "SKU2024001 还有多少库存",
                "user_context": CALLER,
            },
            headers=auth,
        )
        session = (await client.get("/sessions/s-off", headers=auth)).json()
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["mode"] == "offline"
    assert body["stop_reason"] == "end_turn"
    assert body["rounds"] == 1
    assert "inventory_query" in body["reply"]
    assert "available: 156" in body["reply"]
    (call,) = body["tool_calls"]
    assert call["tool_id"] == "inventory_query"
    assert call["arguments"] == {"sku": "SKU2024001"}
    assert call["result"]["available"] == 156
    assert not call["is_error"]
    (run,) = gateway.to("/run")
    assert run["body"] == {
        "session_id": "s-off",
        "user_query": "SKU2024001 还有多少库存",
        "user_context": CALLER,
    }
    assert run["headers"]["authorization"] == f"Bearer {key}"  # the caller's own, as sent
    assert run["headers"]["traceparent"].split("-")[1] == body["trace_id"]
    assert [m["role"] for m in session["messages"]] == ["user", "assistant", "tool", "assistant"]


async def test_offline_follow_up_reuses_the_session(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    async with agent() as client:
        first = await client.post(
            "/chat",
            json={
                "session_id": "s-follow",
                "message": "SKU2024001 还有多少库存",
                "user_context": CALLER,
            },
        )
        second = await client.post(
            "/chat",
            json={
                "session_id": "s-follow",
                "message": "那这个 SKU 最近卖得怎么样",
                "user_context": CALLER,
                "stream": True,
            },
        )
    assert first.status_code == second.status_code == 200
    events = parse_sse(second.text)
    assert [kind for kind, _ in events] == ["tool_call", "tool_result", "delta", "done"]
    result = events[1][1]
    assert result["tool_id"] == "sales_query"
    assert result["arguments"]["sku"] == "SKU2024001"
    assert result["result"]["total_quantity"] > 0
    assert events[-1][1]["session_id"] == "s-follow"
    runs = [r["body"]["session_id"] for r in gateway.to("/run")]
    assert runs == ["s-follow", "s-follow"]


async def test_a_stream_cut_off_by_a_postgres_outage_ends_with_dependency_unavailable(
    agent: AgentClient,
    gateway: GatewayTap,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Past its first event a stream can no longer answer 503: its last event says what the
    request boundary would have (an outage, retryable), and the log has no traceback."""

    async def lost(*_: object, **__: object) -> None:
        raise asyncpg.ConnectionDoesNotExistError("connection was closed mid-operation")

    monkeypatch.setattr(TurnStore, "save_final", lost)
    async with agent() as client:
        response = await client.post(
            "/chat",
            json={"message": "SKU2024001 还有多少库存", "user_context": CALLER, "stream": True},
        )
    events = parse_sse(response.text)
    assert [kind for kind, _ in events][:2] == ["tool_call", "tool_result"]
    kind, error = events[-1]
    assert kind == "error"
    assert error["reason"] == "dependency_unavailable"
    assert error["dependency"] == "postgres"
    assert len(error["trace_id"]) == 32
    logged = capsys.readouterr().out
    assert "chat_stream_dependency_unavailable" in logged
    assert "chat_stream_failed" not in logged
    assert "Traceback" not in logged


async def test_offline_answers_plainly_when_no_tool_matches(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    async with agent() as client:
        response = await client.post("/chat", json={"message": "tell me a joke"})
    assert response.status_code == 200
    body = response.json()
    assert body["tool_calls"] == []
    assert body["rounds"] == 0
    assert body["stop_reason"] == "no_matching_tool"
    assert "No tool matches" in body["reply"]
    assert "offline mode" in body["reply"]


async def test_offline_reports_a_refused_or_failed_tool_with_its_reason(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    async with agent() as client:
        # No SKU in the message and none earlier in the session: the gateway routes to
        # sales_query and refuses the call for its missing argument.
        refused = await client.post(
            "/chat",
            json={
                "session_id": "s-nosku",
                "message": "那这个 SKU 最近卖得怎么样",
                "user_context": CALLER,
            },
        )
        # A SKU the shop does not know: the tool runs and fails.
        failed = await client.post(
            "/chat", json={"message": "SKU9999999 还有多少库存", "user_context": CALLER}
        )
    assert refused.status_code == failed.status_code == 200
    body = refused.json()
    (call,) = body["tool_calls"]
    assert call["tool_id"] == "sales_query"
    assert call["is_error"]
    assert call["result"]["error"]["reason"] == "invalid_arguments"
    assert "'sku'" in call["result"]["error"]["message"]
    assert "sales_query" in body["reply"]
    assert "invalid_arguments" in body["reply"]
    assert body["stop_reason"] == "end_turn"
    (broken,) = failed.json()["tool_calls"]
    assert (broken["tool_id"], broken["arguments"]) == ("inventory_query", {"sku": "SKU9999999"})
    assert broken["is_error"]
    assert broken["result"]["error"]["reason"] == "tool_error"
    assert "SKU9999999" in broken["result"]["error"]["message"]
    assert "tool_error" in failed.json()["reply"]


async def test_offline_routes_only_to_tools_the_caller_may_use(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    question = "where is order SO20240715001?"
    async with agent() as client:
        stranger = await client.post(
            "/chat", json={"message": question, "user_context": {"user_id": "u3"}}
        )
        allowed = await client.post("/chat", json={"message": question, "user_context": CALLER})
    assert stranger.status_code == allowed.status_code == 200
    # order_query needs ops_admin or order_manager: u3 is never routed to it.
    assert "order_query" not in [c["tool_id"] for c in stranger.json()["tool_calls"]]
    assert "SF1234567890" not in stranger.text
    (ok,) = allowed.json()["tool_calls"]
    assert (ok["tool_id"], ok["arguments"]) == ("order_query", {"order_id": "SO20240715001"})
    assert not ok["is_error"]
    assert ok["result"]["tracking"] == "SF1234567890"
    assert [r["body"]["user_context"] for r in gateway.to("/run")] == [
        {"user_id": "u3", "roles": []},
        CALLER,
    ]


async def test_offline_with_the_gateway_down_is_a_503(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    async with agent(gateway_url="http://127.0.0.1:9") as client:
        response = await client.post(
            "/chat", json={"session_id": "s-gw", "message": "SKU2024001 库存"}
        )
        session = (await client.get("/sessions/s-gw")).json()
    assert response.status_code == 503
    assert response.json()["reason"] == "gateway_unavailable"
    assert response.json()["gateway_reason"] == "gateway_unavailable"
    assert [m["role"] for m in session["messages"]] == ["user"]


@pytest.mark.parametrize("stream", [False, True])
async def test_the_turn_is_marked_answered_on_the_event_loop(
    agent: AgentClient, gateway: GatewayTap, monkeypatch: pytest.MonkeyPatch, stream: bool
) -> None:
    """The response's background task sets an asyncio.Event, which is not thread-safe: a
    plain callable ran in a worker thread (Starlette's threadpool), a coroutine runs on
    the loop."""
    set_in: list[str] = []
    original = asyncio.Event.set

    def recording_set(event: asyncio.Event) -> None:
        set_in.append(threading.current_thread().name)
        original(event)

    monkeypatch.setattr(asyncio.Event, "set", recording_set)
    async with agent() as client:
        body = {"message": "SKU2024001 还有多少库存", "user_context": CALLER, "stream": stream}
        response = await client.post("/chat", json=body)
    assert response.status_code == 200, response.text
    assert threading.current_thread().name in set_in  # the turn's answered event
    # (Other threads here run loops of their own: the test's upstream servers.)
    assert not [name for name in set_in if name.startswith("AnyIO worker thread")]
