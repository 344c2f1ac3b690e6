"""The one authorisation decision, and where the caller comes from.

:func:`can_use` is the only place that decides whether a caller may use a
tool. Listing (:func:`visible_tools`), invoking and routing all call it, so a
caller never sees a tool it would be refused, and never is refused a tool it
was shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from gateway.auth.errors import InsufficientPermission, InvalidCredential, Unauthenticated
from gateway.auth.jwt import JwtVerifier
from gateway.auth.keys import ApiKeyStore
from gateway.auth.schemas import ANONYMOUS, Caller, Decision, UserContext
from gateway.registry.manifest import ToolSpec
from reach_common.errors import ReachError


def can_use(caller: Caller, tool: ToolSpec) -> Decision:
    """May ``caller`` list, be routed to, and invoke ``tool``?

    - ``public``: anyone, even anonymous.
    - ``user``: any authenticated caller.
    - ``admin``: an authenticated caller holding at least one of the tool's ``scope`` roles.
    """
    if tool.permission == "public":
        return Decision(allowed=True, rule="public")
    if not caller.authenticated:
        return Decision(
            allowed=False,
            rule=f"{tool.permission}:needs_identity",
            reason="unauthenticated",
            required_roles=tool.scope if tool.permission == "admin" else (),
            message=f"Tool {tool.tool_id!r} needs an authenticated caller; send an API key "
            "or a bearer token.",
        )
    if tool.permission == "user":
        return Decision(allowed=True, rule="user:authenticated")
    matched = sorted(caller.roles.intersection(tool.scope))
    if matched:
        return Decision(allowed=True, rule=f"admin:role:{matched[0]}", required_roles=tool.scope)
    return Decision(
        allowed=False,
        rule="admin:no_matching_role",
        reason="insufficient_permission",
        required_roles=tool.scope,
        message=f"Tool {tool.tool_id!r} needs one of the roles {', '.join(tool.scope)}; "
        f"the caller has {', '.join(sorted(caller.roles)) or 'none'}.",
    )


class HasSpec(Protocol):
    @property
    def spec(self) -> ToolSpec: ...


T = TypeVar("T", bound=HasSpec)


def visible_tools(caller: Caller, tools: Iterable[T]) -> list[T]:
    """The tools ``caller`` may use, in the given order: the same rule as :func:`can_use`."""
    return [tool for tool in tools if can_use(caller, tool.spec).allowed]


def raise_for(decision: Decision) -> None:
    """Turn a refusal into the error a client gets: 401 without identity, 403 without a role."""
    if decision.allowed:
        return
    if decision.reason == "unauthenticated":
        raise Unauthenticated(decision.message)
    raise InsufficientPermission(decision.message, decision.required_roles)


class AuthService:
    """Resolves the caller of a request according to ``AUTH_MODE``."""

    def __init__(
        self,
        *,
        mode: str,
        keys: ApiKeyStore,
        jwt: JwtVerifier,
        registry_admin_roles: Sequence[str],
    ) -> None:
        self.mode = mode
        self.keys = keys
        self.jwt = jwt
        self.registry_admin_roles = frozenset(registry_admin_roles)

    @property
    def strict(self) -> bool:
        return self.mode == "strict"

    async def resolve(
        self, headers: Mapping[str, str], user_context: UserContext | None = None
    ) -> Caller:
        """The caller: a verified credential if one is sent; else, in permissive mode only,
        ``user_context``; else anonymous. A credential that does not verify is a 401."""
        credential = _credential(headers)
        if credential is not None:
            if credential.count(".") == 2:
                return self.jwt.verify(credential)
            caller = await self.keys.verify(credential)
            if caller is None:
                raise InvalidCredential("The API key is unknown or revoked.")
            return caller
        if self.strict or user_context is None:
            return ANONYMOUS
        return Caller(
            user_id=user_context.user_id,
            roles=frozenset(user_context.roles),
            via="user_context",
        )

    def require_registry_admin(self, caller: Caller) -> None:
        """Registry changes: open in permissive mode, admin roles only in strict mode."""
        if not self.strict:
            return
        if not caller.authenticated:
            raise Unauthenticated("Changing the registry needs an API key or a bearer token.")
        if not caller.roles & self.registry_admin_roles:
            roles = sorted(self.registry_admin_roles)
            raise InsufficientPermission(
                f"Changing the registry needs one of the roles {', '.join(roles)}.", roles
            )


def _credential(headers: Mapping[str, str]) -> str | None:
    authorization = headers.get("authorization")
    if authorization:
        scheme, _, value = authorization.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise InvalidCredential("Send credentials as `Authorization: Bearer <key or JWT>`.")
        return value.strip()
    api_key = headers.get("x-api-key")
    return api_key.strip() if api_key else None


def context_from_headers(headers: Mapping[str, str]) -> UserContext | None:
    """``X-User-Id`` / ``X-User-Roles`` (comma-separated): user_context for GET requests."""
    user_id = headers.get("x-user-id")
    roles = headers.get("x-user-roles")
    if user_id is None and roles is None:
        return None
    try:
        return UserContext(
            user_id=user_id, roles=[r.strip() for r in (roles or "").split(",") if r.strip()]
        )
    except ValueError as exc:
        raise ReachError("X-User-Id or X-User-Roles is invalid.", reason="invalid_request") from exc
