"""The gateway's HTTP layer: one router per resource, thin handlers over the runtime.

Handlers take their dependencies from ``gateway.api.deps`` only; the domain
packages below never import this layer (import-linter contracts in
``pyproject.toml``).
"""

from __future__ import annotations

from fastapi import APIRouter

from gateway.api import (
    approvals,
    audit,
    history,
    invoke,
    keys,
    mcp,
    mcp_servers,
    mcp_virtual_servers,
    openapi,
    run,
    tasks,
    tools,
    tools_batch,
    traces,
    upstreams,
)

# Routes are matched in this order: the two hot paths first, so a tool call does not
# try every registry route before its own (no path of one router matches another's).
ROUTERS: tuple[APIRouter, ...] = (
    invoke.router,
    run.router,
    tools_batch.router,
    tools.router,
    tasks.router,
    traces.router,
    upstreams.router,
    audit.router,
    approvals.router,
    keys.router,
    mcp_servers.router,
    mcp.router,
    mcp_virtual_servers.router,
    openapi.router,
    history.router,
)
