"""GET /traces/{trace_id}: the span tree and the phase summary."""

from __future__ import annotations

from typing import Any

from tests.conftest import app_client
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool
from tests.gateway.upstream import Upstream


def walk(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for node in nodes:
        out.append(node)
        out.extend(walk(node["children"]))
    return out


async def test_trace_of_an_invoke_has_the_tree_and_phases(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    schema = {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}
    manifest = http_tool(
        "traced",
        f"http://localhost:{upstream.port}/api/inventory/{{sku}}",
        input_schema=schema,
    )
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        invoked = await client.post("/tools/traced/invoke", json={"arguments": {"sku": "SKU1"}})
        trace_id = invoked.json()["trace_id"]
        # An anonymous call's trace is for operators (registry admins count as operators).
        trace = await client.get(f"/traces/{trace_id}", headers=ADMIN)
        upper = await client.get(f"/traces/{trace_id.upper()}", headers=ADMIN)
        unknown = await client.get("/traces/" + "0" * 32, headers=ADMIN)
        malformed = await client.get("/traces/not-a-trace", headers=ADMIN)
    assert trace.status_code == 200
    body = trace.json()
    assert body["trace_id"] == trace_id
    assert body["services"] == ["gateway"]
    spans = walk(body["spans"])
    assert body["span_count"] == len(spans)
    (root,) = body["spans"]
    assert root["kind"] == "server"
    assert root["attributes"]["http.route"] == "/tools/{tool_id}/invoke"
    names = {s["name"] for s in spans}
    assert {"gateway.auth", "gateway.validate", "gateway.rate_limit", "gateway.execute"} <= names
    assert {"gateway.dns", "gateway.connect", "gateway.response"} <= names
    execute = next(s for s in spans if s["name"] == "gateway.execute")
    assert execute["attributes"]["tool.id"] == "traced"
    assert execute["attributes"]["tool.attempts"] == 1
    client_span = next(s for s in walk(execute["children"]) if s["kind"] == "client")
    assert client_span["attributes"]["http.response.status_code"] == 200
    # The manifest's template, never the caller's values; the address actually dialled.
    assert client_span["attributes"]["url.template"].endswith("/api/inventory/{sku}")
    assert "SKU1" not in str(client_span["attributes"])
    assert client_span["attributes"]["network.peer.address"] == "127.0.0.1"
    assert {c["name"] for c in client_span["children"]} == {"gateway.connect", "gateway.response"}
    for span in spans:
        assert {"service", "name", "start", "duration_ms", "status", "attributes"} <= span.keys()
    phases = body["phases"]
    assert phases["route"] is None  # no routing on an explicit invoke
    for phase in ("auth", "validate", "execute", "dns", "connect", "response"):
        assert phases[phase] is not None, phase
        assert phases[phase] >= 0, phase
    assert phases["execute"] >= phases["response"]
    assert root["duration_ms"] >= phases["execute"]
    assert upper.status_code == 200
    assert unknown.status_code == 404
    assert unknown.json()["reason"] == "trace_not_found"
    assert malformed.status_code == 404
    assert malformed.json()["reason"] == "trace_not_found"
