"""Headers in, :class:`Caller` out: the same rules in every service.

A credential is an API key or a JWT, sent as ``Authorization: Bearer <…>`` or
``X-API-Key: <key>``. A credential that does not verify is a 401 in both
modes: a client that sent one meant to be someone. Without a credential,
permissive mode trusts the claimed identity; strict mode sees an anonymous
caller. The verified (or claimed) user id is put on the current span as
``enduser.id``, which is what ``GET /traces/{id}`` checks ownership against;
roles never go on spans.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from fastapi import Depends, Request
from opentelemetry import trace
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from reach_common.auth.caller import ANONYMOUS, Caller, UserContext
from reach_common.auth.errors import InvalidCredential
from reach_common.auth.jwt import JwtVerifier
from reach_common.auth.keys import ApiKeyStore
from reach_common.auth.settings import AuthSettings
from reach_common.errors import ReachError

ENDUSER_ATTRIBUTE = "enduser.id"
_MAX_CREDENTIAL_CHARS = 8192  # a JWT with many roles fits; a megabyte "token" is refused unread


class Authenticator:
    """Resolves the caller of a request according to ``AUTH_MODE``."""

    def __init__(self, *, strict: bool, keys: ApiKeyStore, jwt: JwtVerifier) -> None:
        self.strict = strict
        self.keys = keys
        self.jwt = jwt

    @classmethod
    def from_settings(
        cls, settings: AuthSettings, sessionmaker: async_sessionmaker[AsyncSession]
    ) -> Authenticator:
        return cls(
            strict=settings.auth_mode == "strict",
            keys=ApiKeyStore(sessionmaker, settings.api_key_cache_ttl_s),
            jwt=JwtVerifier(
                secret=settings.jwt_secret.get_secret_value() if settings.jwt_secret else None,
                public_key=settings.jwt_public_key,
                issuer=settings.jwt_issuer,
                audience=settings.jwt_audience,
                roles_claim=settings.jwt_roles_claim,
            ),
        )

    def claimed(self, headers: Mapping[str, str]) -> UserContext | None:
        """The identity the ``X-User-*`` headers claim; never read in strict mode, so odd
        claim headers beside a credential cannot get a verified caller refused."""
        return None if self.strict else context_from_headers(headers)

    async def resolve(
        self, headers: Mapping[str, str], claimed: UserContext | None = None
    ) -> Caller:
        """The caller: a verified credential if one is sent; else, in permissive mode only,
        the ``claimed`` identity; else anonymous."""
        caller = await self._resolve(headers, claimed)
        if caller.user_id is not None:
            trace.get_current_span().set_attribute(ENDUSER_ATTRIBUTE, caller.user_id)
        return caller

    async def _resolve(self, headers: Mapping[str, str], claimed: UserContext | None) -> Caller:
        credential = credential_of(headers)
        if credential is not None:
            if credential.count(".") == 2:
                return self.jwt.verify(credential)
            caller = await self.keys.verify(credential)
            if caller is None:
                raise InvalidCredential("The API key is unknown or revoked.")
            return caller
        if self.strict or claimed is None or claimed.user_id is None:
            return ANONYMOUS
        return Caller(user_id=claimed.user_id, roles=frozenset(claimed.roles), via="user_context")


def credential_of(headers: Mapping[str, str]) -> str | None:
    """The bearer token or API key of a request, if it sent one."""
    authorization = headers.get("authorization")
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise InvalidCredential("Send credentials as `Authorization: Bearer <key or JWT>`.")
        credential = value.strip()
    else:
        api_key = headers.get("x-api-key")
        if not api_key:
            return None
        credential = api_key.strip()
    if len(credential) > _MAX_CREDENTIAL_CHARS:
        raise InvalidCredential("The credential is too long to be a Reach API key or JWT.")
    return credential


def context_from_headers(headers: Mapping[str, str]) -> UserContext | None:
    """``X-User-Id`` / ``X-User-Roles`` (comma-separated): a claimed identity for requests
    without a body. Read in permissive mode only."""
    user_id = headers.get("x-user-id")
    roles = headers.get("x-user-roles")
    if user_id is None and roles is None:
        return None
    try:
        return UserContext(
            user_id=user_id or None,
            roles=[r.strip() for r in (roles or "").split(",") if r.strip()],
        )
    except ValueError as exc:
        raise ReachError("X-User-Id or X-User-Roles is invalid.", reason="invalid_request") from exc


async def get_authenticator(request: Request) -> Authenticator:
    authenticator: Authenticator = request.state.authenticator
    return authenticator


AuthenticatorDep = Annotated[Authenticator, Depends(get_authenticator)]


async def get_caller(request: Request, authenticator: AuthenticatorDep) -> Caller:
    """The caller of a request from its headers (credential, or claimed identity headers)."""
    return await authenticator.resolve(request.headers, authenticator.claimed(request.headers))


CallerDep = Annotated[Caller, Depends(get_caller)]
