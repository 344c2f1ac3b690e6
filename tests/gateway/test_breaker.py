"""The circuit breaker's state machine (the end-to-end run against shop is in tests/e2e).

Time is a :class:`Clock` the test moves by hand, so nothing here sleeps.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from gateway.catalog.spec import BreakerPolicy
from gateway.executor.breaker import Breakers, CircuitBreaker
from gateway.executor.errors import ToolUnavailable


@dataclass
class Clock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def state(breaker: CircuitBreaker) -> str:
    """The breaker's state, read afresh (the checks below follow it through changes)."""
    return breaker.state


def test_opens_after_threshold_then_lets_exactly_one_probe_through() -> None:
    clock = Clock()
    policy = BreakerPolicy(failure_threshold=3, reset_timeout_ms=500)
    breaker = CircuitBreaker("t", policy, clock=clock)
    for _ in range(2):
        assert breaker.acquire() is False
        breaker.record(success=False, probe=False)
    assert state(breaker) == "closed"
    breaker.acquire()
    breaker.record(success=False, probe=False)
    assert state(breaker) == "open"
    with pytest.raises(ToolUnavailable) as refused:
        breaker.acquire()
    assert refused.value.reason == "tool_unavailable"
    assert refused.value.headers["Retry-After"] == "1"
    clock.advance(0.25)
    with pytest.raises(ToolUnavailable):
        breaker.acquire()  # still open until reset_timeout_ms has passed
    clock.advance(0.25)
    assert breaker.acquire() is True  # the probe
    assert state(breaker) == "half_open"
    with pytest.raises(ToolUnavailable):
        breaker.acquire()  # only one probe at a time
    breaker.record(success=False, probe=True)
    assert state(breaker) == "open"  # a failed probe reopens at once
    with pytest.raises(ToolUnavailable):
        breaker.acquire()  # for a whole reset_timeout_ms again
    clock.advance(0.5)
    assert breaker.acquire() is True
    breaker.record(success=True, probe=True)
    assert (state(breaker), breaker.failures) == ("closed", 0)
    assert breaker.acquire() is False


def test_a_cancelled_probe_frees_the_slot_and_success_resets_the_count() -> None:
    clock = Clock()
    breaker = CircuitBreaker(
        "t", BreakerPolicy(failure_threshold=2, reset_timeout_ms=10), clock=clock
    )
    breaker.record(success=False, probe=False)
    breaker.record(success=True, probe=False)
    breaker.record(success=False, probe=False)
    assert state(breaker) == "closed"  # not two *consecutive* failures
    breaker.record(success=False, probe=False)
    assert state(breaker) == "open"
    clock.advance(0.01)
    assert breaker.acquire() is True
    breaker.release(probe=True)
    assert breaker.acquire() is True  # another caller may probe now


def test_a_changed_policy_starts_a_fresh_breaker() -> None:
    clock = Clock()
    breakers = Breakers(clock=clock)
    old = breakers.for_tool("t", BreakerPolicy(1, 1000))
    old.record(success=False, probe=False)
    assert breakers.state("t") == "open"
    new = breakers.for_tool("t", BreakerPolicy(5, 1000))
    assert new is not old
    assert new.clock is clock  # every breaker of the set reads the same clock
    assert breakers.state("t") == "closed"
