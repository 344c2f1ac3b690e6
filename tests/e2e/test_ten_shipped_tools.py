"""Every shipped tool works in the demo stack: each of the ten called once through
``POST /run`` with a plain request, no model, under ``make run`` conditions.

Shop, retriever and gateway run as real processes; the gateway loads ``manifests/``
by auto-discovery and gets the retriever's service key as ``make run`` gives it (a key
minted with ``reach_common.stack.mint_service_key``, bound to the retriever's host by
``TOOL_SECRET_HOSTS``). The caller claims the roles the tools ask for (permissive mode,
the local default). ``report_monthly`` is queued: its task is polled until it is done.
``order_create`` and ``rag_delete_source`` need approval (the shipped policy): the
``202 approval_pending`` answer is approved by another user holding ``admin``, and the
approved call's result is the tool's answer.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from reach_common.stack import SERVICE_KEY_ENV, SERVICE_KEY_SECRET, mint_service_key
from tests.conftest import REPO_ROOT, Backends
from tests.e2e.processes import free_port, service_process

pytestmark = pytest.mark.slow
TIMEOUT = 30
USER = "demo_user"
APPROVER = {"X-User-Id": "demo_approver", "X-User-Roles": "admin"}
ROLES = ["ops_admin", "kb_admin", "finance", "order_manager"]
SOURCE = "returns-policy-e2e.md"


def run(client: httpx.Client, gateway: str, query: str) -> dict[str, Any]:
    response = client.post(
        f"{gateway}/run",
        json={
            "session_id": "ten-tools",
            "user_query": query,
            "user_context": {"user_id": USER, "roles": ROLES},
        },
    )
    body: dict[str, Any] = response.json()
    if body.get("reason") == "approval_pending":
        return approved(client, gateway, query, body)
    # 202: a queued tool's call was accepted; its result is read at GET /tasks/{task_id}.
    assert response.status_code in (200, 202), f"{query!r}: {response.status_code} {body}"
    assert body["success"] is True, f"{query!r}: {body}"
    return body


def approved(
    client: httpx.Client, gateway: str, query: str, pending: dict[str, Any]
) -> dict[str, Any]:
    """The routed call once an approver approved it: tool, arguments and output."""
    approval_id = pending["approval_id"]
    response = client.post(
        f"{gateway}/approvals/{approval_id}/approve", json={"comment": "ok"}, headers=APPROVER
    )
    record: dict[str, Any] = response.json()
    assert response.status_code == 200, f"{query!r}: {response.status_code} {record}"
    assert record["state"] == "succeeded", f"{query!r}: {record}"
    return {
        "tool_id": record["tool_id"],
        "arguments": record["arguments"],
        "output": record["result"].get("output", record["result"]),
    }


def task_done(client: httpx.Client, gateway: str, task_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        task: dict[str, Any] = client.get(
            f"{gateway}/tasks/{task_id}", headers={"X-User-Id": USER}
        ).json()
        if task.get("status") in ("succeeded", "failed") or time.monotonic() > deadline:
            return task
        time.sleep(0.1)


def test_each_shipped_tool_answers_a_plain_request(clean_state: Backends, tmp_path: Path) -> None:
    env = {
        "DATABASE_URL": clean_state.database_url,
        "REDIS_URL": clean_state.redis_url,
        "LOG_LEVEL": "WARNING",
        "LLM_PROVIDER": "offline",
    }
    shop_port, retriever_port, gateway_port = (free_port() for _ in range(3))
    gateway_env = {
        **env,
        "SHOP_URL": f"http://127.0.0.1:{shop_port}",
        "RETRIEVER_URL": f"http://127.0.0.1:{retriever_port}",
        "TOOL_AUTO_DISCOVERY": "true",
        "MANIFESTS_DIR": str(REPO_ROOT / "manifests"),
        SERVICE_KEY_ENV: mint_service_key(clean_state.database_url),
        "TOOL_SECRET_HOSTS": json.dumps({SERVICE_KEY_SECRET: ["retriever"]}),
    }
    month = datetime.now(UTC).strftime("%Y-%m")
    with (
        service_process("shop", shop_port, env, tmp_path) as shop,
        service_process("retriever", retriever_port, env, tmp_path),
        service_process("gateway", gateway_port, gateway_env, tmp_path) as gateway,
        httpx.Client(timeout=TIMEOUT) as client,
    ):
        called: dict[str, dict[str, Any]] = {}

        def call(query: str, tool_id: str) -> dict[str, Any]:
            body = run(client, gateway, query)
            assert body["tool_id"] == tool_id, f"{query!r} went to {body['tool_id']}: {body}"
            called[tool_id] = body
            return body

        ingested = call(
            f"add this text to the knowledge base as {SOURCE}: Opened items can be "
            "returned within 30 days for store credit; unopened ones for a full refund.",
            "rag_ingest",
        )
        assert ingested["arguments"]["source"] == SOURCE
        call("is the knowledge base up and running?", "rag_status")
        listed = call("which documents are in the knowledge base?", "rag_list_sources")
        assert SOURCE in json.dumps(listed["output"])
        found = call("what does our returns policy say about opened items?", "rag_retrieve")
        assert SOURCE in json.dumps(found["output"])
        call(f"remove {SOURCE} from the knowledge base", "rag_delete_source")

        stock = call("how many SKU2024001 do we have left?", "inventory_query")
        shop_stock = httpx.get(f"{shop}/api/inventory/SKU2024001", timeout=TIMEOUT).json()
        assert stock["output"]["available"] == shop_stock["available"]
        call("how did SKU2024001 sell over the last 30 days?", "sales_query")
        created = call("order 2 units of SKU2024002 for customer Ada Lovelace", "order_create")
        assert created["arguments"]["customer"] == "Ada Lovelace"
        order_id = created["output"]["order_id"]
        tracked = call(f"where is order {order_id}?", "order_query")
        assert tracked["output"]["order_id"] == order_id

        report = call(f"give me the monthly sales report for {month}", "report_monthly")
        assert report["output"]["status"] == "queued"
        task = task_done(client, gateway, report["task_id"])

    assert task["status"] == "succeeded", task
    assert len(called) == 10
