"""What a gateway process costs to start with the shipped tools: seconds until ``/readyz``
answers and the process's CPU time by then, with the store of tool vectors
(``gateway.text_vector``) emptied first and kept.

Throwaway embedded Postgres and Redis; the gateway loads ``manifests/`` at start
(``TOOL_AUTO_DISCOVERY``). Each round starts two gateways one after the other: the
first on an emptied store (every text embedded, as every start did before the store),
the second on what the first stored. Before each start the registry is emptied too, as
a test's reset does, so the folder's tools are registered again each time.

    python scripts/bench_gateway_start.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import psutil
import psycopg

from reach_common.db import libpq_url
from reach_common.embedded import process_stack_env
from reach_common.processes import free_port, running_service

ROOT = Path(__file__).resolve().parents[1]

EMPTY_REGISTRY = "TRUNCATE gateway.tool, gateway.registry_state, gateway.tool_history"


def start_once(env: dict[str, str], log_dir: Path, *, keep_vectors: bool) -> tuple[float, float]:
    """(seconds to ready, gateway CPU seconds by then)."""
    with psycopg.connect(libpq_url(env["DATABASE_URL"]), autocommit=True) as conn:
        conn.execute(EMPTY_REGISTRY)
        if not keep_vectors:
            conn.execute("TRUNCATE gateway.text_vector")
    started = time.perf_counter()
    with running_service("gateway", free_port(), env, log_dir, cwd=ROOT) as service:
        ready = time.perf_counter() - started
        cpu = psutil.Process(service.pid).cpu_times()
    return ready, cpu.user + cpu.system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    runs: dict[str, list[tuple[float, float]]] = {"emptied": [], "kept": []}
    with process_stack_env("reach-bench-start-") as (tmp, base):
        env = {
            **base,
            "LLM_PROVIDER": "offline",
            "TOOL_AUTO_DISCOVERY": "true",
            "MANIFESTS_DIR": str(ROOT / "manifests"),
        }
        for n in range(args.rounds):
            for label in runs:
                ready, cpu = start_once(env, tmp, keep_vectors=label == "kept")
                runs[label].append((ready, cpu))
                print(f"round {n + 1}, store {label:7s}: ready in {ready:5.2f} s, CPU {cpu:5.2f} s")
    print()
    for label, samples in runs.items():
        ready = statistics.median(r for r, _ in samples)
        cpu = statistics.median(c for _, c in samples)
        print(f"store {label:7s}: median ready {ready:5.2f} s, median gateway CPU {cpu:5.2f} s")


if __name__ == "__main__":
    main()
