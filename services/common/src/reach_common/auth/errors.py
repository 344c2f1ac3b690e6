"""Auth errors: who may not do what, and why, in words a caller can act on."""

from __future__ import annotations

from collections.abc import Sequence

from reach_common.errors import ReachError


class Unauthenticated(ReachError):
    status_code = 401
    reason = "unauthenticated"

    def __init__(self, message: str) -> None:
        super().__init__(message, headers={"WWW-Authenticate": "Bearer"})


class InvalidCredential(Unauthenticated):
    reason = "invalid_credential"


class InsufficientPermission(ReachError):
    status_code = 403
    reason = "insufficient_permission"

    def __init__(self, message: str, required_roles: Sequence[str] = ()) -> None:
        super().__init__(message, required_roles=list(required_roles))
