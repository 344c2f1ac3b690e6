"""Session context: the last few calls of a conversation, in Redis.

``/run`` is stateless per request, but people talk in turns: "SKU2024001 还有
多少库存", then "那这个 SKU 最近卖得怎么样". The second query names no SKU;
the previous call's arguments supply it. Entries are scoped by caller *and*
session id, so a guessed session id never reveals someone else's calls, and
expire after ``ttl_s``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from reach_common.outages import redis_optional

OUTPUT_LIMIT = 2000


@dataclass(frozen=True)
class PastCall:
    tool_id: str
    arguments: dict[str, Any]
    output: str


class SessionContext:
    def __init__(self, redis: Redis, *, max_calls: int = 5, ttl_s: int = 3600) -> None:
        self.redis = redis
        self.max_calls = max_calls
        self.ttl_s = ttl_s

    @staticmethod
    def key(caller: str, session_id: str) -> str:
        """The Redis key of ``caller``'s session. The caller's length comes first, so no
        pair of (caller, session id) spells another's key, whatever colons either holds:
        caller ``acme`` with session ``alice:s1`` is not caller ``acme:alice``'s ``s1``."""
        return f"gateway:ctx:{len(caller)}:{caller}:{session_id}"

    @redis_optional([])
    async def recent(self, caller: str, session_id: str | None) -> list[PastCall]:
        """Newest first."""
        if not session_id:
            return []
        raw = await self.redis.lrange(self.key(caller, session_id), 0, self.max_calls - 1)
        calls = []
        for item in raw:
            data = json.loads(item)
            calls.append(PastCall(data["tool_id"], data["arguments"], data["output"]))
        return calls

    @redis_optional(None)
    async def remember(
        self,
        caller: str,
        session_id: str | None,
        tool_id: str,
        arguments: dict[str, Any],
        output: Any,
    ) -> None:
        if not session_id:
            return
        text = (
            output
            if isinstance(output, str)
            else json.dumps(output, ensure_ascii=False, default=str)
        )
        entry = json.dumps(
            {"tool_id": tool_id, "arguments": arguments, "output": text[:OUTPUT_LIMIT]},
            ensure_ascii=False,
            default=str,
        )
        key = self.key(caller, session_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.lpush(key, entry)
            pipe.ltrim(key, 0, self.max_calls - 1)
            pipe.expire(key, self.ttl_s)
            await pipe.execute()


def previous_arguments(calls: list[PastCall]) -> dict[str, Any]:
    """Arguments of recent calls merged, newest winning: what "this SKU" can refer to."""
    merged: dict[str, Any] = {}
    for call in reversed(calls):
        merged.update(call.arguments)
    return merged


@dataclass(frozen=True)
class Known:
    """What a request may refer to without naming it: the session's recent arguments, and
    facts the caller's agent remembers about the user ("My usual SKU is SKU2024003")."""

    previous: dict[str, Any]
    remembered: tuple[str, ...] = ()
    last: PastCall | None = None  # the session's newest call
