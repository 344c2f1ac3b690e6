"""``/approvals`` request and response bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from gateway.approvals.journal import status_url
from gateway.approvals.service import ApprovalView
from gateway.executor.callbacks import CallbackAttemptRead
from reach_common.storable import storable_json

State = Literal["pending", "approved", "running", "succeeded", "failed", "denied", "expired"]


class ApprovalDecision(BaseModel):
    model_config = ConfigDict(extra="forbid")

    comment: Annotated[str | None, AfterValidator(storable_json)] = Field(
        None, max_length=2000, description="Why; kept with the decision and shown to the caller."
    )


class ApprovalEdit(ApprovalDecision):
    arguments: Annotated[dict[str, Any] | None, AfterValidator(storable_json)] = Field(
        None,
        description=(
            "Approve different arguments instead: this request is denied as replaced and a new "
            "pending request for the edited call is answered (201), to be approved in turn."
        ),
    )


class ApprovalEventRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    from_state: str | None
    to_state: str
    actor: str | None = Field(description="Who: a user id, or `gateway` for its own moves.")
    comment: str | None
    at: datetime


class ApprovalRead(BaseModel):
    """One approval request. `arguments` are shown with secret-looking values redacted."""

    model_config = ConfigDict(from_attributes=True)

    approval_id: str
    status_url: str
    tool_id: str
    state: State
    arguments: dict[str, Any] = Field(validation_alias="arguments_shown")
    arguments_hash: str = Field(description="sha256 of the canonical arguments it is bound to.")
    manifest_revision: int = Field(description="The tool's manifest revision it is bound to.")
    caller: str = Field(description="Who asked.")
    reason: str = Field(description="Why the call needs approval.")
    trace_id: str | None
    callback_url: str | None
    replaces: str | None = Field(description="The request this one replaced (edited arguments).")
    decided_by: str | None
    decided_at: datetime | None
    comment: str | None
    attempts: int = Field(description="How many times the tool was started for it.")
    result: dict[str, Any] | None = Field(
        description="Once finished: {success, output} or {success: false, error, reason}."
    )
    expires_at: datetime
    created_at: datetime
    finished_at: datetime | None
    events: list[ApprovalEventRead] = []
    callbacks: list[CallbackAttemptRead] = []

    @classmethod
    def of(cls, view: ApprovalView) -> ApprovalRead:
        read = cls.model_validate(
            {**_columns(view.approval), "status_url": status_url(view.approval.approval_id)}
        )
        read.events = [ApprovalEventRead.model_validate(e) for e in view.events]
        read.callbacks = [CallbackAttemptRead.model_validate(c) for c in view.callbacks]
        return read


def _columns(approval: Any) -> dict[str, Any]:
    return {column: getattr(approval, column) for column in approval.__table__.columns.keys()}  # noqa: SIM118


class ApprovalList(BaseModel):
    approvals: list[ApprovalRead]
    limit: int


class BatchApproval(ApprovalDecision):
    approval_ids: list[
        Annotated[str, Field(min_length=1, max_length=64), AfterValidator(storable_json)]
    ] = Field(
        min_length=1,
        max_length=20,
        description="Requests to approve together (e.g. the parallel calls of one agent turn).",
    )


class BatchOutcome(BaseModel):
    approval_id: str
    status_code: int = Field(description="What approving this one alone would have answered.")
    approval: ApprovalRead | None = None
    error: dict[str, Any] | None = Field(None, description="`reason`, `message` when refused.")


class BatchResult(BaseModel):
    results: list[BatchOutcome]
