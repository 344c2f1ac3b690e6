"""Every dependency a gateway handler takes, as ``Annotated`` aliases.

Handlers take only these (and the request's own parameters): the runtime the
lifespan built, the caller, the request-scoped database session, and the
shared outbound HTTP client. Nothing here builds anything; ``gateway.runtime``
does, once per process.

The invoke route, the hottest, reads the runtime and the client address from the request
itself: a dependency solved per call costs more than the read it wraps.

Every dependency is ``async def``: FastAPI runs a plain ``def`` dependency in a worker
thread, and that hop (a queue, a lock, a thread wake-up) cost more than the rest of
dependency solving together on the invoke path.
"""

from __future__ import annotations

from typing import Annotated

import httpx
from fastapi import Depends, Request

from gateway.runtime import GatewayRuntime
from reach_common.auth.authenticator import CallerDep
from reach_common.db import SessionDep
from reach_common.telemetry import Telemetry

__all__ = [
    "CallerDep",
    "ClientAddressDep",
    "HttpDep",
    "RuntimeDep",
    "SessionDep",
    "TelemetryDep",
]


async def get_runtime(request: Request) -> GatewayRuntime:
    runtime: GatewayRuntime = request.state.runtime
    return runtime


async def get_http(request: Request) -> httpx.AsyncClient:
    http: httpx.AsyncClient = request.state.http
    return http


async def get_telemetry(request: Request) -> Telemetry:
    telemetry: Telemetry = request.state.telemetry
    return telemetry


async def get_client_address(request: Request) -> str | None:
    """The client's address (taken from X-Forwarded-For only behind TRUSTED_PROXIES)."""
    return request.client.host if request.client else None


RuntimeDep = Annotated[GatewayRuntime, Depends(get_runtime)]
HttpDep = Annotated[httpx.AsyncClient, Depends(get_http)]
TelemetryDep = Annotated[Telemetry, Depends(get_telemetry)]
ClientAddressDep = Annotated[str | None, Depends(get_client_address)]
