"""The shop's ``create_app`` factory and lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from reach_common.service import build_app, service_resources
from shop.endpoints import router
from shop.seed import seed_if_empty
from shop.settings import Settings


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
    async with service_resources(app) as resources:
        await seed_if_empty(resources.sessionmaker)
        yield resources.state()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    app = build_app(
        settings,
        title="Reach demo shop",
        description=(
            "A small shop for agents to act on: inventory, orders (with Idempotency-Key "
            "support), sales history and a deliberately slow monthly report."
        ),
        lifespan=lifespan,
    )
    app.include_router(router)
    return app
