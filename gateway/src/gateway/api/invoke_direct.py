"""``POST /tools/{tool_id}/invoke`` answered without FastAPI's request machinery.

The invoke route is the gateway's hottest path. Going through FastAPI, a call
walks the route table, builds a ``Request``, solves the path, header and body
parameters, and validates the body with pydantic before ``InvokeService`` runs:
``scripts/bench_invoke_layer.py`` (part of ``make bench-gateway``) measured the
gateway's CPU per call at 0.98-1.02 ms that way against 0.81-0.82 ms this way. This
ASGI layer sits inside every middleware (trace id, server span, body
limit, trusted hosts, metrics, the 500 boundary) and answers a well-formed call
itself: the same ``InvokeService.invoke``, the same envelope and status.

Anything it is not sure of goes to the FastAPI route unchanged, body included:
another path or method, a body that is not a JSON object, a field of the wrong
type or length, an unknown field, an ``Idempotency-Key`` or tool id over its
limit. The route then answers exactly as it always did (its 422s, its docs in
``/openapi.json``); ``tests/gateway/test_invoke_direct.py`` holds both answers
to be the same.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import ValidationError
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.api import invoke
from gateway.invoke.service import SYNC, CallOptions
from reach_common.auth.caller import UserContext
from reach_common.errors import ReachError, error_response
from reach_common.middleware import replaying
from reach_common.storable import is_storable

PREFIX = "/tools/"
SUFFIX = "/invoke"
ROUTE = next(
    route
    for route in invoke.router.routes
    if isinstance(route, APIRoute) and route.path == f"{PREFIX}{{tool_id}}{SUFFIX}"
)
MAX_TOOL_ID = 200  # as the route's Path(max_length=...)
MAX_IDEMPOTENCY_KEY = 255  # as the route's Header(max_length=...)
# The request's fields with the longest text each may hold (``InvokeRequest``).
_TEXT_FIELDS = {"callback_url": 2000, "approval_id": 64}
_FIELDS = {"arguments", "user_context", "mode", *_TEXT_FIELDS}
_MODES = ("sync", "async")
Call = tuple[dict[str, Any], UserContext | None, CallOptions]  # arguments, claimed user, options


class InvokeDirect:
    """Answers ``POST /tools/{tool_id}/invoke`` when the call is plainly well-formed;
    hands everything else to ``app`` (the FastAPI router) as it came."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tool_id = _tool_id(scope)
        if tool_id is None:
            await self.app(scope, receive, send)
            return
        body = await _read_body(receive)
        if body is None:  # the client went away
            return
        headers = Headers(scope=scope)
        call = _parse(headers, body)
        if call is None:
            await self.app(scope, replaying(body, receive), send)
            return
        arguments, user_context, options = call
        scope["route"] = ROUTE  # for the metrics and span labels, as routing would set it
        client = scope.get("client")
        try:
            outcome = await scope["state"]["runtime"].invoke.invoke(
                tool_id,
                arguments,
                headers=headers,
                user_context=user_context,
                client_ip=client[0] if client else None,
                options=options,
            )
        except ReachError as exc:  # as the app's handler answers one the route raises
            await error_response(exc)(scope, receive, send)
            return
        response = JSONResponse(
            outcome.body, status_code=outcome.status_code, headers=outcome.headers
        )
        await response(scope, receive, send)


def _tool_id(scope: Scope) -> str | None:
    """The tool id of ``POST /tools/{tool_id}/invoke``, if this is one this layer may take."""
    if scope["type"] != "http" or scope["method"] != "POST" or scope.get("root_path"):
        return None
    path: str = scope["path"]
    if not (path.startswith(PREFIX) and path.endswith(SUFFIX)):
        return None
    tool_id = path[len(PREFIX) : -len(SUFFIX)]
    if not tool_id or "/" in tool_id or len(tool_id) > MAX_TOOL_ID:
        return None
    return tool_id


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _parse(headers: Headers, body: bytes) -> Call | None:
    """The call's arguments, claimed user and options, or None when FastAPI should judge
    the request (it answers the same call the same way, or with its own 422)."""
    content_type = headers.get("content-type")
    if content_type is not None and content_type.split(";", 1)[0].strip().lower() != (
        "application/json"
    ):
        return None
    key = headers.get("idempotency-key")
    if key is not None and len(key) > MAX_IDEMPOTENCY_KEY:
        return None
    if not body:
        return None
    try:
        fields = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(fields, dict) or not fields.keys() <= _FIELDS:
        return None
    arguments = fields.get("arguments", {})
    mode = fields.get("mode", "sync")
    if not isinstance(arguments, dict) or mode not in _MODES:
        return None
    for name, limit in _TEXT_FIELDS.items():
        value = fields.get(name)
        if value is not None and not (
            isinstance(value, str) and len(value) <= limit and is_storable(value)
        ):
            return None  # the route refuses it (a NUL or half a surrogate pair: 422)
    user_context = None
    if fields.get("user_context") is not None:
        try:
            user_context = UserContext.model_validate(fields["user_context"])
        except ValidationError:
            return None
    callback_url, approval_id = fields.get("callback_url"), fields.get("approval_id")
    if mode == "sync" and callback_url is None and approval_id is None:
        return arguments, user_context, SYNC
    options = CallOptions(mode=mode, callback_url=callback_url, approval_id=approval_id)
    return arguments, user_context, options
