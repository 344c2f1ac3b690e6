"""Queue streams: short names under a reserved Redis prefix, and a worker that keeps
serving the good streams when one stream's key holds something else."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from gateway.catalog.spec import (
    DEFAULT_STREAM_PREFIX,
    STREAM_NAME_PATTERN,
    ManifestDefaults,
    QueueTarget,
    stream_key,
)
from gateway.executor import worker as worker_module
from gateway.registry.errors import InvalidManifest
from gateway.registry.manifest import compile_manifest, manifest_schema
from gateway.settings import Settings
from tests.conftest import app_client
from tests.gateway.conftest import ADMIN, SAMPLE_TOOLS, GatewayFactory, python_tool, task_finished

DEFAULTS = ManifestDefaults(python_packages=(SAMPLE_TOOLS,))


def queue_tool(tool_id: str, function: str, stream: str | None = None) -> dict[str, Any]:
    endpoint: dict[str, Any] = {
        "type": "queue",
        "target": {"type": "python", "function": f"{SAMPLE_TOOLS}:{function}"},
    }
    if stream is not None:
        endpoint["stream"] = stream
    return python_tool(
        tool_id,
        function,
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        },
        endpoint=endpoint,
    )


def queue_target(manifest: dict[str, Any], defaults: ManifestDefaults = DEFAULTS) -> QueueTarget:
    endpoint = compile_manifest(manifest, defaults).endpoint
    assert isinstance(endpoint, QueueTarget)
    return endpoint


async def invoke(client: httpx.AsyncClient, tool_id: str, **arguments: Any) -> httpx.Response:
    return await client.post(f"/tools/{tool_id}/invoke", json={"arguments": arguments})


# --- naming ------------------------------------------------------------------------------------


def test_the_schema_and_the_code_agree_on_stream_names() -> None:
    queue = manifest_schema()["$defs"]["queue_endpoint"]["properties"]["stream"]
    assert queue["pattern"] == STREAM_NAME_PATTERN


def test_a_stream_name_maps_under_the_reserved_prefix() -> None:
    named = queue_target(queue_tool("named", "add", "reports.monthly-v2"))
    unnamed = queue_target(queue_tool("unnamed", "add"))
    assert (named.name, named.stream) == (
        "reports.monthly-v2",
        "reach:gateway:tasks:reports.monthly-v2",
    )
    assert (unnamed.name, unnamed.stream) == ("default", "reach:gateway:tasks:default")
    custom = ManifestDefaults(python_packages=(SAMPLE_TOOLS,), task_stream_prefix="tenant7:q:")
    assert queue_target(queue_tool("named", "add", "x"), custom).stream == "tenant7:q:x"


def test_settings_default_stream_is_under_the_prefix() -> None:
    settings = Settings(_env_file=None)
    assert settings.task_stream_prefix == DEFAULT_STREAM_PREFIX
    assert settings.task_stream == stream_key(DEFAULT_STREAM_PREFIX, "default")
    other = Settings(_env_file=None, task_stream_prefix="p:")
    assert other.task_stream == "p:default"


@pytest.mark.parametrize(
    "stream",
    ["reach:gateway:registry", "a:b", "Upper", "", "-lead", "x" * 64, "sp ace", "tasks/x"],
)
def test_a_stream_that_is_not_a_short_name_is_refused(stream: str) -> None:
    with pytest.raises(InvalidManifest) as caught:
        compile_manifest(queue_tool("bad_stream", "add", stream), DEFAULTS)
    assert caught.value.reason == "invalid_manifest"
    assert "endpoint/stream" in caught.value.message


@pytest.mark.parametrize("stream", ["a", "0", "reports", "team_a.jobs-2", "x" * 63])
def test_short_names_are_accepted(stream: str) -> None:
    assert queue_target(queue_tool("good_stream", "add", stream)).name == stream


# --- the worker --------------------------------------------------------------------------------


async def test_the_default_and_named_streams_run_their_tasks(make_gateway: GatewayFactory) -> None:
    app = make_gateway()
    async with app_client(app) as client:
        for manifest in (queue_tool("q_default", "add"), queue_tool("q_named", "add", "named")):
            assert (
                await client.post("/tools/register", json=manifest, headers=ADMIN)
            ).status_code == 201
        first = await invoke(client, "q_default", a=1, b=2)
        second = await invoke(client, "q_named", a=3, b=4)
        done = [await task_finished(client, r.json()["task_id"]) for r in (first, second)]
        redis = app.state.runtime.redis
        lengths = [
            await redis.xlen("reach:gateway:tasks:default"),
            await redis.xlen("reach:gateway:tasks:named"),
        ]
    assert first.status_code == second.status_code == 202
    assert [d["result"] for d in done] == [
        {"success": True, "output": {"sum": 3}},
        {"success": True, "output": {"sum": 7}},
    ]
    assert lengths == [1, 1]


async def test_a_stream_key_turned_to_another_type_is_set_aside_and_comes_back(
    make_gateway: GatewayFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "BACKOFF_S", 0.05)
    monkeypatch.setattr(worker_module, "MAX_BACKOFF_S", 0.1)
    app = make_gateway()
    async with app_client(app) as client:
        runtime = app.state.runtime
        redis = runtime.redis
        for manifest in (queue_tool("good", "add", "good"), queue_tool("flaky", "add", "flaky")):
            await client.post("/tools/register", json=manifest, headers=ADMIN)
        # Both streams exist and have their group: the flaky one ran a task.
        warmup = await task_finished(
            client, (await invoke(client, "flaky", a=0, b=1)).json()["task_id"]
        )
        # Now something else takes the flaky stream's key: reads of it fail with WRONGTYPE.
        await redis.delete("reach:gateway:tasks:flaky")
        await redis.set("reach:gateway:tasks:flaky", "not a stream")
        for _ in range(500):  # until the worker has tripped over it (bounded)
            if runtime.worker.set_aside:
                break
            await asyncio.sleep(0.02)
        set_aside = runtime.worker.set_aside
        good_task = (await invoke(client, "good", a=2, b=2)).json()["task_id"]
        good = await task_finished(client, good_task)
        refused = await invoke(client, "flaky", a=1, b=1)
        leftover = await redis.keys("reach:gateway:task:*")
        # The operator clears the key: the stream is used again after its backoff.
        await redis.delete("reach:gateway:tasks:flaky")
        back = await invoke(client, "flaky", a=5, b=5)
        recovered = await task_finished(client, back.json()["task_id"])
    assert warmup["status"] == "succeeded"
    assert good["result"] == {"success": True, "output": {"sum": 4}}
    assert set_aside == {"reach:gateway:tasks:flaky"}
    assert refused.status_code == 503
    assert refused.json()["reason"] == "queue_unavailable"
    assert refused.json()["error"]["reason"] == "queue_unavailable"
    assert len(leftover) == 2  # the two tasks that ran; none for the refused call
    assert recovered["result"] == {"success": True, "output": {"sum": 10}}
