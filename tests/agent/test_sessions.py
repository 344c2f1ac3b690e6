"""Sessions: the API, one writer per session, idempotent retries, atomic rounds, budgets."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import psycopg
import pytest
from redis import Redis
from redis.asyncio.lock import Lock

from agent.sessions.repository import BrokenToolPair, NewMessage, check_pairs
from reach_common.db import libpq_url
from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.agent.wire import ModelScript
from tests.conftest import Backends

CALLER = {"user_id": "u1", "roles": ["ops_admin"]}
AS_U1 = {"X-User-Id": "u1", "X-User-Roles": "ops_admin"}  # the same claim, as headers
AS_ADMIN = {"X-User-Id": "boss", "X-User-Roles": "admin"}


def message_count(backends: Backends, session_id: str) -> int:
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        row = conn.execute(
            "SELECT count(*) FROM agent.message WHERE session_id = %s", (session_id,)
        ).fetchone()
    assert row is not None
    return int(row[0])


async def test_two_concurrent_turns_one_answers_one_is_busy(
    agent: AgentClient, gateway: GatewayTap
) -> None:
    gateway.hold("/run")  # the first turn's tool call waits in the tap until released
    async with agent() as client:
        first = asyncio.create_task(
            client.post(
                "/chat",
                json={
                    "session_id": "s-busy",
                    "message": "SKU2024001 还有多少库存",
                    "user_context": CALLER,
                },
            )
        )
        try:
            await gateway.arrived("/run")
            second = await client.post(
                "/chat",
                json={
                    "session_id": "s-busy",
                    "message": "SKU2024002 还有多少库存",
                    "user_context": CALLER,
                },
            )
            deleting = await client.delete("/sessions/s-busy", headers=AS_U1)
            held = gateway.held("/run")
        finally:
            gateway.release()
            done = await first
        assert held == 1  # both were refused while the first turn's call was in flight
        assert len(gateway.to("/run")) == 1  # the refused message never reached the gateway
        assert deleting.status_code == 409
        assert deleting.json()["reason"] == "session_busy"
        assert second.status_code == 409
        assert second.json()["reason"] == "session_busy"
        assert second.json()["session_id"] == "s-busy"
        assert done.status_code == 200, done.text
        assert "156" in done.json()["reply"]
        # The lock went with the first turn: the session takes the next message.
        again = await client.post(
            "/chat",
            json={
                "session_id": "s-busy",
                "message": "SKU2024002 还有多少库存",
                "user_context": CALLER,
            },
        )
        assert again.status_code == 200, again.text
        # Another session was never blocked.
        other = await client.post("/chat", json={"session_id": "s-other", "message": "hello"})
        assert other.status_code == 200


async def test_retry_with_the_same_message_id_replays_the_answer(
    agent: AgentClient, gateway: GatewayTap, clean_state: Backends
) -> None:
    request = {
        "session_id": "s-idem",
        "message": "SKU2024001 还有多少库存",
        "message_id": "m-1",
        "user_context": CALLER,
    }
    async with agent() as client:
        first = await client.post("/chat", json=request)
        runs = len(gateway.requests)
        stored = message_count(clean_state, "s-idem")
        retry = await client.post("/chat", json=request)
        streamed = await client.post("/chat", json={**request, "stream": True})
        reused = await client.post("/chat", json={**request, "message": "something else"})
    assert first.status_code == retry.status_code == 200
    a, b = first.json(), retry.json()
    assert (a["replayed"], b["replayed"]) == (False, True)
    assert b["reply"] == a["reply"]
    assert b["message_id"] == "m-1"
    assert b["tool_calls"][0]["result"] == a["tool_calls"][0]["result"]
    assert b["trace_id"] == a["trace_id"]
    assert len(gateway.requests) == runs  # nothing ran again
    assert message_count(clean_state, "s-idem") == stored
    assert '"replayed":true' in streamed.text.replace(" ", "")
    assert reused.status_code == 409
    assert reused.json()["reason"] == "message_id_reused"


async def test_session_api_lists_reads_and_deletes_with_cascade(
    agent: AgentClient, gateway: GatewayTap, clean_state: Backends
) -> None:
    async with agent() as client:
        await client.post(
            "/chat",
            json={
                "session_id": "s-a",
                "message": "SKU2024001 还有多少库存",
                "user_context": CALLER,
            },
        )
        await client.post(
            "/chat", json={"session_id": "s-b", "message": "hi", "user_context": {"user_id": "u2"}}
        )
        await client.post("/chat", json={"session_id": "s-anon", "message": "hi"})
        listed = await client.get("/sessions", headers=AS_ADMIN)
        of_u1 = await client.get("/sessions", params={"user_id": "u1"}, headers=AS_ADMIN)
        mine = await client.get("/sessions", headers=AS_U1)
        anonymous = await client.get("/sessions")
        detail = await client.get("/sessions/s-a", headers=AS_U1)
        deleted = await client.delete("/sessions/s-a", headers=AS_U1)
        gone = await client.get("/sessions/s-a", headers=AS_U1)
        again = await client.delete("/sessions/s-a", headers=AS_U1)
        bad = await client.get("/sessions/bad id!")
        huge = await client.get("/sessions", params={"offset": 2**70}, headers=AS_ADMIN)
    assert listed.status_code == 200
    assert huge.status_code == 422  # past a bigint: refused, never a driver error
    assert [s["id"] for s in listed.json()["sessions"]] == ["s-anon", "s-b", "s-a"]
    assert [s["id"] for s in of_u1.json()["sessions"]] == ["s-a"]
    assert [s["id"] for s in mine.json()["sessions"]] == ["s-a"]
    assert [s["id"] for s in anonymous.json()["sessions"]] == ["s-anon"]
    messages = detail.json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert [m["seq"] for m in messages] == [1, 2, 3, 4]
    call = messages[1]["tool_calls"][0]
    assert call["tool_id"] == "inventory_query"
    assert messages[2]["tool_call_id"] == call["id"]
    assert detail.json()["title"] == "SKU2024001 还有多少库存"
    assert deleted.status_code == 200
    assert deleted.json()["status"] == "deleted"
    assert deleted.json()["session_id"] == "s-a"
    assert deleted.json()["trace_id"] == deleted.headers["x-trace-id"]
    assert detail.json()["trace_id"] == detail.headers["x-trace-id"]
    assert len(listed.json()["trace_id"]) == 32
    assert message_count(clean_state, "s-a") == 0
    assert gone.status_code == 404
    assert gone.json()["reason"] == "session_not_found"
    assert again.status_code == 404
    assert again.json()["reason"] == "session_not_found"
    assert bad.status_code == 422
    assert bad.json()["reason"] == "invalid_request"


async def test_a_session_belongs_to_its_user(
    agent: AgentClient, gateway: GatewayTap, clean_state: Backends
) -> None:
    async with agent() as client:
        await client.post(
            "/chat", json={"session_id": "s-own", "message": "hi", "user_context": CALLER}
        )
        await client.post("/chat", json={"session_id": "s-nobody", "message": "hi"})
        stored = message_count(clean_state, "s-own")
        other = await client.post(
            "/chat",
            json={"session_id": "s-own", "message": "hi", "user_context": {"user_id": "u9"}},
        )
        anonymous = await client.post("/chat", json={"session_id": "s-own", "message": "hi"})
        into_anonymous = await client.post(
            "/chat", json={"session_id": "s-nobody", "message": "hi", "user_context": CALLER}
        )
        read_anonymous = await client.get("/sessions/s-nobody", headers=AS_U1)
        admin_read = await client.get("/sessions/s-own", headers=AS_ADMIN)
        admin_writes = await client.post(
            "/chat", json={"session_id": "s-own", "message": "hi"}, headers=AS_ADMIN
        )
    for refused in (other, anonymous, into_anonymous, admin_writes):
        assert refused.status_code == 403
        assert refused.json()["reason"] == "session_forbidden"
    assert message_count(clean_state, "s-own") == stored
    assert read_anonymous.status_code == 404
    assert read_anonymous.json()["reason"] == "session_not_found"
    assert admin_read.status_code == 200
    assert admin_read.json()["user_id"] == "u1"


@pytest.mark.parametrize(
    ("body", "status", "reason"),
    [
        ({"message": ""}, 422, "invalid_request"),
        ({"message": "hi", "session_id": "../etc"}, 422, "invalid_request"),
        ({"message": "hi", "surprise": 1}, 422, "invalid_request"),
        ({"message": "hi", "user_context": {"roles": "admin"}}, 422, "invalid_request"),
        ({"message": "x" * 32_001}, 422, "invalid_request"),
    ],
)
async def test_bad_chat_requests_get_a_clear_4xx(
    agent: AgentClient, gateway: GatewayTap, body: dict[str, Any], status: int, reason: str
) -> None:
    async with agent() as client:
        response = await client.post("/chat", json=body)
        malformed = await client.post(
            "/chat", content=b'{"message": ', headers={"content-type": "application/json"}
        )
    assert response.status_code == status
    assert response.json()["reason"] == reason
    assert response.json()["message"]
    assert malformed.status_code == 400
    assert malformed.json()["reason"] == "malformed_json"


async def test_gateway_down_is_a_clear_503(
    agent: AgentClient, gateway: GatewayTap, model: ModelScript, llm_settings: dict[str, Any]
) -> None:
    async with agent(**llm_settings, gateway_url="http://127.0.0.1:9") as client:
        response = await client.post("/chat", json={"session_id": "s-down", "message": "hi"})
        retry = await client.post("/chat", json={"session_id": "s-down", "message": "hi"})
    assert response.status_code == 503
    assert response.json()["reason"] == "gateway_unavailable"
    assert retry.status_code == 503  # the lock was released
    assert not model.requests


async def test_history_budget_summarises_whole_turns(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    # Room for the system prompt and the caller's tool definitions (~1,800 tokens) and about
    # one earlier turn, so the third turn folds the first.
    # The tools offered whole (share 1.0): this budget is about folding history beside them.
    budget = {
        "context_token_budget": 2300,
        "summary_token_budget": 100,
        "turn_token_reserve": 0,
        "tools_token_share": 1.0,
    }
    async with agent(**llm_settings, **budget) as client:
        for n in range(3):
            response = await client.post(
                "/chat",
                json={
                    "session_id": "s-budget",
                    "message": f"question {n} about SKU2024001",
                    "user_context": CALLER,
                },
            )
            assert response.status_code == 200, response.text
        session = (await client.get("/sessions/s-budget", headers=AS_U1)).json()
    # The model wrote a summary (a non-streamed call) and the window moved to a turn start.
    summaries = [r for r in model.requests if not r.get("stream")]
    assert summaries
    assert "question 0" in str(summaries[0]["messages"])
    assert session["summary"]
    start = session["context_start_seq"]
    first_in_window = next(m for m in session["messages"] if m["seq"] == start)
    assert first_in_window["role"] == "user"
    # The last turn's first request held only turns from the window (the vendor
    # rules checked in ModelScript also confirm no call was split from its result).
    last_turn_first = [r for r in model.requests if r.get("stream")][-3]
    assert "question 0" not in str(last_turn_first["messages"])
    assert "Summary of the earlier conversation" in str(
        last_turn_first.get("system") or last_turn_first["messages"][0]
    )


def test_a_call_is_never_written_without_its_result() -> None:
    turn = uuid.uuid4()
    call = {"id": "c1", "name": "inventory_query", "arguments": {}}
    check_pairs(
        [
            NewMessage(role="assistant", turn_id=turn, tool_calls=[call]),
            NewMessage(role="tool", turn_id=turn, tool_call_id="c1"),
        ]
    )
    with pytest.raises(BrokenToolPair, match="without results"):
        check_pairs([NewMessage(role="assistant", turn_id=turn, tool_calls=[call])])
    with pytest.raises(BrokenToolPair, match="unknown call"):
        check_pairs([NewMessage(role="tool", turn_id=turn, tool_call_id="c9")])


async def test_the_lock_scripts_are_loaded_at_start(
    agent: AgentClient, clean_state: Backends
) -> None:
    # Otherwise each first turn after Redis starts fails an EVALSHA (NOSCRIPT) before
    # redis-py loads the script, and that failure shows as an error span in its trace.
    client = Redis.from_url(clean_state.redis_url)
    try:
        client.script_flush()
        scripts = [Lock.LUA_RELEASE_SCRIPT, Lock.LUA_EXTEND_SCRIPT, Lock.LUA_REACQUIRE_SCRIPT]
        digests = [client.script_load(s) for s in scripts]
        client.script_flush()
        assert client.script_exists(*digests) == [False] * 3
        async with agent():
            assert client.script_exists(*digests) == [True] * 3
    finally:
        client.close()
