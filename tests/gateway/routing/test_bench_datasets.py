"""The benchmarks read a dataset they were not written for.

``make bench-routing`` (and the MCP and shortlist benchmarks built on its loaders)
and ``make bench-retriever`` take a folder path. A dataset of the documented shape
but written by someone else has short or missing descriptions, Python type names in
its schemas (``dict``, ``float``), a repeated id, a ``gold`` given as one id, blank
lines, integer ids or TREC-style qrels. Before, the first refused manifest ended the
whole run (``register … failed: 422``) and a blank qrels line or an integer ``_id``
raised or silently scored nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.conftest import REPO_ROOT, app_client, load_script
from tests.gateway.conftest import GatewayFactory


def jsonl(path: Path, rows: list[Any], blank: bool = True) -> Path:
    lines = [json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + ("\n\n" if blank else "\n"), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def routing() -> ModuleType:
    return load_script("bench_routing")


@pytest.fixture(scope="module")
def retriever() -> ModuleType:
    return load_script("bench_retriever")


ODD_TOOLS = [
    {"tool_id": "get_time", "description": "Get time"},  # under the 10-character minimum
    {"tool_id": "Weather.get Forecast", "description": "Weather for a city. " * 300},
    {
        "tool_id": "convert_currency",
        "description": "Convert an amount of money from one currency to another.",
        "input_schema": {
            "type": "dict",
            "properties": {
                "amount": {"type": "float"},
                "source": {"type": "str"},
                "options": {"type": "tuple", "items": {"type": "any"}},
            },
            "required": ["amount", "source"],
        },
    },
    {"tool_id": "send_mail", "description": "Send an email to a colleague."},  # no schema
    {
        "tool_id": "find_book",
        "description": "Look a book up in the library catalogue by its ISBN.",
        "input_schema": {
            "type": "object",
            "properties": {"isbn": {"type": "string", "pattern": "(unclosed"}},
        },
    },
    {"tool_id": "get_time", "description": "A second entry for an id already seen."},
    {"description": "A line with no tool id at all."},
]


def test_tools_and_queries_are_read_whatever_the_lines_hold(
    routing: ModuleType, tmp_path: Path
) -> None:
    tools = routing.read_tools(jsonl(tmp_path / "tools.jsonl", ODD_TOOLS))
    queries = routing.read_queries(
        jsonl(
            tmp_path / "queries.jsonl",
            [
                {"query": "what time is it", "gold": "get_time"},
                {"query": "tell me a joke", "gold": None},
                {"query": "   ", "gold": ["get_time"]},
                {"query": "convert 5 euros", "gold": ["convert_currency"]},
            ],
        )
    )

    assert [t["tool_id"] for t in tools] == [
        "get_time", "Weather.get Forecast", "convert_currency", "send_mail", "find_book",
    ]  # fmt: skip
    assert tools[0]["description"] == "Get time"  # the first entry of a repeated id
    assert [(q["query"], q["gold"]) for q in queries] == [
        ("what time is it", ["get_time"]),
        ("tell me a joke", []),
        ("convert 5 euros", ["convert_currency"]),
    ]


def test_a_line_that_is_not_json_is_named(routing: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "tools.jsonl"
    path.write_text('{"tool_id": "a"}\n{not json\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="line 2 is not JSON"):
        routing.read_tools(path)


def test_manifests_fit_the_schema_and_valid_ones_pass_unchanged(routing: ModuleType) -> None:
    short = routing.manifest({"tool_id": "get_time", "description": "Get time"}, "get_time")
    assert short["description"] == "get_time: Get time"
    long = routing.manifest({"tool_id": "w", "description": "Weather for a city. " * 300}, "w")
    assert len(long["description"]) <= 4000
    assert long["description"].endswith("city.")  # cut at a word
    typed = routing.manifest(ODD_TOOLS[2], "convert_currency")["input_schema"]
    assert typed["type"] == "object"
    assert typed["properties"]["amount"] == {"type": "number"}
    assert typed["properties"]["source"] == {"type": "string"}
    assert typed["properties"]["options"] == {"type": "array", "items": {}}
    assert routing.manifest(ODD_TOOLS[3], "send_mail")["input_schema"] == {
        "type": "object",
        "properties": {},
    }
    valid = {
        "tool_id": "math.factorial",
        "description": "Compute the factorial of a number. ",  # kept as written
        "input_schema": {
            "type": "object",
            "properties": {"n": {"type": "integer", "description": "The number."}},
            "required": ["n"],
        },
    }
    fitted = routing.manifest(valid, "math_factorial")
    assert fitted["description"] == valid["description"]
    assert fitted["input_schema"] == valid["input_schema"]


async def test_every_odd_tool_registers_and_a_refused_schema_is_relaxed(
    routing: ModuleType, make_gateway: GatewayFactory, tmp_path: Path, capsys: Any
) -> None:
    tools = routing.read_tools(jsonl(tmp_path / "tools.jsonl", ODD_TOOLS))
    ids = routing.map_ids([t["tool_id"] for t in tools])
    manifests = [routing.manifest(t, ids[t["tool_id"]]) for t in tools]
    async with app_client(make_gateway(auth_mode="permissive")) as client:
        await routing.register_all(client, manifests)
        listed = (await client.get("/tools/list", headers=routing.ADMIN)).json()["tools"]
        book = (await client.get("/tools/find_book", headers=routing.ADMIN)).json()

    assert sorted(t["tool_id"] for t in listed) == sorted(ids.values())
    # The unclosed pattern is refused; the tool is registered with its parameter names.
    assert book["input_schema"]["properties"] == {"isbn": {}}
    assert "registered with their parameter names only: find_book" in capsys.readouterr().out


def test_beir_variants_load(retriever: ModuleType, tmp_path: Path) -> None:
    jsonl(
        tmp_path / "corpus.jsonl",
        [
            {"_id": 1, "title": None, "text": "Aspirin reduces the risk of heart attack."},
            {"_id": "2", "title": "Vitamin D", "text": "Supplements do not prevent fractures."},
            {"_id": "3", "title": "", "text": "  "},  # nothing to search: left out
        ],
    )
    jsonl(
        tmp_path / "queries.jsonl",
        [{"_id": 10, "text": "does aspirin prevent heart attacks"}, {"_id": "11", "text": "bones"}],
    )
    (tmp_path / "qrels").mkdir()
    # TREC's four columns, a float score, a blank line, a zero score, an unknown query.
    (tmp_path / "qrels" / "test.tsv").write_text(
        "10 0 1 1\n\n11 0 2 2.0\n11 0 1 0\n99 0 2 1\n", encoding="utf-8"
    )

    data = retriever.load_dataset(tmp_path, "test")

    assert [(d.source, d.text) for d in data.documents] == [
        ("1", "Aspirin reduces the risk of heart attack."),
        ("2", "# Vitamin D\n\nSupplements do not prevent fractures."),
    ]
    assert data.queries == {"10": "does aspirin prevent heart attacks", "11": "bones"}
    assert data.qrels == {"10": {"1": 1}, "11": {"2": 2}}
    with pytest.raises(SystemExit, match=r"qrels splits here: \['test'\]"):
        retriever.load_dataset(tmp_path, "dev")


def test_beir_layout_with_a_header_still_loads(retriever: ModuleType, tmp_path: Path) -> None:
    jsonl(tmp_path / "corpus.jsonl", [{"_id": "d1", "title": "T", "text": "Body."}])
    jsonl(tmp_path / "queries.jsonl", [{"_id": "q1", "text": "body"}])
    (tmp_path / "qrels").mkdir()
    (tmp_path / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\td1\t1\n", encoding="utf-8"
    )
    assert retriever.load_dataset(tmp_path, "test").qrels == {"q1": {"d1": 1}}


def test_request_lines_of_another_hand_are_read(tmp_path: Path) -> None:
    """``make bench-shipped``: a gold given as a list of one id or an empty list, a line
    with no text, and a line with no ``lang``."""
    shipped = load_script("bench_shipped")
    path = jsonl(
        tmp_path / "requests.jsonl",
        [
            {"query": "SKU2024001 还有多少库存", "gold": ["inventory_query"]},
            {"query": "tell me a joke", "gold": [], "lang": "en"},
            {"query": "  ", "gold": None},
        ],
    )
    rows = shipped.read_requests(path)
    assert [(r["gold"], r["lang"]) for r in rows] == [("inventory_query", "zh"), (None, "en")]
    bad = jsonl(tmp_path / "bad.jsonl", [{"query": "x", "gold": ["a", "b"]}])
    with pytest.raises(SystemExit, match="gold is one tool id or null"):
        shipped.read_requests(bad)


def test_every_request_set_in_the_repo_reads_as_written() -> None:
    shipped = load_script("bench_shipped")
    for path in [*REPO_ROOT.glob("tests/data/*.jsonl"), *REPO_ROOT.glob("tests/data/*/*.jsonl")]:
        lines = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
        assert shipped.read_requests(path) == lines, path.name
