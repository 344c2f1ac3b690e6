"""Request dependencies shared by the gateway's endpoints."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from gateway.runtime import GatewayRuntime
from reach_common.auth.authenticator import context_from_headers
from reach_common.auth.caller import Caller


def get_runtime(request: Request) -> GatewayRuntime:
    runtime: GatewayRuntime = request.state.runtime
    return runtime


RuntimeDep = Annotated[GatewayRuntime, Depends(get_runtime)]


async def get_caller(request: Request, runtime: RuntimeDep) -> Caller:
    """The caller of a request without a body: a credential, or X-User-Id/X-User-Roles
    headers in permissive mode."""
    return await runtime.auth.resolve(request.headers, context_from_headers(request.headers))


CallerDep = Annotated[Caller, Depends(get_caller)]
