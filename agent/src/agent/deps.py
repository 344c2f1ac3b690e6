"""Request dependencies: the agent's long-lived objects from the lifespan state, and
who is calling.

All of them are ``async def``: FastAPI calls those on the event loop, where a plain
``def`` would cost a hop to its thread pool and back on every request.

The caller comes from the shared auth kit: a verified API key or JWT, or in
permissive mode also a claimed identity (``X-User-Id`` / ``X-User-Roles``, or
``user_context`` in the ``/chat`` body). In strict mode every endpoint but the
health checks needs a verified caller (401 ``unauthenticated``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from fastapi import Depends, Request
from redis.asyncio import Redis

from agent.chat.service import ChatDeps
from agent.clients.gateway import GatewayClient
from agent.clients.schemas import Caller as ForwardedCaller
from agent.memory.service import MemoryService
from agent.settings import Settings
from reach_common.auth.authenticator import Authenticator, CallerDep, context_from_headers
from reach_common.auth.caller import Caller, UserContext
from reach_common.auth.errors import Unauthenticated


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.state.settings
    return settings


async def get_redis(request: Request) -> Redis:
    redis: Redis = request.state.redis
    return redis


async def get_gateway(request: Request) -> GatewayClient:
    gateway: GatewayClient = request.state.gateway
    return gateway


async def get_chat_deps(request: Request) -> ChatDeps:
    state = request.state
    return ChatDeps(
        settings=state.settings,
        sessionmaker=state.sessionmaker,
        redis=state.redis,
        gateway=state.gateway,
        provider=state.provider,
        tracer=state.telemetry.tracer("agent"),
        counter=state.token_counter,
        memory=state.memory,
        owners=state.session_owners,
    )


async def get_memory(request: Request) -> MemoryService | None:
    memory: MemoryService | None = request.state.memory
    return memory


async def get_authenticator(request: Request) -> Authenticator:
    authenticator: Authenticator = request.state.authenticator
    return authenticator


SettingsDep = Annotated[Settings, Depends(get_settings)]
MemoryDep = Annotated[MemoryService | None, Depends(get_memory)]
RedisDep = Annotated[Redis, Depends(get_redis)]
GatewayDep = Annotated[GatewayClient, Depends(get_gateway)]
ChatDepsDep = Annotated[ChatDeps, Depends(get_chat_deps)]
AuthenticatorDep = Annotated[Authenticator, Depends(get_authenticator)]


def require_caller(caller: Caller, authenticator: Authenticator) -> Caller:
    """``caller``, or 401 in strict mode when nobody was verified."""
    if authenticator.strict and not caller.authenticated:
        raise Unauthenticated(
            "The agent needs a caller: send an API key or JWT as "
            "`Authorization: Bearer <credential>` or `X-API-Key`."
        )
    return caller


async def get_agent_caller(caller: CallerDep, authenticator: AuthenticatorDep) -> Caller:
    return require_caller(caller, authenticator)


AgentCallerDep = Annotated[Caller, Depends(get_agent_caller)]
"""The caller of a request without a body (``/sessions``), authenticated in strict mode."""


def claimed_context(body_context: UserContext, headers: Mapping[str, str]) -> UserContext | None:
    """The identity a ``/chat`` client claims: its body ``user_context``, else the
    ``X-User-Id`` / ``X-User-Roles`` headers. Trusted in permissive mode only."""
    if body_context.user_id is not None or body_context.roles:
        return body_context
    return context_from_headers(headers)


def forwarded(
    headers: Mapping[str, str], claimed: UserContext | None, strict: bool
) -> ForwardedCaller:
    """What the gateway calls of a turn carry: the client's own credential headers as
    received, and (permissive mode only) the identity it claimed."""
    context = {} if strict or claimed is None else claimed.model_dump(exclude_none=True)
    return ForwardedCaller(
        user_context=context,
        authorization=headers.get("authorization"),
        api_key=headers.get("x-api-key"),
    )


def is_admin(caller: Caller, settings: Settings) -> bool:
    return caller.has_any_role(settings.admin_roles)
