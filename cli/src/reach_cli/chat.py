"""``reach chat``: talk to the agent, its answer streamed as it is written.

Each line you type is one turn (``POST /chat`` with ``stream: true``); the session id the
first answer names is sent with every later turn, so the agent keeps the conversation.
``--message`` sends one turn and exits (for scripts; with ``--json`` every event is
printed as one JSON line). An empty line, ``/quit`` or end of input ends the chat.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Annotated, Any

import httpx
import typer

from reach_cli.client import TIMEOUT_S, CommandFailed
from reach_cli.output import State, err, fail, out, with_identity

QUIT = {"", "/quit", "/exit"}


def events(lines: Iterator[str]) -> Iterator[tuple[str, Any]]:
    """``(event, data)`` pairs of a Server-Sent Events stream (data parsed as JSON)."""
    kind, data = "message", list[str]()
    for line in lines:
        if not line:
            if data:
                yield kind, json.loads("\n".join(data))
            kind, data = "message", list[str]()
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    if data:
        yield kind, json.loads("\n".join(data))


def turn(message: str, session_id: str | None) -> dict[str, Any]:
    """One streamed turn, printed as it arrives; the ``done`` body (or raise on ``error``)."""
    target = State.agent
    body = with_identity({"message": message, "session_id": session_id, "stream": True})
    try:
        with httpx.stream(
            "POST",
            target.url.rstrip("/") + "/chat",
            json=body,
            headers={**target.headers(), "Accept": "text/event-stream"},
            timeout=TIMEOUT_S,
        ) as response:
            if response.status_code >= 400:
                response.read()
                error = response.json() if response.content else {}
                raise CommandFailed(
                    str(error.get("reason") or f"http_{response.status_code}"),
                    str(error.get("message") or response.text)[:2000],
                )
            return _print_events(events(response.iter_lines()))
    except httpx.HTTPError as exc:
        raise CommandFailed(
            "unreachable", f"{target.url} did not answer ({type(exc).__name__})", exit_code=2
        ) from exc


def _print_events(stream: Iterator[tuple[str, Any]]) -> dict[str, Any]:
    written = False
    for kind, data in stream:
        if State.as_json:
            print(json.dumps({"event": kind, "data": data}, ensure_ascii=False), flush=True)
        elif kind == "delta":
            out.print(data.get("text", ""), end="", highlight=False, markup=False)
            written = True
        elif kind == "tool_call":
            err.print(f"[dim]→ {data['tool_id']} {json.dumps(data['arguments'])}[/]")
        elif kind == "approval_required":
            err.print(f"[yellow]waiting for approval: {json.dumps(data, ensure_ascii=False)}[/]")
        if kind == "error":
            raise CommandFailed(str(data.get("reason")), str(data.get("message")))
        if kind == "done":
            if not State.as_json:  # a reply with no deltas (offline mode) is printed whole
                out.print("" if written else data.get("reply", ""), highlight=False, markup=False)
            return dict(data)
    raise CommandFailed("stream_ended", "The agent closed the stream before the turn ended.")


def chat(
    session: Annotated[str | None, typer.Option(help="Continue this session.")] = None,
    message: Annotated[
        str | None, typer.Option("--message", "-m", help="Send one message and exit.")
    ] = None,
) -> None:
    """Chat with the agent (POST /chat, streamed); the session is kept between turns."""
    session_id = session
    while True:
        if message is None:
            try:
                text = err.input("you> ").strip()  # the prompt on stderr: stdout is the reply
            except EOFError:
                text = ""
            if text in QUIT:
                break
        else:
            text = message
        try:
            done = turn(text, session_id)
        except CommandFailed as exc:
            raise fail(exc.reason, exc.message, exc.exit_code) from exc
        session_id = done.get("session_id", session_id)
        if message is not None:
            break
    if session_id and not State.as_json:
        err.print(f"[dim]session {session_id}[/]")
