"""Send the gateway tool calls with about a megabyte of arguments, and time its event loop.

A gateway in process (throwaway embedded Postgres and Redis, the shipped manifests),
then ``POST /tools/{id}/invoke`` with arguments of each shape below, just under the
1 MiB body limit, to two tools; each call three times. Prints, per shape and tool, the
call's time and the longest the event loop went without turning meanwhile (a ticker on
the loop, see ``fuzz_requests.longest_stall``): the arguments' redaction and checks run
off the loop when they are large (docs/security.md, finding 22), so other calls are
served meanwhile. The body is encoded before it is timed (the client shares the loop).

Then calls whose cost was the square of their size in jsonschema (docs/security.md,
finding 24), to tools registered here: an array of 1,000 items checked against an enum
of 50,000 options (each item the last option, then each a wrong one), ``uniqueItems``
over items it cannot sort, and an ``anyOf`` of ten ``maxItems`` over a megabyte.

    python scripts/fuzz_arguments.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from asgi_lifespan import LifespanManager
from fuzz_requests import longest_stall

from gateway.app import create_app
from gateway.settings import Settings
from reach_common.embedded import temporary_backends

MANIFESTS = Path(__file__).resolve().parents[1] / "manifests"
HEADERS = {"content-type": "application/json"}
CALLER = {"user_id": "fuzz", "roles": ["admin"]}  # claimed: the gateway runs permissive
ADMIN = {"X-User-Id": "fuzz", "X-User-Roles": "admin"}
SHAPES: dict[str, Any] = {
    "120,000 numbers": list(range(120_000)),
    "an object of 60,000 keys": {f"k{i}": i for i in range(60_000)},
    "20,000 lists of 10": [[1] * 10 for _ in range(20_000)],
    "20,000 small objects": [{"sku": "SKU2024001", "qty": i} for i in range(20_000)],
}
TOOLS = (("inventory_query", "sku"), ("sales_query", "sku"))
ROUNDS = 3
OPTIONS = [f"plan-{i:05}" for i in range(50_000)]
NESTED = [[1] * 10 for _ in range(20_000)]
SCHEMA_CASES: list[tuple[str, dict[str, Any], Any]] = [
    ("enum of 50,000: 1,000 valid", {"items": {"enum": OPTIONS}}, [OPTIONS[-1]] * 1_000),
    ("enum of 50,000: 1,000 wrong", {"items": {"enum": OPTIONS}}, ["plan-x"] * 1_000),
    (
        "uniqueItems: 1,900 mixed",
        {"uniqueItems": True},
        [i if i % 2 else str(i) for i in range(1_900)],
    ),
    ("uniqueItems: 2,000 objects", {"uniqueItems": True}, [{"n": i} for i in range(2_000)]),
    ("anyOf of ten maxItems", {"anyOf": [{"maxItems": k} for k in range(10)]}, NESTED),
]


async def accept(**arguments: Any) -> dict[str, Any]:
    """The tool the schema cases call: it only answers (their cost is the check)."""
    return {"accepted": len(arguments)}


async def schema_cases(client: httpx.AsyncClient) -> None:
    for index, (case, schema, value) in enumerate(SCHEMA_CASES):
        manifest = {
            "tool_id": f"schema_case_{index}",
            "name": f"schema case {index}",
            "description": f"Accepts values checked by a schema: {case}.",
            "input_schema": {"type": "object", "properties": {"values": schema}},
            "endpoint": {"type": "python", "function": "fuzz_arguments:accept"},
            "permission": "public",
        }
        registered = await client.post("/tools/register", json=manifest, headers=ADMIN)
        registered.raise_for_status()
        print(f"{case:<30}", await timed_calls(client, f"schema_case_{index}", {"values": value}))


async def timed_calls(client: httpx.AsyncClient, tool_id: str, arguments: dict[str, Any]) -> str:
    """``ROUNDS`` calls of ``tool_id`` with ``arguments``: the body's size, the answer's
    status, and the medians of each call's time and of the loop's longest stall."""
    body = json.dumps({"arguments": arguments, "user_context": CALLER}).encode()
    took, stalls, status = [], [], 0
    for _ in range(ROUNDS):
        started = time.perf_counter()
        response, stall = await longest_stall(
            client.post(f"/tools/{tool_id}/invoke", content=body, headers=HEADERS)
        )
        took.append((time.perf_counter() - started) * 1000)
        stalls.append(stall)
        status = response.status_code
    return (
        f"{len(body) / 1e6:4.2f} MB  answer {status}  call {statistics.median(took):5.0f} ms  "
        f"loop stalled {statistics.median(stalls):5.0f} ms (medians of {ROUNDS})"
    )


async def main() -> None:
    with temporary_backends() as (database_url, redis_url):
        settings = Settings(
            database_url=database_url,
            redis_url=redis_url,
            log_level="WARNING",
            route_rate_limit=None,
            caller_rate_limit=None,
            auth_mode="permissive",
            tool_auto_discovery=True,
            manifests_dir=str(MANIFESTS),
            python_tool_packages=["gateway.pytools", "fuzz_arguments"],
        )
        async with LifespanManager(create_app(settings), startup_timeout=120) as manager:
            transport = httpx.ASGITransport(app=manager.app)
            async with httpx.AsyncClient(
                transport=transport, base_url="http://localhost", timeout=60
            ) as client:
                await schema_cases(client)
                for shape, value in SHAPES.items():
                    for tool_id, parameter in TOOLS:
                        timed = await timed_calls(client, tool_id, {parameter: value})
                        print(f"{shape:<26} {tool_id:<16} {timed}")


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    asyncio.run(main())
