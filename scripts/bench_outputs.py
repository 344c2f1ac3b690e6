"""Output checks on the invoke path: what they cost a small output under budget.

    make bench-outputs

Times ``OutputGuard.check`` (the budget measure, and the compiled output_schema when
the manifest has one) on the shipped inventory_query's output, next to the
``json.dumps`` the response needs anyway, and the preview of a 5 MB output. Medians of
repeated runs; compare numbers from one run, not across runs.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opentelemetry import trace

from gateway.catalog.spec import ManifestDefaults
from gateway.invoke.outputs import OutputGuard, preview
from gateway.registry.manifest import compile_manifest
from reach_common.auth.caller import Caller

ROOT = Path(__file__).resolve().parents[1]
SMALL = {
    "sku": "SKU2024001",
    "name": "Wireless Mouse",
    "available": 156,
    "locked": 12,
    "total": 168,
}
CALLER = Caller(user_id="u1")


def _median_us(run: Callable[[], Any], repeat: int = 20_000) -> float:
    samples = []
    for _ in range(7):
        started = time.perf_counter()
        for _ in range(repeat):
            run()
        samples.append((time.perf_counter() - started) / repeat * 1e6)
    return statistics.median(samples)


def main() -> None:
    manifest = json.loads((ROOT / "manifests" / "inventory_query.json").read_text("utf-8"))
    with_schema = compile_manifest(manifest, ManifestDefaults())
    bare = {k: v for k, v in manifest.items() if k != "output_schema"}
    without_schema = compile_manifest(bare, ManifestDefaults())
    guard = OutputGuard(None, trace.get_tracer("bench"))

    def check(spec: Any) -> Callable[[], Any]:
        def run() -> None:
            # Under budget the check never waits: drive the coroutine by hand, no loop.
            coroutine = guard.check(spec, SMALL, CALLER)
            try:
                coroutine.send(None)
            except StopIteration:
                return
            raise AssertionError("the check waited on a small output")

        return run

    dumps = _median_us(lambda: json.dumps(SMALL))
    print(f"json.dumps of the output (the response needs it anyway): {dumps:.2f} µs")
    for name, spec in (("no output_schema", without_schema), ("output_schema", with_schema)):
        cost = _median_us(check(spec))
        print(f"OutputGuard.check, small output, {name}: {cost:.2f} µs per call")
    big = {
        "products": [
            {"sku": f"SKU{n:07d}", "name": f"Product {n}", "price": n} for n in range(60_000)
        ]
    }
    size = len(json.dumps(big, separators=(",", ":")).encode())
    started = time.perf_counter()
    preview(big, 99_000)
    print(
        f"preview of a {size / 1e6:.1f} MB output into 99 kB: "
        f"{(time.perf_counter() - started) * 1000:.2f} ms"
    )


if __name__ == "__main__":
    main()
