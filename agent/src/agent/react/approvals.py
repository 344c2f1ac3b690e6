"""Tool calls that wait for a person: the turn stops, and a later turn picks the result up.

When the gateway answers a call with 202 ``approval_pending``, the call has not
run. Its tool message is saved with a placeholder (``status:
awaiting_approval``, the approval id), so the history keeps every call paired
with a result and stays valid for both vendors, and the turn ends at once with
``stop_reason: awaiting_approval`` (and, streaming, an ``approval_required``
event). The model is not asked to go on: it would only guess at an outcome.

Before each later turn of the session, :func:`resolve_pending` asks the
gateway (``GET /approvals/{id}``, as the same caller) about each placeholder
still in the window. A decided request replaces its placeholder with what
really happened — the tool's output, its error, or the denial or expiry — so
the model reads the true result in its place (the placeholder said nothing
but "not run yet"). A request still pending stays as it is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from agent.clients.gateway import GatewayClient
from agent.clients.schemas import Caller, ToolOutcome
from agent.sessions import repository
from agent.sessions.models import ChatMessage
from agent.sessions.service import parse_result
from reach_common.errors import RemoteError, error_body

AWAITING = "awaiting_approval"
FINISHED = frozenset({"succeeded", "failed", "denied", "expired", "not_found"})


def placeholder(outcome: ToolOutcome) -> dict[str, Any]:
    """The tool result the model and the session see while a call waits for a person."""
    return {
        "status": AWAITING,
        "approval_id": outcome.approval_id,
        "expires_at": outcome.expires_at,
        "note": (
            "This call has NOT run: it needs a person's approval. It runs once approved; "
            "its real result will replace this note."
        ),
    }


def approval_of(result: Any) -> str | None:
    """The approval id of a placeholder result, else None."""
    if isinstance(result, dict) and result.get("status") == AWAITING:
        approval_id = result.get("approval_id")
        return str(approval_id) if approval_id else None
    return None


def waiting_reply(tools: Sequence[tuple[str, str]]) -> str:
    """The answer of a turn that stops for approval: ``(tool_id, approval_id)`` each."""
    listed = "; ".join(f"{tool} (approval {approval_id})" for tool, approval_id in tools)
    return (
        f"This needs a person's approval before it runs: {listed}. Nothing has been done "
        "yet. Once it is approved or denied, send another message and I will continue."
    )


@dataclass(frozen=True)
class Resolved:
    tool_id: str
    approval_id: str
    state: str
    result: Any
    is_error: bool


def outcome_of(approval: dict[str, Any]) -> tuple[Any, bool]:
    """What a finished request amounts to as a tool result: ``(result, is_error)``."""
    state = str(approval.get("state"))
    if state == "succeeded":
        result = approval.get("result") or {}
        return result.get("output"), False
    if state == "failed":
        result = approval.get("result") or {}
        return {"error": result.get("error") or {"reason": result.get("reason")}}, True
    comment = approval.get("comment")
    messages = {
        "denied": "A person denied this call" + (f": {comment}" if comment else "."),
        "expired": "Nobody approved this call before it expired; it did not run.",
        "not_found": "The approval request is gone; the call did not run.",
    }
    reason, status = {"denied": ("approval_denied", 403), "expired": ("approval_expired", 409)}.get(
        state, ("approval_not_found", 404)
    )
    refused = RemoteError(messages.get(state, state), reason=reason, status_code=status)
    return {"error": error_body(refused)}, True


async def resolve_pending(
    sessionmaker: async_sessionmaker[AsyncSession],
    gateway: GatewayClient,
    caller: Caller,
    rows: Sequence[ChatMessage],
) -> list[Resolved]:
    """Replace the placeholders in ``rows`` whose requests were decided (see the module)."""
    resolved: list[Resolved] = []
    for row in rows:
        approval_id = approval_of(parse_result(row.content)) if row.role == "tool" else None
        if approval_id is None:
            continue
        approval = await gateway.approval(approval_id, caller)
        if approval is None or approval.get("state") not in FINISHED:
            continue
        if approval.get("tool_id", row.tool_name) != row.tool_name:
            # Not this call's request: a tool's own output that merely looks like a
            # placeholder must not pull another request's result into the history.
            continue
        result, is_error = outcome_of(approval)
        content = json.dumps(result, ensure_ascii=False, default=str)
        async with sessionmaker.begin() as db:
            await repository.resolve_tool_result(db, row.id, content, is_error)
        row.content, row.is_error = content, is_error
        resolved.append(
            Resolved(row.tool_name or "", approval_id, str(approval["state"]), result, is_error)
        )
    return resolved
