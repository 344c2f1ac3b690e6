"""``GET /upstreams``: can the gateway reach the services its tools point at?"""

from __future__ import annotations

import asyncio
import time

import httpx
from fastapi import APIRouter
from pydantic import BaseModel

from gateway.api.deps import CallerDep, HttpDep, RuntimeDep

router = APIRouter(tags=["upstreams"])


class UpstreamStatus(BaseModel):
    name: str
    url: str
    status: str
    http_status: int | None = None
    latency_ms: float | None = None
    error: str | None = None


class UpstreamsRead(BaseModel):
    upstreams: list[UpstreamStatus]


async def _probe(http: httpx.AsyncClient, name: str, base_url: str) -> UpstreamStatus:
    url = base_url.rstrip("/") + "/healthz"
    started = time.perf_counter()
    try:
        response = await http.get(url, timeout=2.0)
    except httpx.HTTPError as exc:
        return UpstreamStatus(name=name, url=url, status="unreachable", error=type(exc).__name__)
    latency = round((time.perf_counter() - started) * 1000, 2)
    status = "ok" if response.status_code == 200 else "unhealthy"
    return UpstreamStatus(
        name=name, url=url, status=status, http_status=response.status_code, latency_ms=latency
    )


@router.get("/upstreams", response_model=UpstreamsRead)
async def list_upstreams(runtime: RuntimeDep, caller: CallerDep, http: HttpDep) -> UpstreamsRead:
    """Probe each upstream service's `/healthz` and report what the gateway sees.

    For operators only (`OPS_ROLES` or a registry admin role): it names internal URLs.

    Calls run in the request's trace, so `GET /traces/{trace_id}` shows the
    gateway's outbound hops next to the upstreams' own spans.
    """
    runtime.auth.require_ops(caller, "Reading the upstreams")
    settings = runtime.settings
    targets = {
        "shop": settings.shop_url,
        "retriever": settings.retriever_url,
        "agent": settings.agent_url,
    }
    results = await asyncio.gather(*(_probe(http, name, url) for name, url in targets.items()))
    return UpstreamsRead(upstreams=list(results))
