"""Embedder benchmark: latency of one short query, and batch throughput.

    make bench-embedder                      # built-in sentences
    python scripts/bench_embedder.py --corpus path/to/corpus.jsonl   # BEIR texts
    python scripts/bench_embedder.py --threads 1 --int8    # int8 matrix products

Prints medians over repeated runs; the machine is noisy, so compare numbers
from one run, not across runs.
"""

from __future__ import annotations

import json
import statistics
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


if __name__ == "__main__":
    typer.run(main)
