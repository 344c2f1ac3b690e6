"""API keys: ``rk_<key id>_<secret>``, shown once, stored as a sha256 hash in ``auth.api_key``.

The keys are 256-bit random, so a fast hash is enough (no password stretching
needed) and lets a lookup stay one indexed read. Verified keys are cached in
memory for ``API_KEY_CACHE_TTL_S`` so the hot path does not read the database;
a revoked key stops working within that time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import DateTime, MetaData, String, Text, func, select, update
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from reach_common.auth.caller import Caller

PREFIX = "rk"
_CACHE_LIMIT = 10_000


class _AuthBase(DeclarativeBase):
    metadata = MetaData(schema="auth")


class ApiKey(_AuthBase):
    """One API key (migration 0006): every service verifies keys against this table."""

    __tablename__ = "api_key"

    key_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[str] = mapped_column(String(200))
    roles: Mapped[list[str]] = mapped_column(ARRAY(Text))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), server_default=func.now())
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _key_id(key: str) -> str | None:
    parts = key.split("_", 2)
    if len(parts) != 3 or parts[0] != PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1]


@dataclass(frozen=True)
class CreatedKey:
    key_id: str
    key: str
    user_id: str
    roles: tuple[str, ...]


def new_key() -> tuple[str, str]:
    """A fresh ``(key id, key)``; store only ``hash_key(key)``."""
    key_id = secrets.token_hex(6)  # hex: never contains the ``_`` separator
    return key_id, f"{PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"


async def create_key(session: AsyncSession, user_id: str, roles: list[str]) -> CreatedKey:
    """Insert a new key and return it; the plain key exists only in the return value."""
    key_id, key = new_key()
    session.add(ApiKey(key_id=key_id, key_hash=hash_key(key), user_id=user_id, roles=roles))
    await session.flush()
    return CreatedKey(key_id=key_id, key=key, user_id=user_id, roles=tuple(roles))


async def revoke_key(session: AsyncSession, key_id: str) -> bool:
    result = await session.execute(
        update(ApiKey)
        .where(ApiKey.key_id == key_id, ApiKey.revoked_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
        .returning(ApiKey.key_id)
    )
    return result.first() is not None


async def list_keys(
    session: AsyncSession,
    *,
    user_id: str | None = None,
    include_revoked: bool = False,
    limit: int = 100,
    offset: int = 0,
) -> list[ApiKey]:
    """Keys newest first (rows carry the hash: callers show only ids, owners and dates)."""
    query = select(ApiKey).order_by(ApiKey.created_at.desc(), ApiKey.key_id)
    if user_id is not None:
        query = query.where(ApiKey.user_id == user_id)
    if not include_revoked:
        query = query.where(ApiKey.revoked_at.is_(None))
    return list((await session.scalars(query.limit(limit).offset(offset))).all())


class ApiKeyStore:
    """Verifies API keys against the database, with a short in-memory cache."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], ttl_s: float) -> None:
        self._sessionmaker = sessionmaker
        self._ttl_s = ttl_s
        self._cache: OrderedDict[str, tuple[float, Caller | None]] = OrderedDict()

    async def verify(self, key: str) -> Caller | None:
        """The key's caller, or None for an unknown, malformed or revoked key."""
        digest = hash_key(key)
        now = time.monotonic()
        cached = self._cache.get(digest)
        if cached is not None and cached[0] > now:
            return cached[1]
        caller = await self._lookup(key, digest)
        self._cache[digest] = (now + self._ttl_s, caller)
        self._cache.move_to_end(digest)
        while len(self._cache) > _CACHE_LIMIT:
            self._cache.popitem(last=False)
        return caller

    async def _lookup(self, key: str, digest: str) -> Caller | None:
        key_id = _key_id(key)
        if key_id is None:
            return None
        async with self._sessionmaker() as session:
            row = await session.scalar(select(ApiKey).where(ApiKey.key_id == key_id))
        if row is None or row.revoked_at is not None:
            return None
        if not hmac.compare_digest(row.key_hash, digest):
            return None
        return Caller(user_id=row.user_id, roles=frozenset(row.roles), via="api_key")
