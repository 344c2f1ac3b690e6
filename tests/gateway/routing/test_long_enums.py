"""A long enum (a catalogue's list, an upstream's or an imported document's) is read
through its index, and names the options the option-by-option reading names.

Past ``enums.LONG_ENUM`` options, ``extract`` looks an option up by the request's
tokens and words instead of asking each option (``gateway.routing.enums``). What the
request names must not change with that: the same options, for every rule that reads a
word. An integer too large for a float in an enum is no crash either (it had raised
OverflowError, a 500), and a message on a missing argument quotes a long enum's first
options only.
"""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import enums, vocabulary
from gateway.routing.extract import ArgumentExtractor, _option_named, describe_parameter
from gateway.routing.index import ToolIndex
from reach_common.embeddings import Embedder, VectorCache
from tests.gateway.routing.conftest import dry_run, manifest

NAMED = [
    "thinkpad_x1", "dell_latitude_7440", "final", "fault_repair", "production", "staging",
    "streetlight_out", "streetlight_flickering", "lost", "fri", "previous_cycle",
    "new_installation", "眼科", "皮肤科", "刮擦", "凹陷", "USD", "EUR", "en", "zh-CN",
]  # fmt: skip
# Options no request below names or shares a word with.
FILLER = [f"zq{i:03d}_vk{i:03d}" for i in range(100)]
OPTIONS = NAMED + FILLER
QUERIES = {
    "I want the thinkpad x1 please": "thinkpad_x1",  # written, underscores as spaces
    "order thinkpad_x1 now": "thinkpad_x1",  # written as it is
    "give me the dell": "dell_latitude_7440",  # a first word no other option has
    "results of the finals": "final",  # inflected
    "there is a fault, I need a repair": "fault_repair",  # a later word
    "deploy to prod": "production",  # shortened
    "the streetlight is out": "streetlight_out",  # every word
    "I lose my card all the time": "lost",  # a participle's verb
    "is it open on friday": "fri",  # a calendar word
    "charges from the last cycle": "previous_cycle",  # a word people use for it
    "I want a new install": "new_installation",  # begins a later word
    "眼科下午有大夫吗": "眼科",  # Chinese, written without spaces
    "车门被刮了": "刮擦",  # a character no other option has
    "pay 500 dollars": "USD",  # a currency in words
    "answer in chinese please": "zh-CN",  # a language
    "nothing here is on the list": None,
}


def test_the_list_is_long_enough_to_be_indexed() -> None:
    assert len(OPTIONS) > enums.LONG_ENUM


@pytest.mark.parametrize(("query", "expected"), QUERIES.items())
def test_a_long_enum_names_what_the_option_by_option_reading_names(
    query: str, expected: str | None
) -> None:
    spec = {"type": "string", "enum": OPTIONS}
    one_by_one = _option_named(query, list(OPTIONS), spec, "")
    indexed = ArgumentExtractor().extract(query, {"properties": {"pick": spec}})
    assert one_by_one == expected
    assert indexed.arguments.get("pick") == expected


def test_a_number_of_a_long_integer_enum_is_read_by_its_value() -> None:
    schema = {"properties": {"seats": {"type": "integer", "enum": list(range(5_000))}}}
    extractor = ArgumentExtractor()
    assert extractor.extract("book 777 seats", schema).arguments == {"seats": 777}
    assert extractor.extract("book some seats", schema).arguments == {}


@pytest.mark.parametrize("padding", [[], list(range(100))], ids=["short", "long"])
def test_an_integer_past_a_floats_range_is_no_crash(padding: list[int]) -> None:
    schema = {"properties": {"seats": {"type": "integer", "enum": [10**400, *padding, 5]}}}
    assert ArgumentExtractor().extract("book 5 seats", schema).arguments == {"seats": 5}


def test_a_list_takes_each_option_of_a_long_enum_once() -> None:
    schema = {
        "properties": {
            "tags": {"type": "array", "items": {"type": "string", "enum": OPTIONS}},
        }
    }
    query = "tag it staging, thinkpad x1 and staging again, then production"
    tags = ArgumentExtractor().extract(query, schema).arguments["tags"]
    assert tags == ["staging", "thinkpad_x1", "production"]


def test_the_routing_index_indexes_a_tools_long_enums_before_any_request(
    monkeypatch: pytest.MonkeyPatch, embedder: Embedder
) -> None:
    """Built off the event loop, with the tool's vectors: a request finds it ready."""
    tool = manifest("pick_option", "GET", "Pick an option", {"pick": {"enum": list(OPTIONS)}})
    ToolIndex([tool], VectorCache(embedder))
    built: list[int] = []
    monkeypatch.setattr(enums, "_build", lambda enum: built.append(len(enum)))
    enums.index_of(tool["input_schema"]["properties"]["pick"]["enum"])
    assert built == []


def test_a_missing_arguments_message_quotes_a_long_enums_first_options() -> None:
    spec = {"type": "integer", "enum": list(range(80_000)), "description": "seats " * 1_000}
    message = describe_parameter("seats", spec)
    assert "0, 1, 2" in message
    assert "(80,000 options)" in message
    assert "79999" not in message
    assert len(message) < 1_000


def test_a_long_enums_options_are_no_words_a_tool_changes() -> None:
    long = manifest("pick_option", "POST", "Pick", {"pick": {"enum": FILLER}})
    short = manifest("pick_option", "POST", "Pick", {"pick": {"enum": FILLER[:10]}})
    assert "zq099_vk099" not in vocabulary.attribute_text(long)
    assert "zq009_vk009" in vocabulary.attribute_text(short)


CATALOGUE = [
    manifest(
        "book_seats",
        "POST",
        "Book a number of seats for a show.",
        {"seats": {"type": "integer", "enum": [10**400, *range(20_000)]}},
    ),
    manifest(
        "change_plan",
        "POST",
        "Change a customer's mobile plan to another plan.",
        {"plan": {"type": "string", "enum": OPTIONS + [f"plan_{i}" for i in range(5_000)]}},
    ),
]


async def test_run_reads_long_enums_and_answers_without_a_500(gateway: httpx.AsyncClient) -> None:
    booked = await dry_run(gateway, "book 12 seats for the show", "long_enums")
    assert booked.status_code == 200, booked.text
    assert booked.json()["arguments"] == {"seats": 12}
    missing = await dry_run(gateway, "book some seats for the show", "long_enums")
    assert missing.status_code == 422, missing.text
    assert missing.json()["reason"] == "invalid_arguments"
    assert "options)" in missing.json()["message"]
    assert len(missing.text) < 4_000
    changed = await dry_run(gateway, "change my mobile plan to plan 4711", "long_enums")
    assert changed.status_code == 200, changed.text
    assert changed.json()["arguments"] == {"plan": "plan_4711"}
