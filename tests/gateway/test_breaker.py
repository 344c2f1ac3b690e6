"""The circuit breaker's state machine (the end-to-end run against shop is in tests/e2e)."""

from __future__ import annotations

import time

import pytest

from gateway.executor.breaker import Breakers, CircuitBreaker
from gateway.executor.errors import ToolUnavailable
from gateway.registry.manifest import BreakerPolicy


def test_opens_after_threshold_then_lets_exactly_one_probe_through() -> None:
    breaker = CircuitBreaker("t", BreakerPolicy(failure_threshold=3, reset_timeout_ms=50))
    for _ in range(2):
        assert breaker.acquire() is False
        breaker.record(success=False, probe=False)
    assert breaker.state == "closed"
    breaker.acquire()
    breaker.record(success=False, probe=False)
    assert breaker.state == "open"
    with pytest.raises(ToolUnavailable) as refused:
        breaker.acquire()
    assert refused.value.reason == "tool_unavailable"
    assert refused.value.headers["Retry-After"] == "1"
    time.sleep(0.06)
    assert breaker.acquire() is True  # the probe
    assert breaker.state == "half_open"
    with pytest.raises(ToolUnavailable):
        breaker.acquire()  # only one probe at a time
    breaker.record(success=False, probe=True)
    assert breaker.state == "open"  # a failed probe reopens at once
    time.sleep(0.06)
    assert breaker.acquire() is True
    breaker.record(success=True, probe=True)
    assert (breaker.state, breaker.failures) == ("closed", 0)
    assert breaker.acquire() is False


def test_a_cancelled_probe_frees_the_slot_and_success_resets_the_count() -> None:
    breaker = CircuitBreaker("t", BreakerPolicy(failure_threshold=2, reset_timeout_ms=10))
    breaker.record(success=False, probe=False)
    breaker.record(success=True, probe=False)
    breaker.record(success=False, probe=False)
    assert breaker.state == "closed"  # not two *consecutive* failures
    breaker.record(success=False, probe=False)
    time.sleep(0.02)
    assert breaker.acquire() is True
    breaker.release(probe=True)
    assert breaker.acquire() is True  # another caller may probe now


def test_a_changed_policy_starts_a_fresh_breaker() -> None:
    breakers = Breakers()
    old = breakers.for_tool("t", BreakerPolicy(1, 1000))
    old.record(success=False, probe=False)
    assert breakers.state("t") == "open"
    new = breakers.for_tool("t", BreakerPolicy(5, 1000))
    assert new is not old
    assert breakers.state("t") == "closed"
