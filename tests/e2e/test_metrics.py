"""Metrics end to end: the four services as real processes, a scripted workload, and a
scrape of every ``/metrics`` before and after it. Each counter the workload touches
moved by exactly what the workload did; every scrape parses with prometheus-client's
parser and, where ``promtool`` is installed, passes ``promtool check metrics``."""

from __future__ import annotations

import re
import shutil
import subprocess
import uuid
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import REPO_ROOT, Backends
from tests.deploy import grafana
from tests.e2e.processes import free_port, service_process

pytestmark = pytest.mark.slow
TIMEOUT = 30
TOKEN = f"metrics-{uuid.uuid4().hex}"
SCRAPE = {"Authorization": f"Bearer {TOKEN}"}
OPS = {"user_id": "ops-1", "roles": ["ops_admin"]}
WRITER = {"X-User-Id": "kb-1", "X-User-Roles": "retriever_writer,kb_admin"}
ADMIN = {"X-User-Id": "admin-1", "X-User-Roles": "admin"}
PROMTOOL = shutil.which("promtool")

Series = dict[tuple[str, tuple[tuple[str, str], ...]], float]


EXPOSED: set[str] = set()  # every series name the scrapes offered


def scrape(client: httpx.Client, url: str) -> Series:
    """Every sample of ``url``'s /metrics, checked by promtool when it is installed."""
    response = client.get(f"{url}/metrics", headers=SCRAPE)
    assert response.status_code == 200, response.text
    text = response.text
    if PROMTOOL is not None:
        checked = subprocess.run(
            [PROMTOOL, "check", "metrics"], input=text, capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr
    EXPOSED.update(grafana.exposed_names(text))
    series: Series = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            series[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return series


def moved(before: Series, after: Series, name: str, **labels: str) -> float:
    """How far one series moved (a series absent before counts as 0)."""
    key = (name, tuple(sorted(labels.items())))
    assert key in after, f"{name}{labels} missing from the scrape"
    return after[key] - before.get(key, 0.0)


def moved_all(before: Series, after: Series, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Every series of ``name`` that moved, with how far."""
    deltas = {
        labels: value - before.get((n, labels), 0.0)
        for (n, labels), value in after.items()
        if n == name
    }
    return {labels: delta for labels, delta in deltas.items() if delta}


def probe_tool(tool_id: str, url: str, **extra: object) -> dict[str, object]:
    return {
        "tool_id": tool_id,
        "name": tool_id,
        "description": f"Metrics test tool {tool_id}: stock of one SKU, for counting calls.",
        "input_schema": {
            "type": "object",
            "properties": {"sku": {"type": "string", "pattern": "^SKU\\d{7}$"}},
            "required": ["sku"],
        },
        "endpoint": {"type": "http", "method": "GET", "url": url, "auth": {"type": "none"}},
        "permission": "public",
        "idempotent": True,
        "timeout_ms": 3000,
        **extra,
    }


def test_counters_move_by_exactly_the_workload(clean_state: Backends, tmp_path: Path) -> None:
    if PROMTOOL is None:
        print("promtool not on PATH (Debian package `prometheus`): parser check only")
    env = {
        "DATABASE_URL": clean_state.database_url,
        "REDIS_URL": clean_state.redis_url,
        "LOG_LEVEL": "INFO",
        "LLM_PROVIDER": "offline",
        "METRICS_TOKEN": TOKEN,
    }
    ports = {name: free_port() for name in ("shop", "retriever", "gateway", "agent")}
    gateway_env = {
        **env,
        "SHOP_URL": f"http://127.0.0.1:{ports['shop']}",
        "RETRIEVER_URL": f"http://127.0.0.1:{ports['retriever']}",
        "TOOL_AUTO_DISCOVERY": "true",
        "MANIFESTS_DIR": str(REPO_ROOT / "manifests"),
        "CALLER_RATE_LIMIT": "",
        "ROUTE_RATE_LIMIT": "",
    }
    with (
        service_process("shop", ports["shop"], env, tmp_path) as shop,
        service_process("retriever", ports["retriever"], env, tmp_path) as retriever,
        service_process("gateway", ports["gateway"], gateway_env, tmp_path) as gateway,
        service_process(
            "agent", ports["agent"], {**env, "GATEWAY_URL": gateway}, tmp_path
        ) as agent,
    ):
        client = httpx.Client(timeout=TIMEOUT)
        urls = {"shop": shop, "retriever": retriever, "gateway": gateway, "agent": agent}
        # Anonymous scrapes are refused once a token is set; the token is never echoed.
        for url in urls.values():
            refused = client.get(f"{url}/metrics")
            assert refused.status_code == 401, refused.text
            assert refused.json()["reason"] == "unauthenticated"
        # Tools the workload needs, registered before the first scrape (a registry change
        # also changes the route cache's scope).
        shop_url = f"{shop}/api/inventory/{{sku}}"
        dead = f"http://127.0.0.1:{free_port()}/api/inventory/{{sku}}"  # nothing listens
        for manifest in (
            probe_tool("metrics_probe", shop_url, rate_limit="1/minute"),
            probe_tool("flaky_probe", dead, retry_policy={"max_retries": 2, "backoff_ms": 1}),
        ):
            registered = client.post(f"{gateway}/tools/register", json=manifest, headers=ADMIN)
            assert registered.status_code in (200, 201), registered.text

        before = {name: scrape(client, url) for name, url in urls.items()}
        flaky_reason, chunks = run_workload(client, gateway, retriever, agent)
        after = {name: scrape(client, url) for name, url in urls.items()}
        logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("*.log"))
    assert TOKEN not in logs
    # Every metric the Grafana dashboards query is in these real scrapes.
    assert grafana.named_metrics(grafana.expressions()) - EXPOSED == set()

    check_gateway(before["gateway"], after["gateway"], flaky_reason)
    check_retriever(before["retriever"], after["retriever"], chunks)
    check_agent(before["agent"], after["agent"])
    shop_b, shop_a = before["shop"], after["shop"]
    # The shop served every inventory call that ran: 2 invokes, 2 routed runs, the
    # agent's turn and the rate-limited tool's one admitted call.
    assert moved_all(shop_b, shop_a, "reach_http_requests_total") == {
        (("method", "GET"), ("route", "/api/inventory/{sku}"), ("status", "200")): 6.0,
        (("method", "GET"), ("route", "/metrics"), ("status", "200")): 1.0,
    }


def run_workload(client: httpx.Client, gateway: str, retriever: str, agent: str) -> tuple[str, int]:
    """Run the workload; ``(the failing tool's reason, chunks the new document made)``."""
    stock = {"arguments": {"sku": "SKU2024001"}, "user_context": OPS}
    for _ in range(2):
        invoked = client.post(f"{gateway}/tools/inventory_query/invoke", json=stock)
        assert invoked.status_code == 200, invoked.text
    # Routed: first decided afresh, then the same request served from the route cache.
    run = {"session_id": "metrics-s1", "user_query": "SKU2024001 还有多少库存", "user_context": OPS}
    first = client.post(f"{gateway}/run", json=run).json()
    assert first["tool_id"] == "inventory_query", first
    assert first["route"]["route_hint"] == "semantic_match", first["route"]
    second = client.post(f"{gateway}/run", json={**run, "session_id": "metrics-s2"}).json()
    assert second["route"]["route_hint"] == "route_cache", second["route"]
    # Rate limited: one call a minute.
    probe = {"arguments": {"sku": "SKU2024002"}, "user_context": OPS}
    assert client.post(f"{gateway}/tools/metrics_probe/invoke", json=probe).status_code == 200
    limited = client.post(f"{gateway}/tools/metrics_probe/invoke", json=probe)
    assert limited.status_code == 429, limited.text
    # Unknown tools all count as one series, whatever the caller names.
    for _ in range(3):
        unknown = client.post(f"{gateway}/tools/no_such_{uuid.uuid4().hex}/invoke", json=stock)
        assert unknown.status_code == 404
    flaky = client.post(f"{gateway}/tools/flaky_probe/invoke", json=probe)
    assert not flaky.json()["success"], flaky.text
    # Retriever: one new document, the same again (unchanged), two searches.
    doc = {"source": "metrics.md", "text": "Reach exports Prometheus metrics.\n\n" * 3}
    ingested = client.post(f"{retriever}/ingest", json=doc, headers=WRITER)
    assert ingested.status_code == 201, ingested.text
    chunks = int(re.findall(r"ingested (\d+) chunk", ingested.json()["message"])[0])
    assert client.post(f"{retriever}/ingest", json=doc, headers=WRITER).status_code in (200, 201)
    for mode in ("hybrid", "bm25"):
        search = {"query": "Prometheus metrics", "mode": mode}
        assert client.post(f"{retriever}/retrieve", json=search, headers=WRITER).status_code == 200
    # Agent, offline: one turn, routed by the gateway (for a caller whose tools differ
    # from OPS's, so its route-cache scope is its own: a miss).
    turn = client.post(
        f"{agent}/chat",
        json={"message": "SKU2024001 还有多少库存", "user_context": {"user_id": "u-chat"}},
    )
    assert turn.status_code == 200, turn.text
    assert turn.json()["tool_calls"][0]["tool_id"] == "inventory_query"
    assert turn.json()["rounds"] == 1
    return str(flaky.json()["reason"]), chunks


def check_gateway(before: Series, after: Series, flaky_reason: str) -> None:
    calls = moved_all(before, after, "reach_gateway_tool_calls_total")
    assert calls == {
        # 2 invokes, 2 routed runs, the agent's routed run
        (("reason", "ok"), ("tool", "inventory_query")): 5.0,
        (("reason", "ok"), ("tool", "metrics_probe")): 1.0,
        (("reason", "rate_limited"), ("tool", "metrics_probe")): 1.0,
        (("reason", "tool_not_found"), ("tool", "unknown")): 3.0,
        (("reason", flaky_reason), ("tool", "flaky_probe")): 1.0,
    }
    assert moved_all(before, after, "reach_gateway_rate_limited_total") == {
        (("tool", "metrics_probe"),): 1.0
    }
    # max_retries 2 against a closed port: two attempts after the first.
    assert moved_all(before, after, "reach_gateway_tool_retries_total") == {
        (("tool", "flaky_probe"),): 2.0
    }
    assert moved(before, after, "reach_gateway_tool_call_duration_seconds_count",
                 tool="inventory_query") == 5.0  # fmt: skip
    assert moved_all(before, after, "reach_gateway_route_cache_lookups_total") == {
        (("result", "miss"),): 2.0,  # the first run, the agent's run
        (("result", "hit"),): 1.0,
    }
    assert moved_all(before, after, "reach_gateway_route_decisions_total") == {
        (("route_hint", "semantic_match"),): 2.0,
        (("route_hint", "route_cache"),): 1.0,
    }
    assert moved(before, after, "reach_gateway_route_confidence_count",
                 route_hint="semantic_match") == 2.0  # fmt: skip
    requests = moved_all(before, after, "reach_http_requests_total")
    assert requests[(("method", "POST"), ("route", "/run"), ("status", "200"))] == 3.0
    invoke = "/tools/{tool_id}/invoke"
    assert requests[(("method", "POST"), ("route", invoke), ("status", "200"))] == 3.0
    assert requests[(("method", "POST"), ("route", invoke), ("status", "404"))] == 3.0
    assert requests[(("method", "POST"), ("route", invoke), ("status", "429"))] == 1.0
    assert not any("no_such" in value for labels in requests for _, value in labels)
    # State gauges, read at scrape time.
    assert after[("reach_gateway_breaker_state", (("tool", "inventory_query"),))] == 0.0
    assert after[("reach_gateway_approvals_pending", ())] == 0.0
    assert ("reach_gateway_audit_queue_depth", ()) in after


def check_retriever(before: Series, after: Series, chunks: int) -> None:
    assert moved_all(before, after, "reach_retriever_ingested_documents_total") == {
        (("outcome", "ingested"),): 1.0,
        (("outcome", "unchanged"),): 1.0,
    }
    assert chunks >= 1
    assert moved(before, after, "reach_retriever_ingested_chunks_total") == chunks
    searches = moved_all(before, after, "reach_retriever_search_duration_seconds_count")
    assert searches == {(("mode", "hybrid"),): 1.0, (("mode", "bm25"),): 1.0}


def check_agent(before: Series, after: Series) -> None:
    assert moved_all(before, after, "reach_agent_turns_total") == {
        (("mode", "offline"), ("stop_reason", "end_turn")): 1.0
    }
    assert moved(before, after, "reach_agent_turn_rounds_count", mode="offline") == 1.0
    assert moved(before, after, "reach_agent_turn_rounds_sum", mode="offline") == 1.0
    chat = moved_all(before, after, "reach_http_requests_total")
    assert chat[(("method", "POST"), ("route", "/chat"), ("status", "200"))] == 1.0
    # Offline: no model was called.
    assert moved_all(before, after, "reach_agent_model_tokens_total") == {}
