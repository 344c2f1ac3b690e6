"""``GET /traces/{trace_id}`` response: the span tree and a per-phase summary."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class SpanNode(BaseModel):
    span_id: str
    parent_span_id: str | None
    service: str = Field(examples=["gateway"])
    name: str = Field(examples=["gateway.execute"])
    kind: str
    start: datetime
    duration_ms: float
    status: str = Field(description="unset, ok or error.")
    status_message: str | None = None
    attributes: dict[str, Any]
    events: list[dict[str, Any]]
    children: list[SpanNode] = Field(default_factory=list)


class Phases(BaseModel):
    """Milliseconds spent per phase, summed over the trace; null when it did not occur."""

    route: float | None = Field(None, description="Choosing a tool (POST /run).")
    auth: float | None = Field(None, description="Resolving the caller and deciding.")
    validate_: float | None = Field(
        None, alias="validate", description="Checking the arguments against input_schema."
    )
    execute: float | None = Field(None, description="Running the tool, retries included.")
    dns: float | None = Field(None, description="Resolving the tool's host.")
    connect: float | None = Field(None, description="Opening TCP/TLS connections.")
    response: float | None = Field(None, description="Request sent until the body was read.")

    model_config = {"populate_by_name": True, "serialize_by_alias": True}


class TraceRead(BaseModel):
    trace_id: str
    services: list[str]
    span_count: int
    duration_ms: float
    phases: Phases
    spans: list[SpanNode] = Field(description="Root spans, each with its children, by start.")


class TraceSummary(BaseModel):
    """One trace in a list: its root span and what the whole trace touched."""

    trace_id: str
    started_at: datetime
    duration_ms: float = Field(description="The root span's duration: the request end to end.")
    root_service: str = Field(examples=["agent"])
    root_name: str = Field(examples=["POST /chat"])
    status: str = Field(description="error if any span of the trace failed, else ok.")
    services: list[str]
    span_count: int
    tools: list[str] = Field(description="Tools called (or routed to) in the trace.")
    callers: list[str] = Field(description="Callers recorded on the trace (`enduser.id`).")


class TraceList(BaseModel):
    traces: list[TraceSummary] = Field(description="Newest first.")
    next_cursor: str | None = Field(
        None, description="Pass as `cursor` for the next (older) page; null on the last page."
    )


class TraceQuery(BaseModel):
    """Filters and page of ``GET /traces`` (and of the viewer's list page)."""

    model_config = ConfigDict(extra="forbid")

    service: str | None = Field(
        None, min_length=1, max_length=100, description="Traces with a span of this service."
    )
    tool: str | None = Field(
        None, min_length=1, max_length=200, description="Traces that called or routed to it."
    )
    caller: str | None = Field(
        None, min_length=1, max_length=200, description="Traces recorded for this user id."
    )
    status: Literal["ok", "error"] | None = Field(
        None, description="error: some span failed; ok: none did."
    )
    min_duration_ms: float | None = Field(
        None, ge=0, le=86_400_000, allow_inf_nan=False, description="Root span at least this long."
    )
    limit: int = Field(20, ge=1, le=100, description="Traces per page.")
    cursor: str | None = Field(
        None, max_length=64, description="`next_cursor` of the previous page."
    )
