"""Finding 9: a queue tool's ``stream`` could name any Redis key. Pointing it at a key
that is not a stream (``reach:gateway:registry``, a task record ...) made the worker's
one read of every stream fail on each poll, so no queued task ran any more.

Now ``stream`` is a short name (``^[a-z0-9][a-z0-9_.-]{0,62}$``: no ``:``) and the
Redis key is ``TASK_STREAM_PREFIX`` + name (``reach:gateway:tasks:<name>``), so a
manifest cannot reach any other key. A stream whose key holds something else anyway
is set aside by the worker, with a backoff, and the other streams keep running.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import assert_error
from tests.gateway import conftest as gateway_fixtures
from tests.gateway.conftest import ADMIN, SAMPLE_TOOLS, GatewayFactory, python_tool, task_finished

# The gateway tests' fixtures: the shared embedder and the in-process app factory.
embedder = gateway_fixtures.embedder
gateway_env = gateway_fixtures.gateway_env
make_gateway = gateway_fixtures.make_gateway


def queue_tool(tool_id: str, stream: str | None) -> dict[str, Any]:
    endpoint: dict[str, Any] = {
        "type": "queue",
        "target": {"type": "python", "function": f"{SAMPLE_TOOLS}:add"},
    }
    if stream is not None:
        endpoint["stream"] = stream
    return python_tool(
        tool_id,
        "add",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        },
        endpoint=endpoint,
    )


@pytest.mark.parametrize(
    "stream", ["reach:gateway:registry", "reach:gateway:task:abc", "tasks:other", "a:b"]
)
async def test_a_stream_outside_the_reserved_names_is_refused(
    make_gateway: GatewayFactory, make_client: Any, stream: str
) -> None:
    async with make_client(make_gateway()) as client:
        response = await client.post(
            "/tools/register", json=queue_tool("sneaky_queue", stream), headers=ADMIN
        )
        missing = await client.get("/tools/sneaky_queue", headers=ADMIN)
    body = assert_error(response, 422, "invalid_manifest")
    assert "endpoint/stream" in body["message"]
    assert missing.status_code == 404


async def test_a_wrong_type_key_under_another_stream_name_does_not_stop_good_tasks(
    make_gateway: GatewayFactory, make_client: Any
) -> None:
    app = make_gateway()
    async with make_client(app) as client:
        redis = app.state.runtime.redis
        # Something that is not a stream sits where the stream name "broken" maps.
        await redis.set("reach:gateway:tasks:broken", "not a stream")
        good = await client.post(
            "/tools/register", json=queue_tool("good_queue", "jobs"), headers=ADMIN
        )
        bad = await client.post(
            "/tools/register", json=queue_tool("broken_queue", "broken"), headers=ADMIN
        )
        plain = await client.post(
            "/tools/register", json=queue_tool("default_queue", None), headers=ADMIN
        )
        accepted = await client.post(
            "/tools/good_queue/invoke", json={"arguments": {"a": 2, "b": 3}}
        )
        also = await client.post(
            "/tools/default_queue/invoke", json={"arguments": {"a": 1, "b": 1}}
        )
        done = await task_finished(client, accepted.json()["task_id"])
        done_default = await task_finished(client, also.json()["task_id"])
        refused = await client.post(
            "/tools/broken_queue/invoke", json={"arguments": {"a": 1, "b": 1}}
        )
        untouched = await redis.get("reach:gateway:tasks:broken")
    assert (good.status_code, bad.status_code, plain.status_code) == (201, 201, 201)
    assert accepted.status_code == 202
    assert accepted.json()["success"] is True
    assert done["status"] == "succeeded"
    assert done["result"] == {"success": True, "output": {"sum": 5}}
    assert done_default["result"] == {"success": True, "output": {"sum": 2}}
    body = assert_error(refused, 503, "queue_unavailable")
    assert body["error"]["reason"] == "queue_unavailable"
    assert untouched == "not a stream"  # the worker never writes to a key it cannot use
