"""Reach's tools and call outcomes in MCP's shapes.

A manifest becomes an MCP ``Tool``: its ``input_schema`` as ``inputSchema``, its
description, and annotations derived from what the manifest says the tool does
(``readOnlyHint`` for idempotent reads, ``destructiveHint`` for non-idempotent
writes and deletes). An invoke outcome becomes a ``CallToolResult``: a tool's
own failure is ``isError: true`` with Reach's ``reason`` and ``message`` as JSON
text, so a model can act on it; a call waiting for approval is not an error,
its text says where to follow it.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types

from gateway.catalog.spec import HttpTarget, PythonTarget, ToolSpec
from reach_common.errors import current_trace_id

TRACE_META_KEY = "reach/trace_id"
_WRITE_METHODS = frozenset({"PUT", "PATCH", "DELETE"})


def tool_annotations(spec: ToolSpec) -> types.ToolAnnotations:
    """Hints from the manifest: an idempotent call that is not a PUT/PATCH/DELETE (nor a
    queue job) reads; anything else writes, destructively unless it is idempotent and no
    DELETE."""
    endpoint = spec.endpoint
    method = endpoint.method.upper() if isinstance(endpoint, HttpTarget) else None
    reads = (
        spec.idempotent
        and isinstance(endpoint, HttpTarget | PythonTarget)
        and method not in _WRITE_METHODS
    )
    if reads:
        return types.ToolAnnotations(title=spec.name, read_only_hint=True)
    return types.ToolAnnotations(
        title=spec.name,
        read_only_hint=False,
        destructive_hint=not spec.idempotent or method == "DELETE",
        idempotent_hint=spec.idempotent,
    )


def mcp_tool(spec: ToolSpec) -> types.Tool:
    description = spec.description
    if spec.requires_approval:
        description += (
            " (Needs a person's approval: a call answers with an approval id and runs once "
            "approved.)"
        )
    return types.Tool(
        name=spec.tool_id,
        title=spec.name,
        description=description,
        input_schema=spec.input_schema,
        annotations=tool_annotations(spec),
    )


def text_result(
    payload: Any, *, is_error: bool = False, trace_id: str | None = None
) -> types.CallToolResult:
    """``payload`` as JSON text (and as structured content when it is an object), with the
    trace to read it by (``GET /traces/{id}``) in ``_meta``."""
    trace_id = trace_id or current_trace_id()
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=payload if isinstance(payload, dict) and not is_error else None,
        is_error=is_error,
        _meta={TRACE_META_KEY: trace_id} if trace_id else None,
    )


def call_result(status_code: int, body: dict[str, Any]) -> types.CallToolResult:
    """The invoke envelope as an MCP result.

    - success: the tool's output (a queued call's output names its task and status URL);
    - 202 ``approval_pending``: not an error; the text says which approval to follow;
    - any other failure: ``isError`` with ``reason``, ``message`` and the error's details.
    """
    trace_id = body.get("trace_id")
    if body.get("success"):
        return text_result(body.get("output"), trace_id=trace_id)
    if status_code == 202:
        pending = {
            key: body[key]
            for key in ("reason", "message", "approval_id", "approval_state", "status_url")
            if body.get(key) is not None
        }
        if body.get("expires_at"):
            pending["expires_at"] = body["expires_at"]
        return text_result(pending, trace_id=trace_id)
    error = dict(body.get("error") or {})
    error.setdefault("reason", body.get("reason", "tool_error"))
    error.setdefault("message", body.get("message", ""))
    return text_result(error, is_error=True, trace_id=trace_id)
