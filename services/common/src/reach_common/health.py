"""``/healthz`` (the process is up) and ``/readyz`` (it can serve: Postgres and Redis answer)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import text

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """Liveness: answers as long as the process serves HTTP. Checks no dependency."""
    return {"status": "ok"}


async def _check(name: str, probe: Any) -> tuple[str, str]:
    try:
        await asyncio.wait_for(probe, timeout=2.0)
    except Exception as exc:  # noqa: BLE001 - readiness reports any failure as a status
        return name, f"error: {type(exc).__name__}"
    return name, "ok"


@router.get("/readyz")
async def readyz(request: Request) -> JSONResponse:
    """Readiness: 200 when Postgres (`SELECT 1`) and Redis (`PING`) both answer, else 503."""

    async def pg() -> None:
        async with request.state.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))

    checks = dict(
        await asyncio.gather(_check("postgres", pg()), _check("redis", request.state.redis.ping()))
    )
    ready = all(v == "ok" for v in checks.values())
    return JSONResponse(
        {"status": "ok" if ready else "unavailable", "checks": checks},
        status_code=200 if ready else 503,
    )
