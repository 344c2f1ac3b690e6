"""Host resolution before a tool call: times the ``dns`` phase and guards egress.

Names are resolved once per ``ttl_s``; every answer is checked against the
egress policy (strict mode) on every call, which catches names that point at
private, loopback or metadata addresses however they are spelled. The
addresses returned are the ones checked, and the caller connects to one of
them (``LeanHttpClient.request(connect_to=...)``, the pinned token request in
``credentials.py``): nothing resolves the name a second time, so a DNS answer
that changes between the check and the connection (DNS rebinding) cannot
redirect the call.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

from opentelemetry import trace

from gateway.catalog.egress import EgressPolicy, IPAddress, literal_ip
from gateway.executor.errors import ToolFailed
from reach_common.telemetry import record_leaf

Lookup = Callable[[str], Awaitable[list[IPAddress]]]


async def system_lookup(host: str) -> list[IPAddress]:
    """The addresses the system resolver gives for ``host``, in its order, without repeats."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise ToolFailed(f"The tool's host {host!r} does not resolve ({exc}).") from exc
    except ValueError as exc:  # UnicodeError: a label IDNA cannot encode ("a..b", 64 chars)
        raise ToolFailed(f"The tool's host {host[:300]!r} is not a valid host name.") from exc
    addresses: list[IPAddress] = []
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]))
        if ip not in addresses:
            addresses.append(ip)
    return addresses


#: Host names whose answers are kept: callback URLs name hosts of the caller's choosing, so
#: the cache is bounded (least recently used first out, expired answers dropped early).
MAX_CACHED_HOSTS = 4096


class HostResolver:
    def __init__(
        self,
        egress: EgressPolicy,
        ttl_s: float = 30.0,
        *,
        lookup: Lookup = system_lookup,
        max_hosts: int = MAX_CACHED_HOSTS,
    ) -> None:
        self._egress = egress
        self._ttl_s = ttl_s
        self._lookup = lookup
        self._max_hosts = max_hosts
        self._cache: OrderedDict[str, tuple[float, list[IPAddress]]] = OrderedDict()

    def _cached(self, host: str, now: float) -> list[IPAddress] | None:
        entry = self._cache.get(host)
        if entry is None:
            return None
        if entry[0] <= now:
            del self._cache[host]
            return None
        self._cache.move_to_end(host)
        return entry[1]

    def _remember(self, host: str, addresses: list[IPAddress], now: float) -> None:
        cache = self._cache
        cache[host] = (now + self._ttl_s, addresses)
        cache.move_to_end(host)
        while cache:  # expired answers at the cold end go first
            oldest = next(iter(cache.values()))
            if oldest[0] > now and len(cache) <= self._max_hosts:
                break
            cache.popitem(last=False)

    async def resolve(self, host: str, tracer: trace.Tracer) -> list[IPAddress]:
        """The addresses to connect to for ``host``, all of them checked against the policy.

        Raises ``EgressDenied`` (403) when any answer is one strict mode refuses.
        """
        ip = literal_ip(host)
        if ip is not None:
            self._egress.check_resolved(host, [ip])
            return [ip]
        now = time.monotonic()
        cached = self._cached(host, now)
        started = time.time_ns()
        attributes: dict[str, object] = {"net.host.name": host}
        error: BaseException | None = None
        try:
            if cached is not None:
                attributes["dns.cached"] = True
                addresses = cached
            else:
                attributes["dns.cached"] = False
                addresses = await self._lookup(host)
                if not addresses:
                    raise ToolFailed(f"The tool's host {host!r} resolves to no address.")
                self._remember(host, addresses, now)
        except BaseException as exc:
            error = exc
            raise
        finally:
            record_leaf(tracer, "gateway.dns", started, time.time_ns(), attributes, error)
        self._egress.check_resolved(host, addresses)
        return list(addresses)
