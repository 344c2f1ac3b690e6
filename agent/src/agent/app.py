"""The agent's ``create_app`` factory and lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import structlog
from fastapi import FastAPI

from agent.chat.endpoints import router as chat_router
from agent.clients.gateway import GatewayClient
from agent.memory.endpoints import router as memories_router
from agent.memory.service import MemoryService
from agent.metrics import AgentMetrics
from agent.sessions.endpoints import router as sessions_router
from agent.sessions.lock import load_lock_scripts
from agent.sessions.owners import SessionOwners
from agent.sessions.tokens import TokenCounter
from agent.settings import Settings
from reach_common.embeddings import Embedder
from reach_common.llm.factory import check_settings, create_provider
from reach_common.service import build_app, service_resources

log = structlog.get_logger(__name__)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
    settings: Settings = app.state.settings
    async with service_resources(app) as resources:
        provider = create_provider(settings)
        gateway = GatewayClient(
            resources.http, settings.gateway_url, timeout_s=settings.gateway_timeout_s
        )
        await load_lock_scripts(resources.redis)
        memory = None
        if settings.memory_enabled:
            embedder = app.state.embedder or await anyio.to_thread.run_sync(
                lambda: Embedder.configured(settings, int8_default=True)
            )
            memory = MemoryService(
                embedder,
                resources.sessionmaker,
                top_k=settings.memory_top_k,
                min_similarity=settings.memory_min_similarity,
                provider=provider,
            )
        log.info(
            "agent_ready",
            llm=provider.name if provider else "offline",
            model=provider.model if provider else None,
            memory=settings.memory_enabled,
            gateway=settings.gateway_url,
        )
        try:
            yield {
                **resources.state(),
                "provider": provider,
                "gateway": gateway,
                "memory": memory,
                # One per process: it learns the provider's tokenizer from reported usage.
                "token_counter": TokenCounter(),
                # Sessions whose owner this process has seen: their turns skip a read.
                "session_owners": SessionOwners(),
            }
        finally:
            if memory is not None:
                await memory.aclose()
            close = getattr(provider, "aclose", None)
            if close is not None:
                await close()


def create_app(settings: Settings | None = None, *, embedder: Embedder | None = None) -> FastAPI:
    """The agent app. ``embedder`` (memory recall) is loaded at start-up unless given."""
    settings = settings or Settings()
    # Refuse to start on an unusable LLM configuration, not in the middle of a turn.
    check_settings(settings)
    app = build_app(
        settings,
        title="Reach agent",
        description=(
            "A ReAct loop over the gateway's tools, with sessions in Postgres. "
            "Runs with Anthropic, OpenAI (or any OpenAI-compatible server), or offline."
        ),
        lifespan=lifespan,
    )
    app.state.embedder = embedder
    app.state.metrics.family(AgentMetrics)
    app.include_router(chat_router)
    app.include_router(sessions_router)
    app.include_router(memories_router)
    return app
