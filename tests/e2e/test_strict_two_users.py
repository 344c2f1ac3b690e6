"""Strict mode end to end: shop, retriever, gateway and agent as real processes, two users
with API keys and different roles. Each can do exactly what their roles allow at the
gateway, the agent and the retriever, and sees nothing of the other's sessions, traces
or audit rows. The gateway reaches the retriever with a tool secret of its own (a
service key bound to the retriever's host), never with a caller's credential."""

from __future__ import annotations

import json
import time
from pathlib import Path

import httpx
import pytest

from reach_common.stack import mint_key
from tests.conftest import REPO_ROOT, Backends
from tests.e2e.processes import free_port, service_process

pytestmark = pytest.mark.slow
TIMEOUT = 30


def _key(database_url: str, user_id: str, roles: list[str]) -> dict[str, str]:
    key = mint_key(database_url, user_id, roles)
    return {"Authorization": f"Bearer {key}"}


def _audit(gateway: str, headers: dict[str, str]) -> list[dict[str, object]]:
    # Audit rows are batched off the request path: wait (bounded) until they are there.
    deadline = time.monotonic() + 10
    while True:
        rows = httpx.get(f"{gateway}/audit", headers=headers, timeout=TIMEOUT).json()
        if rows["invocations"] or time.monotonic() > deadline:
            return list(rows["invocations"])
        time.sleep(0.1)


def test_two_users_each_get_exactly_their_roles(clean_state: Backends, tmp_path: Path) -> None:
    db = clean_state.database_url
    alice = _key(db, "alice", ["ops_admin", "retriever_writer"])
    bob = _key(db, "bob", ["viewer"])
    service = _key(db, "svc-gateway-tools", ["retriever_writer"])["Authorization"].split()[1]
    env = {
        "DATABASE_URL": db,
        "REDIS_URL": clean_state.redis_url,
        "LOG_LEVEL": "WARNING",
        "LLM_PROVIDER": "offline",
        "AUTH_MODE": "strict",
    }
    shop_port, retriever_port, gateway_port, agent_port = (free_port() for _ in range(4))
    gateway_env = {
        **env,
        "SHOP_URL": f"http://127.0.0.1:{shop_port}",
        "RETRIEVER_URL": f"http://127.0.0.1:{retriever_port}",
        "TOOL_AUTO_DISCOVERY": "true",
        "MANIFESTS_DIR": str(REPO_ROOT / "manifests"),
        "EGRESS_ALLOWLIST": "127.0.0.1",
        "REACH_SECRET_RETRIEVER_API_KEY": service,
        "TOOL_SECRET_HOSTS": json.dumps({"retriever_api_key": ["retriever"]}),
        "CALLER_RATE_LIMIT": "",
        "ROUTE_RATE_LIMIT": "",
    }
    with (
        service_process("shop", shop_port, env, tmp_path),
        service_process("retriever", retriever_port, env, tmp_path) as retriever,
        service_process("gateway", gateway_port, gateway_env, tmp_path) as gateway,
        service_process("agent", agent_port, {**env, "GATEWAY_URL": gateway}, tmp_path) as agent,
    ):
        client = httpx.Client(timeout=TIMEOUT)
        # --- gateway: listing and invoking follow the roles -----------------------------
        alice_tools = {
            t["tool_id"] for t in client.get(f"{gateway}/tools/list", headers=alice).json()["tools"]
        }
        bob_tools = {
            t["tool_id"] for t in client.get(f"{gateway}/tools/list", headers=bob).json()["tools"]
        }
        anonymous_tools = {
            t["tool_id"] for t in client.get(f"{gateway}/tools/list").json()["tools"]
        }
        assert {"order_query", "report_monthly", "rag_ingest", "sales_query"} <= alice_tools
        assert "sales_query" in bob_tools
        assert not {"order_query", "report_monthly", "rag_ingest"} & bob_tools
        assert anonymous_tools == {"inventory_query"}

        stock = {"arguments": {"sku": "SKU2024001"}}
        assert (
            client.post(f"{gateway}/tools/sales_query/invoke", json=stock, headers=bob).status_code
            == 200
        )
        refused = client.post(
            f"{gateway}/tools/report_monthly/invoke",
            json={"arguments": {"month": "2026-09"}},
            headers=bob,
        )
        assert refused.status_code == 404
        assert refused.json()["reason"] == "tool_not_found"
        claimed = client.post(
            f"{gateway}/tools/report_monthly/invoke",
            json={
                "arguments": {"month": "2026-09"},
                "user_context": {"user_id": "alice", "roles": ["ops_admin"]},
            },
        )
        assert claimed.status_code == 404  # a claimed identity is nobody in strict mode

        # The gateway calls the retriever with its own bound service key.
        ingest = {
            "arguments": {
                "source": "alice-notes.md",
                "text": "Reach keeps tool secrets out of manifests.",
            }
        }
        via_gateway = client.post(f"{gateway}/tools/rag_ingest/invoke", json=ingest, headers=alice)
        assert via_gateway.status_code == 200, via_gateway.text
        assert (
            client.post(f"{gateway}/tools/rag_ingest/invoke", json=ingest, headers=bob).status_code
            == 404
        )

        # --- registry: only registry admins write ------------------------------------------
        denied = client.delete(f"{gateway}/tools/inventory_query", headers=alice)
        assert denied.status_code == 403
        assert denied.json()["reason"] == "insufficient_permission"

        # --- retriever: writers write, readers read, strangers nothing ---------------------
        doc = {"source": "bob.md", "text": "Bob tries to poison the knowledge base."}
        bob_ingest = client.post(f"{retriever}/ingest", json=doc, headers=bob)
        assert bob_ingest.status_code == 403
        assert bob_ingest.json()["reason"] == "insufficient_permission"
        alice_ingest = client.post(
            f"{retriever}/ingest", json={**doc, "source": "alice.md"}, headers=alice
        )
        assert alice_ingest.status_code == 201, alice_ingest.text
        assert (
            client.post(
                f"{retriever}/retrieve", json={"query": "tool secrets"}, headers=bob
            ).status_code
            == 200
        )
        assert (
            client.post(f"{retriever}/retrieve", json={"query": "tool secrets"}).status_code == 401
        )
        sources = {
            s["source"] for s in client.get(f"{retriever}/sources", headers=bob).json()["sources"]
        }
        assert "bob.md" not in sources

        # --- agent: sessions belong to their owner ----------------------------------------
        turn = client.post(
            f"{agent}/chat",
            json={"session_id": "alice-s1", "message": "SKU2024001 还有多少库存"},
            headers=alice,
        )
        assert turn.status_code == 200, turn.text
        assert turn.json()["tool_calls"][0]["result"]["available"] == 156
        trace_id = turn.json()["trace_id"]
        assert client.get(f"{agent}/sessions/alice-s1", headers=alice).status_code == 200
        assert client.get(f"{agent}/sessions/alice-s1", headers=bob).status_code == 404
        assert client.get(f"{agent}/sessions/alice-s1").status_code == 401
        hijack = client.post(
            f"{agent}/chat",
            json={"session_id": "alice-s1", "message": "show me everything"},
            headers=bob,
        )
        assert hijack.status_code == 403
        assert hijack.json()["reason"] == "session_forbidden"
        bob_sessions = client.get(f"{agent}/sessions", headers=bob).json()["sessions"]
        assert all(s["user_id"] == "bob" for s in bob_sessions)
        assert client.delete(f"{agent}/sessions/alice-s1", headers=bob).status_code == 404

        # --- traces: the agent turn's trace is alice's ----------------------------------
        # Each service exports its spans in batches: wait (bounded) for both.
        deadline = time.monotonic() + 15
        while True:
            mine = client.get(f"{gateway}/traces/{trace_id}", headers=alice)
            services = set(mine.json().get("services", [])) if mine.status_code == 200 else set()
            if {"agent", "gateway"} <= services or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert mine.status_code == 200, mine.text
        assert {"agent", "gateway"} <= services
        stolen = client.get(f"{gateway}/traces/{trace_id}", headers=bob)
        assert stolen.status_code == 404
        assert stolen.json()["reason"] == "trace_not_found"

        # --- audit: each sees their own calls ----------------------------------------------
        alice_rows = _audit(gateway, alice)
        bob_rows = _audit(gateway, bob)
        assert alice_rows
        assert {r["caller"] for r in alice_rows} == {"alice"}
        assert bob_rows
        assert {r["caller"] for r in bob_rows} == {"bob"}
        assert client.get(f"{gateway}/audit").status_code == 401
