"""Rate limits per tool (the manifest's ``rate_limit``) and per caller (``CALLER_RATE_LIMIT``
for tool calls, ``ROUTE_RATE_LIMIT`` for routing requests).

Counted in Redis with one Lua script: it checks every limit that applies and,
only if all pass, records the call in each — atomically, so a logical call
counts once across all gateway replicas, and a call refused by one limit uses up
none of the others. Windows slide (a sorted set of call times per key, Redis
server time), so there is no burst at a window edge. The script uses only
commands Redis 6.2 has.

A large limit is counted in leases (``RATE_LIMIT_LEASE_SHARE``, default 1%): a
replica records up to that share of the limit at once (at most ``LEASE_MOST``
slots) and spends them in memory for the same share of the window, so most calls
make no Redis round trip (``scripts/bench_gateway.py --lease both``: counting
call by call cost 1.11x the gateway's CPU per call, docs/scaling.md). A leased
slot counts from when it was leased, so no replica admits more than the limit;
slots a lease did not spend are given back by the replica's next script run for
those limits, or at shutdown. A limit whose share is under two slots (under 200
per window at 1%) is counted call by call, exactly as before.

When Redis does not answer, ``RATE_LIMIT_WITHOUT_REDIS`` decides: ``open`` admits the
call uncounted (a warning in the log), ``closed`` refuses it with 503
``dependency_unavailable`` and ``Retry-After`` (docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import math
import time
import uuid
from dataclasses import dataclass
from typing import Literal

import structlog
from limits import RateLimitItem
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from reach_common.errors import DependencyUnavailable, ReachError

log = structlog.get_logger(__name__)

_PREFIX = "reach:gateway:rl:"

LEASE_MOST = 100  # slots a replica leases at once, however large the limit
LEASES_KEPT = 10_000  # (tool, caller) leases held in memory; the oldest go first

# KEYS: one sorted set per limit. ARGV: a lease id, slots wanted, the count of slots to
# give back, those slots, then (amount, window_ms) per key. Gives back the slots first,
# then grants as many as every limit has free, up to those wanted (slot j is
# "<lease id>:<j>"). Returns {slots granted, 0, 0}, or {0, retry_after_ms, index of
# the limit that refused}.
_SCRIPT = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local grant, given_back = tonumber(ARGV[2]), tonumber(ARGV[3])
local base = 3 + given_back
local wait, refused_by = 0, 0
for i, key in ipairs(KEYS) do
  local amount = tonumber(ARGV[base + 2 * i - 1])
  local window = tonumber(ARGV[base + 2 * i])
  if given_back > 0 then redis.call('ZREM', key, unpack(ARGV, 4, base)) end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local free = amount - redis.call('ZCARD', key)
  if free < 1 then
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    local until_free = window
    if oldest[2] then until_free = tonumber(oldest[2]) + window - now end
    if until_free > wait then wait, refused_by = until_free, i end
  elseif free < grant then
    grant = free
  end
end
if refused_by > 0 then return {0, wait, refused_by} end
for i, key in ipairs(KEYS) do
  for j = 1, grant do redis.call('ZADD', key, now, ARGV[1] .. ':' .. j) end
  redis.call('PEXPIRE', key, tonumber(ARGV[base + 2 * i]))
end
return {grant, 0, 0}
"""


class RateLimited(ReachError):
    status_code = 429
    reason = "rate_limited"

    def __init__(self, scope: str, limit: RateLimitItem, retry_after_s: int) -> None:
        super().__init__(
            f"Too many calls: the {scope} limit is {limit.amount} per "
            f"{_window_text(limit)}. Try again in {retry_after_s} s.",
            headers={"Retry-After": str(retry_after_s)},
            limit=f"{limit.amount}/{_window_text(limit)}",
            retry_after_s=retry_after_s,
        )


def _window_text(limit: RateLimitItem) -> str:
    seconds = limit.get_expiry()
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        if seconds % size == 0:
            count = seconds // size
            return unit if count == 1 else f"{count} {unit}s"
    return f"{seconds} seconds"


@dataclass(frozen=True)
class Limit:
    scope: str  # what the caller is told: "tool 'x'", "per-caller" or "routing"
    key: str
    item: RateLimitItem


@dataclass
class _Lease:
    """Slots ``<id>:<next>`` to ``<id>:<last>``, recorded in Redis and not yet spent."""

    id: str
    next: int
    last: int
    until: float  # monotonic time the slots may be spent until

    def unspent(self) -> list[str]:
        return [f"{self.id}:{j}" for j in range(self.next, self.last + 1)]


class RateLimiter:
    def __init__(
        self,
        redis: Redis,
        caller_limit: RateLimitItem | None,
        without_redis: Literal["open", "closed"] = "open",
        lease_share: float = 0.0,
        route_limit: RateLimitItem | None = None,
    ) -> None:
        self._redis = redis
        self._script = redis.register_script(_SCRIPT)
        self._caller_limit = caller_limit
        self._route_limit = route_limit
        self._without_redis = without_redis
        self._lease_share = lease_share
        self._leases: dict[tuple[str, ...], _Lease] = {}
        # Leased slots not spent in time, per set of keys: given back on the next run.
        self._unspent: dict[tuple[str, ...], list[str]] = {}
        self._leasing: dict[tuple[str, ...], asyncio.Event] = {}

    def limits_for(
        self, tool_id: str, tool_limit: RateLimitItem | None, caller_key: str
    ) -> list[Limit]:
        limits = []
        if tool_limit is not None:
            limits.append(Limit(f"tool {tool_id!r}", _PREFIX + "tool:" + tool_id, tool_limit))
        if self._caller_limit is not None:
            limits.append(Limit("per-caller", _PREFIX + "caller:" + caller_key, self._caller_limit))
        return limits

    def routing(self, caller_key: str) -> list[Limit]:
        """The per-caller limit on routing (``ROUTE_RATE_LIMIT``): ``POST /run``, a ranked
        ``GET /tools/list?q=`` and MCP ``find_tools`` each cost a query embedding before
        any tool runs, so they are counted before the router works."""
        if self._route_limit is None:
            return []
        return [Limit("routing", _PREFIX + "route:" + caller_key, self._route_limit)]

    async def hit(self, limits: list[Limit]) -> None:
        """Count one call against every limit, or raise RateLimited and count none."""
        if not limits:
            return
        keys = tuple(limit.key for limit in limits)
        size, seconds = self._lease_size(limits)
        if size == 1:
            await self._run(keys, limits, 1)
            return
        while True:
            lease = self._leases.get(keys)
            if lease is not None:
                if lease.next <= lease.last and time.monotonic() < lease.until:
                    lease.next += 1
                    return
                del self._leases[keys]
                self._unspent.setdefault(keys, []).extend(lease.unspent())
            # One lease at a time per set of limits: a burst of calls that each leased
            # would record a lease a call and spend one slot of each.
            leasing = self._leasing.get(keys)
            if leasing is None:
                break
            await leasing.wait()
        self._leasing[keys] = leasing = asyncio.Event()
        try:
            lease_id, granted = await self._run(keys, limits, size)
        finally:
            del self._leasing[keys]
            leasing.set()
        if granted > 1:  # slot 1 is this call's
            if len(self._leases) >= LEASES_KEPT:  # the oldest lease's slots age out in Redis
                del self._leases[next(iter(self._leases))]
            self._leases[keys] = _Lease(lease_id, 2, granted, time.monotonic() + seconds)

    async def _run(self, keys: tuple[str, ...], limits: list[Limit], size: int) -> tuple[str, int]:
        """One run of the script, asking for ``size`` slots and giving back what these
        limits leased and did not spend: the lease id and the slots granted, none if
        Redis does not answer and the call is admitted uncounted; raises RateLimited
        when a limit is full."""
        given_back = self._unspent.pop(keys, [])
        lease_id = uuid.uuid4().hex
        args: list[str | int] = [lease_id, size, len(given_back), *given_back]
        for limit in limits:
            args.extend([limit.item.amount, limit.item.get_expiry() * 1000])
        try:
            granted, wait_ms, refused_by = await self._script(keys=list(keys), args=args)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            if given_back:
                self._unspent.setdefault(keys, []).extend(given_back)
            if self._without_redis == "closed":
                raise DependencyUnavailable("redis") from exc
            log.warning("rate_limit_skipped", reason="redis_unavailable", limits=len(limits))
            return lease_id, 0
        if int(granted) >= 1:
            return lease_id, int(granted)
        limit = limits[int(refused_by) - 1]
        raise RateLimited(limit.scope, limit.item, max(1, math.ceil(int(wait_ms) / 1000)))

    def _lease_size(self, limits: list[Limit]) -> tuple[int, float]:
        """Slots to lease for these limits, and for how many seconds: the lease share of
        the smallest limit and of the shortest window; one slot (no lease) under two."""
        size = min(LEASE_MOST, *(math.floor(lim.item.amount * self._lease_share) for lim in limits))
        if size < 2:
            return 1, 0.0
        return size, min(lim.item.get_expiry() for lim in limits) * self._lease_share

    async def release(self) -> None:
        """Give back every leased slot not yet spent (at shutdown)."""
        for keys, lease in self._leases.items():
            self._unspent.setdefault(keys, []).extend(lease.unspent())
        self._leases.clear()
        unspent, self._unspent = self._unspent, {}
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for keys, slots in unspent.items():
                    for key in keys:
                        if slots:
                            pipe.zrem(key, *slots)
                await pipe.execute()
        except (RedisConnectionError, RedisTimeoutError):
            log.warning("rate_limit_lease_not_released", leases=len(unspent))
