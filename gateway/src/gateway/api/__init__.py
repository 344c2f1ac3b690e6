"""The gateway's HTTP layer: one router per resource, thin handlers over the runtime.

Handlers take their dependencies from ``gateway.api.deps`` only; the domain
packages below never import this layer (import-linter contracts in
``pyproject.toml``).
"""

from __future__ import annotations

from fastapi import APIRouter

from gateway.api import approvals, audit, invoke, keys, run, tasks, tools, traces, upstreams

ROUTERS: tuple[APIRouter, ...] = (
    tools.router,
    invoke.router,
    run.router,
    tasks.router,
    traces.router,
    upstreams.router,
    audit.router,
    approvals.router,
    keys.router,
)
