"""Host resolution before a tool call: times the ``dns`` phase and guards egress.

Names are resolved once per ``ttl_s`` and the answer is checked against the
egress policy (strict mode), which catches names that point at metadata or
link-local addresses however they are spelled. httpx resolves again when it
connects; a name whose records change between the two lookups (DNS
rebinding) is not caught here.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time

from opentelemetry import trace

from gateway.auth.egress import EgressPolicy, IPAddress, literal_ip
from gateway.executor.errors import ToolFailed


class HostResolver:
    def __init__(self, egress: EgressPolicy, ttl_s: float = 30.0) -> None:
        self._egress = egress
        self._ttl_s = ttl_s
        self._cache: dict[str, tuple[float, list[IPAddress]]] = {}

    async def check(self, host: str, tracer: trace.Tracer) -> None:
        ip = literal_ip(host)
        if ip is not None:
            self._egress.check_resolved(host, [ip])
            return
        now = time.monotonic()
        cached = self._cache.get(host)
        with tracer.start_as_current_span(
            "gateway.dns", attributes={"net.host.name": host}
        ) as span:
            if cached is not None and cached[0] > now:
                span.set_attribute("dns.cached", True)
                addresses = cached[1]
            else:
                span.set_attribute("dns.cached", False)
                addresses = await self._resolve(host)
                self._cache[host] = (now + self._ttl_s, addresses)
        self._egress.check_resolved(host, addresses)

    @staticmethod
    async def _resolve(host: str) -> list[IPAddress]:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise ToolFailed(f"The tool's host {host!r} does not resolve ({exc}).") from exc
        return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
