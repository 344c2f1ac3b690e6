"""Who is calling: the identity every authorisation decision is made for."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

AuthVia = Literal["api_key", "jwt", "user_context", "anonymous"]


@dataclass(frozen=True)
class Caller:
    """The caller of one request.

    In strict mode it comes only from a verified API key or JWT; in permissive
    mode also from the identity the client claims (``via="user_context"``).
    """

    user_id: str | None
    roles: frozenset[str] = field(default_factory=frozenset)
    via: AuthVia = "anonymous"

    @property
    def authenticated(self) -> bool:
        return self.user_id is not None

    @property
    def verified(self) -> bool:
        """True when a credential proved the identity (never for a claimed one)."""
        return self.via in ("api_key", "jwt")

    def has_any_role(self, roles: Iterable[str]) -> bool:
        return self.authenticated and not self.roles.isdisjoint(roles)


ANONYMOUS = Caller(user_id=None)


class UserContext(BaseModel):
    """Who the call is for, as the client says. Trusted only in permissive mode."""

    model_config = ConfigDict(extra="allow")

    user_id: str | None = Field(None, min_length=1, max_length=200, examples=["u1"])
    roles: list[str] = Field(default_factory=list, max_length=100, examples=[["ops_admin"]])
