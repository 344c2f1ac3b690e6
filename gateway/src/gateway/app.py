"""The gateway's ``create_app`` factory and lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from gateway.settings import Settings
from gateway.upstreams.endpoints import router as upstreams_router
from reach_common.service import build_app, service_resources


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
    async with service_resources(app) as resources:
        yield resources.state()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    app = build_app(
        settings,
        title="Reach gateway",
        description="Registry, routing, auth and execution of tools for AI agents.",
        lifespan=lifespan,
    )
    app.include_router(upstreams_router)
    return app
