"""LLM query rewriting through the real anthropic and openai SDKs, against recorded answers.

respx replaces only the socket (``HTTPCore2Mocker``): each SDK builds, sends
and parses real HTTP exchanges, and the provider maps its errors.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

import tests.fixtures.llm  # noqa: F401 - registers the httpcore2 mocker with respx
from reach_common.embeddings import Embedder
from retriever.app import create_app
from retriever.search.rewrite import EXPANSION_PROMPT, HYDE_PROMPT, MULTI_QUERY_PROMPT
from retriever.settings import Settings
from tests.conftest import assert_error
from tests.retriever.conftest import WRITER_HEADERS

FIXTURES = Path(__file__).parent / "fixtures"
ANTHROPIC_URL = "http://127.0.0.1:9411"
OPENAI_URL = "http://127.0.0.1:9412/v1"
DOCS = {
    "bread.md": "# Bread\n\nKnead the dough, let it rise for an hour, then bake it.",
    "rye.md": "# Rye\n\nA rye loaf bakes for fifty minutes in a hot oven.",
    "mars.md": "# Mars\n\nThe fourth planet owes its colour to rust in its surface dust.",
    "soup.md": "# Soup\n\nSimmer onions and carrots in stock.",
}


def recorded(name: str, status: int = 200) -> httpx.Response:
    return httpx.Response(status, json=json.loads((FIXTURES / name).read_text()))


@pytest.fixture
def anthropic_settings(service_env: dict[str, Any]) -> Settings:
    return Settings(
        **service_env,
        llm_provider="anthropic",
        anthropic_api_key="sk-ant-test-key",
        llm_base_url=ANTHROPIC_URL,
        llm_max_retries=0,
    )


@pytest.fixture
def openai_settings(service_env: dict[str, Any]) -> Settings:
    return Settings(
        **service_env,
        llm_provider="openai",
        openai_api_key="sk-test-key",
        llm_base_url=OPENAI_URL,
        llm_model="gpt-5.4-mini",
        llm_max_retries=0,
    )


async def corpus_client(
    settings: Settings, embedder: Embedder, make_client: Any
) -> AsyncIterator[httpx.AsyncClient]:
    async with make_client(create_app(settings, embedder=embedder)) as client:
        client.headers.update(WRITER_HEADERS)
        for source, text in DOCS.items():
            assert (
                await client.post("/ingest", json={"source": source, "text": text})
            ).status_code == 201
        yield client


@pytest.fixture
async def anthropic_client(
    anthropic_settings: Settings, embedder: Embedder, make_client: Any
) -> AsyncIterator[httpx.AsyncClient]:
    async for client in corpus_client(anthropic_settings, embedder, make_client):
        yield client


@pytest.fixture
async def openai_client(
    openai_settings: Settings, embedder: Embedder, make_client: Any
) -> AsyncIterator[httpx.AsyncClient]:
    async for client in corpus_client(openai_settings, embedder, make_client):
        yield client


async def test_anthropic_writes_the_expansion(anthropic_client: httpx.AsyncClient) -> None:
    with respx.mock(using="httpcore2") as router:
        route = router.post(f"{ANTHROPIC_URL}/v1/messages").mock(
            return_value=recorded("anthropic_expansion.json")
        )
        response = await anthropic_client.post(
            "/retrieve", json={"query": "bread", "rewrite": "expansion", "mode": "bm25"}
        )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["rewritten"] == {
        "method": "llm",
        "expansion_terms": ["loaf", "dough", "knead", "yeast", "baking"],
    }
    # "rye.md" never says bread; the model's "loaf" finds it.
    assert [c["source"] for c in body["chunks"]][:2] == ["bread.md", "rye.md"]
    sent = json.loads(route.calls.last.request.content)
    # The SDK masks the key once sent; that it went out as a credential is what we check.
    assert "authorization" in route.calls.last.request.headers
    assert "anthropic-version" in route.calls.last.request.headers
    assert sent["model"] == "claude-sonnet-5-5"
    assert sent["system"] == EXPANSION_PROMPT.format(n=10)
    assert sent["messages"] == [{"role": "user", "content": [{"type": "text", "text": "bread"}]}]
    assert sent["max_tokens"] == 400


async def test_anthropic_multi_query_fuses_every_phrasing(
    anthropic_client: httpx.AsyncClient,
) -> None:
    with respx.mock(using="httpcore2") as router:
        route = router.post(f"{ANTHROPIC_URL}/v1/messages").mock(
            return_value=recorded("anthropic_multi_query.json")
        )
        response = await anthropic_client.post(
            "/retrieve", json={"query": "bread baking time", "rewrite": "multi_query", "top_k": 3}
        )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["rewritten"]["queries"] == [
        "bread baking time",
        "How long does a loaf need to bake?",
        "Oven time and temperature for baking a loaf",
        "Baking a loaf of dough",
    ]
    assert {c["source"] for c in body["chunks"][:2]} == {"bread.md", "rye.md"}
    # Eight lists fused (two branches x four phrasings): scores are RRF sums.
    assert body["chunks"][0]["scores"]["fused"] == body["chunks"][0]["score"]
    assert body["chunks"][0]["score"] > 2 / 21
    assert json.loads(route.calls.last.request.content)["system"] == MULTI_QUERY_PROMPT.format(n=3)


async def test_openai_hyde_searches_with_the_written_passage(
    openai_client: httpx.AsyncClient,
) -> None:
    with respx.mock(using="httpcore2") as router:
        route = router.post(f"{OPENAI_URL}/chat/completions").mock(
            return_value=recorded("openai_hyde.json")
        )
        response = await openai_client.post(
            "/retrieve", json={"query": "why is the red planet red", "rewrite": "hyde", "top_k": 2}
        )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["rewritten"]["method"] == "llm"
    assert body["rewritten"]["hypothetical_passage"].startswith("Mars looks red")
    assert body["chunks"][0]["source"] == "mars.md"
    sent = json.loads(route.calls.last.request.content)
    assert "authorization" in route.calls.last.request.headers
    assert sent["model"] == "gpt-5.4-mini"
    assert sent["messages"] == [
        {"role": "system", "content": HYDE_PROMPT},
        {"role": "user", "content": "why is the red planet red"},
    ]


async def test_openai_expansion_terms_are_cleaned(openai_client: httpx.AsyncClient) -> None:
    with respx.mock(using="httpcore2") as router:
        router.post(f"{OPENAI_URL}/chat/completions").mock(
            return_value=recorded("openai_expansion.json")
        )
        response = await openai_client.post(
            "/retrieve", json={"query": "planet colour", "rewrite": "expansion", "top_k": 1}
        )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["rewritten"]["expansion_terms"] == [
        "rust",
        "iron oxide",
        "red planet",
        "Martian surface",
    ]
    assert body["chunks"][0]["source"] == "mars.md"


async def test_a_refused_key_is_reported(anthropic_client: httpx.AsyncClient) -> None:
    with respx.mock(using="httpcore2") as router:
        router.post(f"{ANTHROPIC_URL}/v1/messages").mock(
            return_value=recorded("anthropic_auth_error.json", status=401)
        )
        response = await anthropic_client.post(
            "/retrieve", json={"query": "bread", "rewrite": "hyde"}
        )
    body = assert_error(response, 502, "llm_auth_failed")
    assert body["message"].startswith("anthropic")
    assert "sk-ant-test-key" not in response.text


async def test_status_names_the_configured_model(anthropic_client: httpx.AsyncClient) -> None:
    assert (await anthropic_client.get("/status")).json()["llm"] == "anthropic:claude-sonnet-5-5"
