"""A tool's long enum cannot make reading a request cost the enum's length.

A manifest comes from an admin, but also from an upstream MCP server or an imported
OpenAPI document, and one enum of a 1 MB body can hold 100,000 options. The router read
an enum option by option, on the event loop, for every /run that ranked the tool:
80,000 integer options took 91 s for "book some seats for the show" (a check made
every option look through the list of numeric ones), 40,000 names 0.2 s a request and
a list parameter up to 16 times that. Past ``enums.LONG_ENUM`` options the enum is
indexed once, off the loop, and a request looks up only what it names: here 8 times
the options must cost about what 1 time does (linear work would cost 8x, square 64x).
"""

from __future__ import annotations

import pytest

from gateway.routing.extract import ArgumentExtractor, index_enums
from tests.security.test_16_router_reads_requests_in_linear_time import ratio

EXTRACTOR = ArgumentExtractor()
QUERY = "book some seats for the show, and change my plan to something cheaper with more data"
RATIO_BAR = 4  # 8x the options: reading through an index costs about 1x, linear 8x


def options(kind: str, count: int) -> list[object]:
    if kind == "integers":
        return list(range(count))
    return [f"plan_{i:06d}_{'abcdefgh'[i % 8]}" for i in range(count)]


def schema(kind: str, count: int) -> dict[str, object]:
    enum = options(kind.removeprefix("a list of "), count)
    spec: dict[str, object] = {"type": "string", "enum": enum}
    if kind.startswith("a list of "):
        spec = {"type": "array", "items": spec}
    index_enums(spec)  # as the routing index does when the tool is registered
    return {"type": "object", "properties": {"choice": spec}}


@pytest.mark.parametrize("kind", ["integers", "names", "a list of names"])
def test_reading_a_request_costs_the_same_for_8_times_the_options(kind: str) -> None:
    short, long = schema(kind, 2_000), schema(kind, 16_000)
    cost = ratio(lambda: EXTRACTOR.extract(QUERY, long), lambda: EXTRACTOR.extract(QUERY, short))
    assert cost < RATIO_BAR, f"{kind}: 8x the options cost {cost:.1f}x the time"
