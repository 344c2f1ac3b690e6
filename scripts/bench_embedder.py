"""Embedder benchmark: latency of one short query, and batch throughput.

    make bench-embedder                      # built-in sentences
    python scripts/bench_embedder.py --corpus path/to/corpus.jsonl   # BEIR texts
    python scripts/bench_embedder.py --threads 1 --int8    # int8 matrix products
    python scripts/bench_embedder.py --int8 --solo-threads 2   # a call alone on 2 threads

The last section compares, in one run, the services' setting (1 thread a call, and
EMBEDDER_SOLO_THREADS for a call that finds no other running) with 1 thread for every
call: one caller's p50 (calls alternating between the two embedders), and the rate of
two callers at once.

Prints medians over repeated runs; the machine is noisy, so compare numbers
from one run, not across runs.
"""

from __future__ import annotations

import json
import statistics
import threading
import time
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from reach_common.embeddings import Embedder

QUERIES = [
    "SKU2024001 还有多少库存",
    "where is my order SO20240715001",
    "how many units are left in stock",
    "monthly sales report",
    "search the docs for the refund policy",
]

PARAGRAPH = (
    "Inventory is counted per SKU across warehouses. Available stock excludes units "
    "locked by open orders, and the total is the sum of both. "
)


def percentile(samples: list[float], q: float) -> float:
    return float(np.percentile(np.array(samples), q))


def main(
    runs: Annotated[int, typer.Option(help="Single-query calls to time.")] = 300,
    corpus: Annotated[Path | None, typer.Option(help="A BEIR corpus.jsonl for throughput.")] = None,
    docs: Annotated[int, typer.Option(help="Documents for the throughput run.")] = 256,
    threads: Annotated[int, typer.Option(help="onnxruntime threads (0: automatic).")] = 0,
    int8: Annotated[
        bool, typer.Option("--int8/--float", help="Matrix products in int8 (int8_graph).")
    ] = False,
    solo_threads: Annotated[
        int, typer.Option(help="Threads for a call alone, against 1 (0: skip that section).")
    ] = 2,
) -> None:
    started = time.perf_counter()
    embedder = Embedder(threads=threads or None, int8=int8)
    load_ms = (time.perf_counter() - started) * 1000
    for query in QUERIES:  # warm-up: first calls allocate
        embedder.embed_one(query)

    latencies = []
    for i in range(runs):
        started = time.perf_counter()
        embedder.embed_one(QUERIES[i % len(QUERIES)])
        latencies.append((time.perf_counter() - started) * 1000)

    if corpus is not None:
        with corpus.open() as fh:
            texts = [
                f"{row.get('title', '')}\n{row['text']}"
                for row, _ in zip(map(json.loads, fh), range(docs), strict=False)
            ]
    else:
        texts = [PARAGRAPH * (1 + i % 4) + f"Document {i}." for i in range(docs)]
    started = time.perf_counter()
    embedder.embed(texts, batch_size=32)
    elapsed = time.perf_counter() - started

    print(
        f"model: {embedder.model_name}, {embedder.dimensions} dims, "
        f"{embedder.compute} products (loaded in {load_ms:.0f} ms)"
    )
    print(
        f"one short query: p50 {statistics.median(latencies):.2f} ms, "
        f"p95 {percentile(latencies, 95):.2f} ms over {runs} calls"
    )
    source = corpus.name if corpus else "built-in paragraphs"
    print(
        f"batch throughput: {len(texts) / elapsed:.1f} texts/s "
        f"({len(texts)} texts from {source}, batch 32)"
    )
    if solo_threads > 1:
        compare_solo(runs, int8, solo_threads)


def compare_solo(runs: int, int8: bool, solo_threads: int) -> None:
    """1 thread for every call against ``solo_threads`` for a call alone, in one run."""
    embedders = {
        "1 thread": Embedder(threads=1, int8=int8, solo_threads=1),
        f"{solo_threads} threads alone": Embedder(threads=1, int8=int8, solo_threads=solo_threads),
    }
    latencies: dict[str, list[float]] = {name: [] for name in embedders}
    for query in QUERIES:
        for embedder in embedders.values():
            embedder.embed_one(query)
    for i in range(runs):
        for name, embedder in embedders.items():
            started = time.perf_counter()
            embedder.embed_one(QUERIES[i % len(QUERIES)])
            latencies[name].append((time.perf_counter() - started) * 1000)
    print(f"a call alone against 1 thread ({runs} calls each, alternating):")
    for name, values in latencies.items():
        print(
            f"  {name:18s} one caller p50 {statistics.median(values):.2f} ms, "
            f"two callers at once {_two_callers(embedders[name], runs):.0f} calls/s"
        )


def _two_callers(embedder: Embedder, runs: int) -> float:
    """Calls a second over two threads each making ``runs`` calls."""

    def calls() -> None:
        for i in range(runs):
            embedder.embed_one(QUERIES[i % len(QUERIES)])

    workers = [threading.Thread(target=calls) for _ in range(2)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return 2 * runs / (time.perf_counter() - started)


if __name__ == "__main__":
    typer.run(main)
