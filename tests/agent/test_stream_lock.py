"""A streamed turn frees its session before the ``done`` event goes out, so a client that
sends its next message as soon as it reads ``done`` never meets ``session_busy``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from asgi_lifespan import LifespanManager
from redis.asyncio import Redis

from agent.app import create_app
from agent.sessions.lock import lock_key
from agent.settings import Settings
from reach_common.embeddings import Embedder
from tests.agent.tap import GatewayTap
from tests.conftest import Backends

CALLER = {"user_id": "u-stream", "roles": ["ops_admin"]}


async def test_the_session_is_free_when_the_done_event_is_sent(
    agent_settings: Callable[..., Settings],
    embedder: Embedder,
    gateway: GatewayTap,
    clean_state: Backends,
) -> None:
    session_id = "s-stream-lock"
    body = {
        "session_id": session_id,
        "message": "SKU2024001 还有多少库存",
        "user_context": CALLER,
        "stream": True,
    }
    raw = json.dumps(body).encode()
    redis = Redis.from_url(clean_state.redis_url)
    held_at: dict[str, bool] = {}
    chunks: list[bytes] = []

    finished = asyncio.Event()
    requests = [{"type": "http.request", "body": raw, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if requests:
            return requests.pop()
        await finished.wait()  # the client stays until the response is complete
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        # Called while the app's event generator is suspended on the event it sent.
        chunk = message.get("body", b"")
        chunks.append(chunk)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            finished.set()
        for kind in ("tool_result", "done"):
            if f"event: {kind}".encode() in chunk:
                held_at[kind] = bool(await redis.exists(lock_key(session_id)))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/chat",
        "raw_path": b"/chat",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"host", b"localhost")],
        "client": ("127.0.0.1", 50000),
        "server": ("localhost", 80),
    }
    try:
        app = create_app(agent_settings(), embedder=embedder)
        async with LifespanManager(app) as manager:
            await manager.app(scope, receive, send)
    finally:
        await redis.aclose()
    assert b"event: done" in b"".join(chunks)
    # Held while the turn runs, free by the time its last event is on the wire.
    assert held_at == {"tool_result": True, "done": False}
