"""``GET /tasks/{task_id}``: status and result of a queue tool's task."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from gateway.api.deps import CallerDep, RuntimeDep
from gateway.executor.callbacks import CallbackAttemptRead
from reach_common.errors import NotFound

router = APIRouter(tags=["tasks"])


class TaskRead(BaseModel):
    task_id: str
    tool_id: str
    status: Literal["queued", "running", "succeeded", "failed"]
    trace_id: str | None = Field(None, description="The trace of the call that queued it.")
    created_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    latency_ms: float | None = Field(None, description="How long the worker ran it.")
    result: dict[str, Any] | None = Field(
        None, description="Once finished: {success, output} or {success: false, error}."
    )
    callback_url: str | None = Field(None, description="Where the result is POSTed.")
    callbacks: list[CallbackAttemptRead] = Field(
        default_factory=list, description="Each delivery attempt to callback_url, oldest first."
    )


def _time(value: str | None) -> datetime | None:
    return datetime.fromtimestamp(float(value), tz=UTC) if value else None


@router.get("/tasks/{task_id}", response_model=TaskRead)
async def read_task(task_id: str, runtime: RuntimeDep, caller: CallerDep) -> TaskRead:
    """Where a queued (or `async`) tool call stands: `queued`, `running`, `succeeded` or
    `failed`, with the tool's output or error once it is done, and each attempt to
    deliver it to the call's `callback_url`.

    Tasks are kept for TASK_TTL_S. Only the caller who queued a task (or a registry
    admin) can read it; anyone else gets 404 `task_not_found`. A task queued
    anonymously is readable anonymously in permissive mode only.
    """
    record = await runtime.tasks.read(task_id)
    owner = record.get("caller") if record else None
    # Anonymous tasks stay readable by anonymous callers in permissive mode only.
    mine = (caller.user_id or "") == owner and (caller.authenticated or not runtime.auth.strict)
    if record is not None and not (mine or runtime.auth.is_registry_admin(caller)):
        record = None
    if record is None:
        raise NotFound(
            f"No task {task_id!r} (it may have expired).", reason="task_not_found", task_id=task_id
        )
    created = _time(record.get("created_at"))
    assert created is not None
    return TaskRead(
        task_id=task_id,
        tool_id=record.get("tool_id", ""),
        status=record.get("status", "queued"),
        trace_id=record.get("trace_id") or None,
        created_at=created,
        started_at=_time(record.get("started_at")),
        finished_at=_time(record.get("finished_at")),
        latency_ms=float(record["latency_ms"]) if record.get("latency_ms") else None,
        result=json.loads(record["result"]) if record.get("result") else None,
        callback_url=record.get("callback_url") or None,
        callbacks=[
            CallbackAttemptRead.model_validate(row)
            for row in await runtime.callbacks.deliveries(task_id=task_id)
        ]
        if record.get("callback_url")
        else [],
    )
