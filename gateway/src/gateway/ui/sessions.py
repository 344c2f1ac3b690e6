"""Sign-ins of the trace viewer: a browser cannot send a bearer header when it follows a
link, so ``POST /ui/login`` checks an API key (or JWT) once and hands out a cookie.

The cookie holds a random token, never the credential; Redis keeps the caller the
credential proved, under the token's sha256, for ``UI_SESSION_TTL_S``. A session
made with an API key ends as soon as that key is revoked (checked on every page),
and ``POST /ui/logout`` deletes it. The cookie is ``HttpOnly`` (page scripts cannot
read it), ``SameSite=Lax`` and scoped to ``/ui``, so the JSON API never accepts it:
a cross-site form can make no API call with it.
"""

from __future__ import annotations

import hashlib
import json
import secrets

import sqlalchemy as sa
from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncSession

from reach_common.auth.caller import Caller

COOKIE = "reach_ui"
COOKIE_PATH = "/ui"
_PREFIX = "reach:gateway:ui:session:"
_TOKEN_CHARS = 43  # token_urlsafe(32)
_LIVE_KEY = sa.text("SELECT 1 FROM auth.api_key WHERE key_id = :key_id AND revoked_at IS NULL")


def _key(token: str) -> str:
    return _PREFIX + hashlib.sha256(token.encode()).hexdigest()


def key_id_of(credential: str) -> str | None:
    """The id part of an API key (``rk_<id>_<secret>``); ``None`` for a JWT."""
    parts = credential.split("_", 2)
    return parts[1] if len(parts) == 3 and parts[0] == "rk" and parts[1] else None


async def open_session(redis: Redis, caller: Caller, key_id: str | None, ttl_s: int) -> str:
    """A new session for ``caller``; returns the token for the cookie."""
    token = secrets.token_urlsafe(32)
    record = {
        "user_id": caller.user_id,
        "roles": sorted(caller.roles),
        "via": caller.via,
        "key_id": key_id,
    }
    await redis.set(_key(token), json.dumps(record), ex=ttl_s)
    return token


async def session_caller(
    redis: Redis, db: AsyncSession, token: str | None, *, strict: bool
) -> Caller | None:
    """The caller signed in with ``token``, or ``None`` (no, expired or revoked session,
    or in strict mode one that a claimed identity opened while the gateway was permissive)."""
    if not token or len(token) != _TOKEN_CHARS:
        return None
    raw = await redis.get(_key(token))
    if raw is None:
        return None
    record = json.loads(raw)
    if strict and record.get("via") not in ("api_key", "jwt"):
        return None
    key_id = record.get("key_id")
    if key_id is not None and (await db.execute(_LIVE_KEY, {"key_id": key_id})).first() is None:
        await redis.delete(_key(token))
        return None
    return Caller(user_id=record["user_id"], roles=frozenset(record["roles"]), via=record["via"])


async def close_session(redis: Redis, token: str | None) -> None:
    if token and len(token) == _TOKEN_CHARS:
        await redis.delete(_key(token))
