"""A search tool's filters are read beside its free-text query.

Found by the ticketing set (``tests/data/ticketing``): an event search takes ``q`` (the
whole request when nothing narrower is found), ``city`` and ``max_price``.

- ``q`` held the request's numbers, so no filter got one: "comedy under 25" gave no
  ``max_price``. The whole request as a search's text now leaves its numbers free.
- A price's bound takes only a number written as money or as a bound ("under 30 euros",
  "预算300以内", "£40", "50 CHF"), never a count ("tickets for 4 people") or a year.
- A town's parameter takes the name the request places ("dates in London") before
  another, and a question's first word is no name's first word ("Any Taylor Swift").
"""

from __future__ import annotations

from typing import Any

from gateway.routing.extract import ArgumentExtractor

extractor = ArgumentExtractor()

SEARCH = {
    "type": "object",
    "properties": {
        "q": {"type": "string", "description": "Free text: artist, team, show title or venue."},
        "city": {"type": "string", "description": "City the event takes place in."},
        "category": {"type": "string", "enum": ["concert", "theatre", "comedy", "family"]},
        "max_price": {
            "type": "number",
            "minimum": 0,
            "description": "Only events whose cheapest ticket costs at most this much.",
        },
    },
    "required": [],
}


def filled(query: str) -> dict[str, Any]:
    return extractor.extract(query, SEARCH).arguments


def test_a_price_bound_is_read_beside_the_whole_request_as_text() -> None:
    assert filled("comedy under 25")["max_price"] == 25
    arguments = filled("something for the kids in Dublin, a family show maybe, under 30 euros")
    assert (arguments["city"], arguments["category"], arguments["max_price"]) == (
        "Dublin", "family", 30,
    )  # fmt: skip
    assert filled("想看话剧，预算300以内")["max_price"] == 300
    assert filled("音乐节 500元以下")["max_price"] == 500
    assert filled("shows under £40 in Leeds")["max_price"] == 40
    assert filled("jazz gigs CHF 50 in Zurich")["max_price"] == 50


def test_a_count_or_a_year_is_no_price() -> None:
    assert "max_price" not in filled("Coldplay tickets for 4 people")
    assert "max_price" not in filled("opera in Vienna 2027")
    assert "max_price" not in filled("两张票，周杰伦")


def test_a_town_is_the_name_the_request_places() -> None:
    assert filled("Any Taylor Swift dates in London?")["city"] == "London"
    assert filled("Coldplay in Manchester under £80")["city"] == "Manchester"
