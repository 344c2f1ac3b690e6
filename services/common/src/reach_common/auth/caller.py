"""Who is calling: the identity every authorisation decision is made for."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from reach_common.storable import is_storable, unstorable_at

AuthVia = Literal["api_key", "jwt", "user_context", "anonymous"]

# What an identity (a user id, a role) may be: stored in VARCHAR(200) columns, logged,
# and compared. Control characters (NUL, which Postgres refuses in text, among them) never
# name anyone.
MAX_IDENTITY_LENGTH = 200


def has_control_character(value: str) -> bool:
    return any(ord(c) < 32 or ord(c) == 127 for c in value)


def identity_problem(value: str) -> str | None:
    """Why ``value`` cannot be a user id or a role, or None when it can."""
    if not value:
        return "is empty"
    if len(value) > MAX_IDENTITY_LENGTH:
        return f"is longer than {MAX_IDENTITY_LENGTH} characters"
    if has_control_character(value):
        return "contains a control character"
    if not is_storable(value):
        return "holds half of a surrogate pair"
    return None


def _identity(value: str) -> str:
    problem = identity_problem(value)
    if problem is not None:
        raise ValueError(f"an identity that {problem}")
    return value


Identity = Annotated[str, AfterValidator(_identity)]


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

    user_id: Identity | None = Field(None, examples=["u1"])
    roles: list[Identity] = Field(default_factory=list, max_length=100, examples=[["ops_admin"]])

    @model_validator(mode="after")
    def _storable_extras(self) -> UserContext:
        # What else the client says of the user is kept with the turn or the call: refused
        # here when Postgres could not store it, not after the turn has begun.
        where = unstorable_at(self.model_extra or {})
        if where is not None:
            raise ValueError(
                f"user_context/{where} holds a NUL, half a surrogate pair or a number that "
                "is not finite"
            )
        return self
