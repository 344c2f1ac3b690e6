"""Registry over HTTP: register, read, edit with If-Match, delete, revisions, embeddings,
propagation between two gateway instances, and manifest-folder discovery."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psycopg
from fastapi import FastAPI

from gateway.registry.cache import RegistryCache
from reach_common.db import libpq_url
from tests.conftest import Backends, app_client
from tests.gateway.conftest import (
    ADMIN,
    GatewayFactory,
    http_tool,
    original,
    shipped,
    write_manifest,
)


async def test_original_examples_register_unchanged(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    async with app_client(make_gateway()) as client:
        inventory = await client.post(
            "/tools/register", json=original("inventory_query"), headers=ADMIN
        )
        order = await client.post("/tools/register", json=original("order_query"), headers=ADMIN)
        read = await client.get(
            "/tools/order_query", headers={"X-User-Id": "u1", "X-User-Roles": "ops_admin"}
        )
        raw = await client.get("/tools/order_query", headers=ADMIN)
    assert inventory.status_code == 201
    assert inventory.json() == {
        "status": "registered",
        "tool_id": "inventory_query",
        "version": 1,
        "revision": 1,
    }
    assert order.status_code == 201
    assert order.json()["revision"] == 2
    assert read.status_code == 200
    body = read.json()
    assert body["manifest"] is None  # a caller sees how to use the tool, not its endpoint
    assert raw.json()["manifest"] == original("order_query")  # stored exactly as sent
    assert body["scope"] == ["ops_admin", "order_manager"]
    assert body["permission"] == "admin"
    assert read.headers["etag"] == '"1"'
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        rows = conn.execute(
            "SELECT tool_id, vector_dims(embedding), manifest FROM gateway.tool ORDER BY tool_id"
        ).fetchall()
    assert [(r[0], r[1]) for r in rows] == [("inventory_query", 384), ("order_query", 384)]
    assert "secret" not in json.dumps(rows[1][2]).lower()


async def test_a_manifest_is_read_back_in_the_order_it_was_written(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    """JSONB sorts an object's keys by length: a gateway that read this manifest back
    from Postgres saw end_date first, and filled it with the first date written."""
    dates = {"type": "string", "format": "date"}
    manifest = http_tool(
        "calendar_between",
        "http://127.0.0.1:9/events",
        description="List the calendar events between two dates.",
        input_schema={
            "type": "object",
            "properties": {"start_date": dates, "end_date": dates},
            "required": ["start_date", "end_date"],
        },
    )
    async with app_client(make_gateway()) as client:
        assert (await client.post("/tools/register", json=manifest, headers=ADMIN)).is_success
    async with app_client(make_gateway()) as client:  # a new instance: from Postgres
        read = await client.get("/tools/calendar_between", headers=ADMIN)
        run = await client.post(
            "/run",
            json={
                "user_query": "list the calendar events from 2026-03-10 to 2026-03-12",
                "dry_run": True,
            },
        )
    assert list(read.json()["manifest"]["input_schema"]["properties"]) == [
        "start_date",
        "end_date",
    ]
    assert run.json()["arguments"] == {"start_date": "2026-03-10", "end_date": "2026-03-12"}
    with psycopg.connect(libpq_url(clean_state.database_url)) as conn:
        row = conn.execute(
            "SELECT manifest::text FROM gateway.tool WHERE tool_id = 'calendar_between'"
        ).fetchone()
    assert row is not None
    assert row[0].index('"start_date"') < row[0].index('"end_date"')


async def test_embedding_is_computed_on_register(make_gateway: GatewayFactory) -> None:
    app = make_gateway()
    async with app_client(app) as client:
        await client.post("/tools/register", json=shipped("inventory_query"), headers=ADMIN)
        await client.post("/tools/register", json=shipped("order_query"), headers=ADMIN)
        registry = app.state.runtime.registry
        query = app.state.runtime.embedder.embed_one("how many units of this SKU are in stock")
        stock = registry.get("inventory_query").embedding
        order = registry.get("order_query").embedding
    assert stock.shape == order.shape == (384,)
    assert abs(float(np.linalg.norm(stock)) - 1.0) < 1e-3
    assert float(query @ stock) > float(query @ order)


async def test_register_conflicts_and_validation(make_gateway: GatewayFactory) -> None:
    async with app_client(make_gateway()) as client:
        first = await client.post("/tools/register", json=shipped("inventory_query"), headers=ADMIN)
        again = await client.post("/tools/register", json=shipped("inventory_query"), headers=ADMIN)
        broken = shipped("sales_query")
        broken["endpoint"]["method"] = "FETCH"
        invalid = await client.post("/tools/register", json=broken, headers=ADMIN)
        not_object = await client.post("/tools/register", json=["a"], headers=ADMIN)
        listed = await client.get("/tools/list")
    assert first.status_code == 201
    assert again.status_code == 409
    assert again.json()["reason"] == "tool_exists"
    assert invalid.status_code == 422
    assert invalid.json()["reason"] == "invalid_manifest"
    assert "endpoint/method" in invalid.json()["message"]
    assert not_object.status_code == 422
    assert not_object.json()["reason"] == "invalid_request"
    assert [t["tool_id"] for t in listed.json()["tools"]] == ["inventory_query"]


async def test_put_with_if_match_and_stale_revision(make_gateway: GatewayFactory) -> None:
    manifest = shipped("inventory_query")
    async with app_client(make_gateway()) as client:
        await client.post("/tools/register", json=manifest, headers=ADMIN)
        edited = {**manifest, "description": manifest["description"] + " Edited once."}
        first = await client.put(
            "/tools/inventory_query", json=edited, headers={**ADMIN, "If-Match": '"1"'}
        )
        stale = await client.put(
            "/tools/inventory_query",
            json={**manifest, "description": "A competing edit that must not win."},
            headers={**ADMIN, "If-Match": '"1"'},
        )
        read = await client.get("/tools/inventory_query")
        bad_header = await client.put(
            "/tools/inventory_query", json=edited, headers={**ADMIN, "If-Match": "yesterday"}
        )
        renamed = await client.put(
            "/tools/inventory_query", json={**edited, "tool_id": "other"}, headers=ADMIN
        )
        missing = await client.put("/tools/nope", json={**edited, "tool_id": "nope"}, headers=ADMIN)
    assert first.status_code == 200
    assert first.json() == {
        "status": "updated",
        "tool_id": "inventory_query",
        "version": 2,
        "revision": 2,
    }
    assert stale.status_code == 409
    assert stale.json()["reason"] == "stale_revision"
    assert stale.json()["current_version"] == 2
    assert read.json()["description"].endswith("Edited once.")
    assert read.json()["version"] == 2
    assert bad_header.status_code == 400
    assert bad_header.json()["reason"] == "invalid_if_match"
    assert renamed.status_code == 422
    assert renamed.json()["reason"] == "tool_id_mismatch"
    assert missing.status_code == 404
    assert missing.json()["reason"] == "tool_not_found"


async def test_delete_and_namespace_filter(make_gateway: GatewayFactory) -> None:
    async with app_client(make_gateway()) as client:
        for tool_id in ("inventory_query", "sales_query", "rag_status"):
            await client.post("/tools/register", json=shipped(tool_id), headers=ADMIN)
        user = {"X-User-Id": "u1"}
        knowledge = await client.get("/tools/list", params={"namespace": "knowledge"}, headers=user)
        stale_delete = await client.delete(
            "/tools/sales_query", headers={**ADMIN, "If-Match": '"7"'}
        )
        deleted = await client.delete("/tools/sales_query", headers={**ADMIN, "If-Match": '"1"'})
        gone = await client.get("/tools/sales_query", headers=user)
        again = await client.delete("/tools/sales_query", headers=ADMIN)
        everything = await client.get("/tools/list", headers=user)
    assert [t["tool_id"] for t in knowledge.json()["tools"]] == ["rag_status"]
    assert stale_delete.status_code == 409
    assert stale_delete.json()["reason"] == "stale_revision"
    assert deleted.status_code == 200
    assert deleted.json() == {
        "status": "deleted",
        "tool_id": "sales_query",
        "version": 1,
        "revision": 4,
    }
    assert gone.status_code == 404
    assert gone.json()["reason"] == "tool_not_found"
    assert again.status_code == 404
    assert everything.json()["revision"] == 4
    assert [t["tool_id"] for t in everything.json()["tools"]] == ["inventory_query", "rag_status"]


async def until(app: FastAPI, condition: Callable[[RegistryCache], bool]) -> None:
    """Wait until ``condition`` holds for ``app``'s in-memory registry, checking it again
    each time that registry changes (``registry.changed``); bounded."""
    registry: RegistryCache = app.state.runtime.registry
    async with asyncio.timeout(10):
        while not condition(registry):
            await registry.changed.wait()


async def test_a_change_on_one_instance_reaches_another(make_gateway: GatewayFactory) -> None:
    # The safety-net poll is far off: only the pub/sub announcement can carry the change.
    first, second = make_gateway(registry_poll_s=3600), make_gateway(registry_poll_s=3600)
    async with app_client(first) as one, app_client(second) as two:
        for app in (first, second):
            await asyncio.wait_for(app.state.runtime.registry_sync.listening.wait(), 5)
        registered = await one.post(
            "/tools/register", json=shipped("inventory_query"), headers=ADMIN
        )
        assert registered.status_code == 201
        await until(second, lambda r: r.get("inventory_query") is not None)
        seen_on_two = await two.get("/tools/inventory_query")

        edited = {**shipped("inventory_query"), "name": "Stock of one SKU"}
        updated = await two.put("/tools/inventory_query", json=edited, headers=ADMIN)
        assert updated.status_code == 200
        await until(first, lambda r: r.revision == updated.json()["revision"])
        edit_seen_on_one = await one.get("/tools/inventory_query")

        assert (await one.delete("/tools/inventory_query", headers=ADMIN)).status_code == 200
        await until(second, lambda r: r.get("inventory_query") is None)
        gone_on_two = await two.get("/tools/inventory_query")
        revision_two = (await two.get("/tools/list")).json()["revision"]
    assert seen_on_two.status_code == 200
    assert seen_on_two.json()["version"] == 1
    assert edit_seen_on_one.json()["name"] == "Stock of one SKU"
    assert edit_seen_on_one.json()["version"] == 2
    assert gone_on_two.status_code == 404
    assert gone_on_two.json()["reason"] == "tool_not_found"
    assert revision_two == 3


async def test_auto_discovery_follows_the_manifest_folder(
    make_gateway: GatewayFactory, tmp_path: Path
) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    write_manifest(folder, shipped("inventory_query"))
    write_manifest(folder, shipped("sales_query"))
    (folder / "broken.json").write_text("{not json", "utf-8")
    (folder / "schema.json").write_text("{}", "utf-8")
    app = make_gateway(tool_auto_discovery=True, manifests_dir=str(folder))
    user = {"X-User-Id": "u1"}
    async with app_client(app) as client:
        start = await client.get("/tools/list", headers=user)
        assert [t["tool_id"] for t in start.json()["tools"]] == ["inventory_query", "sales_query"]
        await asyncio.wait_for(app.state.runtime.discovery.watching.wait(), 5)

        write_manifest(folder, http_tool("added_tool", "http://127.0.0.1:9/x"))
        await until(app, lambda r: r.get("added_tool") is not None)
        added = await client.get("/tools/added_tool")

        edited = {**shipped("sales_query"), "name": "Sales, edited on disk"}
        write_manifest(folder, edited)
        await until(app, lambda r: r.tools["sales_query"].spec.name == "Sales, edited on disk")

        (folder / "inventory_query.json").unlink()
        await until(app, lambda r: r.get("inventory_query") is None)
        removed = await client.get("/tools/inventory_query")
        final = await client.get("/tools/list", headers=user)
        sales = await client.get("/tools/sales_query", headers=user)
    assert added.status_code == 200
    assert removed.status_code == 404
    assert removed.json()["reason"] == "tool_not_found"
    assert [t["tool_id"] for t in final.json()["tools"]] == ["added_tool", "sales_query"]
    assert sales.json()["name"] == "Sales, edited on disk"
    assert sales.json()["version"] == 2
    assert sales.json()["source"] == "file"


async def test_discovery_at_start_removes_tools_whose_file_is_gone(
    make_gateway: GatewayFactory, tmp_path: Path
) -> None:
    folder = tmp_path / "m"
    folder.mkdir()
    path = write_manifest(folder, shipped("inventory_query"))
    async with app_client(make_gateway(tool_auto_discovery=True, manifests_dir=str(folder))) as c:
        assert (await c.get("/tools/inventory_query")).status_code == 200
    path.unlink()
    async with app_client(make_gateway(tool_auto_discovery=True, manifests_dir=str(folder))) as c:
        missing = await c.get("/tools/inventory_query")
    assert missing.status_code == 404
    assert missing.json()["reason"] == "tool_not_found"


def test_redis_dying_mid_reconnect_is_a_lost_connection_not_a_crash() -> None:
    """uvloop refuses to write to a transport that closed under redis-py's reconnect
    (RuntimeError "the handler is closed"): the registry listener logged it as a failure
    with a traceback, which the Redis fault test counts as a crash."""
    from redis.exceptions import ConnectionError as RedisConnectionError

    from gateway.registry.sync import connection_lost

    closed = RuntimeError(
        "unable to perform operation on <TCPTransport closed=True>; the handler is closed"
    )
    assert connection_lost(closed)
    assert connection_lost(RedisConnectionError("Connection closed by server."))
    assert connection_lost(ConnectionRefusedError())
    assert not connection_lost(RuntimeError("something else broke"))
    assert not connection_lost(None)
