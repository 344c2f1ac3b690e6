"""``POST /tools/{id}/invoke``: the request, and the envelope shared with ``POST /run``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field

from reach_common.auth.caller import UserContext
from reach_common.storable import storable_json


class InvokeRequest(BaseModel):
    arguments: dict[str, Any] = Field(
        default_factory=dict,
        description="The tool's arguments, checked against its input_schema.",
        examples=[{"sku": "SKU2024001"}],
    )
    user_context: UserContext | None = Field(
        None, description="Who the call is for; trusted in permissive mode only."
    )
    mode: Literal["sync", "async"] = Field(
        "sync",
        description=(
            "`async`: answer 202 with a `task_id` at once and run the call in the background; "
            "read the result at GET /tasks/{task_id}."
        ),
    )
    callback_url: Annotated[str | None, AfterValidator(storable_json)] = Field(
        None,
        max_length=2000,
        description=(
            "POST the result here when the call (or its approval request) finishes, signed "
            "with HMAC-SHA256 (docs/approvals.md); implies `async`. Obeys the egress rules."
        ),
    )
    approval_id: Annotated[str | None, AfterValidator(storable_json)] = Field(
        None,
        max_length=64,
        description=(
            "The approval this exact call was given: answers its result (or that it is still "
            "pending). Other arguments, another tool or a changed manifest are refused."
        ),
    )


class ErrorDetail(BaseModel):
    reason: str = Field(
        examples=["invalid_arguments"],
        description=(
            "unauthenticated | invalid_credential | invalid_arguments | tool_not_found | "
            "tool_timeout | tool_error | tool_unavailable | rate_limited | approval_required | "
            "approval_denied | approval_expired | approval_arguments_changed | "
            "approval_manifest_changed | approval_tool_mismatch | approval_not_found | "
            "outcome_unknown | invalid_callback_url | callbacks_not_configured | "
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
    task_id: str | None = Field(
        None, description="For queue tools and `async` calls: poll GET /tasks/{task_id}."
    )
    approval_id: str | None = Field(
        None, description="With 202 `approval_pending`: the approval request; see status_url."
    )
    approval_state: str | None = None
    status_url: str | None = Field(None, description="Where the pending approval is followed.")
    expires_at: str | None = Field(None, description="When the pending approval expires.")
    latency_ms: float
    trace_id: str | None = Field(None, description="Read the call's spans: GET /traces/{id}.")
