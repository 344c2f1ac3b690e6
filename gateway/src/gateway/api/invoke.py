"""``POST /tools/{tool_id}/invoke``: call one tool by name."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Path, Request
from fastapi.responses import JSONResponse

from gateway.invoke.schemas import InvokeEnvelope, InvokeRequest
from gateway.invoke.service import CallOptions
from gateway.runtime import GatewayRuntime

router = APIRouter(prefix="/tools", tags=["invoke"])

_FAILURES = {
    status: {"model": InvokeEnvelope, "description": text}
    for status, text in {
        202: (
            "A queue tool (or `mode: async`) accepted the task: poll GET /tasks/{task_id}; or "
            "the tool needs approval: `reason: approval_pending`, `approval_id`, `status_url`."
        ),
        401: "No credential or a bad one (`unauthenticated`, `invalid_credential`).",
        403: "`insufficient_permission`, `approval_required`, `approval_denied`, `egress_denied`.",
        404: "`tool_not_found`, `approval_not_found`.",
        409: "`approval_arguments_changed`, `approval_manifest_changed`, `approval_expired` ...",
        422: "`invalid_arguments`: what is wrong and what a valid value looks like.",
        429: "`rate_limited`, with Retry-After.",
        502: "`tool_error`: the tool answered with an error (see `upstream_status`).",
        503: "`tool_unavailable`: the tool's circuit breaker is open; see Retry-After.",
        504: "`tool_timeout`: the tool's timeout_ms ran out.",
    }.items()
}


@router.post("/{tool_id}/invoke", response_model=InvokeEnvelope, responses=_FAILURES)  # type: ignore[arg-type]
async def invoke_tool(
    tool_id: Annotated[str, Path(max_length=200)],
    body: InvokeRequest,
    request: Request,
    idempotency_key: Annotated[
        str | None,
        Header(
            max_length=255,
            description=(
                "Passed to non-idempotent tools so that repeating this request does not act "
                "twice; one is generated when absent."
            ),
        ),
    ] = None,
) -> JSONResponse:
    """Call a tool with explicit arguments.

    The caller is authorised (strict mode: from the API key or JWT only; the
    body's `user_context` is ignored), the arguments are checked against the
    tool's `input_schema`, the tool's and the caller's rate limits are counted,
    then the tool runs within its `timeout_ms` (idempotent tools are retried
    per their `retry_policy`). Every call is audited.

    A tool with `requires_approval` does not run yet: the answer is 202 with
    `reason: approval_pending`, an `approval_id` and a `status_url`; the call
    runs once, when an approver approves it (`POST /approvals/{id}/approve`).
    Calling again with that `approval_id` and the same arguments answers the
    call's result. `mode: async` (or a `callback_url`) answers 202 with a
    `task_id` at once.

    The answer is the `/run` envelope: `success`, `tool_id`, `arguments`,
    `output`, `latency_ms`, `trace_id`; on failure `success: false`,
    `error: {reason, message, ...details}` and, as on every Reach error, the
    same `reason` and `message` at the top level, with the matching HTTP status.
    """
    # The runtime and the client address read here, not as dependencies: each dependency
    # FastAPI solves costs more per call than the read it wraps (``api/deps.py`` says what
    # they are: the lifespan's runtime; the client as ProxyHeadersMiddleware left it).
    runtime: GatewayRuntime = request.state.runtime
    client = request.client
    outcome = await runtime.invoke.invoke(
        tool_id,
        body.arguments,
        headers=request.headers,
        user_context=body.user_context,
        client_ip=client.host if client else None,
        options=CallOptions(
            mode=body.mode, callback_url=body.callback_url, approval_id=body.approval_id
        ),
    )
    return JSONResponse(outcome.body, status_code=outcome.status_code, headers=outcome.headers)
