"""The gateway's ``create_app`` factory and lifespan.

The app is the shared service shell (``reach_common.service.build_app``: errors,
health, tracing, hardening), the gateway's HTTP routers (``gateway.api``) and a
lifespan that builds the runtime (``gateway.runtime.build_runtime``).
"""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.middleware import Middleware

from gateway.api import ROUTERS
from gateway.api.invoke_direct import InvokeDirect
from gateway.api.mcp import mcp_routes
from gateway.metrics import GatewayMetrics
from gateway.runtime import build_runtime
from gateway.settings import Settings
from gateway.ui.endpoints import router as ui_router
from reach_common.embeddings import Embedder
from reach_common.service import build_app, service_resources


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
    settings: Settings = app.state.settings
    async with service_resources(app) as resources, AsyncExitStack() as stack:
        runtime = await build_runtime(settings, resources, app.state.embedder, stack)
        app.state.runtime = runtime  # for code outside requests (tests, benchmarks)
        if settings.gc_freeze:
            # Everything loaded so far (libraries, the model, the registry) lives as long
            # as the process: keep it out of the cyclic collector, whose full passes over
            # it otherwise pause every request in flight.
            gc.collect()
            gc.freeze()
        yield {**resources.state(), "runtime": runtime}


def create_app(settings: Settings | None = None, *, embedder: Embedder | None = None) -> FastAPI:
    """The gateway app. ``embedder``: share one model between apps (tests); else one is
    loaded in the lifespan."""
    settings = settings or Settings()
    app = build_app(
        settings,
        title="Reach gateway",
        description="Registry, routing, auth and execution of tools for AI agents.",
        lifespan=lifespan,
        innermost=[Middleware(InvokeDirect)],
    )
    app.state.embedder = embedder
    app.state.metrics.family(GatewayMetrics)  # its gauges are read at every scrape
    for router in ROUTERS:
        app.include_router(router)
    app.include_router(ui_router)  # the trace viewer, /ui/...
    first, last = mcp_routes()
    app.router.routes[:0] = first  # /mcp: found at once
    app.router.routes.extend(last)  # /mcp/{server}: after the API's own /mcp/... paths
    return app
