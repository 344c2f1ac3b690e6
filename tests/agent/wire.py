"""Recorded model answers served in each vendor's wire format, with the vendor's rules.

:class:`ModelScript` decides which recorded payload answers a request, the way
a model would move through a ReAct turn: the first model call of a turn gets
``rounds[0]`` (a tool call), the next ``rounds[1]``, ... and a request that
offers no callable tools gets ``final``. Tool-call ids in the recordings are
replaced by fresh ones on every answer, as a vendor mints new ids.

Before answering, the request's history is checked against the vendor's own
rules (every tool call answered by exactly one result in the next turn, no
orphan result, no empty text block, tools declared when tool blocks are
present, roles alternate). A violation gets the vendor's 400
``invalid_request_error``, as the real API would: an agent that writes a
broken history fails these tests the way it would fail in production.

The same script serves respx routes (in-process tests) and
:func:`replay_app`, a loopback HTTP server for agent subprocesses and the
benchmark.

:func:`retarget` turns a recorded single-call answer into the same answer
calling another tool (e.g. a write tool), for plots the recordings do not
cover; put the result in :attr:`ModelScript.recordings` under a name of your
choice. :func:`unframe` reads a tool result back out of the untrusted-data
frame the agent puts around it.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from agent.memory.extract import EXTRACTION_SYSTEM
from tests.fixtures.llm import read

ANTHROPIC_ROUNDS = ("stream_tool_use.sse", "stream_parallel_tool_use.sse")
OPENAI_ROUNDS = ("stream_tool_calls.sse", "stream_parallel_tool_calls.sse")

_ids = itertools.count(1)
_ids_lock = threading.Lock()


def fresh_id(prefix: str) -> str:
    with _ids_lock:
        return f"{prefix}{next(_ids):020d}"


# --- history rules -------------------------------------------------------------


def anthropic_violations(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    messages = body.get("messages", [])
    if not messages or messages[0].get("role") != "user":
        problems.append("the first message must use the user role")
    declared = {tool["name"] for tool in body.get("tools", [])}
    pending: list[str] = []
    for i, message in enumerate(messages):
        if i and message["role"] == messages[i - 1]["role"]:
            problems.append(f"messages.{i}: roles must alternate")
        blocks = message["content"]
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        results = [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
        if pending:
            if message["role"] != "user" or sorted(results) != sorted(pending):
                problems.append(
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(pending)}"
                )
            leading = [b["type"] for b in blocks[: len(pending)]]
            if any(kind != "tool_result" for kind in leading):
                problems.append(f"messages.{i}: tool_result blocks must come first")
        elif results:
            problems.append(f"messages.{i}: unexpected `tool_use_id` found in `tool_result` blocks")
        pending = []
        for block in blocks:
            if block["type"] == "text" and not block["text"]:
                problems.append(f"messages.{i}: text content blocks must be non-empty")
            if block["type"] == "tool_use":
                pending.append(block["id"])
                if block["name"] not in declared:
                    problems.append("Requests which include `tool_use` blocks must define tools")
    if pending:
        problems.append("the conversation ends with unanswered tool_use blocks")
    return problems


def openai_violations(body: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    pending: set[str] = set()
    for i, message in enumerate(body.get("messages", [])):
        role = message["role"]
        if role == "tool":
            if message.get("tool_call_id") not in pending:
                problems.append(
                    f"messages.[{i}]: messages with role 'tool' must be a response to a "
                    "preceding message with 'tool_calls'"
                )
            pending.discard(message.get("tool_call_id"))
            continue
        if pending:
            problems.append(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'"
            )
            pending = set()
        if role == "assistant" and message.get("tool_calls"):
            pending = {call["id"] for call in message["tool_calls"]}
            for call in message["tool_calls"]:
                json.loads(call["function"]["arguments"] or "{}")
    if pending:
        problems.append("the conversation ends with unanswered tool_calls")
    if "parallel_tool_calls" in body and not body.get("tools"):
        problems.append("parallel_tool_calls is only allowed when tools are specified")
    return problems


def vendor_error(vendor: str, problems: list[str]) -> httpx.Response:
    message = "; ".join(problems)
    if vendor == "anthropic":
        body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
    else:
        body = {"error": {"message": message, "type": "invalid_request_error", "param": "messages"}}
    return httpx.Response(400, json=body)


# --- what the agent sends ---------------------------------------------------------

_FRAME = re.compile(
    r'<untrusted-data source="(?P<source>[^"]*)">\n(?P<data>.*)\n</untrusted-data>', re.DOTALL
)


def unframe(content: str) -> dict[str, Any]:
    """``{source, data}`` of a tool result sent inside an untrusted-data frame (OpenAI
    error results start with ``Error: ``); both None when the content is not framed."""
    match = _FRAME.fullmatch(content.removeprefix("Error: "))
    if match is None:
        return {"source": None, "data": None}
    return {"source": match["source"], "data": match["data"]}


def system_text(body: dict[str, Any], vendor: str) -> str:
    """The system prompt of a model request."""
    if vendor == "anthropic":
        system = body.get("system", "")
        if isinstance(system, list):
            return "".join(block.get("text", "") for block in system)
        return str(system)
    first = body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


# --- answers -----------------------------------------------------------------------


def retarget(vendor: str, recording: str, tool: str, arguments: dict[str, Any]) -> str:
    """A recorded one-call streamed answer, calling ``tool`` with ``arguments`` instead.

    Everything else (events, ids, text, usage, stop reason) stays as recorded; the
    argument text arrives in the first argument delta, the later ones are empty.
    """
    text = read(vendor, recording)
    arguments_json = json.dumps(arguments, ensure_ascii=False)
    out: list[str] = []
    first_delta = True
    for line in text.splitlines():
        if line.startswith("data: {"):
            data = json.loads(line[6:])
            if vendor == "anthropic":
                block = data.get("content_block")
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    block["name"] = tool
                delta = data.get("delta")
                if isinstance(delta, dict) and delta.get("type") == "input_json_delta":
                    delta["partial_json"] = arguments_json if first_delta else ""
                    first_delta = False
            else:
                for choice in data.get("choices", []):
                    for call in choice.get("delta", {}).get("tool_calls") or []:
                        function = call.get("function", {})
                        if "name" in function:
                            function["name"] = tool
                        elif "arguments" in function:
                            function["arguments"] = arguments_json if first_delta else ""
                            first_delta = False
            line = "data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        out.append(line)
    assert not first_delta, f"{recording} has no argument deltas to rewrite"
    return "\n".join(out) + "\n"


def _rewrite_sse(text: str, vendor: str) -> str:
    """The recording with fresh tool-call ids (one per call, consistent across its events)."""
    renamed: dict[str, str] = {}
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("data: {"):
            data = json.loads(line[6:])
            for call in _calls_in(data, vendor):
                old = call["id"]
                call["id"] = renamed.setdefault(
                    old, fresh_id("toolu_" if vendor == "anthropic" else "call_")
                )
            line = "data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        out.append(line)
    return "\n".join(out) + "\n"


def _calls_in(data: dict[str, Any], vendor: str) -> list[dict[str, Any]]:
    if vendor == "anthropic":
        block = data.get("content_block")
        return [block] if isinstance(block, dict) and block.get("type") == "tool_use" else []
    calls: list[dict[str, Any]] = []
    for choice in data.get("choices", []):
        calls.extend(c for c in choice.get("delta", {}).get("tool_calls") or [] if c.get("id"))
    return calls


def _rounds_so_far(body: dict[str, Any], vendor: str) -> int:
    """Model answers with tool calls since the user's last text message."""
    rounds = 0
    for message in reversed(body.get("messages", [])):
        if vendor == "anthropic":
            blocks = message["content"] if isinstance(message["content"], list) else []
            if message["role"] == "user" and any(b["type"] == "text" for b in blocks):
                break
            if message["role"] == "assistant" and any(b["type"] == "tool_use" for b in blocks):
                rounds += 1
        else:
            if message["role"] == "user":
                break
            if message["role"] == "assistant" and message.get("tool_calls"):
                rounds += 1
    return rounds


def _tools_callable(body: dict[str, Any]) -> bool:
    choice = body.get("tool_choice")
    if choice == "none" or (isinstance(choice, dict) and choice.get("type") == "none"):
        return False
    return bool(body.get("tools"))


@dataclass
class ModelScript:
    """What the recorded model says; see the module docstring.

    ``rounds=None`` uses the vendor's default two tool rounds. ``always_tools``
    calls a tool whenever one may be called (for max-rounds runs).
    ``fail_with`` answers every request with that recording instead.
    """

    vendor: str
    rounds: tuple[str, ...] | None = None
    final: str = "stream_final.sse"
    always_tools: bool = False
    fail_with: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    extractions: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    keep_requests: bool = True  # benchmarks turn this off to keep memory flat
    served: int = 0
    recordings: dict[str, str] = field(default_factory=dict)  # name → payload, before files
    # The text of non-streamed answers (summaries, memory extraction) instead of the
    # recording's own; the rest of the recorded payload is kept.
    complete_text: str | None = None

    def __post_init__(self) -> None:
        if self.rounds is None:
            self.rounds = ANTHROPIC_ROUNDS if self.vendor == "anthropic" else OPENAI_ROUNDS

    def respond(self, body: dict[str, Any]) -> httpx.Response:
        with self.lock:
            self.served += 1
            if self.keep_requests:
                # Memory extraction (one background call a turn) is kept apart, so the
                # turn's own requests read as the plot they follow.
                extraction = EXTRACTION_SYSTEM in system_text(body, self.vendor)
                (self.extractions if extraction else self.requests).append(body)
        problems = (
            anthropic_violations(body) if self.vendor == "anthropic" else openai_violations(body)
        )
        if problems:
            return vendor_error(self.vendor, problems)
        if self.fail_with is not None:
            return self._payload(self.fail_with, body)
        assert self.rounds is not None
        done = _rounds_so_far(body, self.vendor)
        if _tools_callable(body) and (self.always_tools or done < len(self.rounds)):
            return self._payload(self.rounds[min(done, len(self.rounds) - 1)], body)
        return self._payload(self.final, body)

    def _payload(self, name: str, body: dict[str, Any]) -> httpx.Response:
        if not body.get("stream"):
            name = "message_final.json" if self.vendor == "anthropic" else "completion_final.json"
            text = read(self.vendor, name)
            if self.complete_text is not None:
                text = json.dumps(_with_text(self.vendor, json.loads(text), self.complete_text))
            return httpx.Response(200, text=text, headers={"content-type": "application/json"})
        recorded = self.recordings.get(name) or read(self.vendor, name)
        return httpx.Response(
            200,
            text=_rewrite_sse(recorded, self.vendor),
            headers={"content-type": "text/event-stream"},
        )

    def respx_side_effect(self, request: httpx.Request) -> httpx.Response:
        return self.respond(json.loads(request.content))


def _with_text(vendor: str, payload: dict[str, Any], text: str) -> dict[str, Any]:
    if vendor == "anthropic":
        payload["content"] = [{"type": "text", "text": text}]
    else:
        payload["choices"][0]["message"]["content"] = text
    return payload


def replay_app(scripts: dict[str, ModelScript]) -> Starlette:
    """``POST /v1/messages`` and ``POST /v1/chat/completions`` over real HTTP."""

    async def answer(request: Request, vendor: str) -> Response:
        response = scripts[vendor].respond(json.loads(await request.body()))
        return Response(
            response.content,
            status_code=response.status_code,
            media_type=response.headers.get("content-type"),
        )

    async def anthropic(request: Request) -> Response:
        return await answer(request, "anthropic")

    async def openai(request: Request) -> Response:
        return await answer(request, "openai")

    async def health(_: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/v1/messages", anthropic, methods=["POST"]),
            Route("/v1/chat/completions", openai, methods=["POST"]),
            Route("/healthz", health),
        ]
    )
