"""``POST /chat``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import structlog
from fastapi import APIRouter, BackgroundTasks, Request, Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from agent.chat.schemas import ChatReply, ChatRequest, ToolCallRead
from agent.chat.service import PreparedTurn, prepare_turn
from agent.deps import AuthenticatorDep, ChatDepsDep, claimed_context, forwarded, require_caller
from reach_common.errors import (
    DependencyUnavailable,
    InternalError,
    ReachError,
    current_trace_id,
    error_body,
)
from reach_common.outages import down_dependency

router = APIRouter(tags=["chat"])
log = structlog.get_logger(__name__)

SSE_KEEPALIVE_S = 15


def _tool_call(data: dict[str, Any]) -> ToolCallRead:
    return ToolCallRead.model_validate(data)


async def _collect(turn: PreparedTurn) -> ChatReply:
    if turn.replay is not None:
        async for _ in turn.events():  # releases the lock
            pass
        return turn.replay
    calls: list[ToolCallRead] = []
    done: dict[str, Any] | None = None
    async for event in turn.events():
        if event.kind == "tool_result":
            calls.append(_tool_call(event.data))
        elif event.kind == "done":
            done = event.data
    assert done is not None  # the turn either finishes with ``done`` or raises
    return turn.reply(done, calls)


async def _stream(turn: PreparedTurn) -> AsyncIterator[ServerSentEvent]:
    calls: list[ToolCallRead] = []
    number = 0
    try:
        async for event in turn.events():
            number += 1
            data: dict[str, Any] = event.data
            if event.kind == "tool_result":
                calls.append(_tool_call(event.data))
            elif event.kind == "done":
                reply = turn.replay or turn.reply(event.data, calls)
                data = reply.model_dump(mode="json")
            yield ServerSentEvent(
                data=json.dumps(data, ensure_ascii=False, default=str),
                event=event.kind,
                id=str(number),
            )
    except ReachError as exc:
        yield _error_event(exc, turn.trace_id, number + 1)
    except Exception as exc:  # noqa: BLE001 - the stream's task boundary: report, never leak a traceback
        yield _error_event(_stream_failure(exc, turn), turn.trace_id, number + 1)


def _stream_failure(exc: Exception, turn: PreparedTurn) -> ReachError:
    """What a stream that failed past its first event says (and logs): an outage as at the
    request boundary (a warning, no traceback; ``dependency_unavailable``), else a bug."""
    dependency = down_dependency(exc)
    if dependency is None:
        log.exception("chat_stream_failed", session_id=turn.session_id)
        return InternalError("The turn failed unexpectedly.")
    log.warning(
        "chat_stream_dependency_unavailable",
        session_id=turn.session_id,
        dependency=dependency,
        error_type=type(exc).__name__,
    )
    return DependencyUnavailable(dependency)


def _error_event(exc: ReachError, trace_id: str | None, number: int) -> ServerSentEvent:
    """The stream's last event: the body an HTTP error would have had."""
    body = error_body(exc, trace_id=trace_id)
    return ServerSentEvent(data=json.dumps(body, default=str), event="error", id=str(number))


@router.post(
    "/chat",
    response_model=ChatReply,
    responses={
        200: {
            "description": "The answer, or with `stream: true` a stream of Server-Sent Events.",
            "content": {"text/event-stream": {}},
        },
        401: {"description": "`unauthenticated` (strict, no credential), `invalid_credential`."},
        403: {"description": "`session_forbidden`: the session belongs to another user."},
        409: {
            "description": (
                "`session_busy`: another turn of this session is running; "
                "`message_id_reused`, `turn_superseded`: see the message."
            )
        },
        502: {"description": "`llm_*`: the model call failed (terminal)."},
        503: {"description": "`gateway_unavailable`, `llm_unavailable`: retry later."},
    },
)
async def chat(
    body: ChatRequest,
    request: Request,
    deps: ChatDepsDep,
    authenticator: AuthenticatorDep,
    background: BackgroundTasks,
) -> Response | ChatReply:
    """Send one message and get the agent's answer.

    The caller is the verified API key or JWT (`Authorization: Bearer …` or
    `X-API-Key`); in permissive mode, without one, the claimed `user_context`
    (or `X-User-Id` / `X-User-Roles`). Strict mode needs a credential (401
    `unauthenticated`). A session belongs to the caller who started it: a
    message to someone else's session, or a `message_id` retry of someone
    else's turn, gets 403 `session_forbidden` and changes nothing.

    The agent loads the session's history, lets the model answer or call the
    gateway's tools (only the ones this caller may use, invoked with the
    caller's own `Authorization` / `X-API-Key` headers, plus the claimed
    `user_context` in permissive mode), and repeats until the model answers
    or `MAX_TOOL_ROUNDS` is reached. Tool output is shown to the model as
    untrusted data, and a tool that changes data runs only when the model
    asks for it before reading any tool output in this turn; later it is
    answered with `confirmation_required` (docs/agent-tool-policy.md). With no
    model configured (offline mode) the gateway's `/run` picks and runs the
    tool, and the answer says which tool was used.

    A session runs one turn at a time: a second message while a turn runs
    gets 409 `session_busy`. Send a `message_id` to make retries safe: a
    repeat returns the stored answer (`replayed: true`).

    With `stream: true` the answer is a stream of Server-Sent Events:
    `delta` (`{text}`), `tool_call` (`{id, tool_id, arguments, round}`),
    `tool_result` (the same plus `{is_error, result}`), then `done` (the same
    body as the JSON answer) or `error` (`{reason, message, trace_id}`).
    Closing the connection cancels the turn; whatever was saved stays valid.
    """
    claimed = None if authenticator.strict else claimed_context(body.user_context, request.headers)
    caller = require_caller(await authenticator.resolve(request.headers, claimed), authenticator)
    gateway_caller = forwarded(request.headers, claimed, authenticator.strict)
    turn = await prepare_turn(deps, body, gateway_caller, caller.user_id, current_trace_id())
    # Run once the response is sent: what the turn teaches memory is learned after the
    # user has the answer, not while it is on its way (either kind of response). A
    # coroutine, so it runs on the event loop: a plain callable goes to a worker thread,
    # and asyncio.Event is not thread-safe.
    background.add_task(_mark_answered, turn)
    if body.stream:
        return EventSourceResponse(_stream(turn), ping=SSE_KEEPALIVE_S)
    return await _collect(turn)


async def _mark_answered(turn: PreparedTurn) -> None:
    turn.answered.set()
