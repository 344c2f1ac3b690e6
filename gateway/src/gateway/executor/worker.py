"""The queue worker: runs queue tools' tasks from their Redis Streams.

Every gateway replica with ``TASK_WORKER=true`` joins one consumer group per
stream, so each task runs once. A task's span joins the trace of the call
that queued it. A task left pending by a worker that died is picked up again
after ``reclaim_idle_ms`` — rerun if its tool is idempotent, otherwise marked
failed, since running a non-idempotent tool twice is worse than not at all.

Streams are independent: a stream whose key cannot be used (another type of
value sits there: WRONGTYPE) is logged and skipped for a while, with a
doubling backoff, while the others go on being served.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import time
from typing import Any

import structlog
from opentelemetry import propagate, trace
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_fixed

from gateway.audit.redaction import redact
from gateway.audit.writer import AuditRow, AuditWriter
from gateway.auth.service import can_use
from gateway.background import cancel_and_wait
from gateway.catalog.spec import HttpTarget, McpTarget, PythonTarget, QueueTarget, ToolSpec
from gateway.executor.callbacks import CallbackSender
from gateway.executor.errors import ToolFailed
from gateway.executor.http import CallStats
from gateway.executor.service import Executor
from gateway.executor.tasks import TaskStore, caller_from_json, once_more_on_a_lost_connection
from gateway.registry.cache import RegistryCache
from gateway.registry.errors import ToolNotFound
from reach_common.auth.errors import InsufficientPermission
from reach_common.errors import ReachError, error_body

log = structlog.get_logger(__name__)

GROUP = "gateway-workers"
BACKOFF_S = 5.0
MAX_BACKOFF_S = 300.0


class TaskWorker:
    def __init__(
        self,
        *,
        redis: Redis,
        registry: RegistryCache,
        executor: Executor,
        tasks: TaskStore,
        audit: AuditWriter,
        tracer: trace.Tracer,
        default_stream: str,
        callbacks: CallbackSender | None = None,
        concurrency: int = 8,
        reclaim_idle_ms: int = 300_000,
    ) -> None:
        self._redis = redis
        self._registry = registry
        self._executor = executor
        self._tasks = tasks
        self._audit = audit
        self._tracer = tracer
        self._default_stream = default_stream
        self._callbacks = callbacks
        self._slots = asyncio.Semaphore(concurrency)
        self._concurrency = concurrency
        self._reclaim_idle_ms = reclaim_idle_ms
        self._consumer = f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"
        self._groups: set[str] = set()
        # stream -> (retry no earlier than, current backoff) for streams that failed.
        self._broken: dict[str, tuple[float, float]] = {}
        self._running: set[asyncio.Task[None]] = set()
        self._loop_task: asyncio.Task[None] | None = None
        self._last_reclaim = 0.0

    def streams(self) -> list[str]:
        names = {self._default_stream}
        for tool in self._registry.tools.values():
            if isinstance(tool.spec.endpoint, QueueTarget) and tool.spec.endpoint.stream:
                names.add(tool.spec.endpoint.stream)
        return sorted(names)

    @property
    def set_aside(self) -> frozenset[str]:
        """Streams skipped for now because reading them failed (e.g. WRONGTYPE)."""
        return frozenset(self._broken)

    def _usable(self) -> list[str]:
        now = time.monotonic()
        return [s for s in self.streams() if self._broken.get(s, (0.0, 0.0))[0] <= now]

    def _set_aside(self, stream: str, exc: Exception) -> None:
        """Skip ``stream`` for a while (doubling up to MAX_BACKOFF_S); the rest go on."""
        previous = self._broken.get(stream, (0.0, 0.0))[1]
        backoff = min(MAX_BACKOFF_S, previous * 2) if previous else BACKOFF_S
        self._broken[stream] = (time.monotonic() + backoff, backoff)
        self._groups.discard(stream)
        log.warning(
            "task_stream_unusable",
            stream=stream,
            error=str(exc)[:200],
            retry_in_s=backoff,
        )

    def _recovered(self, stream: str) -> None:
        if self._broken.pop(stream, None) is not None:
            log.info("task_stream_usable_again", stream=stream)

    def start(self) -> None:
        self._loop_task = asyncio.create_task(self._run(), name="task-worker")

    async def stop(self, grace_s: float = 5.0) -> None:
        await cancel_and_wait(self._loop_task)
        if self._running:
            _, pending = await asyncio.wait(self._running, timeout=grace_s)
            for task in pending:  # left in the pending list; reclaimed later
                task.cancel()

    async def _run(self) -> None:
        # Serve the queue for as long as the gateway runs; after a failure (Redis lost,
        # or anything else), go on in a second. Cancellation (stop) is not retried.
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(Exception),  # task boundary: keep serving
            wait=wait_fixed(1.0),
            before_sleep=_log_failure,
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                while True:
                    try:
                        await self._poll()
                    except ResponseError as exc:
                        if "NOGROUP" not in str(exc):
                            raise
                        self._groups.clear()  # the stream was deleted (or Redis flushed)

    async def _ensure_groups(self, streams: list[str]) -> list[str]:
        """Create the consumer group of each stream; returns the streams that have one.
        A stream whose key holds something else is set aside, not fatal."""
        ready = []
        for stream in streams:
            if stream not in self._groups:
                try:
                    await self._redis.xgroup_create(stream, GROUP, id="0", mkstream=True)
                except ResponseError as exc:
                    if "BUSYGROUP" not in str(exc):
                        self._set_aside(stream, exc)
                        continue
                self._groups.add(stream)
                self._recovered(stream)
            ready.append(stream)
        return ready

    async def _poll(self) -> None:
        streams = await self._ensure_groups(self._usable())
        if time.monotonic() - self._last_reclaim > 60:
            self._last_reclaim = time.monotonic()
            for stream in streams:
                try:
                    await self._reclaim(stream)
                except ResponseError as exc:
                    self._set_aside(stream, exc)
        streams = [s for s in streams if s in self._groups]
        if not streams:
            await asyncio.sleep(1.0)
            return
        await self._slots.acquire()
        self._slots.release()
        free = max(1, self._concurrency - len(self._running))
        try:
            reply: Any = await self._redis.xreadgroup(
                GROUP, self._consumer, dict.fromkeys(streams, ">"), count=free, block=1000
            )
        except ResponseError as exc:
            # One read covers every stream, so one bad key fails it for all: find which.
            await self._isolate(streams, exc)
            return
        for stream, messages in reply or []:
            for message_id, fields in messages:
                self._spawn(stream, message_id, fields, rerun=True)

    async def _isolate(self, streams: list[str], exc: ResponseError) -> None:
        """After a failed read: set aside the streams whose key is not a stream any more,
        and recheck every group (a deleted stream loses its group: NOGROUP)."""
        async with self._redis.pipeline(transaction=False) as pipe:
            for stream in streams:
                pipe.type(stream)
            kinds: list[Any] = await pipe.execute()
        culprits = 0
        for stream, kind in zip(streams, kinds, strict=True):
            name = kind.decode() if isinstance(kind, bytes) else str(kind)
            if name not in ("stream", "none"):
                self._set_aside(stream, exc)
                culprits += 1
        self._groups.clear()
        if not culprits and "NOGROUP" not in str(exc):
            raise exc  # not a stream's fault: the outer loop logs it and waits

    def _spawn(self, stream: str, message_id: str, fields: dict[str, str], *, rerun: bool) -> None:
        task = asyncio.create_task(self._handle(stream, message_id, fields, rerun=rerun))
        self._running.add(task)
        task.add_done_callback(self._running.discard)

    async def _reclaim(self, stream: str) -> None:
        reply: Any = await self._redis.xautoclaim(
            stream, GROUP, self._consumer, min_idle_time=self._reclaim_idle_ms, count=50
        )
        messages = reply[1] if len(reply) > 1 else []
        for message_id, fields in messages:
            if fields:
                log.warning("task_reclaimed", task_id=fields.get("task_id"))
                self._spawn(stream, message_id, fields, rerun=False)

    async def _handle(
        self, stream: str, message_id: str, fields: dict[str, str], *, rerun: bool
    ) -> None:
        async with self._slots:
            context = propagate.extract({"traceparent": fields.get("traceparent", "")})
            task_id = fields.get("task_id", "")
            with self._tracer.start_as_current_span(
                "gateway.task", context=context, attributes={"task.id": task_id}
            ):
                finished = True
                try:
                    await self._execute(task_id, fields, rerun=rerun)
                except (RedisConnectionError, RedisTimeoutError) as exc:
                    # Redis went away mid-task, so its status could not be kept. Left
                    # unacknowledged, it is reclaimed once Redis is back (if it kept it).
                    finished = False
                    log.warning("task_redis_lost", task_id=task_id, error=type(exc).__name__)
                finally:
                    if finished:
                        await self._ack(stream, message_id)

    async def _ack(self, stream: str, message_id: str) -> None:
        try:
            async for attempt in once_more_on_a_lost_connection():  # XACK is idempotent
                with attempt:
                    await self._redis.xack(stream, GROUP, message_id)
        except RedisError as exc:  # the stream went away or changed type meanwhile
            log.warning("task_ack_failed", stream=stream, error=str(exc)[:200])

    async def _execute(self, task_id: str, fields: dict[str, str], *, rerun: bool) -> None:
        started = time.perf_counter()
        tool_id = fields.get("tool_id", "")
        arguments: dict[str, Any] = json.loads(fields.get("arguments", "{}"))
        caller = caller_from_json(fields.get("caller", "{}"))
        tool = self._registry.get(tool_id)
        stats = CallStats()
        await self._tasks.mark(task_id, status="running", started_at=time.time())
        result: dict[str, Any]
        try:
            target = _target(tool.spec if tool else None, fields.get("mode", "queue"))
            if tool is None or target is None:
                raise ToolNotFound(tool_id)
            if not can_use(caller, tool.spec).allowed:
                raise InsufficientPermission(f"The caller may no longer use tool {tool_id!r}.")
            if not rerun and not tool.spec.idempotent:
                raise ToolFailed(
                    "A worker stopped while running this task; it is not run again because "
                    f"tool {tool_id!r} is not idempotent."
                )
            execution = await self._executor.run(
                tool.spec,
                target,
                arguments,
                idempotency_key=fields.get("idempotency_key") or task_id,
                stats=stats,
            )
            result = {"success": True, "output": execution.output}
            status, reason, http_status = "succeeded", None, 200
        except ReachError as exc:
            result = error_body(exc, nested=True, success=False)
            status, reason, http_status = "failed", exc.reason, exc.status_code
        latency_ms = round((time.perf_counter() - started) * 1000, 2)
        await self._tasks.mark(
            task_id, status=status, finished_at=time.time(), latency_ms=latency_ms, result=result
        )
        span = trace.get_current_span()
        span.set_attribute("task.status", status)
        trace_id = format(span.get_span_context().trace_id, "032x")
        if fields.get("callback_url") and self._callbacks is not None:
            payload: dict[str, Any] = {"event": "task.finished", "task_id": task_id}
            payload.update(tool_id=tool_id, status=status, result=result, trace_id=trace_id)
            self._callbacks.schedule(
                fields["callback_url"], "task.finished", payload, task_id=task_id
            )
        await self._audit.record(
            AuditRow(
                trace_id=trace_id,
                tool_id=tool_id,
                caller=caller.user_id,
                auth_via=caller.via,
                status=status,
                reason=reason,
                http_status=http_status,
                latency_ms=latency_ms,
                attempts=stats.attempts,
                task_id=task_id,
                arguments=redact(arguments, tool.spec.input_schema if tool else None),
            )
        )


def _target(spec: ToolSpec | None, mode: str) -> HttpTarget | PythonTarget | McpTarget | None:
    """What a task runs: a queue tool's target, or, for a call made ``async``, the tool's
    own endpoint (None when the tool no longer fits the task)."""
    if spec is None:
        return None
    if isinstance(spec.endpoint, QueueTarget):
        return spec.endpoint.target
    return spec.endpoint if mode == "async" else None


def _log_failure(state: RetryCallState) -> None:
    failure = state.outcome.exception() if state.outcome else None
    if isinstance(failure, ResponseError):
        log.warning("task_worker_error", error=str(failure))
    elif isinstance(failure, (RedisError, OSError)):
        log.warning("task_worker_redis_lost", error=type(failure).__name__)
    else:
        log.error("task_worker_failed", exc_info=failure)
