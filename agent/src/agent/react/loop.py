"""The ReAct loop with a model: answer, or call tools and go round again.

Each round streams one model answer. If it calls tools (and the round budget
allows), the calls run concurrently through the gateway, and the assistant
message with all of its results is saved in one transaction before the next
round. After ``MAX_TOOL_ROUNDS`` rounds with tools, one last call is made
without tools and its answer is recorded with ``stop_reason:
max_tool_rounds``. Writes are shielded from cancellation: a client that goes
away mid-write still leaves a whole round, never half of one.

What the model is shown follows :mod:`agent.react.policy`: tool results go out
inside untrusted-data frames, and once the model has read tool output in this
turn, write tools are no longer run on its say-so.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import structlog
from opentelemetry import trace

from agent.metrics import record_model_call
from agent.react.approvals import AWAITING, approval_of, waiting_reply
from agent.react.context import SLACK, fit, message_tokens, tools_tokens
from agent.react.events import TurnEvent
from agent.react.outputs import follow_handles
from agent.react.policy import frame_tool_results, output_seen_in_turn
from agent.react.tools import ToolRunner
from agent.sessions.service import TurnStore
from agent.sessions.tokens import TokenCounter, estimate_tokens
from reach_common.llm.errors import LLMResponseError
from reach_common.llm.types import Completion, LLMProvider, Message

log = structlog.get_logger(__name__)

FINAL_ROUND_NOTE = (
    "The tool budget for this turn is used up. Answer now from the tool results "
    "you have; say what is still unknown."
)


@dataclass
class LoopConfig:
    system: str
    max_tool_rounds: int
    max_output_tokens: int
    request_token_budget: int
    tools_listed: int = 0  # the caller's tools; more than are offered when shortlisted


@dataclass
class ReactLoop:
    provider: LLMProvider
    tools: ToolRunner
    store: TurnStore
    config: LoopConfig
    tracer: trace.Tracer
    counter: TokenCounter
    history: list[Message] = field(default_factory=list)
    # Set once tool output has reached the model in this turn: writes need the user then.
    output_seen: bool = field(default=False, init=False)
    _tools_tokens: int | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.output_seen = output_seen_in_turn(self.history)

    async def _model_round(
        self, round_no: int, offer_tools: bool
    ) -> AsyncIterator[TurnEvent | Completion]:
        system = (
            self.config.system if offer_tools else f"{self.config.system}\n\n{FINAL_ROUND_NOTE}"
        )
        # Not made current: this generator yields while the span is open, and a
        # context attached across a yield may be detached in another context.
        span = self.tracer.start_span(
            "agent.step",
            attributes={
                "agent.round": round_no,
                "agent.tools_offered": offer_tools,
                "agent.tools_count": len(self.tools.specs) if offer_tools else 0,
                "agent.tools_listed": self.config.tools_listed,
                "llm.provider": self.provider.name,
                "llm.model": self.provider.model,
            },
        )
        try:
            messages, estimate = self._request(system, offer_tools)
            span.set_attribute("llm.request_tokens_estimate", self.counter.scale(estimate))
            completion: Completion | None = None
            started = time.perf_counter()
            async for event in self.provider.stream(
                messages,
                system=system,
                tools=self.tools.specs if offer_tools else (),
                max_tokens=self.config.max_output_tokens,
            ):
                if event.kind == "delta":
                    yield TurnEvent("delta", {"text": event.text})
                elif event.kind == "done":
                    completion = event.completion
            if completion is None:
                raise LLMResponseError(
                    "the model stream ended without an answer", provider=self.provider.name
                )
            self.counter.observe(estimate, completion.usage.input_tokens)
            record_model_call(self.provider.name, started, completion.usage)
            span.set_attribute("llm.stop_reason", completion.stop_reason)
            span.set_attribute("llm.input_tokens", completion.usage.input_tokens)
            span.set_attribute("llm.output_tokens", completion.usage.output_tokens)
        except BaseException as exc:
            span.set_status(trace.StatusCode.ERROR, type(exc).__name__)
            raise
        finally:
            span.end()
        yield completion

    def _request(self, system: str, offer_tools: bool) -> tuple[list[Message], int]:
        """The history to send, cut to what the request budget leaves, and the request's
        whole estimate (system, tools, messages) before calibration."""
        fixed = estimate_tokens(system)
        if offer_tools:
            if self._tools_tokens is None:  # the same tools all turn: count them once
                self._tools_tokens = tools_tokens(self.tools.specs)
            fixed += self._tools_tokens
        allowance = int(self.config.request_token_budget * SLACK) - self.counter.scale(fixed)
        messages = fit(frame_tool_results(self.history), allowance, self.counter)
        estimate = fixed + sum(message_tokens(m) for m in messages)
        if self.counter.scale(estimate) > self.config.request_token_budget:
            # Only the current turn is left and it does not fit: say so, send it anyway.
            log.warning(
                "context_budget_exceeded",
                estimate=self.counter.scale(estimate),
                budget=self.config.request_token_budget,
            )
        return messages, estimate

    async def run(self) -> AsyncIterator[TurnEvent]:
        rounds = 0
        while True:
            offer_tools = rounds < self.config.max_tool_rounds
            completion: Completion | None = None
            async for item in self._model_round(rounds + 1, offer_tools):
                if isinstance(item, Completion):
                    completion = item
                else:
                    yield item
            assert completion is not None
            if completion.tool_calls and offer_tools:
                rounds += 1
                waiting: list[tuple[str, str]] = []
                async for event in self._tool_round(completion, rounds, waiting):
                    yield event
                if waiting:  # a person decides; the model is not asked to guess meanwhile
                    async for event in self._await_approval(waiting, rounds):
                        yield event
                    return
                continue
            stop_reason = completion.stop_reason
            if not offer_tools and self.config.max_tool_rounds > 0:
                stop_reason = "max_tool_rounds"
            with anyio.CancelScope(shield=True):
                await self.store.save_final(completion.text, stop_reason, rounds)
            yield TurnEvent(
                "done", {"reply": completion.text, "stop_reason": stop_reason, "rounds": rounds}
            )
            return

    def _question(self) -> str:
        """The user's message this turn answers (what a truncated result is searched for)."""
        for message in reversed(self.history):
            if message.role == "user" and isinstance(message.content, str):
                return message.content
        return ""

    async def _await_approval(
        self, waiting: list[tuple[str, str]], rounds: int
    ) -> AsyncIterator[TurnEvent]:
        for tool_id, approval_id in waiting:
            yield TurnEvent(
                "approval_required",
                {
                    "tool_id": tool_id,
                    "approval_id": approval_id,
                    "status_url": f"/approvals/{approval_id}",
                },
            )
        reply = waiting_reply(waiting)
        with anyio.CancelScope(shield=True):
            await self.store.save_final(reply, AWAITING, rounds)
        yield TurnEvent("delta", {"text": reply})
        yield TurnEvent("done", {"reply": reply, "stop_reason": AWAITING, "rounds": rounds})

    async def _tool_round(
        self, completion: Completion, round_no: int, waiting: list[tuple[str, str]]
    ) -> AsyncIterator[TurnEvent]:
        for call in completion.tool_calls:
            yield TurnEvent(
                "tool_call",
                _call_data(call.id, self.tools.tool_id(call.name), call.arguments, round_no),
            )
        span = self.tracer.start_span("agent.tools", attributes={"agent.round": round_no})
        with trace.use_span(span, end_on_exit=True):
            results = await self.tools.run_all(
                completion.tool_calls, writes_allowed=not self.output_seen
            )
            # A truncated result is read through its handle for the user's question.
            results = await follow_handles(
                results, self._question(), self.tools.retrieve, self.tools.result_limit
            )
        if any(result.from_gateway for result in results):
            self.output_seen = True
        with anyio.CancelScope(shield=True):
            await self.store.save_round(
                completion.text,
                [(result.call, result.tool_id) for result in results],
                [result.message for result in results],
                round_no,
            )
        self.history.append(
            Message(role="assistant", content=completion.text, tool_calls=completion.tool_calls)
        )
        self.history.extend(result.message for result in results)
        for result in results:
            approval_id = approval_of(result.result)
            if approval_id is not None:
                waiting.append((result.tool_id, approval_id))
            yield TurnEvent(
                "tool_result",
                {
                    **_call_data(result.call.id, result.tool_id, result.call.arguments, round_no),
                    "is_error": result.message.is_error,
                    "result": result.result,
                    "latency_ms": result.latency_ms,
                },
            )


def _call_data(
    call_id: str, tool_id: str, arguments: dict[str, Any], round_no: int
) -> dict[str, Any]:
    return {"id": call_id, "tool_id": tool_id, "arguments": arguments, "round": round_no}
