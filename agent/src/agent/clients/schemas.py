"""The shapes the agent reads from and sends to the gateway.

Only the fields the agent uses are declared; anything else the gateway adds is
ignored, so the gateway can grow its replies without breaking the agent.
Contract tests (``tests/agent/test_gateway_client.py``) pin these shapes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent.sessions.tokens import estimate_tokens
from reach_common.errors import ReachError, RemoteError


@dataclass(frozen=True)
class Caller:
    """What the agent forwards to the gateway on every call, for the turn's caller.

    ``authorization`` and ``api_key`` are the client's own ``Authorization`` and
    ``X-API-Key`` headers, passed through untouched: the gateway verifies the
    same credential the agent verified, so a tool runs with the caller's rights,
    never with a service-wide identity. ``user_context`` is the identity the
    client claimed; it is forwarded in permissive mode only (empty in strict
    mode, where nobody may claim an identity).
    """

    user_context: dict[str, Any] = field(default_factory=dict)
    authorization: str | None = None
    api_key: str | None = None


class GatewayTool(BaseModel):
    """One entry of ``GET /tools/list``.

    ``idempotent`` and ``requires_approval`` decide whether the agent treats the
    tool as a *write* (see :attr:`writes`). A listing that leaves them out gets
    the safe reading: a tool not declared idempotent is a write.
    """

    model_config = ConfigDict(extra="ignore")

    tool_id: str
    name: str = ""
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    idempotent: bool = False
    requires_approval: bool = False

    @property
    def writes(self) -> bool:
        """True for a tool that may change something: not idempotent, or needs approval."""
        return not self.idempotent or self.requires_approval

    @cached_property
    def definition_tokens(self) -> int:
        """:func:`estimate_tokens` of the definition a model request carries for this tool
        (name, description, input schema). Kept with the tool: a listing revalidated with a
        304 is the same objects, so a catalogue of 10,000 is estimated once per change."""
        schema = self.input_schema
        definition = {"name": self.tool_id, "description": self.description, "input_schema": schema}
        return estimate_tokens(json.dumps(definition, ensure_ascii=False))


class GatewayError(BaseModel):
    """Why a call failed: the ``reason`` and ``message`` of the gateway's error body, or of
    the client's own error when the gateway could not answer."""

    model_config = ConfigDict(extra="ignore")

    reason: str
    message: str = ""

    @classmethod
    def of(cls, exc: ReachError) -> GatewayError:
        return cls(reason=exc.reason, message=exc.message)


class ToolOutcome(BaseModel):
    """What one ``POST /tools/{id}/invoke`` (or ``POST /run``) came back with.

    ``status_code`` is the gateway's HTTP status; ``success`` is false for every
    failure, including the gateway being unreachable (``reason:
    gateway_unavailable``), so the caller never has to catch anything.
    """

    model_config = ConfigDict(extra="ignore")

    success: bool
    status_code: int
    tool_id: str | None = None
    arguments: dict[str, Any] | None = None
    output: Any = None
    error: GatewayError | None = None
    task_id: str | None = None
    # A call that waits for a person (202 ``approval_pending``): not run, not failed.
    approval_id: str | None = None
    expires_at: str | None = None
    route: dict[str, Any] | None = None
    latency_ms: float | None = None
    trace_id: str | None = None

    @property
    def awaiting_approval(self) -> bool:
        return self.status_code == 202 and self.approval_id is not None

    def failure(self) -> RemoteError:
        """This failed call as a :class:`ReachError` with the gateway's status and reason,
        to raise or render (``error_body``) like any other error."""
        error = self.error or GatewayError(reason="tool_error", message=f"HTTP {self.status_code}")
        return RemoteError(error.message, reason=error.reason, status_code=self.status_code)
