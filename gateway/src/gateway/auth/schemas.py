"""What the one authorisation decision said. (Who is calling: ``reach_common.auth.caller``.)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Decision:
    """The answer of :func:`gateway.auth.service.can_use` for one caller and one tool."""

    allowed: bool
    rule: str
    reason: Literal["unauthenticated", "insufficient_permission"] | None = None
    required_roles: tuple[str, ...] = ()
    message: str = ""
