"""``/keys``: create, list and revoke API keys over HTTP (what ``reach keys`` calls).

Only a registry admin proven by a credential (an API key or a JWT) may manage keys, in
both auth modes: in permissive mode anyone can *claim* the admin role, and a key minted
on such a claim would then be trusted by every strict gateway on the same database. The
first admin key therefore comes from the database side (``python -m gateway keys
create``), as a bootstrap; everything after that can go through this API.

A key is shown once, in the answer to ``POST /keys``; the database keeps its sha256 hash
and nothing here ever reads the hash back out.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, Field

from gateway.api.deps import CallerDep, RuntimeDep, SessionDep
from reach_common.auth.caller import Caller
from reach_common.auth.errors import InsufficientPermission, Unauthenticated
from reach_common.auth.keys import ApiKey, create_key, list_keys, revoke_key
from reach_common.errors import NotFound

router = APIRouter(prefix="/keys", tags=["keys"])

ROLE_PATTERN = r"^[A-Za-z0-9_.:-]{1,64}$"
#: The one role that may mint keys with roles it does not hold itself.
MINT_ANY_ROLE = "admin"
KEY_ID = Annotated[str, Path(pattern=r"^[0-9a-f]{1,32}$", description="The key's id.")]

_ERRORS: dict[int | str, dict[str, str]] = {
    401: {"description": "`unauthenticated`: key management needs an API key or a JWT."},
    403: {
        "description": "`insufficient_permission`: a registry admin role is needed (and, "
        "to mint roles the caller does not hold, the `admin` role)."
    },
    422: {"description": "`invalid_request`: a malformed user id, role or key id."},
}


class KeyCreate(BaseModel):
    user_id: str = Field(min_length=1, max_length=200, pattern=r"^[^\x00-\x1f]+$")
    roles: list[Annotated[str, Field(pattern=ROLE_PATTERN)]] = Field(
        default_factory=list, max_length=20
    )


class KeyRead(BaseModel):
    key_id: str
    user_id: str
    roles: list[str]
    created_at: datetime
    revoked_at: datetime | None = None

    @classmethod
    def of(cls, row: ApiKey) -> KeyRead:
        return cls(
            key_id=row.key_id,
            user_id=row.user_id,
            roles=list(row.roles),
            created_at=row.created_at,
            revoked_at=row.revoked_at,
        )


class KeyCreated(BaseModel):
    key_id: str
    key: str = Field(description="The key itself: shown only in this answer.")
    user_id: str
    roles: list[str]


class KeyList(BaseModel):
    keys: list[KeyRead]


class KeyRevoked(BaseModel):
    key_id: str
    revoked: bool = True


def _require_key_admin(runtime: RuntimeDep, caller: Caller) -> None:
    if not caller.verified:
        raise Unauthenticated("Managing API keys needs an API key or a bearer token.")
    runtime.auth.require_registry_admin(caller)


def _require_grantable(caller: Caller, roles: list[str]) -> None:
    """A key carries only roles its minter holds, unless the minter is an ``admin``: a
    ``tool_admin`` cannot mint itself an ``admin``, ``ops`` or any other role."""
    if MINT_ANY_ROLE in caller.roles:
        return
    beyond = sorted(set(roles) - caller.roles)
    if beyond:
        raise InsufficientPermission(
            f"A key may carry only roles its minter holds; minting {', '.join(beyond)} "
            f"needs the {MINT_ANY_ROLE!r} role.",
            [MINT_ANY_ROLE],
        )


@router.post("", status_code=201, response_model=KeyCreated, responses=_ERRORS)
async def create(
    body: KeyCreate, runtime: RuntimeDep, caller: CallerDep, session: SessionDep
) -> KeyCreated:
    """Create a key for `user_id` with `roles`; the answer is the only time it is shown."""
    _require_key_admin(runtime, caller)
    roles = list(dict.fromkeys(body.roles))
    _require_grantable(caller, roles)
    created = await create_key(session, body.user_id, roles)
    return KeyCreated(
        key_id=created.key_id, key=created.key, user_id=created.user_id, roles=list(created.roles)
    )


@router.get("", response_model=KeyList, responses=_ERRORS)
async def list_(
    runtime: RuntimeDep,
    caller: CallerDep,
    session: SessionDep,
    user_id: Annotated[str | None, Query(max_length=200)] = None,
    include_revoked: bool = False,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> KeyList:
    """Keys newest first: ids, owners, roles and dates (never a key or its hash)."""
    _require_key_admin(runtime, caller)
    rows = await list_keys(
        session, user_id=user_id, include_revoked=include_revoked, limit=limit, offset=offset
    )
    return KeyList(keys=[KeyRead.of(row) for row in rows])


@router.delete(
    "/{key_id}",
    response_model=KeyRevoked,
    responses={**_ERRORS, 404: {"description": "`key_not_found`: no active key with this id."}},
)
async def revoke(
    key_id: KEY_ID, runtime: RuntimeDep, caller: CallerDep, session: SessionDep
) -> KeyRevoked:
    """Revoke a key; every service stops accepting it within `API_KEY_CACHE_TTL_S`."""
    _require_key_admin(runtime, caller)
    if not await revoke_key(session, key_id):
        raise NotFound(f"No active key {key_id!r}.", reason="key_not_found")
    return KeyRevoked(key_id=key_id)
