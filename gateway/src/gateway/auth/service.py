"""The one authorisation decision, and where the caller comes from.

:func:`can_use` is the only place that decides whether a caller may use a
tool. Listing (:func:`visible_tools`), invoking and routing all call it, so a
caller never sees a tool it would be refused, and never is refused a tool it
was shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from gateway.auth.schemas import Decision
from gateway.catalog.spec import ToolSpec
from reach_common.auth.authenticator import Authenticator
from reach_common.auth.caller import Caller, UserContext
from reach_common.auth.errors import InsufficientPermission, Unauthenticated


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


class AuthService:
    """The gateway's use of the shared auth kit: who the caller is, and the gateway-wide
    rules that are not about one tool (registry writes, operators' endpoints)."""

    def __init__(
        self,
        *,
        authenticator: Authenticator,
        registry_admin_roles: Sequence[str],
        ops_roles: Sequence[str],
        anonymous_registry_writes: bool = False,
    ) -> None:
        self.authenticator = authenticator
        self.registry_admin_roles = frozenset(registry_admin_roles)
        self.ops_roles = frozenset(ops_roles)
        self.anonymous_registry_writes = anonymous_registry_writes and not authenticator.strict

    @property
    def strict(self) -> bool:
        return self.authenticator.strict

    @property
    def mode(self) -> str:
        return "strict" if self.strict else "permissive"

    async def resolve(
        self, headers: Mapping[str, str], user_context: UserContext | None = None
    ) -> Caller:
        """The caller: a verified credential; in permissive mode the claimed identity; else
        anonymous. A credential that does not verify is a 401."""
        return await self.authenticator.resolve(headers, user_context)

    def require_registry_admin(self, caller: Caller) -> None:
        """Registry changes need a registry admin role, in both modes (permissive mode
        believes a claimed role). Anonymous changes only with the development flag."""
        if self.anonymous_registry_writes and not caller.authenticated:
            return
        self._require(caller, self.registry_admin_roles, "Changing the registry")

    def require_ops(self, caller: Caller, what: str) -> None:
        """Operators' endpoints (upstreams, traces of other callers): ops or admin roles."""
        self._require(caller, self.ops_roles | self.registry_admin_roles, what)

    def is_ops(self, caller: Caller) -> bool:
        return caller.has_any_role(self.ops_roles | self.registry_admin_roles)

    def is_registry_admin(self, caller: Caller) -> bool:
        return caller.has_any_role(self.registry_admin_roles)

    @staticmethod
    def _require(caller: Caller, roles: frozenset[str], what: str) -> None:
        if not caller.authenticated:
            raise Unauthenticated(f"{what} needs an API key or a bearer token.")
        if not caller.has_any_role(roles):
            names = sorted(roles)
            raise InsufficientPermission(
                f"{what} needs one of the roles {', '.join(names)}.", names
            )


def rate_key(caller: Caller, client_address: str | None) -> str:
    """Whose bucket a call counts against: a verified identity, else the client address
    (taken from X-Forwarded-For only behind TRUSTED_PROXIES). A claimed identity is never
    a key: anyone could claim a fresh one per call."""
    if caller.verified:
        return f"user:{caller.user_id}"
    return f"address:{client_address or 'unknown'}"
