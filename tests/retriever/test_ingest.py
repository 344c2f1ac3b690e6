"""POST /ingest against real Postgres: new, unchanged, replaced, concurrent, and bad input."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from reach_common.embeddings import Embedder
from retriever.app import build_ingestor, create_app
from retriever.settings import Settings
from tests.conftest import assert_error
from tests.retriever.conftest import WRITER_HEADERS, assert_index_consistent

Sql = Callable[..., list[tuple[Any, ...]]]

AUTH_V1 = """# Auth v2

Tokens expire after one hour. Refresh them with the refresh endpoint.

## Scopes

Each token carries scopes. Admin scopes need a second factor.
"""
AUTH_V2 = """# Auth v2

Tokens expire after thirty minutes. Refresh them with the refresh endpoint.

## Revocation

Revoked tokens are refused at once by every replica.

## Scopes

Each token carries scopes.
"""


def chunk_texts(sql: Sql, source: str) -> list[tuple[int, str, str]]:
    return [
        (row[0], row[1], row[2])
        for row in sql(
            "SELECT c.ordinal, c.heading, c.text FROM retriever.chunk c"
            " JOIN retriever.source s ON s.id = c.source_id WHERE s.name = %s ORDER BY c.ordinal",
            (source,),
        )
    ]


async def ingest(client: httpx.AsyncClient, source: str, text: str, **extra: Any) -> httpx.Response:
    return await client.post("/ingest", json={"source": source, "text": text, **extra})


async def test_new_source_is_chunked_by_heading(client: httpx.AsyncClient, sql: Sql) -> None:
    response = await ingest(client, "auth-v2.md", AUTH_V1, metadata={"team": "identity"})
    assert response.status_code == 201
    assert response.json() == {
        "status": "ingested",
        "source": "auth-v2.md",
        "chunks": 2,
        "previous_chunks": None,
        "message": "ingested 2 chunks from auth-v2.md",
    }
    assert chunk_texts(sql, "auth-v2.md") == [
        (0, "Auth v2", "Tokens expire after one hour. Refresh them with the refresh endpoint."),
        (1, "Auth v2 > Scopes", "Each token carries scopes. Admin scopes need a second factor."),
    ]
    assert sql("SELECT metadata FROM retriever.source") == [({"team": "identity"},)]
    assert_index_consistent(sql)


async def test_same_content_is_skipped_and_writes_nothing(
    client: httpx.AsyncClient, sql: Sql
) -> None:
    assert (await ingest(client, "auth-v2.md", AUTH_V1)).status_code == 201
    before = sql("SELECT id, updated_at FROM retriever.source")
    chunk_ids = sql("SELECT id FROM retriever.chunk ORDER BY id")
    stats = sql("SELECT * FROM retriever.corpus_stats")

    response = await ingest(client, "auth-v2.md", AUTH_V1)
    assert response.status_code == 200
    assert response.json()["status"] == "unchanged"
    assert response.json()["message"] == "source auth-v2.md unchanged, skipped"
    assert response.json()["chunks"] == 0
    assert sql("SELECT id, updated_at FROM retriever.source") == before
    assert sql("SELECT id FROM retriever.chunk ORDER BY id") == chunk_ids
    assert sql("SELECT * FROM retriever.corpus_stats") == stats


async def test_changed_content_replaces_every_chunk(client: httpx.AsyncClient, sql: Sql) -> None:
    assert (await ingest(client, "auth-v2.md", AUTH_V1)).status_code == 201
    await ingest(client, "other.md", "Unrelated notes about caching.")
    old_ids = {row[0] for row in sql("SELECT id FROM retriever.chunk")}

    response = await ingest(client, "auth-v2.md", AUTH_V2)
    assert response.status_code == 200
    assert response.json() == {
        "status": "replaced",
        "source": "auth-v2.md",
        "chunks": 3,
        "previous_chunks": 2,
        "message": "replaced auth-v2.md: 3 chunks (was 2)",
    }
    assert [heading for _, heading, _ in chunk_texts(sql, "auth-v2.md")] == [
        "Auth v2",
        "Auth v2 > Revocation",
        "Auth v2 > Scopes",
    ]
    assert "thirty minutes" in chunk_texts(sql, "auth-v2.md")[0][2]
    new_ids = {row[0] for row in sql("SELECT id FROM retriever.chunk")}
    assert len(old_ids & new_ids) == 1  # only other.md's chunk survives
    assert sql("SELECT count(*) FROM retriever.source") == [(2,)]
    assert_index_consistent(sql)


async def test_metadata_change_counts_as_a_change(client: httpx.AsyncClient, sql: Sql) -> None:
    await ingest(client, "a.md", "Some text.", metadata={"v": 1})
    response = await ingest(client, "a.md", "Some text.", metadata={"v": 2})
    assert response.json()["status"] == "replaced"
    assert sql("SELECT metadata FROM retriever.source") == [({"v": 2},)]


async def test_concurrent_duplicate_ingests_leave_one_copy(
    client: httpx.AsyncClient, sql: Sql
) -> None:
    responses = await asyncio.gather(*(ingest(client, "dup.md", AUTH_V1) for _ in range(6)))
    statuses = sorted(r.json()["status"] for r in responses)
    assert statuses == ["ingested"] + ["unchanged"] * 5
    assert [r.status_code for r in responses].count(201) == 1
    assert sql("SELECT count(*) FROM retriever.source") == [(1,)]
    assert len(chunk_texts(sql, "dup.md")) == 2
    assert_index_consistent(sql)


async def test_concurrent_different_versions_leave_one_whole_version(
    client: httpx.AsyncClient, sql: Sql, embedder: Embedder, retriever_settings: Settings
) -> None:
    texts = [AUTH_V1, AUTH_V2, AUTH_V1 + "\nA footnote.", AUTH_V2 + "\nAnother footnote."]
    responses = await asyncio.gather(*(ingest(client, "race.md", t) for t in texts))
    assert sorted(r.status_code for r in responses) == [200, 200, 200, 201]
    chunker = build_ingestor(retriever_settings, embedder).chunker
    versions = [[(c.ordinal, c.heading, c.text) for c in chunker.split(t)] for t in texts]
    stored = chunk_texts(sql, "race.md")
    assert stored in versions  # one version, whole, never a mix
    [(chunk_count,)] = sql("SELECT chunk_count FROM retriever.source WHERE name = 'race.md'")
    assert chunk_count == len(stored)
    assert_index_consistent(sql)


@pytest.fixture
async def small_client(
    service_env: dict[str, Any], embedder: Embedder, make_client: Any
) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        **service_env, llm_provider="offline", ingest_max_chars=1000, metadata_max_bytes=64
    )
    async with make_client(create_app(settings, embedder=embedder)) as client:
        client.headers.update(WRITER_HEADERS)
        yield client


@pytest.mark.parametrize("text", ["", "   \n\t  "])
async def test_empty_text_is_refused(small_client: httpx.AsyncClient, sql: Sql, text: str) -> None:
    body = assert_error(await ingest(small_client, "a.md", text), 422, "empty_text")
    assert body["source"] == "a.md"
    assert sql("SELECT count(*) FROM retriever.source") == [(0,)]


async def test_text_over_the_limit_is_413(small_client: httpx.AsyncClient, sql: Sql) -> None:
    body = assert_error(await ingest(small_client, "a.md", "x" * 1001), 413, "text_too_large")
    assert (body["length"], body["limit"]) == (1001, 1000)
    assert "INGEST_MAX_CHARS" in body["message"]
    assert sql("SELECT count(*) FROM retriever.chunk") == [(0,)]


async def test_metadata_over_the_limit_is_413(small_client: httpx.AsyncClient) -> None:
    response = await ingest(small_client, "a.md", "text", metadata={"k": "v" * 100})
    assert_error(response, 413, "metadata_too_large")


@pytest.mark.parametrize(
    ("source", "problem"),
    [("", "empty"), ("  a.md", "whitespace"), ("a\x00b", "control"), ("x" * 513, "513")],
)
async def test_bad_source_names_are_refused(
    small_client: httpx.AsyncClient, source: str, problem: str
) -> None:
    body = assert_error(await ingest(small_client, source, "text"), 422, "invalid_source")
    assert problem in body["message"]


async def test_binary_text_is_refused(small_client: httpx.AsyncClient) -> None:
    body = assert_error(await ingest(small_client, "a.bin", "ab\x00cd"), 422, "invalid_text")
    assert "NUL" in body["message"]


async def test_missing_fields_and_bad_json(small_client: httpx.AsyncClient) -> None:
    body = assert_error(
        await small_client.post("/ingest", json={"source": "a"}), 422, "invalid_request"
    )
    assert body["errors"][0]["field"] == "text"
    response = await small_client.post(
        "/ingest", content=b'{"source": "a",', headers={"content-type": "application/json"}
    )
    assert_error(response, 400, "malformed_json")


async def test_the_largest_text_fits_the_body_limit(
    client: httpx.AsyncClient, retriever_settings: Settings, sql: Sql
) -> None:
    """INGEST_MAX_CHARS + 1 characters, each \\u-escaped (6 bytes), still reach the
    ingest's own length check: the body limit is not what stops the largest text."""
    limit = retriever_settings.ingest_max_chars
    body = json.dumps({"source": "big.md", "text": "文" * (limit + 1)}, ensure_ascii=True)
    assert limit * 6 < len(body) < retriever_settings.max_body_bytes
    response = await client.post(
        "/ingest", content=body, headers={"content-type": "application/json"}
    )
    error = assert_error(response, 413, "text_too_large")
    assert (error["length"], error["limit"]) == (limit + 1, limit)
    assert sql("SELECT count(*) FROM retriever.source") == [(0,)]


async def _chunks(data: bytes, size: int = 1 << 20) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
async def test_a_body_over_the_limit_is_413(
    client: httpx.AsyncClient, retriever_settings: Settings, sql: Sql, framing: str
) -> None:
    limit = retriever_settings.max_body_bytes
    assert limit == 16 * 1024 * 1024  # the retriever's default, not the common 1 MiB
    prefix = b'{"source": "big.md", "text": "'
    data = prefix + b"x" * (limit - len(prefix) - 1) + b'"}'
    assert len(data) == limit + 1
    content: bytes | AsyncIterator[bytes] = data if framing == "content-length" else _chunks(data)
    response = await client.post(
        "/ingest", content=content, headers={"content-type": "application/json"}
    )
    error = assert_error(response, 413, "payload_too_large")
    assert error["max_bytes"] == limit
    assert sql("SELECT count(*) FROM retriever.source") == [(0,)]
