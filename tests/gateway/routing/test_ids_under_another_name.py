"""A request that refers back takes a missing identifier from the session's previous call
under another name when it has the parameter's shape (``extract._under_another_name``):
"please just cancel it" after a look at booking RSV-118204 (the lookup's
``confirmation_code``) gives the cancel tool's ``reservation_code`` ("例如 RSV-204518").
Tools of one catalogue often name one thing two ways; a value of another shape, or one
of two that fit, is not taken."""

from __future__ import annotations

from typing import Any

from gateway.routing.extract import ArgumentExtractor

extractor = ArgumentExtractor()

CANCEL = {
    "type": "object",
    "properties": {
        "reservation_code": {"type": "string", "description": "订位确认码，例如 RSV-204518"},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["reservation_code"],
}
PATTERNED = {
    "type": "object",
    "properties": {"code": {"type": "string", "pattern": "^RSV-[0-9]{6}$"}},
    "required": ["code"],
}


def filled(query: str, schema: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
    return extractor.extract(query, schema, previous=previous).arguments


def test_a_reference_takes_the_id_the_last_call_named_another_way() -> None:
    previous = {"confirmation_code": "RSV-118204", "phone": "+44 7700 900123"}
    result = extractor.extract(
        "ok we can't make it, please just cancel it", CANCEL, previous=previous
    )
    assert result.arguments["reservation_code"] == "RSV-118204"
    assert "reservation_code" in result.from_context
    assert filled("cancel it", PATTERNED, previous) == {"code": "RSV-118204"}


def test_no_reference_no_other_shape_and_no_choice_between_two() -> None:
    previous = {"confirmation_code": "RSV-118204"}
    # a request of its own that names no booking takes nothing from the last call
    assert "reservation_code" not in filled("cancel a reservation", CANCEL, previous)
    # a value of another shape is something else
    assert "reservation_code" not in filled("cancel it", CANCEL, {"order_id": "SO-20240715"})
    # two values of the shape: which one is meant is not known
    two = {"confirmation_code": "RSV-118204", "old_code": "RSV-100001"}
    assert "reservation_code" not in filled("cancel it", CANCEL, two)
    # a plain word is no identifier, whatever pattern would take it
    word = {"type": "object", "properties": {"team": {"type": "string", "pattern": "^[a-z]{8}$"}},
            "required": ["team"]}  # fmt: skip
    assert "team" not in filled("page it", word, {"squad": "payments"})
