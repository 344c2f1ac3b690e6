"""Who is calling, and what the one authorisation decision said."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

AuthVia = Literal["api_key", "jwt", "user_context", "anonymous"]


@dataclass(frozen=True)
class Caller:
    """The identity every decision is made for.

    In strict mode it comes only from a verified API key or JWT; in permissive
    mode from the request's ``user_context`` when no credential is sent.
    """

    user_id: str | None
    roles: frozenset[str] = field(default_factory=frozenset)
    via: AuthVia = "anonymous"

    @property
    def authenticated(self) -> bool:
        return self.user_id is not None

    @property
    def rate_key(self) -> str:
        return f"user:{self.user_id}" if self.user_id else "anonymous"


ANONYMOUS = Caller(user_id=None)


@dataclass(frozen=True)
class Decision:
    """The answer of :func:`gateway.auth.service.can_use` for one caller and one tool."""

    allowed: bool
    rule: str
    reason: Literal["unauthenticated", "insufficient_permission"] | None = None
    required_roles: tuple[str, ...] = ()
    message: str = ""


class UserContext(BaseModel):
    """Who the call is for, as the client says. Trusted only in permissive mode."""

    model_config = ConfigDict(extra="allow")

    user_id: str | None = Field(None, max_length=200, examples=["u1"])
    roles: list[str] = Field(default_factory=list, max_length=100, examples=[["ops_admin"]])
