"""Federation end to end (issue 12, must-show 3): the gateway and the offline agent as real
processes consume a real MCP server process (the SDK's server API, Streamable HTTP on
127.0.0.1) exposing two tools.

Registered through ``POST /mcp/servers``, both tools appear in ``GET /tools/list`` and
are callable through ``/tools/{id}/invoke``, ``/run`` and the agent; when the server
drops one, it leaves the registry within the sync interval; when the server dies,
calls fail, the breaker opens, and calls then fail fast with ``tool_unavailable``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import Backends, assert_error
from tests.e2e.processes import free_port, service_process, stop_process
from tests.gateway.test_mcp_federation import CLOSE_ID, STATUS_ID, mcp_upstream

pytestmark = pytest.mark.slow
CALLER = {"user_id": "u1", "roles": ["clerk"]}
ADMIN = {"X-User-Id": "root", "X-User-Roles": "admin"}
SYNC_INTERVAL_S = 0.5


def tool_ids(gateway: str) -> set[str]:
    tools = httpx.get(f"{gateway}/tools/list", headers={"X-User-Id": "u1"}, timeout=10).json()
    return {tool["tool_id"] for tool in tools["tools"]}


def invoke(gateway: str, tool_id: str, **arguments: Any) -> httpx.Response:
    return httpx.post(
        f"{gateway}/tools/{tool_id}/invoke",
        json={"arguments": arguments, "user_context": CALLER},
        timeout=30,
    )


def test_federated_tools_are_listed_invoked_routed_and_used_by_the_agent(
    clean_state: Backends, tmp_path: Path
) -> None:
    env = {
        "DATABASE_URL": clean_state.database_url,
        "REDIS_URL": clean_state.redis_url,
        "LOG_LEVEL": "WARNING",
        "LLM_PROVIDER": "offline",
    }
    gateway_env = {
        **env,
        "MCP_SYNC_INTERVAL_S": str(SYNC_INTERVAL_S),
        "BREAKER_FAILURE_THRESHOLD": "2",
        "BREAKER_RESET_TIMEOUT_MS": "60000",
    }
    with (
        mcp_upstream() as (upstream, upstream_process),
        service_process("gateway", free_port(), gateway_env, tmp_path) as gateway,
        service_process("agent", free_port(), {**env, "GATEWAY_URL": gateway}, tmp_path) as agent,
    ):
        registered = httpx.post(
            f"{gateway}/mcp/servers",
            json={"server_id": "helpdesk", "transport": "http", "url": f"{upstream}/mcp"},
            headers=ADMIN,
            timeout=30,
        )
        listed = tool_ids(gateway)
        status = invoke(gateway, STATUS_ID, ticket_id="TCK000042")
        routed = httpx.post(
            f"{gateway}/run",
            json={
                "session_id": "s-run",
                "user_query": "status of helpdesk support ticket TCK000043",
                "user_context": CALLER,
            },
            timeout=30,
        )
        chat = httpx.post(
            f"{agent}/chat",
            json={
                "message": "what is the status of helpdesk support ticket TCK000042?",
                "user_context": CALLER,
            },
            timeout=60,
        )
        closed = invoke(gateway, CLOSE_ID, ticket_id="TCK000043")
        with httpx.Client(timeout=30) as client:  # one kept connection, as the agent has
            latencies = sorted(
                client.post(
                    f"{gateway}/tools/{STATUS_ID}/invoke",
                    json={"arguments": {"ticket_id": "TCK000042"}, "user_context": CALLER},
                ).json()["latency_ms"]
                for _ in range(50)
            )

        httpx.post(f"{upstream}/control/remove/ticket_close", timeout=5)
        removed_after = _wait_until_gone(gateway, CLOSE_ID)
        trace = httpx.get(
            f"{gateway}/traces/{status.json()['trace_id']}", headers=ADMIN, timeout=10
        ).json()

        stop_process(upstream_process)  # the upstream dies
        failures = [invoke(gateway, STATUS_ID, ticket_id="TCK000042") for _ in range(2)]
        started = time.perf_counter()
        paused = invoke(gateway, STATUS_ID, ticket_id="TCK000042")
        paused_ms = (time.perf_counter() - started) * 1000

    assert registered.status_code == 201, registered.text
    assert {STATUS_ID, CLOSE_ID} <= listed
    assert status.status_code == 200, status.text
    assert status.json()["output"]["title"] == "Printer on fire"
    assert routed.status_code == 200, routed.text
    assert routed.json()["tool_id"] == STATUS_ID
    assert routed.json()["output"]["title"] == "VPN drops hourly"
    assert chat.status_code == 200, chat.text
    reply = chat.json()
    assert reply["mode"] == "offline"
    (call,) = reply["tool_calls"]
    assert call["tool_id"] == STATUS_ID
    assert call["arguments"] == {"ticket_id": "TCK000042"}
    assert call["result"]["title"] == "Printer on fire"
    assert closed.json()["output"]["status"] == "closed"
    print(f"ticket_close left the registry {removed_after:.2f} s after the server dropped it")
    assert removed_after < 10 * SYNC_INTERVAL_S
    names = span_names(trace["spans"])
    assert {"gateway.auth", "gateway.validate", "gateway.execute", "mcp tools/call"} <= names
    for failure in failures:
        assert_error(failure, 502, "tool_error")
    assert_error(paused, 503, "tool_unavailable")
    print(
        f"federated call through /tools/{{id}}/invoke: p50 {latencies[25]} ms, "
        f"max {latencies[-1]} ms (gateway latency_ms, 50 calls over one kept MCP session)"
    )
    print(
        f"with the breaker open, a call was refused in {paused.json()['latency_ms']} ms "
        f"(gateway), {paused_ms:.1f} ms (client, new connection)"
    )


def span_names(spans: list[dict[str, Any]]) -> set[str]:
    return {name for span in spans for name in {span["name"], *span_names(span["children"])}}


def _wait_until_gone(gateway: str, tool_id: str) -> float:
    """Seconds until ``tool_id`` left ``/tools/list`` (bounded: about 10 s)."""
    started = time.perf_counter()
    for _ in range(200):
        if tool_id not in tool_ids(gateway):
            return time.perf_counter() - started
        time.sleep(0.05)
    raise AssertionError(f"{tool_id} is still listed")
