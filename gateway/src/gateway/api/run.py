"""``POST /run``: natural language in, tool result out."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from gateway.api.deps import ClientAddressDep, RuntimeDep
from gateway.run.schemas import RunEnvelope, RunRequest

router = APIRouter(tags=["run"])


@router.post(
    "/run",
    response_model=RunEnvelope,
    responses={
        202: {
            "model": RunEnvelope,
            "description": (
                "`mode: async`: queued, poll GET /tasks/{task_id}; or the tool needs approval: "
                "`reason: approval_pending`, `approval_id`, `status_url`."
            ),
        },
        401: {"model": RunEnvelope, "description": "A credential was sent and did not verify."},
        403: {"model": RunEnvelope, "description": "`insufficient_permission`."},
        404: {"model": RunEnvelope, "description": "`no_matching_tool`, with the best candidates."},
        422: {"model": RunEnvelope, "description": "`invalid_arguments`: names the parameter."},
        429: {"model": RunEnvelope, "description": "`rate_limited`, with Retry-After."},
        504: {"model": RunEnvelope, "description": "`tool_timeout`."},
    },
)
async def run_query(
    body: RunRequest, request: Request, runtime: RuntimeDep, client_address: ClientAddressDep
) -> JSONResponse:
    """Route a natural-language request to one tool and call it.

    Only tools the caller may use (and, with `user_context.domain`, only that
    namespace) are candidates. The router ranks them by meaning and words,
    then an LLM picks and fills the arguments, or, offline, the best tool
    above the confidence threshold gets arguments read from the query by its
    schema. A follow-up such as "那这个 SKU 最近卖得怎么样" takes the missing SKU
    from the session's previous call (`route_hint: context`).

    The call then runs exactly as `POST /tools/{id}/invoke` would. The answer
    is that envelope plus `route`: confidence, hint, why, and the candidates
    with their scores. `dry_run: true` returns the route and runs nothing.
    When routing fails (`no_matching_tool`, `invalid_arguments`) the failure
    envelope still has `route`, so the candidates show why.

    A tool that needs approval answers 202 `approval_pending` with an `approval_id`
    (see `POST /tools/{id}/invoke`); `mode: async` or a `callback_url` answers 202
    with a `task_id`.
    """
    outcome = await runtime.run.run(body, headers=request.headers, client_ip=client_address)
    return JSONResponse(outcome.body, status_code=outcome.status_code, headers=outcome.headers)
