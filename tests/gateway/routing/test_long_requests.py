"""A request as long as one may be (4,000 characters) costs its length, not its square.

A fuzz of every set's catalogue with requests of one token written over and over found
two paths that cost far more than the request's length: a Chinese word's English
reading could be 70 times longer than the word (第 "grades in which successful
candidates in the imperial examinations were placed"), and every rule that reads the
reading paid for all of it; and a shape taken from a parameter's example ("e.g. 1208")
was searched once per candidate it turned down, each search costing the text's length
(RE2 maps the whole text's offsets on each call). A /run took 1-2 s for such requests.
"""

from __future__ import annotations

from typing import Any

import pytest

from gateway.routing import extract
from gateway.routing.extract import ArgumentExtractor
from gateway.routing.gloss import dictionary, gloss

extractor = ArgumentExtractor()
CODE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"code": {"type": "string", "description": "Branch code, e.g. 1208"}},
    "required": ["code"],
}


def test_a_reading_is_no_longer_than_a_request_may_be() -> None:
    dictionary()
    assert len(gloss("第" * 2000)) <= 4000
    assert len(gloss("今晚" * 1000 + " SKU2024001")) <= 4000
    # an ordinary request reads as before, its values kept
    reading = gloss("帮我查一下订单SO20240715001的物流")
    assert "SO20240715001" in reading
    assert reading.startswith("look up")
    assert "order" in reading


def test_a_shape_is_searched_a_bounded_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every four digits of "2026-12-05 2026-12-05 …" is a piece of a date, which a code
    "e.g. 1208" does not take: turned down, each once, for at most ``_MAX_MATCHES`` of
    them."""
    searches = 0
    compile_pattern = extract.compile_pattern

    class Counted:
        def __init__(self, program: Any) -> None:
            self.program = program

        def search(self, *args: Any) -> Any:
            nonlocal searches
            searches += 1
            return self.program.search(*args)

    def counted(pattern: str) -> Any:
        program = compile_pattern(pattern)
        return Counted(program) if "\\d{4}" in pattern else program

    monkeypatch.setattr(extract, "compile_pattern", counted)
    result = extractor.extract("2026-12-05 " * 360, CODE_SCHEMA)
    assert "code" not in result.arguments
    assert 0 < searches <= 2 * extract._MAX_MATCHES


def test_a_code_after_turned_down_pieces_is_still_found() -> None:
    result = extractor.extract(
        "on 2026-12-05, 2026-12-06 and 12/07/2026 at branch 4417", CODE_SCHEMA
    )
    assert result.arguments == {"code": "4417"}
