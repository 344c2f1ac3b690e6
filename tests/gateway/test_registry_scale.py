"""The registry at scale: a change costs work in proportion to the change.

A write reads back just the rows it changed, on the writer and on every other
replica (its delta travels on the registry channel); the routing index is
updated, not rebuilt; ``POST /tools:batch`` registers many tools in one
transaction, all or none; a replica that missed deltas catches up; a manifest
folder loads as one batch at start.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import psycopg
from fastapi import FastAPI

from gateway.registry.cache import RegistryCache, RegistryDelta
from reach_common.db import libpq_url
from tests.conftest import Backends, app_client, assert_error
from tests.gateway.conftest import ADMIN, GatewayFactory, python_tool, write_manifest
from tests.gateway.test_registry import until

USER = {"X-User-Id": "u1"}


def tools(count: int, prefix: str = "bulk") -> list[dict[str, Any]]:
    return [
        python_tool(f"{prefix}_{i}", "echo", description=f"Echo tool number {i} of a batch.")
        for i in range(count)
    ]


def registry_of(app: FastAPI) -> RegistryCache:
    registry: RegistryCache = app.state.runtime.registry
    return registry


def history_count(backends: Backends) -> int:
    with psycopg.connect(libpq_url(backends.database_url)) as conn:
        row = conn.execute("SELECT count(*) FROM gateway.tool_history").fetchone()
    assert row is not None
    return int(row[0])


async def listening(*apps: FastAPI) -> None:
    for app in apps:
        await asyncio.wait_for(app.state.runtime.registry_sync.listening.wait(), 5)


async def test_a_registration_reads_back_only_its_own_row_on_every_replica(
    make_gateway: GatewayFactory,
) -> None:
    # The safety-net poll is far off: only the delta on the channel can carry the change.
    first, second = make_gateway(registry_poll_s=3600), make_gateway(registry_poll_s=3600)
    async with app_client(first) as one, app_client(second) as two:
        await listening(first, second)
        batch = await one.post("/tools:batch", json={"tools": tools(40)}, headers=ADMIN)
        assert batch.status_code == 201, batch.text
        await until(second, lambda r: len(r.tools) == 40)
        index_one = await first.state.runtime.router.index()
        index_two = await second.state.runtime.router.index()
        read_one, read_two = registry_of(first).rows_read, registry_of(second).rows_read

        single = python_tool("weather_now", "echo", description="Current weather of a city.")
        registered = await one.post("/tools/register", json=single, headers=ADMIN)
        assert registered.status_code == 201
        await until(second, lambda r: r.get("weather_now") is not None)
        routed = await two.post(
            "/run",
            json={"user_query": "what is the weather in Paris right now", "user_context": {}},
        )
        assert (await one.delete("/tools/bulk_3", headers=ADMIN)).status_code == 200
        await until(second, lambda r: r.get("bulk_3") is None)
        # One row read per write on each replica: not the 41 of a reload.
        assert registry_of(first).rows_read - read_one == 1
        assert registry_of(second).rows_read - read_two == 1
        # The routing index followed the change, the same index, not a new one.
        assert await second.state.runtime.router.index() is index_two
        assert await first.state.runtime.router.index() is index_one
        assert "weather_now" in index_two.manifests
        assert "bulk_3" not in index_two.manifests
        assert len(index_two) == 40
    assert routed.status_code == 200, routed.text
    assert routed.json()["tool_id"] == "weather_now"


async def test_the_batch_endpoint_is_all_or_nothing_and_names_each_bad_manifest(
    make_gateway: GatewayFactory, clean_state: Backends
) -> None:
    good = tools(3)
    broken = python_tool("broken_one", "echo")
    broken["endpoint"] = {"type": "python", "function": "os:system"}
    async with app_client(make_gateway(registry_batch_max=5)) as client:
        refused = await client.post(
            "/tools:batch",
            json={"tools": [good[0], broken, good[1], "not a manifest", good[0]]},
            headers=ADMIN,
        )
        nothing = await client.get("/tools/list", headers=USER)
        history_after_refusal = history_count(clean_state)
        too_many = await client.post("/tools:batch", json={"tools": tools(6)}, headers=ADMIN)
        empty = await client.post("/tools:batch", json={"tools": []}, headers=ADMIN)
        not_admin = await client.post("/tools:batch", json={"tools": good}, headers=USER)
        not_a_list = await client.post("/tools:batch", json={"tools": "x"}, headers=ADMIN)

        await client.post("/tools/register", json=good[2], headers=ADMIN)
        conflict = await client.post("/tools:batch", json={"tools": good}, headers=ADMIN)
        accepted = await client.post("/tools:batch", json={"tools": good[:2]}, headers=ADMIN)
        listed = await client.get("/tools/list", headers=USER)
        history = await client.get("/tools/bulk_1/history", headers=ADMIN)

    body = assert_error(refused, 422, "batch_refused")
    problems = {p["index"]: p for p in body["errors"]}
    assert sorted(problems) == [1, 3, 4]
    assert problems[1]["tool_id"] == "broken_one"
    assert problems[1]["reason"] == "invalid_manifest"
    assert problems[3]["reason"] == "invalid_manifest"
    assert "tool_id" not in problems[3]
    assert problems[4] == {
        "index": 4,
        "tool_id": "bulk_0",
        "reason": "duplicate_tool_id",
        "message": "Manifest #4 repeats tool_id 'bulk_0' of manifest #0.",
    }
    assert nothing.json() == {"revision": 0, "tools": []}
    assert history_after_refusal == 0
    assert assert_error(too_many, 422, "batch_too_large")["limit"] == 5
    assert assert_error(empty, 422, "batch_refused")["errors"][0]["reason"] == "empty_batch"
    assert_error(not_admin, 403, "insufficient_permission")
    assert_error(not_a_list, 422, "invalid_request")
    clash = assert_error(conflict, 409, "batch_refused")
    assert clash["errors"] == [
        {
            "index": 2,
            "tool_id": "bulk_2",
            "reason": "tool_exists",
            "message": "Tool 'bulk_2' is already registered (version 1); "
            "use PUT /tools/{id} to change it.",
            "version": 1,
        }
    ]
    assert accepted.status_code == 201, accepted.text
    assert accepted.json() == {
        "status": "registered",
        "revision": 2,  # one revision for the whole batch
        "tools": [
            {"status": "registered", "tool_id": "bulk_0", "version": 1, "revision": 2},
            {"status": "registered", "tool_id": "bulk_1", "version": 1, "revision": 2},
        ],
    }
    assert [t["tool_id"] for t in listed.json()["tools"]] == ["bulk_0", "bulk_1", "bulk_2"]
    versions = history.json()["versions"]
    assert [(v["version"], v["action"], v["actor"]) for v in versions] == [
        (1, "registered", "test-admin")
    ]


async def test_a_replica_that_missed_deltas_catches_up_with_just_the_changes(
    make_gateway: GatewayFactory,
) -> None:
    first, second = make_gateway(registry_poll_s=3600), make_gateway(registry_poll_s=3600)
    async with app_client(first) as one, app_client(second):
        await listening(first, second)
        await one.post("/tools:batch", json={"tools": tools(30)}, headers=ADMIN)
        await until(second, lambda r: len(r.tools) == 30)
        behind = registry_of(second)
        await second.state.runtime.registry_sync.stop()  # deaf: it hears nothing from here
        read_before = behind.rows_read

        await one.post("/tools/register", json=python_tool("late_tool", "echo"), headers=ADMIN)
        edited = python_tool("bulk_7", "echo", description="Edited while a replica was away.")
        assert (await one.put("/tools/bulk_7", json=edited, headers=ADMIN)).status_code == 200
        assert (await one.delete("/tools/bulk_9", headers=ADMIN)).status_code == 200
        latest = registry_of(first).revision
        assert behind.revision == latest - 3

        # The next delta it hears skips revisions: it catches up instead of applying it.
        assert await behind.apply(RegistryDelta(latest, ("bulk_7",)))
        index = await second.state.runtime.router.index()
    assert behind.revision == latest
    assert sorted(behind.tools) == sorted(registry_of(first).tools)
    assert behind.tools["bulk_7"].spec.description == "Edited while a replica was away."
    assert behind.tools["bulk_7"].version == 2
    assert behind.rows_read - read_before == 2  # late_tool and bulk_7, not all 30
    assert behind.changed_since(latest - 3) == frozenset({"late_tool", "bulk_7", "bulk_9"})
    assert "bulk_9" not in index.manifests
    assert index.manifests["bulk_7"]["description"] == "Edited while a replica was away."


async def test_a_manifest_folder_loads_as_one_batch(
    make_gateway: GatewayFactory, clean_state: Backends, tmp_path: Path
) -> None:
    folder = tmp_path / "manifests"
    folder.mkdir()
    for manifest in tools(12, prefix="file"):
        write_manifest(folder, manifest)
    refused = python_tool("file_refused", "echo")
    refused["endpoint"]["function"] = "os:system"  # outside the allowed packages
    write_manifest(folder, refused)
    app = make_gateway(tool_auto_discovery=True, manifests_dir=str(folder))
    async with app_client(app) as client:
        listed = await client.get("/tools/list", headers=USER)
        registry = registry_of(app)
    assert len(listed.json()["tools"]) == 12
    assert listed.json()["revision"] == 1  # twelve files, one revision
    assert registry.rows_read == 12
    assert history_count(clean_state) == 12
    async with app_client(make_gateway(tool_auto_discovery=True, manifests_dir=str(folder))) as c:
        again = await c.get("/tools/list", headers=USER)
    assert again.json()["revision"] == 1  # unchanged files write nothing


async def test_a_delta_ahead_of_the_database_changes_nothing(
    make_gateway: GatewayFactory,
) -> None:
    # Anyone who can publish on the registry channel can send a delta: Postgres decides.
    app = make_gateway()
    async with app_client(app) as client:
        await client.post("/tools/register", json=python_tool("kept_tool", "echo"), headers=ADMIN)
        registry = registry_of(app)
        revision = registry.revision
        forged = RegistryDelta(revision + 1, (), ("kept_tool",))
        applied = await registry.apply(forged)
        seen = await client.get("/tools/kept_tool", headers=USER)
    assert applied is False
    assert registry.revision == revision
    assert seen.status_code == 200
