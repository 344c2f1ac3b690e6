"""A parameter named for a record, with no "id" in its name (``order``, ``booking``, a
route's ``{invoice}``), takes the identifier the request gives it.

Such names are common in hand-written manifests ("order: The booking the tickets come
from.") and in imported APIs whose paths read ``/orders/{order}``. With no pattern and no
example the extractor read only id-like names (``order_id``, ``sku``), so "sell my
tickets for TK-2026-129983" found no ``order`` and the call was refused as missing it.
Found by the ticketing set (``tests/data/ticketing``), scored blind before the change.
"""

from __future__ import annotations

from typing import Any

from gateway.routing.extract import ArgumentExtractor

extractor = ArgumentExtractor()

RESALE = {
    "type": "object",
    "properties": {
        "order": {"type": "string", "description": "The booking the tickets come from."},
        "price_per_ticket": {"type": "number", "exclusiveMinimum": 0},
    },
    "required": ["order", "price_per_ticket"],
}


def filled(query: str, schema: dict[str, Any]) -> dict[str, Any]:
    return extractor.extract(query, schema).arguments


def one(name: str, description: str = "") -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": description}},
        "required": [name],
    }


def test_a_record_name_takes_the_identifier_of_the_request() -> None:
    arguments = filled(
        "I want to sell my tickets for TK-2026-129983 on the resale site, 60 quid each", RESALE
    )
    assert arguments == {"order": "TK-2026-129983", "price_per_ticket": 60}
    assert filled("show me booking BK7781 please", one("booking")) == {"booking": "BK7781"}
    assert filled("发票 INV-2026-0042 开错了", one("invoice")) == {"invoice": "INV-2026-0042"}
    assert filled("reopen parent order SO20261107 for me", one("parentOrder")) == {
        "parentOrder": "SO20261107"
    }


def test_the_record_word_picks_its_identifier_among_several() -> None:
    schema = {
        "type": "object",
        "properties": {"claim": {"type": "string"}, "note": {"type": "string"}},
        "required": ["claim"],
    }
    query = "policy PL-55120, claim CLM-611940: add a note please"
    assert filled(query, schema).get("claim") == "CLM-611940"


def test_no_identifier_no_value() -> None:
    """Only an identifier-shaped token is taken: not a word, a name or a bare amount."""
    assert "order" not in filled("how do i put my tickets up for sale", RESALE)
    assert filled("give the ticket to John Smith", one("ticket")) == {}
    assert filled("refund 120 to my card", one("refund")) == {}


def test_other_names_are_read_as_before() -> None:
    """A name that is no record's (``note``, ``orderly``) is not read as an identifier."""
    assert filled("attach TK-2026-129983 to the file", one("note")) == {}
    assert filled("attach TK-2026-129983 to the file", one("orderly")) == {}


def test_a_follow_up_takes_the_record_the_last_call_named_by_its_id() -> None:
    """ "list both of them for resale at 85 each" after a look at order TK-2026-255416
    (the lookup's ``order_id``) gives the resale's ``order``; and the reverse. Another
    record's id is not taken, nor is any without a word referring back."""

    def carried(query: str, schema: dict[str, Any], previous: dict[str, Any]) -> Any:
        return extractor.extract(query, schema, previous=previous).arguments

    looked_up = {"order_id": "TK-2026-255416", "quantity": 2}
    assert carried("list both of them for resale at 85 each", RESALE, looked_up) == {
        "order": "TK-2026-255416",
        "price_per_ticket": 85,
    }
    assert carried("cancel it please", one("order_id"), {"order": "TK-2026-255416"}) == {
        "order_id": "TK-2026-255416"
    }
    assert "order" not in carried("now list it at 85", RESALE, {"customer_id": "C12345"})
    assert "order" not in carried("list tickets for resale at 85 each", RESALE, looked_up)


def test_a_chinese_follow_up_refers_back_by_qizhong_or_shunbian() -> None:
    """ "把其中两张转给我妹妹" (two of them) and "顺便把第二张票…" (while you are at it)
    continue the order the last call named; a request with neither names its own."""
    transfer = {
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "pattern": "^TK-\\d{4}-\\d{6}$"},
            "recipient_phone": {"type": "string", "description": "接收人的手机号码。"},
            "new_holder_name": {"type": "string", "description": "新的观演人姓名。"},
        },
        "required": ["order_id"],
    }
    previous = {"order_id": "TK-2026-188406"}

    def order(query: str) -> Any:
        return extractor.extract(query, transfer, previous=previous).arguments.get("order_id")

    assert order("把其中两张转给我妹妹，手机 13800138000") == "TK-2026-188406"
    assert order("顺便把第二张票的观演人改成李娜") == "TK-2026-188406"
    assert order("两张票转给我妹妹，手机 13800138000") is None
