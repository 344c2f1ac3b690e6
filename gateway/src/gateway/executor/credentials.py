"""Outbound credentials: the headers a tool call carries to its upstream.

Manifests name secrets (``key``); the values come from the gateway's
environment at call time and exist only in the outgoing headers. They are
never logged, stored in Postgres, put on spans or returned to a caller.
OAuth2 client-credentials tokens are cached in Redis until shortly before they
expire, shared by every replica; one fetch per replica at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import re
from collections.abc import Mapping

import httpx
from redis.asyncio import Redis
from redis.exceptions import RedisError

from gateway.executor.errors import ToolFailed
from gateway.registry.manifest import OutboundAuth

_TOKEN_PREFIX = "reach:gateway:oauth2:"  # noqa: S105 - a key prefix, not a secret
_EXPIRY_MARGIN_S = 30
_DEFAULT_EXPIRES_S = 300


def env_name(key: str) -> str:
    """``internal.order.read`` → ``INTERNAL_ORDER_READ``: the usual spelling of a variable."""
    return re.sub(r"[^A-Za-z0-9_]", "_", key).upper()


class OutboundCredentials:
    def __init__(
        self,
        *,
        redis: Redis,
        http: httpx.AsyncClient,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self._redis = redis
        self._http = http
        self._environ = environ if environ is not None else os.environ
        self._locks: dict[str, asyncio.Lock] = {}

    def secret(self, key: str) -> str:
        value = self._environ.get(key) or self._environ.get(env_name(key))
        if not value:
            raise ToolFailed(
                f"The gateway has no secret {key!r} (environment variable {env_name(key)}); "
                "an operator must set it before this tool can be called.",
                counts_as_failure=False,
            )
        return value

    async def headers(self, auth: OutboundAuth, timeout_s: float) -> dict[str, str]:
        if auth.type == "none":
            return {}
        assert auth.key is not None  # the manifest schema requires it
        if auth.type == "api_key":
            return {auth.header: self.secret(auth.key)}
        if auth.type == "bearer":
            return {"Authorization": f"Bearer {self.secret(auth.key)}"}
        return {"Authorization": f"Bearer {await self._oauth2_token(auth, timeout_s)}"}

    async def forget_token(self, auth: OutboundAuth) -> None:
        """Drop a cached token the upstream refused (401), so the next call fetches anew."""
        if auth.type == "oauth2":
            with contextlib.suppress(RedisError):
                await self._redis.delete(_cache_key(auth))

    async def _oauth2_token(self, auth: OutboundAuth, timeout_s: float) -> str:
        cache_key = _cache_key(auth)
        cached = await self._cached(cache_key)
        if cached:
            return cached
        lock = self._locks.setdefault(cache_key, asyncio.Lock())
        async with lock:
            cached = await self._cached(cache_key)
            if cached:
                return cached
            token, expires_in = await self._fetch(auth, timeout_s)
            ttl = max(1, expires_in - _EXPIRY_MARGIN_S)
            # On a Redis error the token still serves this call; the next one fetches again.
            with contextlib.suppress(RedisError):
                await self._redis.set(cache_key, token, ex=ttl)
            return token

    async def _cached(self, cache_key: str) -> str | None:
        try:
            value = await self._redis.get(cache_key)
        except RedisError:
            return None
        return str(value) if value else None

    async def _fetch(self, auth: OutboundAuth, timeout_s: float) -> tuple[str, int]:
        assert auth.token_endpoint is not None
        assert auth.client_id is not None
        assert auth.key is not None
        form = {"grant_type": "client_credentials"}
        if auth.scope:
            form["scope"] = auth.scope
        if auth.audience:
            form["audience"] = auth.audience
        where = auth.token_endpoint
        try:
            response = await self._http.post(
                where,
                data=form,
                auth=(auth.client_id, self.secret(auth.key)),
                headers={"Accept": "application/json"},
                timeout=timeout_s,
            )
        except httpx.HTTPError as exc:
            raise ToolFailed(
                f"Could not reach the OAuth2 token endpoint {where} ({type(exc).__name__})."
            ) from exc
        if response.status_code != 200:
            # The body is not echoed: token endpoints may reflect credentials in errors.
            raise ToolFailed(
                f"The OAuth2 token endpoint {where} refused the client credentials "
                f"(HTTP {response.status_code}).",
                upstream_status=response.status_code,
            )
        try:
            payload = response.json()
            token = str(payload["access_token"])
            expires_in = int(payload.get("expires_in", _DEFAULT_EXPIRES_S))
        except (ValueError, KeyError, TypeError) as exc:
            raise ToolFailed(f"The OAuth2 token endpoint {where} sent no access_token.") from exc
        return token, expires_in


def _cache_key(auth: OutboundAuth) -> str:
    identity = "|".join(
        [auth.token_endpoint or "", auth.client_id or "", auth.scope or "", auth.audience or ""]
    )
    return _TOKEN_PREFIX + hashlib.sha256(identity.encode()).hexdigest()[:32]
