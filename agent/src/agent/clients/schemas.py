"""The shapes the agent reads from and sends to the gateway.

Only the fields the agent uses are declared; anything else the gateway adds is
ignored, so the gateway can grow its replies without breaking the agent.
Contract tests (``tests/agent/test_gateway_client.py``) pin these shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


@dataclass(frozen=True)
class Caller:
    """Who the turn is for, forwarded on every gateway call.

    ``user_context`` is what the client sent (trusted by the gateway only in
    permissive mode); ``authorization`` is the client's own ``Authorization``
    header, passed through untouched so strict mode sees the real credential.
    """

    user_context: dict[str, Any] = field(default_factory=dict)
    authorization: str | None = None


class GatewayTool(BaseModel):
    """One entry of ``GET /tools/list``."""

    model_config = ConfigDict(extra="ignore")

    tool_id: str
    name: str = ""
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class GatewayError(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reason: str
    message: str = ""


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
    route: dict[str, Any] | None = None
    latency_ms: float | None = None
    trace_id: str | None = None
