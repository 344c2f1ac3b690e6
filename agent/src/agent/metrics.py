"""The agent's Prometheus metrics: turns, rounds per turn, model latency and tokens.

Defined in :class:`AgentMetrics` on each app's own registry
(``reach_common.metrics``); the ReAct loop and the chat service call the
``record_*`` functions below, one line each, which do nothing outside an app.
Labels are the mode or provider (``offline``, ``anthropic``, ``openai``), the
stop reason and the token direction: no user, session or message in any label.
"""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Histogram

from reach_common.llm.types import Usage
from reach_common.metrics import LATENCY_BUCKETS, family

ROUND_BUCKETS = (0, 1, 2, 3, 4, 5, 6, 8, 10)
_MAX_LABEL = 40  # a stop reason comes from a model server: keep a strange one short


class AgentMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.turns = Counter(
            "reach_agent_turns_total",
            "Chat turns finished (replays of a finished turn excluded), by mode and stop "
            "reason: end_turn, max_tool_rounds, awaiting_approval, cancelled, or an error's "
            "reason.",
            ["mode", "stop_reason"],
            registry=r,
        )
        self.rounds = Histogram(
            "reach_agent_turn_rounds",
            "Tool rounds a finished turn took.",
            ["mode"],
            buckets=ROUND_BUCKETS,
            registry=r,
        )
        self.model_duration = Histogram(
            "reach_agent_model_request_duration_seconds",
            "Time of one streamed model answer, first byte sent to last byte read.",
            ["provider"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.model_tokens = Counter(
            "reach_agent_model_tokens_total",
            "Tokens the model provider reported, by direction (input, output).",
            ["provider", "direction"],
            registry=r,
        )


def _metrics() -> AgentMetrics | None:
    return family(AgentMetrics)


def record_turn(mode: str, stop_reason: str, replayed: bool) -> None:
    metrics = _metrics()
    if metrics is not None and not replayed:
        metrics.turns.labels(mode, stop_reason[:_MAX_LABEL]).inc()


def record_rounds(mode: str, rounds: object) -> None:
    metrics = _metrics()
    if metrics is not None:
        metrics.rounds.labels(mode).observe(float(str(rounds)))


def record_model_call(provider: str, started: float, usage: Usage) -> None:
    metrics = _metrics()
    if metrics is None:
        return
    metrics.model_duration.labels(provider).observe(time.perf_counter() - started)
    metrics.model_tokens.labels(provider, "input").inc(usage.input_tokens)
    metrics.model_tokens.labels(provider, "output").inc(usage.output_tokens)
