"""History repair: whatever is stored, what is sent is provider-valid."""

from __future__ import annotations

from reach_common.llm.history import (
    INTERRUPTED_RESULT,
    parse_arguments,
    repair,
    safe_tool_call_id,
    usable_arguments,
)
from reach_common.llm.types import Message, ToolCall

CALL = ToolCall("c1", "inventory_query", {"sku": "SKU2024001"})


def test_a_valid_history_is_unchanged() -> None:
    history = [
        Message("user", "q"),
        Message("assistant", "", tool_calls=(CALL,)),
        Message("tool", "{}", tool_call_id="c1"),
        Message("assistant", "a"),
    ]
    assert repair(history) == history


def test_an_unanswered_call_gets_an_interrupted_result() -> None:
    repaired = repair(
        [
            Message("user", "q"),
            Message("assistant", "", tool_calls=(CALL,)),
            Message("user", "again"),
        ]
    )
    assert repaired[2] == Message("tool", INTERRUPTED_RESULT, tool_call_id="c1", is_error=True)
    assert repaired[3] == Message("user", "again")


def test_orphan_and_duplicate_results_are_dropped_and_history_starts_with_the_user() -> None:
    repaired = repair(
        [
            Message("tool", "orphan", tool_call_id="zz"),
            Message("assistant", "hello"),
            Message("user", "q"),
            Message("assistant", "", tool_calls=(CALL,)),
            Message("tool", "first", tool_call_id="c1"),
            Message("tool", "second", tool_call_id="c1"),
            Message("tool", "late orphan", tool_call_id="c0"),
        ]
    )
    assert [(m.role, m.content) for m in repaired] == [
        ("user", "q"),
        ("assistant", ""),
        ("tool", "first"),
    ]


def test_ids_and_arguments() -> None:
    assert safe_tool_call_id("toolu_01A-b") == "toolu_01A-b"
    odd = safe_tool_call_id("functions.lookup:0")
    assert odd == safe_tool_call_id("functions.lookup:0") != safe_tool_call_id("functions.lookup:1")
    assert odd.replace("_", "").replace("-", "").isalnum()
    assert parse_arguments('{"sku": "SKU2024001"}') == ({"sku": "SKU2024001"}, None)
    assert parse_arguments("") == ({}, None)
    assert parse_arguments('["x"]') == ({}, '["x"]')
    assert parse_arguments('{"sku": "SK') == ({}, '{"sku": "SK')


def test_arguments_holding_a_number_no_json_can_carry_are_unusable() -> None:
    """A model's ``1e999`` reads as infinite: it could not be sent back to the model or
    to a tool, so the call is unusable (its text kept), like one that is not a JSON
    object. A NUL is carried (a tool refuses it; it is stored as U+FFFD)."""
    for text in ('{"amount": 1e999}', '{"n": NaN}', '{"a": [-1e999]}', "[" * 100_000):
        assert parse_arguments(text) == ({}, text)
    assert parse_arguments('{"note": "a\\u0000b"}') == ({"note": "a\x00b"}, None)
    assert usable_arguments({"amount": float("inf")}) == ({}, '{"amount": Infinity}')
    assert usable_arguments({"note": "a\x00b"}) == ({"note": "a\x00b"}, None)
    assert usable_arguments(["x"]) == ({}, '["x"]')
    assert usable_arguments({"amount": 1e308}) == ({"amount": 1e308}, None)
