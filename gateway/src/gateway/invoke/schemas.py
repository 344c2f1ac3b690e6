"""``POST /tools/{id}/invoke``: the request, and the envelope shared with ``POST /run``."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from reach_common.auth.caller import UserContext


class InvokeRequest(BaseModel):
    arguments: dict[str, Any] = Field(
        default_factory=dict,
        description="The tool's arguments, checked against its input_schema.",
        examples=[{"sku": "SKU2024001"}],
    )
    user_context: UserContext | None = Field(
        None, description="Who the call is for; trusted in permissive mode only."
    )


class ErrorDetail(BaseModel):
    reason: str = Field(
        examples=["invalid_arguments"],
        description=(
            "unauthenticated | invalid_credential | invalid_arguments | tool_not_found | "
            "tool_timeout | tool_error | tool_unavailable | rate_limited | approval_required | "
            "egress_denied | secret_unavailable | queue_unavailable"
        ),
    )
    message: str


class InvokeEnvelope(BaseModel):
    """The result of one call; the same shape `POST /run` answers with."""

    success: bool
    tool_id: str
    arguments: dict[str, Any] = Field(description="The arguments used, secrets redacted.")
    output: Any = None
    error: ErrorDetail | None = None
    reason: str | None = Field(
        None, description="On failure: the same `reason` as `error.reason` (every Reach error)."
    )
    message: str | None = Field(None, description="On failure: the same as `error.message`.")
    task_id: str | None = Field(None, description="For queue tools: poll GET /tasks/{task_id}.")
    latency_ms: float
    trace_id: str | None = Field(None, description="Read the call's spans: GET /traces/{id}.")
