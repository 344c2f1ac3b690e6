"""A streaming client that goes away cancels its turn; the session stays usable and valid."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import httpx

from agent.app import create_app
from agent.settings import Settings
from reach_common.llm.history import repair
from tests.agent.servers import ServerThread
from tests.agent.tap import GatewayTap
from tests.agent.wire import ModelScript
from tests.e2e.test_agent_sigkill import stored_history

CALLER = {"user_id": "u1", "roles": ["ops_admin"]}
AS_U1 = {"X-User-Id": "u1", "X-User-Roles": "ops_admin"}


async def test_disconnect_mid_turn_cancels_it_cleanly(
    agent_settings: Callable[..., Settings],
    gateway: GatewayTap,
    model: ModelScript,
    llm_settings: dict[str, Any],
) -> None:
    stock = "/tools/inventory_query/invoke"
    gateway.hold(stock, times=1)  # the first turn's tool call never comes back
    question = {"session_id": "s-cut", "message": "SKU2024001?", "user_context": CALLER}
    app = create_app(agent_settings(**llm_settings))
    with ServerThread(app) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
            async with client.stream(
                "POST", "/chat", json={**question, "stream": True}
            ) as response:
                assert response.status_code == 200
                async for line in response.aiter_lines():
                    if line == "event: tool_call":
                        # Still reading (leaving the loop closes the response): wait until
                        # the call is in flight, held in the tap, then go away.
                        await gateway.arrived(stock)
                        break
            # The connection is closed mid-tool-call. The turn must end and free the
            # session while its tool call is still held: poll (bounded) until the
            # session takes a message again.
            async with asyncio.timeout(20):
                while True:
                    retry = await client.post("/chat", json=question)
                    if retry.status_code != 409:
                        break
                    assert retry.json()["reason"] == "session_busy"
                    await asyncio.sleep(0.05)
            assert retry.status_code == 200, retry.text
            assert gateway.held(stock) == 1  # the cancelled turn did not wait for its tool
            session = (await client.get("/sessions/s-cut", headers=AS_U1)).json()
    stored = session["messages"]
    # The cancelled turn left its question and no half round; the retry ran in full.
    assert [m["role"] for m in stored[:2]] == ["user", "user"]
    assert stored[-1]["role"] == "assistant"
    assert stored[-1]["stop_reason"] == "end_turn"
    history = stored_history(stored)
    assert repair(history) == history  # nothing orphaned, nothing to repair
