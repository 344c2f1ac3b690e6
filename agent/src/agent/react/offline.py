"""Offline mode: no model. The gateway's ``POST /run`` picks and runs the tool.

The gateway routes the message with embeddings and the tool schemas, fills the
arguments (from the session's last call when the message refers back, e.g.
"那这个 SKU"), runs the tool, and answers with the output. The reply names the
tool that was used and shows its output; when no tool matches, it says so
plainly. What the user told the agent in earlier sessions (recalled memories)
can name a value the request refers to but does not give ("my usual product"):
offline, memories fill arguments and nothing else. A request that refers back and
names no id-like value has them recalled before it is sent; one that names such a
value ("my SKU2024003") is sent alone, and only if the routed call lacks a required
value are they recalled and the request sent again. So a request that names its
values pays for no recall (an embedding and a search). Every step is saved like a model turn:
the routed call and its result in one transaction, then the answer.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import anyio

from agent.clients.gateway import GatewayClient, GatewayUnavailable
from agent.clients.schemas import Caller, ToolOutcome
from agent.react.approvals import AWAITING, Resolved, placeholder, waiting_reply
from agent.react.events import TurnEvent
from agent.react.outputs import RETRIEVE_TOOL, offline_reply, retrieve_arguments, truncated_handle
from agent.sessions.service import TurnStore
from reach_common.errors import error_body
from reach_common.llm.types import Message, ToolCall

_MAX_VALUE_CHARS = 200


def _value(value: Any) -> str:
    if isinstance(value, list):
        return f"{len(value)} entries"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _MAX_VALUE_CHARS else text[:_MAX_VALUE_CHARS] + "…"


def describe_output(output: Any) -> str:
    """A tool's output as one readable line: ``key: value`` pairs, lists as counts."""
    if isinstance(output, dict):
        return "; ".join(f"{key}: {_value(value)}" for key, value in output.items()) or "(empty)"
    return _value(output)


def describe_resolved(update: Resolved) -> str:
    """One sentence on an approval decided since the last turn."""
    what = {"succeeded": "was approved and ran", "failed": "was approved but failed"}.get(
        update.state, update.state.replace("_", " ")
    )
    detail = describe_output(update.result)
    return f"Update: {update.tool_id} (approval {update.approval_id}) {what} — {detail}."


async def _routed(
    gateway: GatewayClient,
    caller: Caller,
    session_id: str,
    user_message: str,
    memories: Sequence[str],
    recall: Callable[[], Awaitable[Sequence[str]]] | None,
) -> ToolOutcome:
    """``POST /run``. ``memories``: recalled already, sent with the request; ``recall``:
    the user's memories relevant to the message, asked for only if the routed tool lacks
    a required value (then the request goes again with them)."""
    outcome = await gateway.run(session_id, user_message, caller, memories)
    if not memories and recall is not None and _lacks_value(outcome):
        memories = await recall()
        if memories:
            outcome = await gateway.run(session_id, user_message, caller, memories)
    return outcome


def _lacks_value(outcome: ToolOutcome) -> bool:
    """A tool was found but its arguments were not all there: what a memory may supply.
    So is a refusal whose closest tool lacked a value (``route.closest``: the gateway
    refuses a weak route that cannot run rather than guess it)."""
    reason = outcome.error.reason if outcome.error else None
    if reason == "no_matching_tool":
        return bool((outcome.route or {}).get("closest"))
    return outcome.tool_id is not None and reason == "invalid_arguments"


def compose_reply(outcome: ToolOutcome, result: str | None = None) -> str:
    """The offline answer; ``result`` replaces the output's one-line description."""
    tool = outcome.tool_id
    if outcome.success and tool:
        arguments = ", ".join(f"{k}={_value(v)}" for k, v in (outcome.arguments or {}).items())
        called = f"{tool}({arguments})" if arguments else tool
        if result is not None:
            return f"Used the tool {called}. {result}"
        return f"Used the tool {called}. Result — {describe_output(outcome.output)}"
    error = outcome.error
    reason = error.reason if error else "tool_error"
    message = error.message if error else ""
    if tool:
        return f"Tried the tool {tool}, but it failed ({reason}): {message}".rstrip(": ")
    if reason == "no_matching_tool":
        return (
            "No tool matches this request, and no language model is configured to answer "
            f"it directly (offline mode). {message}"
        ).strip()
    return f"The request could not be routed to a tool ({reason}): {message}".rstrip(": ")


async def offline_turn(
    gateway: GatewayClient,
    caller: Caller,
    store: TurnStore,
    user_message: str,
    memories: Sequence[str] = (),
    recall: Callable[[], Awaitable[Sequence[str]]] | None = None,
    updates: Sequence[Resolved] = (),
) -> AsyncIterator[TurnEvent]:
    outcome = await _routed(gateway, caller, store.session_id, user_message, memories, recall)
    if not outcome.tool_id and outcome.status_code >= 500:
        # The gateway itself failed (down, timed out, broken): not an answer to give.
        error = outcome.error
        raise GatewayUnavailable(
            f"The gateway could not route the message: {error.message if error else ''}".strip(),
            # The gateway's 503 is passing (a backend restarting): the turn may be sent again.
            headers={"Retry-After": "1"} if outcome.status_code == 503 else None,
            gateway_reason=error.reason if error else None,
        )
    rounds = 0
    if outcome.tool_id:
        rounds = 1
        async for event in _routed_call(outcome, outcome.tool_id, store):
            yield event
    result = None
    if outcome.success and isinstance(outcome.output, dict) and outcome.output.get("truncated"):
        # Too large to show whole: read the part this message asks about through its handle.
        handle, follow = truncated_handle(outcome.output), None
        if handle is not None:
            arguments = retrieve_arguments(handle, user_message)
            follow = await gateway.invoke(RETRIEVE_TOOL, arguments, caller)
            follow = follow.model_copy(update={"arguments": arguments})
            rounds = 2
            async for event in _routed_call(follow, RETRIEVE_TOOL, store, round_no=2):
                yield event
        result = offline_reply(outcome.output, follow, user_message)
    reply = compose_reply(outcome, result)
    if outcome.awaiting_approval and outcome.tool_id and outcome.approval_id:
        yield TurnEvent(
            "approval_required",
            {
                "tool_id": outcome.tool_id,
                "approval_id": outcome.approval_id,
                "status_url": f"/approvals/{outcome.approval_id}",
            },
        )
        reply, stop_reason = waiting_reply([(outcome.tool_id, outcome.approval_id)]), AWAITING
    elif outcome.success or outcome.tool_id:
        stop_reason = "end_turn"
    else:
        stop_reason = outcome.error.reason if outcome.error else "tool_error"
    if updates:
        reply = " ".join([*(describe_resolved(r) for r in updates), reply])
    with anyio.CancelScope(shield=True):
        await store.save_final(reply, stop_reason[:32], rounds)
    yield TurnEvent("delta", {"text": reply})
    yield TurnEvent(
        "done",
        {"reply": reply, "stop_reason": stop_reason, "rounds": rounds, "route": outcome.route},
    )


async def _routed_call(
    outcome: ToolOutcome, tool_id: str, store: TurnStore, round_no: int = 1
) -> AsyncIterator[TurnEvent]:
    """The call ``/run`` made (or the follow-up read of its handle), saved as a tool round,
    as events."""
    call = ToolCall(
        id=f"run_{uuid.uuid4().hex[:24]}", name=tool_id, arguments=dict(outcome.arguments or {})
    )
    call_data = {"id": call.id, "tool_id": tool_id, "arguments": call.arguments}
    yield TurnEvent("tool_call", {**call_data, "round": round_no})
    result: Any = outcome.output
    if outcome.awaiting_approval:
        result = placeholder(outcome)
    elif not outcome.success:
        result = {"error": error_body(outcome.failure())}
    content = json.dumps(result, ensure_ascii=False, default=str)
    message = Message(
        role="tool", content=content, tool_call_id=call.id, is_error=not outcome.success
    )
    with anyio.CancelScope(shield=True):
        await store.save_round("", [(call, tool_id)], [message], round_no)
    yield TurnEvent(
        "tool_result",
        {
            **call_data,
            "round": round_no,
            "is_error": not outcome.success,
            "result": result,
            "latency_ms": outcome.latency_ms,
            "route": outcome.route,
        },
    )
