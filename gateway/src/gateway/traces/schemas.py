"""``GET /traces/{trace_id}`` response: the span tree and a per-phase summary."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field


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
