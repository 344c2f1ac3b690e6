"""How a tool call can fail, as the caller (often a model) should read it.

- ``ToolTimeout`` (504, ``tool_timeout``): the tool's ``timeout_ms`` ran out.
- ``ToolFailed`` (502, ``tool_error``): the tool answered with an error or
  something unusable; ``upstream_status`` and ``upstream`` carry its answer.
- ``ToolUnavailable`` (503, ``tool_unavailable``): the circuit breaker is open;
  ``Retry-After`` says when to try again.

``counts_as_failure`` says whether a failure speaks about the tool's health
(timeouts, 5xx, connection errors) or only about this call (4xx).
"""

from __future__ import annotations

import math
from typing import Any

from reach_common.errors import ReachError


class ToolCallError(ReachError):
    counts_as_failure = True


class ToolTimeout(ToolCallError):
    status_code = 504
    reason = "tool_timeout"

    def __init__(self, tool_id: str, timeout_ms: int) -> None:
        super().__init__(
            f"Tool {tool_id!r} did not answer within its {timeout_ms} ms timeout. Try again "
            "later or with a narrower request.",
            timeout_ms=timeout_ms,
        )


class ToolFailed(ToolCallError):
    status_code = 502
    reason = "tool_error"

    def __init__(
        self,
        message: str,
        *,
        upstream_status: int | None = None,
        upstream: Any = None,
        counts_as_failure: bool = True,
    ) -> None:
        details: dict[str, Any] = {}
        if upstream_status is not None:
            details["upstream_status"] = upstream_status
        if upstream is not None:
            details["upstream"] = upstream
        super().__init__(message, **details)
        self.upstream_status = upstream_status
        self.counts_as_failure = counts_as_failure


class ToolUnavailable(ToolCallError):
    status_code = 503
    reason = "tool_unavailable"
    counts_as_failure = False

    def __init__(self, tool_id: str, retry_after_s: float) -> None:
        seconds = max(1, math.ceil(retry_after_s))
        super().__init__(
            f"Tool {tool_id!r} is failing and paused by its circuit breaker; "
            f"try again in {seconds} s.",
            headers={"Retry-After": str(seconds)},
            retry_after_s=seconds,
        )
