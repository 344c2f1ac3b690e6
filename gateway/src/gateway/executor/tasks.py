"""``queue`` tools: tasks on a Redis Stream, their status in a Redis hash.

Invoking a queue tool adds one entry to the tool's stream and answers 202 with
a ``task_id`` at once. A worker (any gateway replica, one consumer group)
runs it; ``GET /tasks/{task_id}`` reads ``reach:gateway:task:<id>``:
``queued`` → ``running`` → ``succeeded`` | ``failed``, with the result
envelope. Status is kept for ``TASK_TTL_S``. Any other tool called with
``"mode": "async"`` goes on the default stream the same way; a task with a
``callback_url`` has its result POSTed there when it finishes (``callbacks.py``).

Streams live under a reserved key prefix (``TASK_STREAM_PREFIX``, by default
``reach:gateway:tasks:``): a manifest's ``stream`` is a short name
(``^[a-z0-9][a-z0-9_.-]{0,62}$``, no ``:``) and its Redis key is
``<prefix><name>``; a manifest without one uses ``<prefix>default``. A manifest
therefore cannot point the queue at any other key of the gateway's Redis.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_fixed

from reach_common.auth.caller import Caller
from reach_common.errors import ServiceUnavailable

_TASK_PREFIX = "reach:gateway:task:"
STREAM_MAXLEN = 100_000


class QueueUnavailable(ServiceUnavailable):
    reason = "queue_unavailable"


def task_key(task_id: str) -> str:
    return _TASK_PREFIX + task_id


def caller_to_json(caller: Caller) -> str:
    return json.dumps({"user_id": caller.user_id, "roles": sorted(caller.roles), "via": caller.via})


def caller_from_json(text: str) -> Caller:
    data = json.loads(text)
    return Caller(
        user_id=data.get("user_id"),
        roles=frozenset(data.get("roles", [])),
        via=data.get("via", "anonymous"),
    )


@dataclass(frozen=True)
class QueuedTask:
    task_id: str
    stream: str
    status: str = "queued"


class TaskStore:
    def __init__(self, redis: Redis, *, ttl_s: int) -> None:
        self._redis = redis
        self._ttl_s = ttl_s

    async def enqueue(
        self,
        *,
        stream: str,
        tool_id: str,
        arguments: dict[str, Any],
        caller: Caller,
        trace_id: str | None,
        traceparent: str | None,
        idempotency_key: str,
        callback_url: str | None = None,
        mode: str = "queue",
    ) -> QueuedTask:
        """``mode``: ``queue`` for a queue tool, ``async`` for another tool called with
        ``"mode": "async"`` (the worker then runs its own endpoint)."""
        task_id = uuid.uuid4().hex
        now = time.time()
        record: dict[Any, Any] = {
            "task_id": task_id,
            "tool_id": tool_id,
            "status": "queued",
            "caller": caller.user_id or "",
            "trace_id": trace_id or "",
            "created_at": repr(now),
            "callback_url": callback_url or "",
        }
        message = {
            "task_id": task_id,
            "tool_id": tool_id,
            "arguments": json.dumps(arguments),
            "caller": caller_to_json(caller),
            "traceparent": traceparent or "",
            "idempotency_key": idempotency_key,
            "callback_url": callback_url or "",
            "mode": mode,
        }
        # The status record exists before the worker can see the message.
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.hset(task_key(task_id), mapping=record)
                pipe.expire(task_key(task_id), self._ttl_s)
                pipe.xadd(stream, message, maxlen=STREAM_MAXLEN, approximate=True)  # type: ignore[arg-type]
                await pipe.execute()
        except ResponseError as exc:
            # e.g. WRONGTYPE: something that is not a stream holds the key. Refuse the
            # call instead of leaving a "queued" record that no worker will ever run.
            await self._redis.delete(task_key(task_id))
            raise QueueUnavailable(
                f"Tool {tool_id!r} cannot be queued now: its task stream is unusable "
                f"({str(exc).split(' ', 1)[0]}). Try again later or tell the operator.",
            ) from exc
        return QueuedTask(task_id=task_id, stream=stream)

    async def mark(self, task_id: str, **fields: Any) -> None:
        mapping: dict[Any, Any] = {
            k: (
                json.dumps(v)
                if isinstance(v, (dict, list))
                else repr(v)
                if isinstance(v, float)
                else str(v)
            )
            for k, v in fields.items()
        }
        # Once more on a lost connection: after Redis restarts, the pool's first use of an
        # old connection fails although Redis is back, and a status write is idempotent.
        async for attempt in once_more_on_a_lost_connection():
            with attempt:
                async with self._redis.pipeline(transaction=True) as pipe:
                    pipe.hset(task_key(task_id), mapping=mapping)
                    pipe.expire(task_key(task_id), self._ttl_s)
                    await pipe.execute()

    async def read(self, task_id: str) -> dict[str, str] | None:
        record: dict[str, str] = await self._redis.hgetall(task_key(task_id))  # type: ignore[assignment]
        return record or None


def once_more_on_a_lost_connection() -> AsyncRetrying:
    """For idempotent Redis writes: a second try, on a fresh connection, when the first
    met a dropped one."""
    return AsyncRetrying(
        retry=retry_if_exception_type((RedisConnectionError, RedisTimeoutError)),
        stop=stop_after_attempt(2),
        wait=wait_fixed(0.05),
        reraise=True,
    )
