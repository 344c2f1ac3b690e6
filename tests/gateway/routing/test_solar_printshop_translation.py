"""Arguments found by the solar, print-shop and translation sets (``tests/data/solar``,
``printshop``, ``translation``, written blind to the router):

- a translation's languages are read with their sides (``routing/languages.py``): "from
  English to German", "spanish to english", "japanese->english", "into dutch, polish and
  german from english", 中文…翻成英文, 西班牙语到英语, 德语翻中文, 英译日; a side no language
  is named for is left out (a follow-up's "and into French?" keeps the source it had);
- of an enum of language codes, "it" and "no" are words, not Italian and Norwegian;
- a range of days runs forward ("between 1 Jan and 30 June 2026", "from 1 June to 31
  August" in December: the January and the June before);
- "move it to the 17th", "book it for the 20th" name days of the month (not "the 2nd
  option"), and "we'll be away on the 14th" refuses that day.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gateway.routing import languages, temporal
from tests.gateway.routing.conftest import extracted, object_schema

CODES = ["en", "zh", "de", "fr", "es", "it", "pt", "ja", "ko", "ru", "ar", "nl", "pl"]
QUOTE = object_schema(
    {
        "source_language": {"type": "string", "enum": CODES},
        "target_language": {"type": "string", "enum": CODES},
        "word_count": {"type": "integer", "minimum": 1, "maximum": 200000},
    },
    ["source_language", "target_language"],
)
ORDER = object_schema(
    {
        "source_language": {"type": "string", "enum": CODES},
        "target_languages": {"type": "array", "items": {"type": "string", "enum": CODES}},
    },
    ["source_language", "target_languages"],
)


@pytest.mark.parametrize(
    ("query", "source", "target"),
    [
        ("How much would it cost to translate 3,000 words from English to German?", "en", "de"),
        ("sworn translation of my driver's license, spanish to english", "es", "en"),
        ("quote for 12k words japanese->english, need it rush", "ja", "en"),
        ("一份5000字的中文合同翻成英文大概多少钱？", "zh", "en"),
        ("请报个价：西班牙语到英语，法律文件", "es", "en"),
        ("德语翻中文 800 个词要多少钱", "de", "zh"),
        ("帮我估个价：英译日，加急", "en", "ja"),
        ("a certified translation of my German diploma into English", "de", "en"),
    ],
)
def test_a_translations_languages_are_read_with_their_sides(
    query: str, source: str, target: str
) -> None:
    got = extracted(query, QUOTE)
    assert (got["source_language"], got["target_language"]) == (source, target)


@pytest.mark.parametrize(
    ("query", "source", "targets"),
    [
        ("order translation into dutch, polish and german from english", "en", ["nl", "pl", "de"]),
        ("the user manual from English into German and French", "en", ["de", "fr"]),
        ("Spanish into English, it's our website copy", "es", ["en"]),
    ],
)
def test_every_target_named_is_listed(query: str, source: str, targets: list[str]) -> None:
    got = extracted(query, ORDER)
    assert (got["source_language"], got["target_languages"]) == (source, targets)


def test_a_side_named_by_no_language_is_left_to_the_session() -> None:
    got = extracted("and into French?", QUOTE)
    assert got == {"target_language": "fr"}  # not "fr" to "fr"


def test_it_is_no_italian() -> None:
    schema = object_schema({"language": {"type": "string", "enum": CODES}})
    assert extracted("can you do it by friday? the text is short", schema) == {}
    assert extracted("translate it into italian", schema) == {"language": "it"}


def test_one_language_without_a_direction_says_no_side() -> None:
    assert [(n.code, n.side) for n in languages.named("we speak German here")] == [("de", "")]
    assert languages.role_of("sourceLang") == "source"
    assert languages.role_of("target_languages") == "target"
    assert languages.role_of("language") == ""


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        (
            "payments between 1 Jan and 30 June 2026",
            "payments between 2026-01-01 and 2026-06-30",
        ),
        ("report from 1 June to 31 August", "report from 2026-06-01 to 2026-08-31"),
        ("from dec 20 to jan 5", "from 2026-12-20 to 2027-01-05"),  # already forward
        ("move install INS-52290 to the 17th", "move install INS-52290 to 2026-12-17"),
        ("book it for the 20th", "book it for 2026-12-20"),
        ("set it to the 2nd option", "set it to the 2nd option"),
    ],
)
def test_days_of_a_range_and_of_the_month(text: str, resolved: str) -> None:
    assert temporal.resolve(text, date(2026, 12, 7)) == resolved


def test_a_day_the_request_will_be_away_is_not_the_new_one() -> None:
    schema = object_schema(
        {
            "install_id": {"type": "string", "pattern": "^INS-\\d{5}$"},
            "new_date": {"type": "string", "format": "date"},
        },
        ["install_id", "new_date"],
    )
    query = "We'll be away on the 14th, can you move install INS-52290 to the 17th instead?"
    got: dict[str, Any] = extracted(query, schema)
    assert got == {"install_id": "INS-52290", "new_date": "2026-12-17"}


PRINT = object_schema(
    {
        "quantity": {"type": "integer", "minimum": 1, "maximum": 50000},
        "paper_weight_gsm": {"type": "integer", "minimum": 60, "maximum": 400},
        "artwork_url": {"type": "string", "description": "Link to the print-ready file."},
        "notes": {"type": "string", "maxLength": 2000},
        "method": {"type": "string", "enum": ["delivery", "pickup"]},
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "we'd like two hundred tri-fold brochures, silk 170gsm",
            {"quantity": 200, "paper_weight_gsm": 170},
        ),
        ("a thousand business cards please", {"quantity": 1000}),
        (
            "300 letterheads, the file is at https://files.example.com/lh.pdf",
            {"quantity": 300, "artwork_url": "https://files.example.com/lh.pdf"},
        ),
        ("can we collect it this saturday", {"method": "pickup"}),
    ],
)
def test_a_print_order_in_everyday_words(query: str, expected: dict[str, Any]) -> None:
    """A count of hundreds in words, a paper's weight no count, a link for a parameter
    named for one (and no "//files…" after a colon for the notes), "collect" for pickup."""
    assert extracted(query, PRINT) == expected
