"""An order through the agent waits for a person, end to end: shop, gateway and agent as
processes (offline agent), approvals on as shipped.

Approve: the turn ends awaiting approval, an admin approves at the gateway, the order exists
exactly once in the shop, and the next agent turn answers with its id. Deny: no order, and
the next turn says it was denied. (The same plot with both vendors' recorded payloads runs
in process: ``tests/agent/test_approval_turns.py``.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO_ROOT, Backends, shop_orders
from tests.e2e.processes import free_port, service_process

pytestmark = pytest.mark.slow
CALLER = {"user_id": "user_123", "roles": ["ops_admin"]}
APPROVER = {"X-User-Id": "boss", "X-User-Roles": "admin"}


def chat(agent: str, session: str, message: str) -> dict[str, Any]:
    response = httpx.post(
        f"{agent}/chat",
        json={"session_id": session, "message": message, "user_context": CALLER},
        timeout=60,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert isinstance(body, dict)
    return body


def order_and_decide(
    agent: str, gateway: str, session: str, customer: str, verdict: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    first = chat(agent, session, f"Create an order of 2 units of SKU2024001 for {customer}")
    assert first["stop_reason"] == "awaiting_approval", first
    approval_id = first["tool_calls"][0]["result"]["approval_id"]
    decided = httpx.post(
        f"{gateway}/approvals/{approval_id}/{verdict}",
        json={"comment": "checked by e2e"},
        headers=APPROVER,
        timeout=60,
    )
    assert decided.status_code == 200, decided.text
    return first, chat(agent, session, "Has my order gone through?")


def test_an_order_waits_for_approval_then_runs_once_or_not_at_all(
    clean_state: Backends, tmp_path: Path
) -> None:
    env = {
        "DATABASE_URL": clean_state.database_url,
        "REDIS_URL": clean_state.redis_url,
        "LOG_LEVEL": "WARNING",
        "LLM_PROVIDER": "offline",
    }
    shop_port, gateway_port, agent_port = (free_port() for _ in range(3))
    gateway_env = {
        **env,
        "SHOP_URL": f"http://127.0.0.1:{shop_port}",
        "TOOL_AUTO_DISCOVERY": "true",
        "MANIFESTS_DIR": str(REPO_ROOT / "manifests"),
    }
    with (
        service_process("shop", shop_port, env, tmp_path),
        service_process("gateway", gateway_port, gateway_env, tmp_path) as gateway,
        service_process("agent", agent_port, {**env, "GATEWAY_URL": gateway}, tmp_path) as agent,
    ):
        first, approved = order_and_decide(agent, gateway, "s-yes", "Ada Lovelace", "approve")
        _, denied = order_and_decide(agent, gateway, "s-no", "Grace Hopper", "deny")
        assert shop_orders(clean_state, "Grace Hopper") == []  # denied: nothing ran

    (order_id,) = shop_orders(clean_state, "Ada Lovelace")  # approved: exactly once
    assert first["tool_calls"][0]["tool_id"] == "order_create"
    assert order_id in approved["reply"]
    assert "was approved and ran" in approved["reply"]
    assert "denied" in denied["reply"]
    assert "checked by e2e" in denied["reply"]
