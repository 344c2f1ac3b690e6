"""The ReAct loop with each vendor's real SDK, answered by recorded payloads (respx).

The recorded model calls ``inventory_query``, then ``inventory_query`` and
``sales_query`` in parallel, then answers. Tools run through the loopback
gateway against the real shop, so every figure checked here comes from the
shop's data, never from the recordings.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.agent.conftest import AgentClient
from tests.agent.tap import GatewayTap
from tests.agent.wire import ModelScript, unframe
from tests.conftest import KeyMaker

CALLER = {"user_id": "u1", "roles": ["ops_admin"]}
AS_U1 = {"X-User-Id": "u1", "X-User-Roles": "ops_admin"}  # the same claim, as headers


def tool_results_sent(body: dict[str, Any], vendor: str) -> list[dict[str, Any]]:
    """The tool results a model request carried, as ``{id, content, is_error, source, data}``:
    ``content`` as sent, ``source`` and ``data`` from inside its untrusted-data frame."""
    return [{**r, **unframe(r["content"])} for r in _tool_results(body, vendor)]


def _tool_results(body: dict[str, Any], vendor: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for message in body["messages"]:
        if vendor == "anthropic" and isinstance(message["content"], list):
            found.extend(
                {"id": b["tool_use_id"], "content": b["content"], "is_error": b["is_error"]}
                for b in message["content"]
                if b["type"] == "tool_result"
            )
        elif vendor == "openai" and message["role"] == "tool":
            found.append(
                {
                    "id": message["tool_call_id"],
                    "content": message["content"],
                    "is_error": message["content"].startswith("Error"),
                }
            )
    return found


async def test_turn_runs_tool_rounds_and_answers(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    async with agent(**llm_settings) as client:
        response = await client.post(
            "/chat",
            json={
                "session_id": "s-react",
                "message": "How is SKU2024001 doing?",
                "user_context": CALLER,
            },
        )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["session_id"] == "s-react"
    assert body["rounds"] == 2
    assert body["stop_reason"] == "end_turn"
    assert body["mode"] == vendor
    assert len(body["trace_id"]) == 32
    assert [c["tool_id"] for c in body["tool_calls"]] == [
        "inventory_query",
        "inventory_query",
        "sales_query",
    ]
    assert [c["round"] for c in body["tool_calls"]] == [1, 2, 2]
    stock = body["tool_calls"][0]["result"]
    assert (stock["sku"], stock["available"], stock["locked"]) == ("SKU2024001", 156, 12)
    assert body["tool_calls"][2]["result"]["total_quantity"] > 0
    assert body["reply"]  # the recorded final answer

    # Three model calls; the last carried all three real results back.
    assert len(model.requests) == 3
    results = tool_results_sent(model.requests[-1], vendor)
    assert len(results) == 3
    assert not any(r["is_error"] for r in results)
    assert json.loads(results[0]["data"])["available"] == 156
    assert [r["source"] for r in results] == ["inventory_query", "inventory_query", "sales_query"]

    # Tools went through the gateway with the caller's identity and the trace.
    invokes = [r for r in gateway.requests if r["path"].endswith("/invoke")]
    assert [r["path"] for r in invokes] == [
        "/tools/inventory_query/invoke",
        "/tools/inventory_query/invoke",
        "/tools/sales_query/invoke",
    ]
    for invoke in invokes:
        assert invoke["body"]["user_context"] == CALLER
        assert invoke["headers"]["traceparent"].split("-")[1] == body["trace_id"]
    listing = gateway.to("/tools/list")[0]
    assert listing["headers"]["x-user-id"] == "u1"
    assert listing["headers"]["x-user-roles"] == "ops_admin"


FIXTURE_NAMES = {
    "anthropic": {
        "midstream_error": "stream_overloaded_midstream.sse",
        "truncated": "stream_max_tokens_tool_use.sse",
        "invalid_sku": "stream_invalid_sku.sse",
    },
    "openai": {
        "midstream_error": "stream_error_midstream.sse",
        "truncated": "stream_length_truncated.sse",
        "invalid_sku": "stream_invalid_sku.sse",
    },
}


def parse_sse(text: str) -> list[tuple[str, dict[str, Any]]]:
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(
            line.split(": ", 1)
            for line in block.split("\n")
            if ": " in line and not line.startswith(":")
        )
        if "event" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


async def test_parallel_tool_calls_run_concurrently(
    agent: AgentClient, gateway: GatewayTap, model: ModelScript, llm_settings: dict[str, Any]
) -> None:
    model.rounds = model.rounds[1:]  # type: ignore[index]  # the parallel round only
    # Both calls wait in the tap until both have arrived: run one after the other, the
    # second would never arrive while the first waits.
    stock, sales = "/tools/inventory_query/invoke", "/tools/sales_query/invoke"
    gateway.hold(stock)
    gateway.hold(sales)
    async with agent(**llm_settings) as client:
        turn = asyncio.create_task(
            client.post(
                "/chat",
                json={"message": "stock and sales of SKU2024001?", "user_context": CALLER},
            )
        )
        try:
            await gateway.arrived(stock)
            await gateway.arrived(sales)
            held = (gateway.held(stock), gateway.held(sales))
        finally:
            gateway.release()
            response = await turn
    assert held == (1, 1)
    assert response.status_code == 200, response.text
    body = response.json()
    assert [c["tool_id"] for c in body["tool_calls"]] == ["inventory_query", "sales_query"]
    assert body["rounds"] == 1
    assert not any(c["is_error"] for c in body["tool_calls"])
    assert body["tool_calls"][0]["result"]["available"] == 156
    assert gateway.max_in_flight >= 2


async def test_streaming_turn_sends_events_in_order(
    agent: AgentClient, gateway: GatewayTap, model: ModelScript, llm_settings: dict[str, Any]
) -> None:
    async with agent(**llm_settings) as client:
        response = await client.post(
            "/chat",
            json={
                "session_id": "s-sse",
                "message": "SKU2024001?",
                "user_context": CALLER,
                "stream": True,
            },
        )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(response.text)
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "done"
    assert kinds.count("tool_call") == 3
    assert kinds.count("tool_result") == 3
    assert "delta" in kinds
    # Each call is announced before its result.
    calls = [data["id"] for kind, data in events if kind == "tool_call"]
    results = [data["id"] for kind, data in events if kind == "tool_result"]
    assert set(calls) == set(results)
    for call_id in calls:
        assert kinds.index("tool_call") <= [d.get("id") for _, d in events].index(call_id)
    streamed = "".join(data["text"] for kind, data in events if kind == "delta")
    done = events[-1][1]
    assert done["reply"]
    assert done["reply"] in streamed
    assert done["session_id"] == "s-sse"
    assert done["rounds"] == 2
    assert len(done["trace_id"]) == 32
    stock = next(data for kind, data in events if kind == "tool_result")["result"]
    assert stock["available"] == 156


async def test_error_event_mid_stream_fails_the_turn_and_keeps_the_session_valid(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    model.fail_with = FIXTURE_NAMES[vendor]["midstream_error"]
    async with agent(**llm_settings) as client:
        question = {"session_id": "s-err", "message": "SKU2024001?", "user_context": CALLER}
        failed = await client.post("/chat", json=question)
        assert failed.status_code == 503
        assert failed.json()["reason"] == "llm_overloaded"
        assert failed.json()["trace_id"]

        streamed = await client.post(
            "/chat", json={**question, "message": "again?", "stream": True}
        )
        events = parse_sse(streamed.text)
        assert events[-1][0] == "error"
        assert events[-1][1]["reason"] == "llm_overloaded"
        assert len(events[-1][1]["trace_id"]) == 32

        model.fail_with = None  # the vendor recovers; the stored history must still be valid
        ok = await client.post("/chat", json=question)
        assert ok.status_code == 200, ok.text
        assert ok.json()["rounds"] == 2
        session = (await client.get("/sessions/s-err", headers=AS_U1)).json()
    roles = [m["role"] for m in session["messages"]]
    assert roles[:2] == ["user", "user"]  # the failed turns left their question only
    assert roles[-1] == "assistant"


async def test_max_tool_rounds_ends_with_a_final_call_without_tools(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    model.always_tools = True
    async with agent(**llm_settings, max_tool_rounds=2) as client:
        response = await client.post(
            "/chat", json={"session_id": "s-max", "message": "dig deep", "user_context": CALLER}
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["rounds"] == 2
        assert body["stop_reason"] == "max_tool_rounds"
        assert body["reply"]
        session = (await client.get("/sessions/s-max", headers=AS_U1)).json()
    assert len(model.requests) == 3
    final = model.requests[-1]
    if vendor == "anthropic":  # the history has tool blocks, so tools stay declared, unusable
        assert final["tool_choice"] == {"type": "none"}
    else:
        assert "tools" not in final
    assert "tool budget" in json.dumps(final)
    last = session["messages"][-1]
    assert (last["role"], last["stop_reason"], last["rounds"]) == (
        "assistant",
        "max_tool_rounds",
        2,
    )


async def test_tool_errors_and_bad_arguments_go_back_to_the_model(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    model.rounds = (FIXTURE_NAMES[vendor]["invalid_sku"], FIXTURE_NAMES[vendor]["truncated"])
    async with agent(**llm_settings) as client:
        response = await client.post(
            "/chat", json={"message": "stock of 2024001?", "user_context": CALLER}
        )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["stop_reason"] == "end_turn"
    assert body["rounds"] == 2
    invalid, truncated = body["tool_calls"]
    assert invalid["is_error"]
    assert invalid["result"]["error"]["reason"] == "invalid_arguments"
    assert truncated["is_error"]
    assert truncated["result"]["error"]["reason"] == "invalid_arguments"
    # The gateway refused the bad SKU; the cut-off call never reached it.
    invokes = [r for r in gateway.requests if r["path"].endswith("/invoke")]
    assert [r["body"]["arguments"] for r in invokes] == [{"sku": "2024001"}]
    results = tool_results_sent(model.requests[-1], vendor)
    assert [r["is_error"] for r in results] == [True, True]
    assert "pattern" in results[0]["content"] or "match" in results[0]["content"]


async def test_credential_is_forwarded_and_limits_the_tools_offered(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
    make_key: KeyMaker,
) -> None:
    key = await make_key("ops-1", ["ops_admin"])
    model.rounds = model.rounds[:1]  # type: ignore[index]  # inventory_query: a public tool
    async with agent(**llm_settings) as client:
        anonymous = await client.post("/chat", json={"message": "SKU2024001?"})
        anonymous_requests = len(model.requests)
        admin = await client.post(
            "/chat",
            json={"message": "SKU2024001?"},
            headers={"Authorization": f"Bearer {key}"},
        )
    assert anonymous.status_code == 200, anonymous.text
    assert admin.status_code == 200, admin.text

    def offered(body: dict[str, Any]) -> set[str]:
        tools = body.get("tools", [])
        return {t["name"] if vendor == "anthropic" else t["function"]["name"] for t in tools}

    # Anonymous callers get the public tools only; the key's ops_admin role adds the rest.
    assert offered(model.requests[0]) == {"inventory_query"}
    assert {"order_query", "sales_query", "order_create", "rag_retrieve"} <= offered(
        model.requests[anonymous_requests]
    )
    admin_invokes = [
        r for r in gateway.requests if r["headers"].get("authorization") == f"Bearer {key}"
    ]
    assert {r["path"] for r in admin_invokes} >= {"/tools/list", "/tools/inventory_query/invoke"}


async def test_a_failed_turn_resumes_on_retry_and_cannot_be_resumed_once_superseded(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    vendor: str,
    llm_settings: dict[str, Any],
) -> None:
    failing = FIXTURE_NAMES[vendor]["midstream_error"]
    request = {
        "session_id": "s-resume",
        "message": "SKU2024001?",
        "message_id": "m-1",
        "user_context": CALLER,
    }
    async with agent(**llm_settings) as client:
        model.fail_with = failing
        failed = await client.post("/chat", json=request)
        model.fail_with = None
        resumed = await client.post("/chat", json=request)
        replayed = await client.post("/chat", json=request)

        model.fail_with = failing
        await client.post("/chat", json={**request, "message": "later?", "message_id": "m-2"})
        model.fail_with = None
        await client.post("/chat", json={**request, "message": "newer", "message_id": "m-3"})
        superseded = await client.post(
            "/chat", json={**request, "message": "later?", "message_id": "m-2"}
        )
        session = (await client.get("/sessions/s-resume", headers=AS_U1)).json()
    assert failed.status_code == 503
    assert resumed.status_code == 200, resumed.text
    assert resumed.json()["replayed"] is False
    assert resumed.json()["rounds"] == 2
    assert replayed.json()["replayed"] is True
    assert replayed.json()["reply"] == resumed.json()["reply"]
    assert superseded.status_code == 409
    assert superseded.json()["reason"] == "turn_superseded"
    users = [m["client_message_id"] for m in session["messages"] if m["role"] == "user"]
    assert users == ["m-1", "m-2", "m-3"]  # the retry did not store the question twice


async def test_strict_mode_forwards_the_callers_own_key_and_no_claimed_identity(
    agent: AgentClient,
    gateway: GatewayTap,
    model: ModelScript,
    llm_settings: dict[str, Any],
    make_key: KeyMaker,
) -> None:
    key = await make_key("ops-2", ["ops_admin"])
    async with agent(**llm_settings, auth_mode="strict") as client:
        response = await client.post(
            "/chat",
            json={"message": "SKU2024001?", "user_context": {"user_id": "root", "roles": ["x"]}},
            headers={"X-API-Key": key, "X-User-Id": "root"},
        )
    assert response.status_code == 200, response.text
    assert gateway.requests
    for request in gateway.requests:
        assert request["headers"]["x-api-key"] == key  # as received, nothing of the agent's
        assert "authorization" not in request["headers"]
        assert "x-user-id" not in request["headers"]
        assert "x-user-roles" not in request["headers"]
        if request["body"] is not None:
            assert request["body"]["user_context"] == {}
