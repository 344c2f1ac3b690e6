"""A circuit breaker per tool, per gateway process.

Closed: calls pass; consecutive failures are counted. At ``failure_threshold``
it opens: calls fail at once with ``tool_unavailable`` for ``reset_timeout_ms``.
Then it is half-open: exactly one call (the probe) goes through; success closes
the breaker, failure opens it again. Each replica judges on its own, as a
replica that cannot reach a tool is the one that should stop trying.

Time comes from ``clock`` (``time.monotonic`` unless a test drives its own).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from gateway.catalog.spec import BreakerPolicy
from gateway.executor.errors import ToolUnavailable

State = Literal["closed", "open", "half_open"]
Clock = Callable[[], float]


@dataclass
class CircuitBreaker:
    tool_id: str
    policy: BreakerPolicy
    state: State = "closed"
    failures: int = 0
    opened_at: float = 0.0
    probe_in_flight: bool = False
    clock: Clock = field(default=time.monotonic, repr=False, compare=False)

    def _now(self) -> float:
        return self.clock()

    def acquire(self) -> bool:
        """Let a call through (True if it is the half-open probe) or raise ToolUnavailable."""
        if self.state == "closed":
            return False
        now = self._now()
        reset_s = self.policy.reset_timeout_ms / 1000
        if self.state == "open":
            remaining = self.opened_at + reset_s - now
            if remaining > 0:
                raise ToolUnavailable(self.tool_id, remaining)
            self.state = "half_open"
        if self.probe_in_flight:
            raise ToolUnavailable(self.tool_id, min(reset_s, 1.0))
        self.probe_in_flight = True
        return True

    def record(self, *, success: bool, probe: bool) -> None:
        if probe:
            self.probe_in_flight = False
        if success:
            self.state, self.failures = "closed", 0
            return
        self.failures += 1
        if probe or self.failures >= self.policy.failure_threshold:
            self.state, self.opened_at = "open", self._now()

    def release(self, *, probe: bool) -> None:
        """The call ended without a verdict (cancelled): let another probe go."""
        if probe:
            self.probe_in_flight = False


class Breakers:
    """tool_id → breaker; a new policy (the manifest changed) starts a fresh breaker."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self._breakers: dict[str, CircuitBreaker] = {}
        self.clock = clock

    def for_tool(self, tool_id: str, policy: BreakerPolicy) -> CircuitBreaker:
        breaker = self._breakers.get(tool_id)
        if breaker is None or breaker.policy != policy:
            breaker = CircuitBreaker(tool_id, policy, clock=self.clock)
            self._breakers[tool_id] = breaker
        return breaker

    def state(self, tool_id: str) -> State:
        breaker = self._breakers.get(tool_id)
        return breaker.state if breaker else "closed"
