"""The letters a parameter's pattern starts every value with are words of the tool for the
lexical stage.

A request naming ``TK-2026-246610`` shared "tk" with every ticketing tool whose
description shows "e.g. TK-2026-004512", and nothing with the order lookup whose
``order_id`` is ``^TK-\\d{4}-\\d{6}$``: the tool made for the id ranked below the ones
that only mention it ("pull up TK-2026-246610 please" did not reach the lookup's
candidates). Found by the ticketing set (``tests/data/ticketing``).
"""

from __future__ import annotations

from typing import Any

from gateway.routing.index import ToolIndex, pattern_prefixes
from reach_common.embeddings import Embedder, VectorCache


def tool(tool_id: str, description: str, **properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "tool_id": tool_id,
        "name": tool_id,
        "description": description,
        "input_schema": {"type": "object", "properties": properties},
    }


def test_the_literal_letters_a_pattern_starts_with() -> None:
    def prefixes(*patterns: str) -> str:
        specs = {f"p{i}": {"type": "string", "pattern": p} for i, p in enumerate(patterns)}
        return pattern_prefixes(tool("t", "A tool.", **specs))

    assert prefixes(r"^TK-\d{4}-\d{6}$") == "TK"
    assert prefixes(r"^SKU\d{7}$", r"^RF[0-9]{8}$", r"^SKU-\d+$") == "SKU RF"
    assert prefixes(r"^inc_\d+$") == "inc"
    # no literal letters: a choice, a class, a single letter, or not anchored
    assert prefixes(r"^(SO|PO)\d+$", r"^[A-Z]{2}\d+$", r"^v\d+$", r"TK-\d+") == ""
    assert pattern_prefixes({"tool_id": "t", "input_schema": "not a schema"}) == ""


def test_a_request_naming_an_id_reaches_the_tool_whose_pattern_takes_it(
    embedder: Embedder,
) -> None:
    lookup = tool(
        "booking_lookup",
        "Fetches one booking and shows what is in it.",
        order_id={"type": "string", "pattern": r"^TK-\d{4}-\d{6}$"},
    )
    others = [
        tool(
            f"other_{i}",
            f"Does task number {i} on an order, e.g. TK-2026-004512.",
            order_id={"type": "string"},
        )
        for i in range(6)
    ]
    index = ToolIndex([lookup, *others], VectorCache(embedder))
    query = "pull up TK-2026-246610 please"
    found = {c.tool_id: c for c in index.search(query, embedder.embed_one(query), k=7)}
    assert found["booking_lookup"].lexical > 0
