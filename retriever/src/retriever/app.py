"""The retriever's ``create_app`` factory and lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI

from reach_common.service import build_app, service_resources
from retriever.settings import Settings


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
    async with service_resources(app) as resources:
        yield resources.state()


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    return build_app(
        settings,
        title="Reach retriever",
        description="Ingest documents and search them: pgvector and BM25, fused.",
        lifespan=lifespan,
    )
