"""Arguments found by the tax-preparation, home-services and online-course sets, and
the fleet set before them (``tests/data/taxprep``, ``homeservices``, ``elearning``,
``fleet``, written blind to the router). Each rule reads what people type for a schema
that says what it wants in its own terms:

- a fleet number typed without its prefix ("truck 2231", "truck 815" for TRK-0412's
  shape, by a pattern or by an example), the prefix being the word's abbreviation;
- a measure in another unit than the parameter's ("a 2 km fence" for ``radius_m``);
- a point's latitude and longitude are no other parameter's numbers;
- the new day of a change is the one after "to", however the old one is written;
- one day named for a range whose end may be left out is the whole range;
- a notation in the description ("HH:MM") reads as the format it names;
- a list of files takes every file name written;
- a year named in words ("this year", 去年), a quarter ("the fourth quarter", 第四季度),
  initials joined by "&" ("P&L");
- a sum takes the number written as money over one that is not ("form 4868 … $3,000");
- a code whose letters begin another parameter's examples is that parameter's.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.gateway.routing.conftest import extracted, object_schema

TRUCK = {"type": "string", "pattern": "^TRK-[0-9]{4}$", "description": "Unit, format TRK-0000."}
TRUCK_BY_EXAMPLE = {"type": "string", "description": "车辆编号，例如 TRK-0412。"}
DRIVER_BY_EXAMPLE = {"type": "string", "description": "Driver id, e.g. DR-10234"}


@pytest.mark.parametrize(
    ("query", "spec", "expected"),
    [
        ("What routes did truck 2231 actually drive yesterday?", TRUCK, "TRK-2231"),
        (
            "Please schedule the annual inspection for truck 2231 on 2026-12-21",
            TRUCK_BY_EXAMPLE,
            "TRK-2231",
        ),
        ("pull the active critical DTCs for truck 815", TRUCK, "TRK-0815"),
        ("hos clock for driver 10234", DRIVER_BY_EXAMPLE, "DR-10234"),
        ("trips for 2231 please", TRUCK, None),  # no word names it
        ("truck 7 is late", TRUCK, None),  # one digit is a count as often
        (
            "pull the codes for truck 815",
            {**TRUCK, "description": "Unit."},
            None,
        ),  # no padding shown
        ("ticket 2231 is open", TRUCK, None),  # "ticket" abbreviates to no TRK
    ],
)
def test_a_number_takes_back_the_prefix_its_word_abbreviates(
    query: str, spec: dict[str, Any], expected: str | None
) -> None:
    assert extracted(query, object_schema({"vehicle_id": spec})).get("vehicle_id") == expected


FENCE = object_schema(
    {
        "name": {"type": "string", "maxLength": 80},
        "center": {
            "type": "object",
            "properties": {
                "lat": {"type": "number", "minimum": -90, "maximum": 90},
                "lon": {"type": "number", "minimum": -180, "maximum": 180},
            },
            "required": ["lat", "lon"],
        },
        "radius_m": {
            "type": "integer",
            "minimum": 50,
            "maximum": 50000,
            "description": "Radius in metres.",
        },
    },
    required=["name", "center", "radius_m"],
)


@pytest.mark.parametrize(
    ("query", "radius"),
    [
        ("geofence ACME dock lat 41.8781 lon -87.6298 radius 300m", 300),
        ("Set up a 2 km fence around our Memphis depot (35.1495, -90.0490)", 2000),
        ("新建围栏“广州配送中心”，坐标23.1291,113.2644，半径1公里", 1000),
        ("中心 39.9042,116.4074，半径五百米，叫北京站", 500),
        ("a fence of 0.5 miles at 40.7, -74.0", 805),
        ("a fence of 3 kg at 40.7, -74.0", None),  # no length
    ],
)
def test_a_measure_is_read_in_the_parameters_unit(query: str, radius: int | None) -> None:
    assert extracted(query, FENCE).get("radius_m") == radius


@pytest.mark.parametrize(
    ("name", "description", "query", "expected"),
    [
        ("weight_kg", "", "a parcel of 500 g", 0.5),
        ("weightKg", "", "两公斤", 2),
        ("distance", "Distance in km.", "about 800 metres", 0.8),
        ("distance", "Distance in km.", "about 3 km", None),  # its own unit: the plain rules
    ],
)
def test_a_unit_is_read_from_the_name_or_the_description(
    name: str, description: str, query: str, expected: float | None
) -> None:
    from gateway.routing import extract, measures

    spec = {"type": "number", "minimum": 0, "description": description}
    unit = measures.unit_of(name, spec)
    assert unit is not None
    found = measures.converted(query, unit, set())
    assert (found[0] if found else None) == expected
    if expected is not None:
        assert extract._number(query, name, spec, "number", set()) == expected


RESCHEDULE = object_schema(
    {
        "appointment_id": {"type": "string", "description": "e.g. APT-7731"},
        "new_date": {"type": "string", "format": "date"},
        "new_time": {"type": "string", "description": "HH:MM (24h)"},
    }
)


@pytest.mark.parametrize(
    ("query", "day", "clock"),
    [
        (
            "the shop can't take us wednesday, shift booking APT-4500 to friday morning instead",
            "2026-12-11",
            None,
        ),
        ("把周三的预约APT-4500改到周五", "2026-12-11", None),
        ("can we reschedule APT-7702 to tomorrow at 3pm instead", "2026-12-08", "15:00"),
        ("我约的 APT-5521 能改到下周三下午两点吗", "2026-12-16", "14:00"),
        ("move APT-7702 to friday", "2026-12-11", None),
    ],
)
def test_a_change_takes_the_day_after_to_and_a_described_clock(
    query: str, day: str, clock: str | None
) -> None:
    arguments = extracted(query, RESCHEDULE)
    assert arguments.get("new_date") == day
    assert arguments.get("new_time") == clock


TRIPS = object_schema(
    {
        "vehicle_id": TRUCK,
        "start_date": {"type": "string", "format": "date"},
        "end_date": {"type": "string", "format": "date"},
    },
    required=["vehicle_id"],
)
STAY = object_schema(
    {
        "check_in": {"type": "string", "format": "date"},
        "check_out": {"type": "string", "format": "date"},
    },
    required=["check_in", "check_out"],
)


@pytest.mark.parametrize(
    ("query", "start", "end"),
    [
        ("TRK-2040 昨天跑了哪些路线？", "2026-12-06", "2026-12-06"),
        ("What routes did truck 2231 drive yesterday?", "2026-12-06", "2026-12-06"),
        ("trips for TRK-2040 since yesterday", "2026-12-06", None),
        ("trips for TRK-2040 until yesterday", None, "2026-12-06"),
        ("trips for TRK-2040 in the last 30 days", "2026-11-07", None),
    ],
)
def test_one_day_is_the_whole_range(query: str, start: str | None, end: str | None) -> None:
    arguments = extracted(query, TRIPS)
    assert (arguments.get("start_date"), arguments.get("end_date")) == (start, end)


def test_a_required_end_is_not_the_same_day() -> None:
    """A stay's check-out is never its check-in: one day is one end."""
    arguments = extracted("a room on 2026-12-10 please", STAY)
    assert "check_out" not in arguments


UPLOAD = object_schema(
    {
        "tax_year": {"type": "integer", "minimum": 2015, "maximum": 2026},
        "file_names": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "description": "names of the files being uploaded",
        },
    }
)


@pytest.mark.parametrize(
    ("query", "files"),
    [
        ("here's my W-2 for 2025, file is w2_acme.pdf", ["w2_acme.pdf"]),
        (
            "上传两张收据 receipt_jan.jpg 和 receipt_feb.jpg，2026年度的",
            ["receipt_jan.jpg", "receipt_feb.jpg"],
        ),
        (
            "attach 1099-B for 2025: schwab_1099b.pdf, fidelity_1099b.pdf",
            ["schwab_1099b.pdf", "fidelity_1099b.pdf"],
        ),
        ("I will send the W-2 later", None),
    ],
)
def test_a_list_of_files_takes_each_file_name(query: str, files: list[str] | None) -> None:
    assert extracted(query, UPLOAD).get("file_names") == files


YEARLY = object_schema({"tax_year": {"type": "integer", "minimum": 2015, "maximum": 2026}})


@pytest.mark.parametrize(
    ("query", "year"),
    [
        ("how much have I paid in estimated taxes this year?", 2026),
        ("我今年交了几次预估税？", 2026),
        ("last year's estimated payments", 2025),
        ("前年的税表", 2024),
        ("next year's estimates", None),  # out of the schema's bounds
        ("去年和今年的", None),  # two years
        ("estimated payments for 2024", 2024),
    ],
)
def test_a_year_named_in_words(query: str, year: int | None) -> None:
    assert extracted(query, YEARLY).get("tax_year") == year


@pytest.mark.parametrize(
    ("query", "quarter"),
    [
        ("eighteen hundred dollars for the fourth quarter", "Q4"),
        ("第四季度，2000美元", "Q4"),
        ("二季度的预估税", "Q2"),
        ("the 1st quarter and the 2nd quarter", None),
    ],
)
def test_a_quarter_named_in_words(query: str, quarter: str | None) -> None:
    schema = object_schema({"quarter": {"type": "string", "enum": ["Q1", "Q2", "Q3", "Q4"]}})
    assert extracted(query, schema).get("quarter") == quarter


def test_initials_joined_by_an_ampersand() -> None:
    schema = object_schema(
        {
            "report_type": {
                "type": "string",
                "enum": ["profit_and_loss", "balance_sheet", "cash_flow"],
            }
        }
    )
    assert (
        extracted("P&L for BIZ-0042 for November 2026", schema)["report_type"] == "profit_and_loss"
    )


def test_a_sum_takes_the_number_written_as_money() -> None:
    schema = object_schema(
        {
            "tax_year": {"type": "integer", "minimum": 2015, "maximum": 2026},
            "estimated_balance_due": {"type": "number", "minimum": 0},
        }
    )
    query = "file form 4868 for tax year 2026, I think I'll owe around $3,000"
    assert extracted(query, schema)["estimated_balance_due"] == 3000


STATUS = object_schema(
    {
        "request_id": {"type": "string", "description": "延期申请编号，例如 EXT-58213"},
        "assignment_id": {"type": "string", "description": "作业编号，例如 ASG-204518"},
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("was my extension for ASG-402266 approved or not", {"assignment_id": "ASG-402266"}),
        ("status of EXT-40226", {"request_id": "EXT-40226"}),
        ("EXT-40226 for ASG-402266", {"request_id": "EXT-40226", "assignment_id": "ASG-402266"}),
    ],
)
def test_a_code_is_the_parameter_whose_examples_share_its_letters(
    query: str, expected: dict[str, str]
) -> None:
    assert extracted(query, STATUS) == expected


PROS = object_schema(
    {
        "trade": {
            "type": "string",
            "enum": ["cleaning", "plumbing", "electrical", "handyman", "painting", "booking"],
        },
        "min_rating": {"type": "number", "minimum": 1, "maximum": 5},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("any house cleaners with at least 4.5 stars?", {"trade": "cleaning", "min_rating": 4.5}),
        ("quote for a deep clean of my flat", {"trade": "cleaning"}),
        ("Can I get a quote to repaint two bedrooms?", {"trade": "painting"}),
        ("need an electrician tomorrow", {"trade": "electrical"}),
        (
            "who does plumbing around here? just show me 3 options",
            {"trade": "plumbing", "limit": 3},
        ),
    ],
)
def test_a_trade_by_its_worker_and_a_rating_in_stars(query: str, expected: dict[str, Any]) -> None:
    """A rating is read with its decimal ("4.5 stars", never 5), and a number that counts
    something else ("3 options") is no rating."""
    assert extracted(query, PROS) == expected


COURSES = object_schema(
    {
        "query": {"type": "string", "minLength": 1, "description": "Free-text keywords."},
        "level": {"type": "string", "enum": ["beginner", "intermediate", "advanced"]},
        "language": {"type": "string", "enum": ["en", "es", "zh", "fr"]},
        "max_price": {"type": "number", "minimum": 0},
        "max_hours": {"type": "integer", "minimum": 1, "maximum": 500},
    },
    required=["query"],
)


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("looking for python courses for total beginners", "python"),
        ("any data science courses taught in spanish under 40 dollars?", "data science"),
        ("Do you have anything on watercolour painting?", "watercolour painting"),
        ("advanced kubernetes course, nothing longer than twenty hours", "kubernetes"),
        ("recomend me some cours on excel pivot tables", "excel pivot tables"),
        ("search for rust", "rust"),
    ],
)
def test_a_catalogue_search_takes_its_topic(query: str, terms: str) -> None:
    """Not the whole request: the words that ask, the things a catalogue lists, the
    filters and the other parameters' values are left out (a misspelt asking word too)."""
    assert extracted(query, COURSES)["query"] == terms


def test_a_request_of_no_topic_keeps_its_words() -> None:
    assert extracted("only the free ones pls", COURSES)["query"] == "only the free ones pls"
