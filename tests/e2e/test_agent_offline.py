"""Offline agent end to end: the real gateway, retriever and shop as processes, no model.

Turn 1 asks for SKU2024001's stock and must answer with the shop's real
figure; turn 2 asks "那这个 SKU 最近卖得怎么样" in the same session and must
look up the sales of the SKU from turn 1, which only the session can supply.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO_ROOT, Backends
from tests.e2e.processes import free_port, service_process

pytestmark = pytest.mark.slow
CALLER = {"user_id": "user_123", "roles": ["ops_admin"]}


def shop_stock(shop: str, sku: str) -> int:
    return int(httpx.get(f"{shop}/api/inventory/{sku}", timeout=10).json()["available"])


def test_offline_agent_answers_from_the_real_stack(clean_state: Backends, tmp_path: Path) -> None:
    env = {
        "DATABASE_URL": clean_state.database_url,
        "REDIS_URL": clean_state.redis_url,
        "LOG_LEVEL": "WARNING",
        "LLM_PROVIDER": "offline",
    }
    shop_port, retriever_port, gateway_port, agent_port = (free_port() for _ in range(4))
    gateway_env = {
        **env,
        "SHOP_URL": f"http://127.0.0.1:{shop_port}",
        "RETRIEVER_URL": f"http://127.0.0.1:{retriever_port}",
        "TOOL_AUTO_DISCOVERY": "true",
        "MANIFESTS_DIR": str(REPO_ROOT / "manifests"),
    }
    with (
        service_process("shop", shop_port, env, tmp_path) as shop,
        service_process("retriever", retriever_port, env, tmp_path),
        service_process("gateway", gateway_port, gateway_env, tmp_path) as gateway,
    ):
        agent_env = {**env, "GATEWAY_URL": gateway}
        with service_process("agent", agent_port, agent_env, tmp_path) as agent:
            first = httpx.post(
                f"{agent}/chat",
                json={
                    "session_id": "sess_e2e",
                    "message": "SKU2024001 还有多少库存",
                    "user_context": CALLER,
                },
                timeout=30,
            )
            second = httpx.post(
                f"{agent}/chat",
                json={
                    "session_id": "sess_e2e",
                    "message": "那这个 SKU 最近卖得怎么样",
                    "user_context": CALLER,
                },
                timeout=30,
            )
            # The session is user_123's (permissive mode: the claimed identity).
            as_owner = {"X-User-Id": "user_123", "X-User-Roles": "ops_admin"}
            session = httpx.get(f"{agent}/sessions/sess_e2e", headers=as_owner, timeout=10).json()
            stranger = httpx.get(
                f"{agent}/sessions/sess_e2e", headers={"X-User-Id": "someone_else"}, timeout=10
            )
        stock = shop_stock(shop, "SKU2024001")

    assert first.status_code == 200, first.text
    one = first.json()
    assert one["mode"] == "offline"
    assert len(one["trace_id"]) == 32
    (call,) = one["tool_calls"]
    assert call["tool_id"] == "inventory_query"
    assert call["arguments"]["sku"] == "SKU2024001"
    assert call["result"]["available"] == stock == 156
    assert "inventory_query" in one["reply"]
    assert f"available: {stock}" in one["reply"]

    assert second.status_code == 200, second.text
    two = second.json()
    (sales,) = two["tool_calls"]
    assert sales["tool_id"] == "sales_query"
    assert not sales["is_error"]
    assert sales["arguments"]["sku"] == "SKU2024001"  # from the session, not the message
    assert sales["result"]["sku"] == "SKU2024001"
    assert sales["result"]["total_quantity"] > 0
    assert "sales_query" in two["reply"]
    assert [m["role"] for m in session["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ] * 2
    assert stranger.status_code == 404
    assert stranger.json()["reason"] == "session_not_found"
