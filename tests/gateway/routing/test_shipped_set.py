"""Shape of the shipped-tools request set that ``make bench-shipped`` scores.

Only the data's shape is checked here; routing quality is the benchmark's job.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
REQUESTS = REPO / "tests" / "data" / "shipped_requests.jsonl"
KEYS = {"query", "gold", "lang", "session", "follow_up"}


def shipped_tool_ids() -> set[str]:
    ids = set()
    for path in (REPO / "manifests").glob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if "tool_id" in data:
            ids.add(data["tool_id"])
    return ids


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    lines = REQUESTS.read_text(encoding="utf-8").splitlines()
    assert all(line.strip() for line in lines), "no blank lines"
    return [json.loads(line) for line in lines]


def test_size_and_languages(rows: list[dict[str, Any]]) -> None:
    assert len(rows) >= 150
    assert sum(row["gold"] is None for row in rows) >= 30
    langs = [row["lang"] for row in rows]
    assert set(langs) == {"en", "zh"}
    assert min(langs.count("en"), langs.count("zh")) >= len(rows) // 3


def test_fields(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        assert set(row) <= KEYS, row
        assert isinstance(row["query"], str)
        assert row["query"].strip(), row
        if "session" in row:
            assert isinstance(row["session"], str)
            assert row["session"], row
        if "follow_up" in row:
            assert row["follow_up"] is True, row
    queries = [row["query"] for row in rows]
    assert len(queries) == len(set(queries)), "duplicate queries"


def test_gold_is_a_shipped_tool(rows: list[dict[str, Any]]) -> None:
    shipped = shipped_tool_ids()
    assert len(shipped) == 10
    golds = {row["gold"] for row in rows}
    assert golds - {None} <= shipped
    assert shipped <= golds, f"tools with no request: {shipped - golds}"


def test_follow_ups_share_a_session_with_an_earlier_line(rows: list[dict[str, Any]]) -> None:
    follow_ups = 0
    seen: set[str] = set()
    for row in rows:
        if row.get("follow_up"):
            follow_ups += 1
            assert row.get("session") in seen, row
        if "session" in row:
            seen.add(row["session"])
    assert follow_ups >= 10
