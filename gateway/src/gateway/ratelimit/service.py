"""Rate limits per tool (the manifest's ``rate_limit``) and per caller (``CALLER_RATE_LIMIT``).

Counted in Redis with one Lua script per call: it checks every limit that
applies and, only if all pass, records the call in each — atomically, so a
logical call counts exactly once across all gateway replicas, and a call
refused by one limit uses up none of the others. Windows slide (a sorted set
of call times per key, Redis server time), so there is no burst at a window
edge. The script uses only commands Redis 6.2 has.

When Redis does not answer, ``RATE_LIMIT_WITHOUT_REDIS`` decides: ``open`` admits the
call uncounted (a warning in the log), ``closed`` refuses it with 503
``dependency_unavailable`` and ``Retry-After`` (docs/reliability.md).
"""

from __future__ import annotations

import math
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

# KEYS: one sorted set per limit. ARGV: member, then (amount, window_ms) per key.
# Returns {1, 0} when admitted, {0, retry_after_ms, index of the limit that refused}.
_SCRIPT = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local wait, refused_by = 0, 0
for i, key in ipairs(KEYS) do
  local amount = tonumber(ARGV[2 * i])
  local window = tonumber(ARGV[2 * i + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if redis.call('ZCARD', key) >= amount then
    local oldest = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
    local until_free = window
    if oldest[2] then until_free = tonumber(oldest[2]) + window - now end
    if until_free > wait then wait, refused_by = until_free, i end
  end
end
if refused_by > 0 then return {0, wait, refused_by} end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, now, ARGV[1])
  redis.call('PEXPIRE', key, tonumber(ARGV[2 * i + 1]))
end
return {1, 0, 0}
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
    scope: str  # what the caller is told: "tool 'x'" or "per-caller"
    key: str
    item: RateLimitItem


class RateLimiter:
    def __init__(
        self,
        redis: Redis,
        caller_limit: RateLimitItem | None,
        without_redis: Literal["open", "closed"] = "open",
    ) -> None:
        self._redis = redis
        self._script = redis.register_script(_SCRIPT)
        self._caller_limit = caller_limit
        self._without_redis = without_redis

    def limits_for(
        self, tool_id: str, tool_limit: RateLimitItem | None, caller_key: str
    ) -> list[Limit]:
        limits = []
        if tool_limit is not None:
            limits.append(Limit(f"tool {tool_id!r}", _PREFIX + "tool:" + tool_id, tool_limit))
        if self._caller_limit is not None:
            limits.append(Limit("per-caller", _PREFIX + "caller:" + caller_key, self._caller_limit))
        return limits

    async def hit(self, limits: list[Limit]) -> None:
        """Count one call against every limit, or raise RateLimited and count none."""
        if not limits:
            return
        args: list[str | int] = [uuid.uuid4().hex]
        for limit in limits:
            args.extend([limit.item.amount, limit.item.get_expiry() * 1000])
        try:
            admitted, wait_ms, refused_by = await self._script(
                keys=[limit.key for limit in limits], args=args
            )
        except (RedisConnectionError, RedisTimeoutError) as exc:
            if self._without_redis == "closed":
                raise DependencyUnavailable("redis") from exc
            log.warning("rate_limit_skipped", reason="redis_unavailable", limits=len(limits))
            return
        if int(admitted) == 1:
            return
        limit = limits[int(refused_by) - 1]
        raise RateLimited(limit.scope, limit.item, max(1, math.ceil(int(wait_ms) / 1000)))
