"""Retriever benchmark on a BEIR folder: quality, ingest speed, query latency, and scale.

    make bench-retriever DATASET=path/to/scifact
    python scripts/bench_retriever.py path/to/scifact [--scale 10] [--split test]

A throwaway PostgreSQL is started in a temporary folder (or, with
DATABASE_URL, a throwaway database is created on that server) and migrated.
The corpus (``# title`` + abstract per document) goes through the service's own
bulk ingest; then every query of the qrels split is searched in each mode
through the service's search code, with the service's default settings.

Quality is per document: a document ranks where its best chunk ranks.
Latency is one search call: query embedding, rewriting, both branches, fusion
and the read of the hits, one query at a time.

The scaling run adds perturbed copies of the stored chunks (words dropped and
swapped, Gaussian noise on the embedding) through the storage layer until the
corpus is ``--scale`` times its size, and times the same queries again.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import numpy as np
import psycopg
import typer
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from reach_common import migrate
from reach_common.db import create_engine, create_sessionmaker, libpq_url
from reach_common.embedded import EmbeddedPostgres
from reach_common.embeddings import Embedder
from retriever.app import build_ingestor, configure_connections
from retriever.ingest.bulk import ingest_many
from retriever.ingest.service import Document
from retriever.search.service import Searcher, SearchQuery
from retriever.settings import Settings
from retriever.storage import repository
from retriever.storage.repository import NewChunk

RANK_DEPTH = 100  # documents ranked per query (Recall@100)
CHUNK_DEPTH = 200  # chunks fetched to fill that many documents


@dataclass(frozen=True)
class Dataset:
    documents: list[Document]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load_dataset(folder: Path, split: str) -> Dataset:
    documents = []
    with (folder / "corpus.jsonl").open() as fh:
        for line in fh:
            row = json.loads(line)
            title, body = row.get("title", "").strip(), row["text"].strip()
            documents.append(Document(row["_id"], f"# {title}\n\n{body}" if title else body))
    queries = {}
    with (folder / "queries.jsonl").open() as fh:
        for line in fh:
            row = json.loads(line)
            queries[row["_id"]] = row["text"]
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / f"{split}.tsv").open() as fh:
        next(fh)
        for line in fh:
            query_id, doc_id, score = line.strip().split("\t")
            if int(score) > 0:
                qrels.setdefault(query_id, {})[doc_id] = int(score)
    return Dataset(documents, {q: queries[q] for q in qrels}, qrels)


@contextmanager
def throwaway_database() -> Iterator[str]:
    """A fresh database: on DATABASE_URL's server if set, else an embedded server."""
    url = os.environ.get("DATABASE_URL")
    if url:
        name = f"bench_retriever_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(libpq_url(url), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        try:
            yield make_url(url).set(database=name).render_as_string(hide_password=False)
        finally:
            with psycopg.connect(libpq_url(url), autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        return
    with tempfile.TemporaryDirectory(prefix="bench-retriever-") as folder:
        server = EmbeddedPostgres(Path(folder) / "postgres").start()
        try:
            yield server.url
        finally:
            server.stop()


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def mrr_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    return next((1 / (i + 1) for i, d in enumerate(ranked[:k]) if d in relevant), 0.0)


def percentile(samples: list[float], q: float) -> float:
    return float(np.percentile(np.array(samples), q))


@dataclass
class ModeRun:
    label: str
    ndcg10: float
    recall100: float
    mrr10: float
    p50_ms: float
    p95_ms: float


async def run_queries(
    searcher: Searcher,
    dataset: Dataset,
    mode: str,
    rewrite: str,
    label: str,
    *,
    quality: bool = True,
) -> ModeRun:
    """Quality from a deep search per query; latency from a top-10 search, as a client asks."""
    ndcg, recall, mrr, latencies = [], [], [], []
    queries = list(dataset.queries.items())
    for _, query in queries[:5]:  # warm-up: caches, connections
        await searcher.search(SearchQuery(query, 10, mode, rewrite))
    for query_id, query in queries:
        if quality:
            result = await searcher.search(SearchQuery(query, 10, mode, rewrite), limit=CHUNK_DEPTH)
            ranked = list(dict.fromkeys(hit.source for hit in result.hits))[:RANK_DEPTH]
            relevant = dataset.qrels[query_id]
            ndcg.append(ndcg_at(ranked, relevant, 10))
            recall.append(recall_at(ranked, relevant, RANK_DEPTH))
            mrr.append(mrr_at(ranked, relevant, 10))
    for _, query in queries:
        started = time.perf_counter()
        await searcher.search(SearchQuery(query, 10, mode, rewrite))
        latencies.append((time.perf_counter() - started) * 1000)
    return ModeRun(
        label,
        statistics.mean(ndcg) if ndcg else 0.0,
        statistics.mean(recall) if recall else 0.0,
        statistics.mean(mrr) if mrr else 0.0,
        percentile(latencies, 50),
        percentile(latencies, 95),
    )


def perturb(text_: str, rng: random.Random) -> str:
    words = [w for w in text_.split() if rng.random() > 0.1]
    for _ in range(len(words) // 20):
        i, j = rng.randrange(len(words)), rng.randrange(len(words))
        words[i], words[j] = words[j], words[i]
    return " ".join(words) or text_


async def grow_corpus(
    sessionmaker: async_sessionmaker[AsyncSession], copies: int, seed: int = 7
) -> int:
    """Write ``copies`` perturbed copies of every stored chunk through the storage layer."""
    rng = random.Random(seed)  # noqa: S311 - reproducible perturbation, not security
    noise = np.random.default_rng(seed)
    async with sessionmaker() as session:
        rows = (
            await session.execute(
                text(
                    "SELECT s.name, c.ordinal, c.heading, c.text, c.token_count, c.embedding"
                    " FROM retriever.chunk AS c JOIN retriever.source AS s ON s.id = c.source_id"
                    " ORDER BY c.id"
                )
            )
        ).all()
    by_source: dict[str, list[tuple[int, str, str, int, np.ndarray]]] = {}
    for name, ordinal, heading, body, tokens, embedding in rows:
        by_source.setdefault(name, []).append(
            (ordinal, heading, body, tokens, embedding.to_numpy())
        )
    written = 0
    names = list(by_source)
    for copy in range(1, copies + 1):
        for start in range(0, len(names), 200):
            batch = names[start : start + 200]
            async with sessionmaker() as session, session.begin():
                ids = await repository.upsert_sources(
                    session,
                    [
                        {
                            "name": f"copy{copy}/{name}",
                            "content_hash": uuid.uuid4().hex,
                            "metadata": "{}",
                            "chunk_count": len(by_source[name]),
                            "token_count": sum(c[3] for c in by_source[name]),
                        }
                        for name in batch
                    ],
                )
                chunks = []
                for name in batch:
                    for ordinal, heading, body, tokens, embedding in by_source[name]:
                        moved = embedding + noise.normal(0, 0.02, embedding.shape)
                        chunks.append(
                            NewChunk(
                                ids[f"copy{copy}/{name}"],
                                ordinal,
                                perturb(heading, rng) if heading else "",
                                perturb(body, rng),
                                tokens,
                                (moved / np.linalg.norm(moved)).astype(np.float32),
                            )
                        )
                delta = await repository.insert_chunks(session, chunks)
                await repository.apply_delta(session, delta, ingested=True)
                written += len(chunks)
    return written


async def vacuum(database_url: str) -> None:
    def run() -> None:
        with psycopg.connect(libpq_url(database_url), autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE retriever.chunk, retriever.posting, retriever.term")

    await asyncio.to_thread(run)


def table(runs: list[ModeRun], *, quality: bool) -> str:
    head = (
        f"{'mode':<20}"
        + (f"{'nDCG@10':>9}{'R@100':>8}{'MRR@10':>8}" if quality else "")
        + f"{'p50 ms':>9}{'p95 ms':>9}"
    )
    lines = [head]
    for run in runs:
        cells = f"{run.label:<20}"
        if quality:
            cells += f"{run.ndcg10:>9.4f}{run.recall100:>8.4f}{run.mrr10:>8.4f}"
        lines.append(cells + f"{run.p50_ms:>9.1f}{run.p95_ms:>9.1f}")
    return "\n".join(lines)


async def bench(dataset_dir: Path, split: str, scale: int, expansion: bool) -> None:
    dataset = load_dataset(dataset_dir, split)
    settings = Settings(llm_provider="offline", log_level="WARNING")
    print(
        f"dataset {dataset_dir.name}: {len(dataset.documents)} documents, "
        f"{len(dataset.queries)} {split} queries"
    )
    print(
        f"settings: chunk_tokens={settings.chunk_tokens} overlap={settings.chunk_overlap_tokens} "
        f"bm25 k1={settings.bm25_k1} b={settings.bm25_b} rrf_k={settings.rrf_k} "
        f"candidates bm25={settings.hybrid_bm25_candidates} "
        f"vector={settings.hybrid_vector_candidates} ef_search={settings.hnsw_ef_search}"
    )
    with throwaway_database() as database_url:
        await asyncio.to_thread(migrate.upgrade, database_url)
        engine = create_engine(database_url, pool_size=4)
        configure_connections(engine, settings)
        sessionmaker = create_sessionmaker(engine)
        # As the CLI does: single-threaded onnxruntime runs, one per core.
        ingestor = build_ingestor(settings, Embedder(threads=1))
        embedder = Embedder(threads=settings.embedder_threads)  # queries: as the service does
        try:
            started = time.perf_counter()
            chunks = 0
            async for outcome in ingest_many(ingestor, sessionmaker, dataset.documents):
                chunks += outcome.chunks
            elapsed = time.perf_counter() - started
            print(
                f"ingest: {len(dataset.documents)} documents, {chunks} chunks in {elapsed:.1f} s"
                f" = {len(dataset.documents) / elapsed:.1f} documents/s"
            )
            await vacuum(database_url)
            searcher = Searcher(settings, embedder, None, engine)
            variants = [(mode, "none", mode) for mode in ("bm25", "vector", "hybrid")]
            if expansion:
                variants += [
                    (m, "expansion", f"{m}+expansion") for m in ("bm25", "vector", "hybrid")
                ]
            runs = [await run_queries(searcher, dataset, *v) for v in variants]
            print(table(runs, quality=True))

            if scale > 1:
                started = time.perf_counter()
                added = await grow_corpus(sessionmaker, scale - 1)
                await vacuum(database_url)
                print(
                    f"scaling: +{added} perturbed chunks in {time.perf_counter() - started:.0f} s"
                    f" -> {chunks + added} chunks ({scale}x)"
                )
                scaled = [
                    await run_queries(searcher, dataset, m, "none", f"{m} @{scale}x", quality=False)
                    for m in ("bm25", "vector", "hybrid")
                ]
                print(table(scaled, quality=False))
        finally:
            await engine.dispose()


def main(
    dataset: Annotated[
        Path, typer.Argument(help="A BEIR folder (corpus.jsonl, queries.jsonl, qrels/).")
    ],
    split: Annotated[str, typer.Option(help="qrels file to evaluate.")] = "test",
    scale: Annotated[int, typer.Option(help="Grow the corpus this many times for latency.")] = 10,
    expansion: Annotated[bool, typer.Option(help="Also run the offline expansion rewrite.")] = True,
) -> None:
    asyncio.run(bench(dataset, split, scale, expansion))


if __name__ == "__main__":
    typer.run(main)
