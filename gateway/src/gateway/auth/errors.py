"""Gateway-only auth errors (caller errors live in ``reach_common.auth.errors``)."""

from __future__ import annotations

from reach_common.errors import ReachError


class EgressDenied(ReachError):
    status_code = 403
    reason = "egress_denied"

    def __init__(self, host: str, why: str) -> None:
        super().__init__(
            f"Calls to {host!r} are refused: {why}. Add it to EGRESS_ALLOWLIST if it is meant.",
            host=host,
        )
