"""``/approvals``: calls waiting for a person, and the person's decision."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from gateway.api.deps import CallerDep, RuntimeDep
from gateway.approvals.schemas import (
    ApprovalDecision,
    ApprovalEdit,
    ApprovalList,
    ApprovalRead,
    BatchApproval,
    BatchOutcome,
    BatchResult,
    State,
)
from gateway.approvals.service import ApprovalView
from reach_common.errors import ReachError, error_body

router = APIRouter(prefix="/approvals", tags=["approvals"])

ApprovalId = Annotated[str, Path(max_length=64, description="The id the 202 answer gave.")]
_DECISION_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"description": "`unauthenticated`: deciding needs an identity (strict: verified)."},
    403: {"description": "`approver_role_required` or `self_approval_forbidden`."},
    404: {"description": "`approval_not_found`: no such request that you may see."},
    409: {
        "description": (
            "`approval_not_pending` (decided already), `approval_expired`, or, when approved, "
            "`approval_manifest_changed` (the tool changed since: nothing ran)."
        )
    },
}


@router.get("", response_model=ApprovalList)
async def list_approvals(
    runtime: RuntimeDep,
    caller: CallerDep,
    state: Annotated[State | None, Query(description="Only requests in this state.")] = None,
    tool_id: Annotated[str | None, Query(max_length=200, description="Only this tool.")] = None,
    requested_by: Annotated[
        str | None, Query(alias="caller", max_length=200, description="Only this caller's.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many.")] = 50,
) -> ApprovalList:
    """Approval requests, newest first: your own, plus every request for a tool whose
    `approvers` roles you hold. Filter by `state`, `tool_id` and `caller`."""
    rows = await runtime.approvals.list_requests(
        caller, state=state, tool_id=tool_id, requested_by=requested_by, limit=limit
    )
    return ApprovalList(
        approvals=[ApprovalRead.of(ApprovalView(row, [], [])) for row in rows], limit=limit
    )


@router.get("/{approval_id}", response_model=ApprovalRead)
async def read_approval(
    approval_id: ApprovalId, runtime: RuntimeDep, caller: CallerDep
) -> ApprovalRead:
    """One request: its state, who decided and when, every transition (`events`), the
    call's `result` once it ran, and each callback attempt. A pending request past its
    expiry is shown `expired`. Readable by the caller who asked and by its approvers;
    anyone else gets 404 `approval_not_found`."""
    return ApprovalRead.of(await runtime.approvals.read(approval_id, caller))


@router.post("/approve", response_model=BatchResult)
async def approve_together(
    body: BatchApproval, runtime: RuntimeDep, caller: CallerDep
) -> BatchResult:
    """Approve several pending calls at once — say, the parallel calls of one agent turn.
    Each is still its own request, bound to its own arguments, checked and run exactly as
    `POST /approvals/{id}/approve` would (concurrently); each result says what that call
    alone would have answered, so one refusal never hides another's success."""

    async def one(approval_id: str) -> BatchOutcome:
        try:
            view, _ = await runtime.approvals.approve(approval_id, caller, comment=body.comment)
        except ReachError as exc:
            return BatchOutcome(
                approval_id=approval_id, status_code=exc.status_code, error=error_body(exc)
            )
        return BatchOutcome(
            approval_id=approval_id, status_code=200, approval=ApprovalRead.of(view)
        )

    unique = list(dict.fromkeys(body.approval_ids))
    return BatchResult(results=list(await asyncio.gather(*(one(i) for i in unique))))


@router.post(
    "/{approval_id}/approve",
    response_model=ApprovalRead,
    responses={
        201: {"model": ApprovalRead, "description": "Edited: the new request."},
        **_DECISION_ERRORS,
    },
    status_code=200,
)
async def approve_request(
    approval_id: ApprovalId,
    runtime: RuntimeDep,
    caller: CallerDep,
    body: ApprovalEdit | None = None,
) -> JSONResponse:
    """Approve a pending call; it then runs once, here, and the answer shows its
    `result` (`state` `succeeded` or `failed`). Concurrent approvals of one request, on
    any number of replicas, run it once: the others get 409 `approval_not_pending`.

    With `arguments` that differ from the request's, nothing runs: the request is
    denied as replaced and a new pending request for the edited call is answered with
    201, checked against the tool's policy as it is now."""
    body = body or ApprovalEdit()
    view, replaced = await runtime.approvals.approve(
        approval_id, caller, comment=body.comment, arguments=body.arguments
    )
    read = ApprovalRead.of(view)
    return JSONResponse(read.model_dump(mode="json"), status_code=201 if replaced else 200)


@router.post("/{approval_id}/deny", response_model=ApprovalRead, responses=_DECISION_ERRORS)
async def deny_request(
    approval_id: ApprovalId,
    runtime: RuntimeDep,
    caller: CallerDep,
    body: ApprovalDecision | None = None,
) -> ApprovalRead:
    """Deny a pending call: it never runs. Approvers may deny; the caller who asked may
    withdraw their own request the same way."""
    body = body or ApprovalDecision()
    view = await runtime.approvals.deny(approval_id, caller, comment=body.comment)
    return ApprovalRead.of(view)
