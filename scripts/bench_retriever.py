"""Retriever benchmark on a BEIR folder: quality, ingest speed, query latency, and scale.

    make bench-retriever DATASET=path/to/scifact
    python scripts/bench_retriever.py path/to/scifact [--scale-chunks 500000] [--keep DIR]

A throwaway PostgreSQL is started in a temporary folder (or, with DATABASE_URL,
throwaway databases are created on that server) and migrated. The corpus
(``# title`` + abstract per document) goes through the service's own bulk
ingest; then every query of the qrels split is searched in each mode through
the service's search code, with the service's settings (``BM25_TERM_POSTINGS=0``
in the environment times the exhaustive BM25 leg, for comparison).

Quality is per document: a document ranks where its best chunk ranks.
Latency is one search call: query embedding, rewriting, both branches, fusion
and the read of the hits, one query at a time.

The scaling run copies that database and adds perturbed copies of its chunks
in SQL (one word in ten dropped, then analysed and indexed for BM25 as ingest
does; Gaussian noise on the embedding, renormalised) until it holds
``--scale-chunks`` chunks, rebuilds the indexes, times the same queries, and
prints the plans (EXPLAIN ANALYZE, BUFFERS) of both legs of a hybrid search.
Building 500,000 chunks takes about ten minutes on two cores; with ``--keep``
the embedded server's data stays in that folder and later runs reuse both
databases (and resume an interrupted ingest).
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import statistics
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import psycopg
import typer
from sqlalchemy import text
from sqlalchemy.engine import make_url

from reach_common import migrate
from reach_common.datasets import read_jsonl
from reach_common.db import create_engine, create_sessionmaker, libpq_url
from reach_common.embedded import EmbeddedPostgres
from reach_common.embeddings import Embedder
from retriever.app import build_ingestor, configure_connections
from retriever.ingest.bulk import ingest_many
from retriever.ingest.service import Document
from retriever.search import repository
from retriever.search.repository import Bm25Query
from retriever.search.service import Searcher, SearchQuery
from retriever.settings import Settings
from retriever.storage.models import TEXT_SEARCH_CONFIG
from retriever.storage.repository import TERM_HASH_SEED

RANK_DEPTH = 100  # documents ranked per query (Recall@100)
CHUNK_DEPTH = 200  # chunks fetched to fill that many documents


@dataclass(frozen=True)
class Dataset:
    documents: list[Document]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]


def load_dataset(folder: Path, split: str) -> Dataset:
    """A BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``. Ids are
    read as strings; a document with no text is left out; a qrels line is
    ``query-id<TAB>corpus-id<TAB>score`` (a header line, blank lines and TREC's four
    columns ``query-id 0 corpus-id score`` are accepted), and only positive scores count.
    Queries the qrels judge but the queries file lacks are left out, and said so."""
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        splits = sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))
        raise SystemExit(f"{qrels_path} not found; qrels splits here: {splits or 'none'}")
    documents = []
    for row in _jsonl(folder / "corpus.jsonl"):
        title, body = str(row.get("title") or "").strip(), str(row.get("text") or "").strip()
        if body or title:
            text = f"# {title}\n\n{body}" if title and body else body or title
            documents.append(Document(str(row["_id"]), text))
    queries = {
        str(row["_id"]): str(row.get("text") or "") for row in _jsonl(folder / "queries.jsonl")
    }
    qrels: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            fields = line.split()
            if len(fields) == 4:  # TREC: query-id, iteration, corpus-id, score
                fields = [fields[0], fields[2], fields[3]]
            if not fields:
                continue
            try:
                query_id, doc_id, score = fields[0], fields[1], float(fields[2])
            except (IndexError, ValueError):
                if number == 1:
                    continue  # the header
                raise SystemExit(f"{qrels_path.name} line {number} is not a judgement") from None
            if score > 0:
                qrels.setdefault(query_id, {})[doc_id] = int(score) if score.is_integer() else 1
    unknown = [q for q in qrels if not queries.get(q, "").strip()]
    if unknown:
        print(f"{len(unknown)} judged queries have no text in queries.jsonl: left out")
        for query_id in unknown:
            del qrels[query_id]
    return Dataset(documents, {q: queries[q] for q in qrels}, qrels)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = read_jsonl(path)
    if any("_id" not in row for row in rows):
        raise SystemExit(f"{path.name}: a line has no _id")
    return rows


@contextmanager
def database_server(keep: Path | None) -> Iterator[str]:
    """A server URL: DATABASE_URL if set, else an embedded server (in ``keep``, kept)."""
    url = os.environ.get("DATABASE_URL")
    if url:
        yield url
        return
    if keep is not None:
        server = EmbeddedPostgres(keep / "postgres").start()
        try:
            yield server.url
        finally:
            server.stop()
        return
    with tempfile.TemporaryDirectory(prefix="bench-retriever-") as folder:
        server = EmbeddedPostgres(Path(folder) / "postgres").start()
        try:
            yield server.url
        finally:
            server.stop()


def database_url(server_url: str, name: str) -> str:
    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


def create_database(server_url: str, name: str, template: str | None = None) -> bool:
    """Create ``name`` (a copy of ``template`` if given); False if it already exists."""
    with psycopg.connect(libpq_url(server_url), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            return False
        copy = f' TEMPLATE "{template}"' if template else ""
        conn.execute(f'CREATE DATABASE "{name}"{copy}')
    return True


def drop_databases(server_url: str, names: list[str]) -> None:
    with psycopg.connect(libpq_url(server_url), autocommit=True) as conn:
        for name in names:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


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


# Words dropped at random (one in ten), as a SQL expression over ``x``.
_DROP_WORDS = (
    "coalesce(nullif(array_to_string(ARRAY(SELECT w FROM regexp_split_to_table({x}, '\\s+')"
    " AS w WHERE random() > 0.1), ' '), ''), {x})"
)
# One perturbed copy of every original chunk, analysed as repository.insert_chunks does.
_COPY_CHUNKS = f"""
INSERT INTO retriever.chunk (source_id, ordinal, heading, text, token_count, term_count,
  term_hashes, term_frequencies, embedding)
SELECT n.id, c.ordinal, p.heading, p.body, c.token_count, a.length, a.hashes, a.frequencies,
  l2_normalize(ARRAY(SELECT x + random_normal(0, 0.02)
                     FROM unnest(c.embedding::real[]) AS x)::vector)
FROM retriever.chunk AS c
JOIN retriever.source AS s ON s.id = c.source_id
JOIN retriever.source AS n ON n.name = 'copy' || %(copy)s || '/' || s.name
CROSS JOIN LATERAL (SELECT {_DROP_WORDS.format(x="c.heading")} AS heading,
                           {_DROP_WORDS.format(x="c.text")} AS body) AS p
CROSS JOIN LATERAL (
  SELECT coalesce(array_agg(hashtextextended(t.lexeme, {TERM_HASH_SEED}) ORDER BY t.lexeme),
           '{{}}') AS hashes,
         coalesce(array_agg(cardinality(t.positions)::smallint ORDER BY t.lexeme), '{{}}')
           AS frequencies,
         coalesce(sum(cardinality(t.positions)), 0)::int AS length
  FROM unnest(to_tsvector('{TEXT_SEARCH_CONFIG}', CASE WHEN p.heading = '' THEN p.body
       ELSE p.heading || E'\\n\\n' || p.body END)) AS t) AS a
WHERE c.id <= %(last_chunk)s
"""  # noqa: S608 - constants only, values bound
_FINISH_INDEX = (
    "INSERT INTO retriever.posting (term_hash, chunk_id, term_frequency, chunk_length)"
    " SELECT p.term_hash, c.id, p.frequency, least(c.term_count, 32767)"
    " FROM retriever.chunk AS c,"
    "  unnest(c.term_hashes, c.term_frequencies) AS p(term_hash, frequency)"
    " WHERE c.id > %(last_chunk)s",
    "INSERT INTO retriever.term (term_hash, lexeme, chunk_frequency)"
    " SELECT term_hash, '', count(*) FROM retriever.posting WHERE chunk_id > %(last_chunk)s"
    " GROUP BY term_hash ON CONFLICT (term_hash) DO UPDATE"
    " SET chunk_frequency = retriever.term.chunk_frequency + excluded.chunk_frequency",
    "UPDATE retriever.corpus_stats SET chunk_count = (SELECT count(*) FROM retriever.chunk),"
    " total_terms = (SELECT sum(term_count) FROM retriever.chunk)",
)
COMPLETE = "bench_retriever: complete"
VECTOR_LITERAL = re.compile(r"'\[[^]]*\]'::vector")


def one(conn: psycopg.Connection[Any], sql: str) -> tuple[Any, ...]:
    row = conn.execute(sql).fetchone()
    assert row is not None
    return tuple(row)


def grow_corpus(url: str, target_chunks: int, seed: float = 0.7) -> int:
    """Add perturbed copies of every chunk, in SQL, until there are ``target_chunks``.

    Each copy drops one word in ten (BM25 sees a different bag of words, analysed
    and indexed as ingest does) and adds Gaussian noise to the embedding. The
    indexes of ``chunk``'s embedding and of ``posting`` are dropped for the load
    and built again after it, as a bulk load should.
    """
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '2GB'; SET max_parallel_maintenance_workers = 1")
        conn.execute("SELECT setseed(%s)", (seed,))
        last_source, last_chunk, base = one(
            conn,
            "SELECT (SELECT max(id) FROM retriever.source), max(id), count(*) FROM retriever.chunk",
        )
        indexes = conn.execute(
            "SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid),"
            "  c.conname, pg_get_constraintdef(c.oid)"
            " FROM pg_index AS i LEFT JOIN pg_constraint AS c ON c.conindid = i.indexrelid"
            " WHERE i.indrelid = 'retriever.posting'::regclass"
            "  OR i.indexrelid = 'retriever.ix_chunk_embedding_hnsw'::regclass"
        ).fetchall()
        for name, _, constraint, _ in indexes:
            if constraint:
                conn.execute(f"ALTER TABLE retriever.posting DROP CONSTRAINT {constraint}")
            else:
                conn.execute(f"DROP INDEX {name}")
        copies = max(0, math.ceil(target_chunks / base) - 1)
        for copy in range(1, copies + 1):
            with conn.transaction():
                conn.execute(
                    "INSERT INTO retriever.source (name, content_hash, chunk_count, token_count)"
                    " SELECT 'copy' || %(copy)s || '/' || name, md5(random()::text),"
                    "  chunk_count, token_count FROM retriever.source WHERE id <= %(last)s",
                    {"copy": copy, "last": last_source},
                )
                conn.execute(_COPY_CHUNKS, {"copy": copy, "last_chunk": last_chunk})
        for statement in _FINISH_INDEX:
            conn.execute(statement, {"last_chunk": last_chunk})
        for _, definition, constraint, constraint_definition in indexes:
            if constraint:
                conn.execute(
                    f"ALTER TABLE retriever.posting ADD CONSTRAINT {constraint}"
                    f" {constraint_definition}"
                )
            else:
                conn.execute(definition)
        return int(base) * int(copies)


def vacuum(url: str) -> None:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE retriever.chunk, retriever.posting, retriever.term")


def chunk_count(url: str) -> int:
    with psycopg.connect(libpq_url(url), autocommit=True) as conn:
        (count,) = one(conn, "SELECT coalesce(max(chunk_count), 0) FROM retriever.corpus_stats")
        return int(count)


def mark_complete(server_url: str, name: str) -> None:
    with psycopg.connect(libpq_url(server_url), autocommit=True) as conn:
        conn.execute(f"COMMENT ON DATABASE \"{name}\" IS '{COMPLETE}'")


def is_complete(server_url: str, name: str) -> bool:
    with psycopg.connect(libpq_url(server_url), autocommit=True) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            (name,),
        ).fetchone()
    return row is not None and row[0] == COMPLETE


async def explain(searcher: Searcher, query: str) -> str:
    """EXPLAIN (ANALYZE, BUFFERS) of the BM25 and the vector statement of a hybrid search."""
    settings = searcher.settings
    embedded = searcher.embedder.embed([query])[0]
    vector = (embedded / np.linalg.norm(embedded)).astype(np.float32)
    statements = {
        "BM25": repository.bm25_statement(
            Bm25Query(((query, 1.0),)),
            limit=settings.hybrid_bm25_candidates,
            k1=settings.bm25_k1,
            b=settings.bm25_b,
            term_postings=settings.bm25_term_postings or None,
        ),
        "vector": repository.vector_statement(vector, limit=settings.hybrid_vector_candidates),
    }
    out = []
    async with searcher.engine.connect() as conn:
        for label, (sql, params) in statements.items():
            await conn.execute(text(sql), params)  # warm, as the timed runs are
            rows = await conn.execute(text("EXPLAIN (ANALYZE, BUFFERS) " + sql), params)
            out.append(f"-- {label} leg: {query!r}")
            out.extend(VECTOR_LITERAL.sub("'[...]'::vector", row[0]) for row in rows)
        await conn.rollback()
    return "\n".join(out)


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


def describe(dataset: Dataset, dataset_dir: Path, split: str, settings: Settings) -> None:
    print(
        f"dataset {dataset_dir.name}: {len(dataset.documents)} documents, "
        f"{len(dataset.queries)} {split} queries"
    )
    print(
        f"settings: chunk_tokens={settings.chunk_tokens} overlap={settings.chunk_overlap_tokens} "
        f"bm25 k1={settings.bm25_k1} b={settings.bm25_b} rrf_k={settings.rrf_k} "
        f"candidates bm25={settings.hybrid_bm25_candidates} "
        f"vector={settings.hybrid_vector_candidates} ef_search={settings.hnsw_ef_search} "
        f"bm25_term_postings={settings.bm25_term_postings}"
    )


@asynccontextmanager
async def searcher_for(url: str, settings: Settings, embedder: Embedder) -> AsyncIterator[Searcher]:
    engine = create_engine(url, pool_size=4)
    configure_connections(engine, settings)
    try:
        yield Searcher(settings, embedder, None, engine)
    finally:
        await engine.dispose()


async def ingest(url: str, settings: Settings, dataset: Dataset) -> None:
    """The corpus through the service's own bulk ingest (single-threaded runs, as the CLI)."""
    engine = create_engine(url, pool_size=4)
    configure_connections(engine, settings)
    try:
        ingestor = build_ingestor(settings, Embedder(threads=1))
        started, chunks = time.perf_counter(), 0
        async for outcome in ingest_many(ingestor, create_sessionmaker(engine), dataset.documents):
            chunks += outcome.chunks
        elapsed = time.perf_counter() - started
        print(
            f"ingest: {len(dataset.documents)} documents, {chunks} chunks in {elapsed:.1f} s"
            f" = {len(dataset.documents) / elapsed:.1f} documents/s"
        )
    finally:
        await engine.dispose()
    await asyncio.to_thread(vacuum, url)


async def scale_up(server: str, base: str, target: int) -> str:
    """The database with ``target`` chunks: a copy of ``base`` grown in SQL (or kept)."""
    name = f"{base}_{target}"
    url = database_url(server, name)
    if not await asyncio.to_thread(is_complete, server, name):
        await asyncio.to_thread(drop_databases, server, [name])
    if not await asyncio.to_thread(create_database, server, name, base):
        await asyncio.to_thread(migrate.upgrade, url)
        print(
            f"scaling: reusing database {name} ({await asyncio.to_thread(chunk_count, url)} chunks)"
        )
        return url
    started = time.perf_counter()
    added = await asyncio.to_thread(grow_corpus, url, target)
    await asyncio.to_thread(vacuum, url)
    total = await asyncio.to_thread(chunk_count, url)
    await asyncio.to_thread(mark_complete, server, name)
    print(
        f"scaling: +{added} perturbed chunks, in SQL, indexes rebuilt, in "
        f"{time.perf_counter() - started:.0f} s -> {total} chunks"
    )
    return url


async def bench(
    dataset_dir: Path, split: str, scale_chunks: int, expansion: bool, keep: Path | None
) -> None:
    dataset = load_dataset(dataset_dir, split)
    settings = Settings(llm_provider="offline", log_level="WARNING")
    describe(dataset, dataset_dir, split, settings)
    embedder = Embedder(threads=settings.embedder_threads)  # queries: as the service does
    base = "bench_retriever" if keep else f"bench_retriever_{uuid.uuid4().hex[:8]}"
    with database_server(keep) as server:
        created: list[str] = []
        try:
            url = database_url(server, base)
            fresh = await asyncio.to_thread(create_database, server, base)
            created += [base] if fresh and not keep else []
            await asyncio.to_thread(migrate.upgrade, url)
            if not await asyncio.to_thread(is_complete, server, base):
                await ingest(url, settings, dataset)  # idempotent: a kept partial one resumes
                await asyncio.to_thread(mark_complete, server, base)
            else:
                print(
                    f"reusing database {base} ({await asyncio.to_thread(chunk_count, url)} chunks)"
                )
            variants = [(mode, "none", mode) for mode in ("bm25", "vector", "hybrid")]
            if expansion:
                variants += [
                    (m, "expansion", f"{m}+expansion") for m in ("bm25", "vector", "hybrid")
                ]
            async with searcher_for(url, settings, embedder) as searcher:
                runs = [await run_queries(searcher, dataset, *v) for v in variants]
            print(table(runs, quality=True))
            if scale_chunks <= 0:
                return
            scaled_url = await scale_up(server, base, scale_chunks)
            created += [] if keep else [f"{base}_{scale_chunks}"]
            async with searcher_for(scaled_url, settings, embedder) as searcher:
                scaled = [
                    await run_queries(searcher, dataset, m, "none", f"{m} @scaled", quality=False)
                    for m in ("bm25", "vector", "hybrid")
                ]
                print(table(scaled, quality=False))
                small = next(r for r in runs if r.label == "hybrid")
                large = next(r for r in scaled if r.label.startswith("hybrid"))
                print(
                    f"hybrid p50: {small.p50_ms:.1f} ms at {len(dataset.documents)} documents,"
                    f" {large.p50_ms:.1f} ms scaled: {large.p50_ms / small.p50_ms:.2f}x"
                )
                print(await explain(searcher, next(iter(dataset.queries.values()))))
        finally:
            if created:
                await asyncio.to_thread(drop_databases, server, created)


def main(
    dataset: Annotated[
        Path, typer.Argument(help="A BEIR folder (corpus.jsonl, queries.jsonl, qrels/).")
    ],
    split: Annotated[str, typer.Option(help="qrels file to evaluate.")] = "test",
    scale_chunks: Annotated[
        int, typer.Option(help="Chunks in the scaling run's corpus (0: no scaling run).")
    ] = 500_000,
    expansion: Annotated[bool, typer.Option(help="Also run the offline expansion rewrite.")] = True,
    keep: Annotated[
        Path | None,
        typer.Option(help="Keep the embedded server's data here and reuse its databases."),
    ] = None,
) -> None:
    asyncio.run(bench(dataset, split, scale_chunks, expansion, keep))


if __name__ == "__main__":
    typer.run(main)
