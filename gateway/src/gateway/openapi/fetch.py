"""Read an OpenAPI document from a URL the way a tool call reaches its upstream.

The URL is untrusted (an admin may paste anything, and a document server may be
hostile), so the fetch follows the gateway's egress rules (``catalog/egress.py``):
in strict mode the host is checked by its text, then every address it resolves
to, and the connection goes to a checked address (``executor/resolver.py``: no
second DNS answer). Redirects are not followed (a 3xx could bounce the gateway
past those checks); the body is read up to ``OPENAPI_MAX_BYTES`` and no further;
the whole fetch has ``OPENAPI_FETCH_TIMEOUT_S``.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

from opentelemetry import trace

from gateway.catalog.egress import EgressPolicy
from gateway.executor.errors import ToolFailed
from gateway.executor.resolver import HostResolver
from gateway.executor.transport import (
    ResponseTooLarge,
    Timing,
    ToolHttpClient,
    TransportError,
)
from gateway.openapi.errors import OpenApiFetchFailed, OpenApiTooLarge
from reach_common.errors import Unprocessable

_ACCEPT = "application/json, application/yaml;q=0.9, text/yaml;q=0.9, */*;q=0.1"


class DocumentFetcher:
    def __init__(
        self,
        *,
        egress: EgressPolicy,
        client: ToolHttpClient,
        tracer: trace.Tracer,
        max_bytes: int,
        timeout_s: float,
    ) -> None:
        self._egress = egress
        self._resolver = HostResolver(egress, ttl_s=0.0)
        self._client = client
        self._tracer = tracer
        self._max_bytes = max_bytes
        self._timeout_s = timeout_s

    async def fetch(self, url: str) -> bytes:
        """The document's bytes. ``url`` is where to connect (already rewritten for
        compose-style hosts); raises 403 ``egress_denied``, 413 ``openapi_too_large``
        or 502 ``openapi_fetch_failed``."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise Unprocessable(
                "`url` must be an absolute http(s) URL.", reason="invalid_url", url=url[:200]
            )
        self._egress.check_url(url)
        with self._tracer.start_as_current_span(
            "gateway.openapi_fetch", attributes={"server.address": parts.hostname}
        ):
            try:
                async with asyncio.timeout(self._timeout_s):
                    addresses = await self._resolver.resolve(parts.hostname, self._tracer)
                    response = await self._client.request(
                        "GET",
                        url,
                        [("Accept", _ACCEPT), ("User-Agent", "reach-gateway-openapi-import")],
                        None,
                        max_bytes=self._max_bytes,
                        timing=Timing(),
                        connect_to=addresses,
                        reuse=False,
                    )
            except ResponseTooLarge:
                raise OpenApiTooLarge("bytes", self._max_bytes, "OPENAPI_MAX_BYTES") from None
            except TimeoutError:
                raise OpenApiFetchFailed(url, f"no answer within {self._timeout_s:g} s") from None
            except (TransportError, ToolFailed, OSError) as exc:
                raise OpenApiFetchFailed(url, f"connection failed ({type(exc).__name__})") from None
        if 300 <= response.status < 400:
            raise OpenApiFetchFailed(url, f"HTTP {response.status}; redirects are not followed")
        if response.status != 200:
            raise OpenApiFetchFailed(url, f"HTTP {response.status}")
        return response.body
