"""Arguments found by the laundry, charity and laboratory sets (``tests/data/laundry``,
``charity``, ``labtests``, written blind to the router), and by the leftovers of the
online-course set (``tests/data/elearning``):

- a list of integers named after what it numbers (``modules``, ``chapter_numbers``) is
  read from the numbers written beside that noun, ranges spelled out ("modules 1 to 3",
  第二和第五模块, 第1到3章);
- beside a code with an example's own letters (SH-4498 of "e.g. SH-4410"), a code of other
  letters (V-9031) is not claimed by that example's loose shape, and a required value may
  take what only an optional parameter's example claims;
- a code in capitals of another shape than its example's (SPRINGRUN, BACKPACK27 for "e.g.
  WINTER26"; CBC for "e.g. LIPID") is read where it is the only one, or the one the
  parameter's noun stands beside;
- a number written as a day of the month ("the 15th") is no sum, and a payment's day
  (``payment_day``) is no sum of money;
- a new day after one the request refuses ("I won't be home tomorrow … come Thursday");
- an option written with its last letter doubled before its ending ("hemmed" of ``hem``);
- a sentence sending requests to several tools ("use update_pledge / cancel_pledge") is
  what the tool is not for;
- each measure of an object in one unit (``waist_cm``, ``length_cm``) goes to the noun
  beside it ("the waist … to 82 cm", "100cm length"), and ``show_invoices`` is asked by
  "list the open invoices too".
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from gateway.routing import numbered, text
from tests.gateway.routing.conftest import blind_set, dry_run, extracted, object_schema

CATALOGUE = blind_set("charity")

MATERIALS = object_schema(
    {
        "course_id": {"type": "string"},
        "modules": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1},
            "description": "Module numbers to include; all if omitted.",
        },
        "file_types": {
            "type": "array",
            "items": {"type": "string", "enum": ["slides", "pdf", "code", "video"]},
        },
    },
    required=["course_id"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("can I download the videos from CRS-12580 module 6?", [6]),
        ("download the slides for modules 1 to 3 of CRS-33017", [1, 2, 3]),
        ("modules 2-4 and 7 of CRS-33017, code only", [2, 3, 4, 7]),
        ("我要 CRS-58006 第二和第五模块的 PDF 讲义", [2, 5]),
        ("CRS-58006 模块2和5的代码", [2, 5]),
    ],
)
def test_a_numbered_list_is_read_beside_its_noun(query: str, expected: list[int]) -> None:
    assert extracted(query, MATERIALS)["modules"] == expected


@pytest.mark.parametrize(
    "query",
    [
        "download everything from CRS-12580",  # no module named: all of them
        "CRS-12580 slides, due 2026-12-01",  # a date's numbers number no module
        "module 0 of CRS-12580",  # under the items' minimum: something else
    ],
)
def test_no_numbers_beside_the_noun_fill_no_list(query: str) -> None:
    assert "modules" not in extracted(query, MATERIALS)


@pytest.mark.parametrize(
    ("name", "noun"),
    [
        ("modules", "module"),
        ("chapter_numbers", "chapter"),
        ("pageNums", "page"),
        ("classes", "class"),
        ("numbers", None),
    ],
)
def test_the_noun_a_list_numbers(name: str, noun: str | None) -> None:
    assert numbered.noun_of(name) == noun


def test_chinese_counters_and_ranges() -> None:
    items: dict[str, Any] = {"type": "integer"}
    assert numbered.numbers_named("打印第1到3章", "chapters", items) == [1, 2, 3]
    assert numbered.numbers_named("只要第三页和第五页", "pages", items) == [3, 5]


SHIFT = object_schema(
    {
        "volunteer_id": {"type": "string"},
        "shift_id": {"type": "string", "description": "e.g. SH-4410"},
        "hours": {"type": "number", "minimum": 0.5, "maximum": 12},
    },
    required=["volunteer_id"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("drop me from SH-4498, id V-9031", {"volunteer_id": "V-9031", "shift_id": "SH-4498"}),
        ("log 5 hours for volunteer V-4420", {"volunteer_id": "V-4420", "hours": 5}),
        ("补录志愿时长：V-7710，2.5 小时", {"volunteer_id": "V-7710", "hours": 2.5}),
    ],
)
def test_a_code_of_other_letters_is_not_the_examples(query: str, expected: dict[str, Any]) -> None:
    assert extracted(query, SHIFT) == expected


CAMPAIGN = object_schema(
    {"campaign_code": {"type": "string", "description": "e.g. WINTER26"}}, ["campaign_code"]
)
PANEL = object_schema(
    {
        "sample_id": {"type": "string", "pattern": "^SMP-\\d{6}$"},
        "panel_code": {"type": "string", "description": "Limit to one panel, e.g. LIPID"},
        "format": {"type": "string", "enum": ["json", "pdf"]},
    },
    ["sample_id"],
)


@pytest.mark.parametrize(
    ("query", "schema", "expected"),
    [
        ("what's the total raised for BACKPACK27 so far?", CAMPAIGN, "BACKPACK27"),
        ("Progress on the SPRINGRUN campaign please", CAMPAIGN, "SPRINGRUN"),
        ("how is SPRINGRUN doing vs the HOPE27 campaign, ASAP", CAMPAIGN, "HOPE27"),
        ("我想看 SMP-381220 的 CBC 结果", PANEL, "CBC"),
        ("rerun HBA1C on SMP-190276", PANEL, "HBA1C"),
    ],
)
def test_a_code_in_capitals_of_another_shape(
    query: str, schema: dict[str, Any], expected: str
) -> None:
    name = "campaign_code" if schema is CAMPAIGN else "panel_code"
    assert extracted(query, schema)[name] == expected


@pytest.mark.parametrize(
    ("query", "schema"),
    [
        ("how are the campaigns doing, SPRINGRUN or BACKPACK27?", CAMPAIGN),  # two, no noun
        ("results for SMP-381220 please, PDF", PANEL),  # a file's kind
        ("results for SMP-381220 ASAP", PANEL),  # a way of writing
    ],
)
def test_capitals_that_are_no_code(query: str, schema: dict[str, Any]) -> None:
    assert not {"campaign_code", "panel_code"} & set(extracted(query, schema))


PLEDGE = object_schema(
    {
        "pledge_id": {"type": "string", "pattern": "^PL-\\d{6}$"},
        "amount": {"type": "number", "minimum": 1, "maximum": 10000},
        "payment_day": {"type": "integer", "minimum": 1, "maximum": 28},
    },
    ["pledge_id"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("move the collection date on PL-118840 to the 15th", {"payment_day": 15}),
        (
            "PL-118840: fifteen dollars, taken on the 5th of each month",
            {"amount": 15, "payment_day": 5},
        ),
        ("PL-118840: $40 on the 3rd", {"amount": 40, "payment_day": 3}),
    ],
)
def test_a_day_of_the_month_is_no_sum(query: str, expected: dict[str, Any]) -> None:
    assert extracted(query, PLEDGE) == {"pledge_id": "PL-118840", **expected}


def test_a_place_in_a_row_is_still_a_number() -> None:
    schema = object_schema({"floor": {"type": "integer", "minimum": 1, "maximum": 90}})
    assert extracted("send the cleaner to the 5th floor", schema) == {"floor": 5}


RESCHEDULE = object_schema(
    {
        "pickup_id": {"type": "string", "pattern": "^PU-\\d{5}$"},
        "new_date": {"type": "string", "format": "date"},
    },
    ["pickup_id", "new_date"],
)


@pytest.mark.parametrize(
    ("query", "new_date"),
    [
        (
            "I won't be home tomorrow for PU-45590. Could the driver come Thursday instead?",
            "2026-12-10",
        ),
        ("PU-45590 明天不在家，改到周四", "2026-12-10"),
        ("move PU-45590 to tomorrow", "2026-12-08"),  # no day refused
    ],
)
def test_a_new_day_is_not_the_one_refused(query: str, new_date: str) -> None:
    assert extracted(query, RESCHEDULE)["new_date"] == new_date


def test_a_sentence_sending_requests_to_several_tools_is_not_what_the_tool_is_for() -> None:
    description = (
        "Sets up a new recurring pledge for an existing donor. To change or stop a pledge "
        "that already exists, use update_pledge / cancel_pledge."
    )
    assert text.negative_sentences(description) == [
        "To change or stop a pledge that already exists, use update_pledge / cancel_pledge."
    ]
    assert "stop" not in text.positive_description(description)


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("Please cancel my recurring pledge PL-118840.", "cancel_pledge"),
        (
            "I want to end my monthly gift at the end of this month. Pledge number PL-300122.",
            "cancel_pledge",
        ),
        ("DN-60155 wants to commit 500 per year", "create_pledge"),
    ],
)
async def test_a_pledge_is_cancelled_by_the_tool_the_creator_sends_it_to(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    body = (await dry_run(gateway, query, "donor")).json()
    assert body.get("tool_id") == tool_id, body


ALTERATION = object_schema(
    {
        "changes": {
            "type": "array",
            "items": {"type": "string", "enum": ["hem", "take_in", "replace_zipper"]},
        },
        "ready_by": {"type": "string", "format": "date"},
        "measurements": {
            "type": "object",
            "properties": {"length_cm": {"type": "number", "minimum": 10, "maximum": 200}},
        },
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("I need my jeans hemmed, about 2 inches shorter", {"changes": ["hem"]}),
        (
            "zipper on my jacket is broken, can you replace it? need it back by the 20th",
            {"changes": ["replace_zipper"], "ready_by": "2026-12-20"},
        ),
    ],
)
def test_an_option_with_its_last_letter_doubled_and_a_day_no_length(
    query: str, expected: dict[str, Any]
) -> None:
    """ "hemmed" is ``hem`` inflected; "by the 20th" is a day, no length of 20 cm."""
    assert extracted(query, ALTERATION) == expected


BRANCH = object_schema(
    {"pickup_branch": {"type": "string", "description": "Branch code, e.g. SEA-AP."}}
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("pick up at LHR-T5 on friday", {"pickup_branch": "LHR-T5"}),
        ("book me a hotel near LAX for 2 nights", {}),  # a code of one part, no branch
        ("给 RSV-641209 加一个驾驶人", {}),  # a record's number, no code in capitals
    ],
)
def test_a_code_of_two_parts_is_read_as_two_parts(query: str, expected: dict[str, Any]) -> None:
    assert extracted(query, BRANCH) == expected


MEASURED = object_schema(
    {
        "measurements": {
            "type": "object",
            "properties": {
                "length_cm": {"type": "number", "minimum": 10, "maximum": 200},
                "waist_cm": {"type": "number", "minimum": 40, "maximum": 200},
                "sleeve_cm": {"type": "number", "minimum": 20, "maximum": 120},
            },
        }
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "Take in the waist on my trousers to 82 cm, and shorten the legs to 100cm length",
            {"waist_cm": 82, "length_cm": 100},
        ),
        ("sleeves on my coat are too long, shorten them to 60 cm", {"sleeve_cm": 60}),
        ("hem my jeans to 100 cm", {"length_cm": 100}),  # no noun: read as before
    ],
)
def test_each_measure_goes_to_the_noun_beside_it(query: str, expected: dict[str, Any]) -> None:
    assert extracted(query, MEASURED)["measurements"] == expected


def test_a_flag_to_show_something_is_the_request_to_list_it() -> None:
    schema = object_schema({"client_id": {"type": "string"}, "show_invoices": {"type": "boolean"}})
    query = "What's our outstanding balance, client CL-1190? list the open invoices too"
    assert extracted(query, schema) == {"client_id": "CL-1190", "show_invoices": True}
    assert extracted("balance for CL-1190 please", schema) == {"client_id": "CL-1190"}
