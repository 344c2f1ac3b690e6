"""Outbound credentials: the headers a tool call carries to its upstream.

Manifests name secrets (``key``); the values come from the tool secret store
(``executor/secrets.py``: never the gateway's own settings), only for the
hosts each secret is bound to, and exist only in the outgoing headers. They are
never logged, stored in Postgres, put on spans or returned to a caller.
OAuth2 client-credentials tokens are cached in Redis until shortly before they
expire, shared by every replica; one fetch per replica at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

import httpx
from redis.asyncio import Redis
from redis.exceptions import RedisError

from gateway.catalog.secrets import ToolSecrets
from gateway.catalog.spec import OutboundAuth
from gateway.executor.errors import ToolFailed

if TYPE_CHECKING:
    from opentelemetry import trace

    from gateway.catalog.egress import IPAddress
    from gateway.executor.resolver import HostResolver

_TOKEN_PREFIX = "reach:gateway:oauth2:"  # noqa: S105 - a key prefix, not a secret
_EXPIRY_MARGIN_S = 30
_DEFAULT_EXPIRES_S = 300


class OutboundCredentials:
    def __init__(
        self,
        *,
        redis: Redis,
        http: httpx.AsyncClient,
        secrets: ToolSecrets,
    ) -> None:
        self._redis = redis
        self._http = http
        self._secrets = secrets
        self._locks: dict[str, asyncio.Lock] = {}

    def secret(self, key: str, url: str) -> str:
        """The value of secret ``key``, released only for a host it is bound to."""
        return self._secrets.value(key, url)

    async def headers(self, auth: OutboundAuth, url: str, timeout_s: float) -> dict[str, str]:
        """The credential headers of a call to ``url`` (the manifest's URL template)."""
        if auth.type == "none":
            return {}
        assert auth.key is not None  # the manifest schema requires it
        if auth.type == "api_key":
            return {auth.header: self.secret(auth.key, url)}
        if auth.type == "bearer":
            return {"Authorization": f"Bearer {self.secret(auth.key, url)}"}
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

    # Set by HttpExecutor: token requests are resolved, checked and pinned like tool calls.
    _token_resolver: HostResolver | None = None
    _token_tracer: trace.Tracer | None = None

    def guard_token_endpoints(self, resolver: HostResolver, tracer: trace.Tracer) -> None:
        """Send token requests only to addresses ``resolver`` resolved and checked (egress)."""
        self._token_resolver = resolver
        self._token_tracer = tracer

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
        if self._token_resolver is None or self._token_tracer is None:
            raise ToolFailed("OAuth2 token requests are not set up in this gateway (no resolver).")
        # The egress check of tool calls, at call time (403 egress_denied), and the
        # connection goes to an address it checked: no second DNS answer is used.
        host = urlsplit(where).hostname or ""
        addresses = await self._token_resolver.resolve(host, self._token_tracer)
        credentials = (auth.client_id, self.secret(auth.key, auth.token_endpoint))
        response: httpx.Response | None = None
        failure: Exception | None = None
        for address in addresses:
            try:
                request = self._token_request(where, address, form, timeout_s)
                response = await self._http.send(request, auth=credentials, follow_redirects=False)
                break
            except httpx.ConnectError as exc:  # nothing was sent: the next address may answer
                failure = exc
            except (httpx.HTTPError, httpx.InvalidURL) as exc:
                failure = exc
                break
        if response is None:
            raise ToolFailed(
                f"Could not reach the OAuth2 token endpoint {where} ({type(failure).__name__})."
            ) from failure
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

    def _token_request(
        self, url: str, address: IPAddress, form: dict[str, str], timeout_s: float
    ) -> httpx.Request:
        """A POST to ``url`` sent to ``address``: the URL's host stays in ``Host`` and, for
        https, is the TLS server name (SNI and certificate check)."""
        parts = urlsplit(url)
        authority = f"[{address}]" if address.version == 6 else str(address)
        if parts.port is not None:
            authority += f":{parts.port}"
        pinned = urlunsplit((parts.scheme, authority, parts.path or "/", parts.query, ""))
        extensions = {"sni_hostname": parts.hostname or ""} if parts.scheme == "https" else {}
        return self._http.build_request(
            "POST",
            pinned,
            data=form,
            headers={
                "Host": parts.netloc.rpartition("@")[2],
                "Accept": "application/json",
                # Not kept for another request: a pooled connection to this address was
                # verified for this host name only.
                "Connection": "close",
            },
            timeout=timeout_s,
            extensions=extensions,
        )


def _cache_key(auth: OutboundAuth) -> str:
    identity = "|".join(
        [auth.token_endpoint or "", auth.client_id or "", auth.scope or "", auth.audience or ""]
    )
    return _TOKEN_PREFIX + hashlib.sha256(identity.encode()).hexdigest()[:32]
