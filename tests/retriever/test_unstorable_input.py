"""Input Postgres cannot store (NUL, unpaired surrogates) and oversized lists are clear
4xx errors on ``/retrieve`` and ``/handles``, never a 500, and an error never echoes a
whole request back."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import assert_error


async def post_raw(client: httpx.AsyncClient, path: str, body: str) -> httpx.Response:
    """``body`` as sent: JSON escapes such as ``\\ud800`` reach the server unpaired."""
    return await client.post(path, content=body, headers={"Content-Type": "application/json"})


@pytest.mark.parametrize(
    "body",
    [
        '{"query": "tokens \\ud800 expire"}',
        '{"query": "tokens \\udfff", "mode": "bm25"}',
        '{"query": "x\\ud800", "handle": "out_abc"}',
    ],
)
async def test_a_query_with_an_unpaired_surrogate_is_422(
    client: httpx.AsyncClient, body: str
) -> None:
    answer = assert_error(await post_raw(client, "/retrieve", body), 422, "invalid_query")
    assert "surrogate" in answer["message"]


async def test_unstorable_source_names_are_clear_errors(client: httpx.AsyncClient) -> None:
    """A NUL cannot be in a stored name, so that source is unknown; an unpaired surrogate
    is not even a string to the request model."""
    body = '{"query": "tokens", "sources": ["ok", "b\\u0000"]}'
    answer = assert_error(await post_raw(client, "/retrieve", body), 404, "source_not_found")
    assert answer["sources"] == ["ok", "b\x00"]
    assert answer["missing"] == 2
    body = '{"query": "tokens", "sources": ["a\\udc00"]}'
    assert_error(await post_raw(client, "/retrieve", body), 422, "invalid_request")


async def test_source_lists_are_capped(client: httpx.AsyncClient) -> None:
    many = {"query": "tokens", "sources": [f"s{i}" for i in range(101)]}
    assert_error(await client.post("/retrieve", json=many), 422, "invalid_request")
    long = {"query": "tokens", "sources": ["x" * 513]}
    assert_error(await client.post("/retrieve", json=long), 422, "invalid_request")


async def test_unknown_sources_error_names_a_few_and_counts_them(
    client: httpx.AsyncClient,
) -> None:
    names = [f"{i:03d}" + "x" * 509 for i in range(100)]
    response = await client.post("/retrieve", json={"query": "tokens", "sources": names})
    answer = assert_error(response, 404, "source_not_found")
    assert len(response.content) < 4_000
    assert answer["missing"] == 100
    assert len(answer["sources"]) == 5
    assert answer["sources"][0] == names[0][:80] + "…"
    assert "and 95 more" in answer["message"]


@pytest.mark.parametrize(
    "body",
    [
        '{"output": {"a": 1}, "metadata": {"k": "a\\u0000b"}}',
        '{"output": {"a": 1}, "metadata": {"k": ["x", {"deep": "\\ud800"}]}}',
        '{"output": {"a": 1}, "metadata": {"k\\u0000": 1}}',
        '{"output": {"a": 1}, "tool_id": "t\\u0000"}',
    ],
)
async def test_unstorable_handle_input_is_422(client: httpx.AsyncClient, body: str) -> None:
    answer = assert_error(await post_raw(client, "/handles", body), 422, "invalid_handle_input")
    assert "NUL or unpaired surrogate" in answer["message"]


async def test_handle_metadata_over_the_limit_is_413(client: httpx.AsyncClient) -> None:
    body = {"output": {"a": 1}, "metadata": {"k": "v" * 20_000}}
    assert_error(await client.post("/handles", json=body), 413, "metadata_too_large")


async def test_emoji_and_escapes_in_metadata_are_stored(client: httpx.AsyncClient) -> None:
    """An astral character is escaped as a surrogate *pair* in ASCII JSON, and a
    backslash before ``u0000`` is text: neither is a NUL or an unpaired surrogate."""
    metadata = {"k": "party 🎉", "path": "C:\\u0000dir"}
    stored = await client.post("/handles", json={"output": {"a": 1}, "metadata": metadata})
    assert stored.status_code == 201, stored.text
    ingested = await client.post(
        "/ingest", json={"source": "emoji.md", "text": "Party time.", "metadata": metadata}
    )
    assert ingested.status_code in (200, 201), ingested.text


@pytest.mark.parametrize("handle", ["out_x", "out_" + "0" * 31 + "G", "out_" + "A" * 32, "x" * 300])
async def test_a_string_that_is_not_a_handle_is_not_found(
    client: httpx.AsyncClient, handle: str
) -> None:
    assert_error(await client.get(f"/handles/{handle}"), 404, "handle_not_found")
    assert_error(await client.delete(f"/handles/{handle}"), 404, "handle_not_found")


async def test_a_nul_in_a_handle_path_is_a_clear_error(client: httpx.AsyncClient) -> None:
    for method in ("GET", "DELETE"):
        response = await client.request(method, "/handles/out_%00x")
        assert response.status_code in (400, 404), response.text
        assert response.json()["reason"] in ("invalid_request", "handle_not_found")


async def test_retrieve_with_a_malformed_handle_is_not_found(client: httpx.AsyncClient) -> None:
    for handle in ("out_\x00x", "out_x", "out_" + "F" * 32):
        body = {"query": "x", "handle": handle}
        answer = assert_error(await client.post("/retrieve", json=body), 404, "handle_not_found")
        assert answer["handle"] == handle
    body = '{"query": "x", "handle": "out_\\ud800"}'  # not a string to the request model
    assert_error(await post_raw(client, "/retrieve", body), 422, "invalid_request")


@pytest.mark.parametrize("output", ['{"note": "a\\u0000b"}', '["\\ud800"]', '{"\\udc00": 1}'])
async def test_outputs_with_nul_or_surrogates_are_not_a_500(
    client: httpx.AsyncClient, output: str
) -> None:
    response = await post_raw(client, "/handles", '{"output": ' + output + "}")
    if "\\u0000" in output:  # kept: the output is stored as JSON text, NUL escaped
        assert response.status_code == 201, response.text
    else:
        answer = assert_error(response, 422, "invalid_handle_input")
        assert "surrogate" in answer["message"]


@pytest.mark.parametrize(
    ("path", "body", "reason"),
    [
        ("/ingest", '{"source": "m.md", "text": "hi", "metadata": {"n": NaN}}', "invalid_text"),
        ("/ingest", '{"source": "m.md", "text": "hi", "metadata": {"n": 1e400}}', "invalid_text"),
        ("/handles", '{"output": {"a": 1}, "metadata": {"n": [Infinity]}}', "invalid_handle_input"),
    ],
)
async def test_metadata_with_a_number_postgres_cannot_store_is_422(
    client: httpx.AsyncClient, path: str, body: str, reason: str
) -> None:
    # JSONB refused these inside the INSERT, and the retriever answered 500.
    answer = assert_error(await post_raw(client, path, body), 422, reason)
    assert "metadata" in answer["message"]
    listed = await client.get("/sources")
    assert "m.md" not in listed.text


@pytest.mark.parametrize("field", ["mode", "rewrite"])
async def test_an_error_quoting_half_a_surrogate_pair_still_encodes(
    client: httpx.AsyncClient, field: str
) -> None:
    """The error named the bad value, and the answer could not be encoded: a 500."""
    body = f'{{"query": "tokens", "{field}": "\\ud800"}}'
    response = await post_raw(client, "/retrieve", body)
    assert response.status_code == 422, response.text
    assert response.json()["reason"] == f"unknown_{field}"
    assert "\ufffd" in response.text or "\\ufffd" in response.text  # the half, replaced
