"""Offline argument extraction, guided by the tool's input schema."""

from __future__ import annotations

from typing import Any

from gateway.routing.extract import ArgumentExtractor

SKU_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "pattern": "^SKU\\d{7}$", "description": "e.g. SKU2024001"},
        "days": {"type": "integer", "description": "window in days"},
    },
    "required": ["sku"],
}

extractor = ArgumentExtractor()


def test_pattern_finds_the_value_anywhere() -> None:
    result = extractor.extract("SKU2024001 还有多少库存", SKU_SCHEMA)
    assert result.arguments == {"sku": "SKU2024001"}
    assert result.missing == []


def test_numbers_go_to_the_parameter_they_follow() -> None:
    schema = {
        "type": "object",
        "properties": {"base": {"type": "integer"}, "height": {"type": "integer"}},
        "required": ["base", "height"],
    }
    result = extractor.extract("a triangle with height of 5 and a base of 10", schema)
    assert result.arguments == {"base": 10, "height": 5}


def test_enum_dates_quotes_and_names() -> None:
    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "date": {"type": "string", "format": "date"},
            "city": {"type": "string"},
            "note": {"type": "string", "description": "free text"},
        },
        "required": ["unit", "date", "city"],
    }
    query = 'Weather in San Francisco on 2024-07-15 in Fahrenheit, note "bring umbrella"'
    result = extractor.extract(query, schema)
    assert result.arguments == {
        "unit": "fahrenheit",
        "date": "2024-07-15",
        "city": "San Francisco",
        "note": "bring umbrella",
    }


def test_a_reference_back_takes_the_previous_calls_argument() -> None:
    result = extractor.extract(
        "那这个 SKU 最近卖得怎么样", SKU_SCHEMA, previous={"sku": "SKU2024001"}
    )
    assert result.arguments == {"sku": "SKU2024001"}
    assert result.from_context == ["sku"]


def test_no_reference_back_means_no_context_fill() -> None:
    result = extractor.extract("sales report please", SKU_SCHEMA, previous={"sku": "SKU2024001"})
    assert result.arguments == {}
    assert result.missing == ["sku"]
    message = result.missing_message(SKU_SCHEMA)
    assert "'sku'" in message
    assert "^SKU\\d{7}$" in message
    assert "SKU2024001" in message  # the description's example


def test_a_value_that_does_not_match_the_pattern_is_not_taken() -> None:
    result = extractor.extract("stock of SKU12", SKU_SCHEMA)
    assert result.missing == ["sku"]
