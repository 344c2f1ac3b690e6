"""``GET /audit``: the invocation log, each caller's own rows."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from gateway.api.deps import CallerDep, RuntimeDep, SessionDep
from gateway.audit import repository
from gateway.audit.schemas import InvocationList, InvocationRead
from reach_common.auth.errors import Unauthenticated

router = APIRouter(tags=["audit"])


@router.get("/audit", response_model=InvocationList)
async def list_audit(
    runtime: RuntimeDep,
    caller: CallerDep,
    session: SessionDep,
    tool_id: Annotated[str | None, Query(max_length=200, description="Only this tool.")] = None,
    before_id: Annotated[
        int | None, Query(ge=1, le=2**62, description="Page: rows older than this id.")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="Page size.")] = 50,
) -> InvocationList:
    """Tool calls, newest first: who called what, the outcome and `reason`, timing, the
    trace id, and the arguments with secret-looking values redacted.

    A caller sees their own calls; operators (`OPS_ROLES`, registry admins) see
    everyone's. Anonymous callers see nothing (401). Rows are written a moment
    after the call (batched).
    """
    if not caller.authenticated:
        raise Unauthenticated("Reading the audit log needs an API key or a bearer token.")
    rows = await repository.list_invocations(
        session,
        caller=None if runtime.auth.is_ops(caller) else caller.user_id,
        tool_id=tool_id,
        before_id=before_id,
        limit=limit,
    )
    return InvocationList(
        invocations=[InvocationRead.model_validate(r) for r in rows],
        limit=limit,
        before_id=before_id,
    )
