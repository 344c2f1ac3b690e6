"""The retriever's Prometheus metrics: what ingest wrote and how long searches take.

Defined in :class:`RetrieverMetrics` on each app's own registry
(``reach_common.metrics``); the ingest and search services call the
``record_*`` functions below, one line each, which do nothing outside an app
(``python -m retriever ingest`` records nothing). Labels are the ingest
outcome and the search mode: never a source name or a query.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram

from reach_common.metrics import LATENCY_BUCKETS, family


class Outcome(Protocol):
    @property
    def status(self) -> str: ...
    @property
    def chunks(self) -> int: ...


class RetrieverMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry
        self.documents = Counter(
            "reach_retriever_ingested_documents_total",
            "Documents ingested, by outcome: ingested (new), replaced, unchanged (skipped).",
            ["outcome"],
            registry=r,
        )
        self.chunks = Counter(
            "reach_retriever_ingested_chunks_total",
            "Chunks written by ingest (new and replaced documents).",
            registry=r,
        )
        self.search_duration = Histogram(
            "reach_retriever_search_duration_seconds",
            "Time of one search (rewrite, candidates, fusion), by mode.",
            ["mode"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )


def _metrics() -> RetrieverMetrics | None:
    return family(RetrieverMetrics)


def record_ingest(outcomes: Iterable[Outcome]) -> None:
    metrics = _metrics()
    if metrics is None:
        return
    for outcome in outcomes:
        metrics.documents.labels(outcome.status).inc()
        metrics.chunks.inc(outcome.chunks)


def record_search(mode: str, started: float) -> None:
    metrics = _metrics()
    if metrics is not None:
        metrics.search_duration.labels(mode).observe(time.perf_counter() - started)
