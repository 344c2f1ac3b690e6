"""A tool returning 5 MB of JSON, end to end (issue 15, must-show 2).

Retriever, gateway and agent run as real processes in strict mode, and the tool's
upstream is a real HTTP server in this process answering 5 MB of JSON. Alice's call gets
a valid-JSON preview with ``truncated: true`` and a handle; the offline agent answers her
question, whose answer sits 4 MB deep in that output, by retrieving through the handle;
Bob, with a key of his own, cannot read the handle through the gateway or the retriever.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from reach_common.stack import mint_key
from tests.conftest import REPO_ROOT, Backends
from tests.e2e.processes import free_port, service_process

pytestmark = pytest.mark.slow
TIMEOUT = 60
DEEP = 43_210  # the record the question is about, about 4 MB into the output
QUESTION = "In the product catalogue export, which warehouse bin holds SKU0043210?"
CATALOG_EXPORT = {
    "tool_id": "catalog_export",
    "name": "Product catalogue export",
    "namespace": "catalog",
    "description": (
        "Exports the whole product catalogue: every product with its SKU, name, price, "
        "stock and warehouse bin. Use it for questions about the catalogue export."
    ),
    "examples": [
        "Which warehouse bin holds this product in the catalogue export?",
        "Export the product catalogue",
        "In the product catalogue export, where is a SKU stored?",
    ],
    "input_schema": {"type": "object", "properties": {}},
    "output_schema": {
        "type": "object",
        "properties": {"products": {"type": "array"}},
        "required": ["products"],
    },
    "endpoint": {"type": "http", "method": "GET", "url": "", "auth": {"type": "none"}},
    "permission": "user",
    "max_response_bytes": 16 * 1024 * 1024,
    "timeout_ms": 30000,
}


def catalogue() -> bytes:
    products = [
        {
            "sku": f"SKU{n:07d}",
            "name": f"Product {n}",
            "price": f"{n % 500 + 0.99:.2f}",
            "stock": n % 300,
            "warehouse_bin": f"A-{n % 40:02d}-{n % 97:03d}",
        }
        for n in range(52_000)
    ]
    products[DEEP]["warehouse_bin"] = "K-17-042"
    return json.dumps({"exported_at": "2026-12-01", "products": products}).encode()


@contextmanager
def json_server(body: bytes) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/export"
    finally:
        server.shutdown()
        server.server_close()


def bearer(database_url: str, user_id: str, roles: list[str]) -> dict[str, str]:
    key = mint_key(database_url, user_id, roles)
    return {"Authorization": f"Bearer {key}"}


def test_five_megabytes_of_json_are_previewed_kept_and_read_by_handle(
    clean_state: Backends, tmp_path: Path
) -> None:
    db = clean_state.database_url
    admin = bearer(db, "root", ["admin"])
    alice = bearer(db, "alice", ["ops"])
    bob = bearer(db, "bob", ["ops"])
    service = bearer(db, "svc-gateway-tools", ["retriever_writer"])["Authorization"].split()[1]
    env = {
        "DATABASE_URL": db,
        "REDIS_URL": clean_state.redis_url,
        "LOG_LEVEL": "WARNING",
        "LLM_PROVIDER": "offline",
        "AUTH_MODE": "strict",
    }
    retriever_port, gateway_port, agent_port = (free_port() for _ in range(3))
    gateway_env = {
        **env,
        "RETRIEVER_URL": f"http://127.0.0.1:{retriever_port}",
        "EGRESS_ALLOWLIST": "127.0.0.1",
        "REACH_SECRET_RETRIEVER_API_KEY": service,
        "TOOL_SECRET_HOSTS": json.dumps({"retriever_api_key": ["retriever"]}),
        "MAX_RESPONSE_BYTES": str(16 * 1024 * 1024),
        "CALLER_RATE_LIMIT": "",
        "ROUTE_RATE_LIMIT": "",
    }
    body = catalogue()
    assert len(body) > 5_000_000
    rag_retrieve = json.loads((REPO_ROOT / "manifests" / "rag_retrieve.json").read_text("utf-8"))
    with (
        json_server(body) as upstream,
        service_process("retriever", retriever_port, env, tmp_path) as retriever,
        service_process("gateway", gateway_port, gateway_env, tmp_path) as gateway,
        service_process("agent", agent_port, {**env, "GATEWAY_URL": gateway}, tmp_path) as agent,
    ):
        client = httpx.Client(timeout=TIMEOUT)
        manifest = {**CATALOG_EXPORT, "endpoint": {**CATALOG_EXPORT["endpoint"], "url": upstream}}
        for tool in (manifest, rag_retrieve):
            registered = client.post(f"{gateway}/tools/register", json=tool, headers=admin)
            assert registered.status_code == 201, registered.text

        # --- the caller: a valid-JSON preview, truncated, with a handle ---------------------
        called = client.post(
            f"{gateway}/tools/catalog_export/invoke", json={"arguments": {}}, headers=alice
        )
        assert called.status_code == 200, called.text
        output = json.loads(called.text)["output"]  # the whole answer parses as JSON
        assert output["truncated"] is True
        assert output["total_bytes"] == len(
            json.dumps(json.loads(body), separators=(",", ":")).encode()
        )
        handle = output["handle"]
        assert handle.startswith("out_")
        assert (
            len(json.dumps(output, ensure_ascii=False, separators=(",", ":")).encode())
            <= (output["budget_bytes"])
        )
        assert output["preview"]["products"][0]["sku"] == "SKU0000000"
        assert output["preview"]["products"][-1].endswith("more items")

        # --- the agent answers from deep inside it, through the handle ---------------------
        chat = client.post(f"{agent}/chat", json={"message": QUESTION}, headers=alice)
        assert chat.status_code == 200, chat.text
        turn = chat.json()
        assert turn["mode"] == "offline"
        assert "K-17-042" in turn["reply"], turn["reply"]
        assert [c["tool_id"] for c in turn["tool_calls"]] == ["catalog_export", "rag_retrieve"]
        first, follow = turn["tool_calls"]
        assert first["result"]["truncated"] is True
        assert follow["arguments"]["handle"] == first["result"]["handle"]
        assert any("K-17-042" in c["text"] for c in follow["result"]["chunks"])

        # --- nobody else can read the handle ----------------------------------------------
        search = {"query": QUESTION, "handle": handle}
        mine = client.post(
            f"{gateway}/tools/rag_retrieve/invoke", json={"arguments": search}, headers=alice
        )
        theirs = client.post(
            f"{gateway}/tools/rag_retrieve/invoke", json={"arguments": search}, headers=bob
        )
        direct = client.post(f"{retriever}/retrieve", json=search, headers=bob)
        forged = client.post(
            f"{retriever}/retrieve",
            json=search,
            headers={**bob, "X-Reach-On-Behalf-Of": "alice"},
        )
    # The figures issue 15 asks for (pytest -s prints them).
    print(f"upstream body: {len(body)} bytes; envelope: {len(called.content)} bytes on the wire")
    print(f"output: truncated={output['truncated']} total_bytes={output['total_bytes']}")
    print(f"  budget_bytes={output['budget_bytes']} handle={handle}")
    print(f"  preview: {len(output['preview']['products']) - 1} products, then")
    print(f"  {output['preview']['products'][-1]!r}")
    print(f"agent reply: {turn['reply']}")
    print(f"bob via gateway: {theirs.status_code} {theirs.json()['error']['upstream']['reason']}")
    print(f"bob at retriever: {direct.status_code} {direct.json()['reason']}")
    print(f"bob naming alice: {forged.status_code} {forged.json()['reason']}")
    assert mine.status_code == 200, mine.text
    assert "K-17-042" in mine.json()["output"]["chunks"][0]["text"]
    assert theirs.status_code == 502, theirs.text
    assert theirs.json()["error"]["upstream"]["reason"] == "handle_not_found"
    assert "K-17-042" not in theirs.text
    assert (direct.status_code, direct.json()["reason"]) == (404, "handle_not_found")
    assert (forged.status_code, forged.json()["reason"]) == (403, "insufficient_permission")
