"""Arguments and routes found by the ski-resort, car-wash and wedding-planner sets
(``tests/data/skiresort``, ``carwash``, ``weddingplanner``, written blind to the router),
and by the bakery set's lines still missed:

- what a question about a menu's item is about ("does the carrot cake have nuts");
- a town followed by the rest of the sentence ("500 Market St, Oakland on Thursday");
- a date's day is no identifier's digits ("serves 12, pickup this saturday");
- an option named by its verb ("delivered" for ``delivery``, "pick it up" for ``pickup``);
- a day written after "should be" ("should be the 22nd");
- of two Chinese options an English change names, the one it changes to.
"""

from __future__ import annotations

from datetime import date

import pytest

from gateway.routing import temporal
from tests.gateway.routing.conftest import extracted, object_schema

ALLERGENS = object_schema(
    {
        "product": {"type": "string", "description": "product or flavour name"},
        "allergens": {
            "type": "array",
            "items": {"type": "string", "enum": ["gluten", "egg", "milk", "soy", "sesame"]},
        },
    },
    ["product"],
)


@pytest.mark.parametrize(
    ("query", "product"),
    [
        ("does the carrot cake have nuts in it?", "carrot cake"),
        ("what allergens are in your brownies", "brownies"),
        ("is there gluten or soy in the chocolate chip cookies?", "chocolate chip cookies"),
        ("ingredients in the sesame bagel?", "sesame bagel"),
        ("Is the almond croissant safe for someone with an egg allergy?", "almond croissant"),
        ("提拉米苏里面有鸡蛋吗", "提拉米苏"),
        ("你们的芒果慕斯含不含乳制品？", "芒果慕斯"),
        ("抹茶蛋糕有哪些过敏原", "抹茶蛋糕"),
    ],
)
def test_what_a_question_about_an_item_is_about(query: str, product: str) -> None:
    assert extracted(query, ALLERGENS)["product"] == product


def test_an_order_or_a_cart_is_no_item() -> None:
    assert "product" not in extracted("what's in my order?", ALLERGENS)
    assert "product" not in extracted("is there anything in the cart?", ALLERGENS)


DELIVERY = object_schema(
    {
        "order_id": {"type": "string", "description": "Order number, e.g. CK-20481"},
        "delivery_date": {"type": "string", "format": "date"},
        "address": {
            "type": "object",
            "properties": {
                "street": {"type": "string"},
                "city": {"type": "string"},
                "postal_code": {"type": "string"},
            },
            "required": ["street", "city"],
        },
    },
    ["order_id", "delivery_date", "address"],
)


@pytest.mark.parametrize(
    ("query", "city"),
    [
        ("bring order TR-3307 to our office at 500 Market St, Oakland on Thursday", "Oakland"),
        ("send CK-20481 to 4 Elm Road, Leeds and call me when outside", "Leeds"),
        ("deliver CK-20481 to 9 Birch Lane, Riverton between 2 and 4 tomorrow", "Riverton"),
    ],
)
def test_a_town_the_sentence_goes_on_after(query: str, city: str) -> None:
    address = extracted(query, DELIVERY)["address"]
    assert address["city"] == city
    assert address["street"][0].isdigit()


CAKE = object_schema(
    {
        "flavor": {"type": "string", "enum": ["vanilla", "chocolate"]},
        "servings": {"type": "integer", "minimum": 6, "maximum": 200},
        "date_needed": {"type": "string", "format": "date"},
        "fulfilment": {"type": "string", "enum": ["pickup", "delivery"]},
    },
    ["flavor", "servings", "date_needed"],
)


def test_a_dates_day_is_no_identifiers_digits() -> None:
    # Saturday is the 12th: the 12 the request writes is still twelve servings
    cake = extracted("need a chocolate cake, serves 12, pickup this saturday", CAKE)
    assert cake["date_needed"] == "2026-12-12"
    assert cake["servings"] == 12
    # a day the request writes as a date's is no count
    assert extracted("chocolate cake for Dec 12, serves 10", CAKE)["servings"] == 10
    assert extracted("chocolate cake on the 12th for 10", CAKE)["servings"] == 10
    assert "servings" not in extracted("chocolate cake for Dec 12", CAKE)


@pytest.mark.parametrize(
    ("query", "option"),
    [
        ("vanilla cake, we'd want it delivered", "delivery"),
        ("chocolate cake, please deliver it", "delivery"),
        ("vanilla cake, I'll pick it up", "pickup"),
        ("chocolate cake, my husband picked up the last one", "pickup"),
    ],
)
def test_an_option_named_by_its_verb(query: str, option: str) -> None:
    assert extracted(query, CAKE)["fulfilment"] == option


def test_a_verb_does_not_name_an_option_it_only_begins() -> None:
    schema = object_schema({"kind": {"type": "string", "enum": ["battery", "history"]}})
    assert "kind" not in extracted("the car was battered by hail", schema)


def test_a_day_after_should_be() -> None:
    today = date(2026, 12, 7)
    said = temporal.resolve("the date is wrong, should be the 22nd", today)
    assert "2026-12-22" in said
    assert "2026-12-09" in temporal.resolve("make it the 9th", today)
    assert temporal.resolve("this is the 3rd time I ask", today).endswith("3rd time I ask")


CHANGE = object_schema(
    {
        "order_id": {"type": "string"},
        "flavor": {"type": "string", "enum": ["香草", "巧克力", "柠檬"], "description": "新的口味"},
    }
)


@pytest.mark.parametrize(
    ("query", "flavor"),
    [
        ("switch CK-14420 from vanilla to chocolate pls", "巧克力"),
        ("change the flavour from lemon to vanilla", "香草"),
        ("chocolate instead of lemon for CK-14420", "巧克力"),
    ],
)
def test_a_change_names_the_chinese_option_it_changes_to(query: str, flavor: str) -> None:
    assert extracted(query, CHANGE)["flavor"] == flavor
