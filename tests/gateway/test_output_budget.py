"""Output budgets: an output over budget is never cut into broken JSON.

The caller gets a typed envelope (``truncated: true``, ``total_bytes``, a valid-JSON
``preview`` that keeps the envelope within the budget, and a ``handle``); the whole
output is kept in a real retriever (served on a loopback port) for that caller only,
and ``rag_retrieve`` with the handle reads it back through the gateway. With the
retriever down, or no identified caller, the preview still comes, with ``handle: null``
and a note saying why.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import psycopg
import pytest

from gateway.invoke.outputs import encode, over_budget, preview
from reach_common.db import libpq_url
from reach_common.embeddings import Embedder
from retriever.app import create_app as create_retriever
from retriever.settings import Settings as RetrieverSettings
from tests.agent.servers import ServerThread
from tests.conftest import Backends, KeyMaker, app_client, assert_error
from tests.e2e.processes import free_port
from tests.gateway.conftest import ADMIN, GatewayFactory, http_tool, shipped
from tests.gateway.upstream import Reply, Upstream

ALICE = {"user_id": "alice", "roles": ["ops"]}
BOB = {"user_id": "bob", "roles": ["ops"]}
BUDGET = 4096


def inventory(count: int = 2000) -> list[dict[str, Any]]:
    rows = [
        {"sku": f"SKU{n:07d}", "bin": f"A-{n % 89:02d}", "note": "x" * 20} for n in range(count)
    ]
    if count > 1234:
        rows[1234]["bin"] = "VAULT-OMEGA-7"
    return rows


@pytest.fixture
def retriever_url(service_env: dict[str, Any], embedder: Embedder) -> Iterator[str]:
    settings = RetrieverSettings(**service_env, llm_provider="offline")
    with ServerThread(create_retriever(settings, embedder=embedder)) as server:
        yield server.url


async def invoke(client: httpx.AsyncClient, tool_id: str, caller: Any, **arguments: Any) -> Any:
    body: dict[str, Any] = {"arguments": arguments}
    if caller is not None:
        body["user_context"] = caller
    return await client.post(f"/tools/{tool_id}/invoke", json=body)


def audit(backends: Backends) -> list[tuple[Any, ...]]:
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        return conn.execute(
            "SELECT tool_id, caller, status, reason FROM gateway.invocation ORDER BY id"
        ).fetchall()


def assert_envelope(output: dict[str, Any], full: Any, budget: int) -> None:
    assert output["truncated"] is True
    assert output["total_bytes"] == len(encode(full).encode())
    assert output["budget_bytes"] == budget
    assert len(encode(output).encode()) <= budget  # the whole envelope fits
    shown = output["preview"]
    assert shown[:3] == full[:3]  # the first items, exactly
    assert shown[-1] == f"… {len(full) - (len(shown) - 1)} more items"


async def test_over_budget_answers_a_preview_and_a_handle_only_its_caller_can_read(
    make_gateway: GatewayFactory,
    upstream: Upstream,
    retriever_url: str,
    make_key: KeyMaker,
    monkeypatch: pytest.MonkeyPatch,
    clean_state: Backends,
) -> None:
    full = inventory()
    upstream.default = Reply(body=full)
    # The gateway's service key: it stores and reads outputs for their caller.
    monkeypatch.setenv(
        "REACH_SECRET_RETRIEVER_API_KEY", await make_key("svc-gateway-tools", ["retriever_writer"])
    )
    gateway = make_gateway(
        retriever_url=retriever_url, tool_secret_hosts={"retriever_api_key": ["retriever"]}
    )
    manifest = http_tool("bins", upstream.url + "/bins", max_output_bytes=BUDGET, permission="user")
    async with app_client(gateway) as client:
        for tool in (manifest, shipped("rag_retrieve")):
            assert (
                await client.post("/tools/register", json=tool, headers=ADMIN)
            ).status_code == 201
        answer = await invoke(client, "bins", ALICE)
        assert answer.status_code == 200, answer.text
        output = answer.json()["output"]
        handle = output["handle"]
        question = "Which bin holds SKU0001234?"
        mine = await invoke(client, "rag_retrieve", ALICE, query=question, handle=handle)
        theirs = await invoke(client, "rag_retrieve", BOB, query=question, handle=handle)
    assert_envelope(output, full, BUDGET)
    assert handle.startswith("out_")
    assert output["retrieve_with"] == {
        "tool_id": "rag_retrieve",
        "arguments": {"handle": handle, "query": "<what you are looking for>"},
    }
    assert "kept until expires_at" in output["note"]
    assert mine.status_code == 200, mine.text
    top = mine.json()["output"]["chunks"][0]
    assert "VAULT-OMEGA-7" in top["text"]
    assert "$[1234]" in top["text"]
    error = assert_error(theirs, 502, "tool_error")
    assert error["error"]["upstream_status"] == 404
    assert error["error"]["upstream"]["reason"] == "handle_not_found"
    # Asking the retriever directly, as someone else, finds nothing either.
    async with httpx.AsyncClient() as http:
        direct = await http.post(
            f"{retriever_url}/retrieve",
            json={"query": question, "handle": handle},
            headers={"X-User-Id": "bob"},
        )
    assert_error(direct, 404, "handle_not_found")
    assert audit(clean_state)[0] == ("bins", "alice", "succeeded", "output_truncated")


async def test_retriever_down_still_answers_the_preview_with_a_note(
    make_gateway: GatewayFactory, upstream: Upstream, clean_state: Backends
) -> None:
    full = inventory()
    upstream.default = Reply(body=full)
    gateway = make_gateway(retriever_url=f"http://127.0.0.1:{free_port()}")  # nobody listens
    manifest = http_tool("bins", upstream.url + "/bins", max_output_tokens=BUDGET // 4)
    async with app_client(gateway) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        known = await invoke(client, "bins", ALICE)
        anonymous = await invoke(client, "bins", None)
    for answer in (known, anonymous):
        assert answer.status_code == 200, answer.text
        assert answer.json()["success"] is True
        output = json.loads(answer.text)["output"]
        assert_envelope(output, full, BUDGET)
        assert output["handle"] is None
        assert "retrieve_with" not in output
    assert "not kept (retriever_unavailable)" in known.json()["output"]["note"]
    assert "only for an identified caller" in anonymous.json()["output"]["note"]
    assert [row[3] for row in audit(clean_state)] == ["output_truncated", "output_truncated"]


async def test_within_budget_the_output_is_unchanged(
    make_gateway: GatewayFactory, upstream: Upstream
) -> None:
    small = inventory(20)
    upstream.default = Reply(body=small)
    async with app_client(make_gateway(max_output_bytes=1 << 20)) as client:
        await client.post("/tools/register", json=http_tool("bins", upstream.url), headers=ADMIN)
        answer = await invoke(client, "bins", ALICE)
    assert answer.json()["output"] == small


SHAPES: list[Any] = [
    inventory(500),
    {"meta": {"page": 1}, "rows": inventory(500), "text": "é" * 50_000},
    {"deep": {"a": {"b": {"c": {"d": {"e": list(range(10_000))}}}}}},
    {f"key{n}": n for n in range(5000)},
    "z" * 100_000,
    [[[[n] * 50] * 50] for n in range(50)],
]


@pytest.mark.parametrize("limit", [64, 300, 1024, 5000])
@pytest.mark.parametrize("index", range(len(SHAPES)))
def test_previews_are_valid_json_within_the_limit(index: int, limit: int) -> None:
    shown = preview(SHAPES[index], limit)
    text = encode(shown)
    assert len(text.encode()) <= limit
    assert json.loads(text) == shown


def test_previews_mark_every_cut() -> None:
    value = {"title": "t" * 500, "rows": list(range(1000)), "nested": {"a": {"b": {"c": {}}}}}
    shown = preview(value, 1500)
    assert shown["title"].startswith("t" * 100)
    assert shown["title"].endswith("more characters]")
    assert shown["rows"][-1].endswith("more items")
    assert over_budget(encode(value), 1500) is not None
    assert over_budget(encode(shown), 1500) is None
