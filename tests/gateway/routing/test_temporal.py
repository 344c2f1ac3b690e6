"""Dates, months and lengths of time read from requests (``routing.temporal``), and the
arguments they fill: a month or a day named in words, a count of days or minutes named
as a span, an identifier typed in the wrong case."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from gateway.routing import temporal
from gateway.routing.extract import ArgumentExtractor

MANIFESTS = Path(__file__).resolve().parents[3] / "manifests"
TODAY = date(2026, 12, 1)  # a Tuesday


def schema_of(tool_id: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((MANIFESTS / f"{tool_id}.json").read_text())["input_schema"]
    return schema


@pytest.fixture
def extractor() -> ArgumentExtractor:
    return ArgumentExtractor(today=lambda: TODAY)


@pytest.mark.parametrize(
    ("query", "month"),
    [
        ("monthly report for March", "2026-03"),
        ("and february?", "2026-02"),
        ("December numbers please", "2026-12"),  # the current month is not in the future
        ("last month's report", "2026-11"),
        ("the month before last", "2026-10"),
        ("report for Jan 2025", "2025-01"),
        ("Sept. 2024 summary", "2024-09"),
        ("2025/3 的月报", "2025-03"),
        ("上个月的月报", "2026-11"),
        ("上上个月的报表", "2026-10"),
        ("本月月报", "2026-12"),
        ("2025年1月的月报", "2025-01"),
        ("十二月份的月报", "2026-12"),
        ("去年3月的月报", "2025-03"),
        ("report 2026-07", "2026-07"),  # written as the schema wants: taken as it is
    ],
)
def test_a_month_named_in_words_fills_a_month_pattern(
    extractor: ArgumentExtractor, query: str, month: str
) -> None:
    assert extractor.extract(query, schema_of("report_monthly")).arguments == {"month": month}


@pytest.mark.parametrize(
    "query",
    [
        "monthly report",
        "may I see the monthly report",
        "3个月的月报",
        "SKU2024001 的月报",
        "I have 2 may options",  # a number before "may" is no day of May
        "on 5/6",  # May 6 or June 5: not known
        "24/7 support",
    ],
)
def test_no_month_is_invented(extractor: ArgumentExtractor, query: str) -> None:
    """ "may" alone is a verb, "3个月" a length, an id's digits are not a date."""
    assert extractor.extract(query, schema_of("report_monthly")).arguments == {}


@pytest.mark.parametrize(
    ("query", "day"),
    [
        ("book it for tomorrow", "2026-12-02"),
        ("yesterday", "2026-11-30"),
        ("the day after tomorrow", "2026-12-03"),
        ("明天", "2026-12-02"),
        ("前天的", "2026-11-29"),
        ("next monday", "2026-12-07"),
        ("friday", "2026-12-04"),
        ("下周一", "2026-12-07"),
        ("这周五", "2026-12-04"),
        ("Jan 5", "2027-01-05"),  # the nearest Jan 5
        ("March 3rd 2025", "2025-03-03"),
        ("12月22号", "2026-12-22"),
        ("2026年11月30日", "2026-11-30"),
        ("2025/03/15", "2025-03-15"),
        # The day first, as much of the world writes it.
        ("an ortho consult 12 May 2025, bad knee", "2025-05-12"),
        ("on the 9th of June 2025", "2025-06-09"),
        ("3rd March", "2027-03-03"),
        # A month and day with a slash, when one of the two cannot be a month.
        ("a discovery call 3/14 4pm", "2027-03-14"),
        ("on 14/3", "2027-03-14"),
        # An ISO date inside Chinese (a Chinese character is a word character to \\b).
        ("从2024-11-01到现在的", "2024-11-01"),
        # A weekday beside the day it names is that day's, not the coming one.
        ("book it for Saturday 2025-06-14", "2025-06-14"),
        ("on 2025-06-14, Saturday", "2025-06-14"),
        ("周六 2025年6月14日", "2025-06-14"),
        ("Saturday, June 14th 2025", "2025-06-14"),
        # A range of days with its year written once, after it.
        ("visiting June 20-26, 2025", "2025-06-20"),
    ],
)
def test_a_day_named_in_words_fills_a_date_format(
    extractor: ArgumentExtractor, query: str, day: str
) -> None:
    schema = {"type": "object", "properties": {"start": {"type": "string", "format": "date"}}}
    assert extractor.extract(query, schema).arguments == {"start": day}


@pytest.mark.parametrize(
    ("query", "days"),
    [
        ("SKU2024001 sales in the past week", 7),
        ("SKU2024001 over the past two weeks", 14),
        ("SKU2024001 last 14 days", 14),
        ("SKU2024001 sales over the last year", 365),
        ("SKU2024001 for a fortnight", 14),
        ("SKU2024001 过去7天销量", 7),
        ("SKU2024001 近三个月卖得怎么样", 90),
        ("SKU2024001 上周卖了多少", 7),
        ("SKU2024001 最近一个月", 30),
        ("SKU2024001 去年卖了多少", 365),
        ("SKU2024001 for another week", 7),  # "another", "one more": one
        ("SKU2024001 over one more fortnight", 14),
    ],
)
def test_a_span_fills_a_count_of_days(extractor: ArgumentExtractor, query: str, days: int) -> None:
    arguments = extractor.extract(query, schema_of("sales_query")).arguments
    assert arguments == {"sku": "SKU2024001", "days": days}


def test_a_span_is_converted_to_the_parameter_unit(extractor: ArgumentExtractor) -> None:
    schema = {
        "type": "object",
        "properties": {
            "room": {"type": "string", "description": "room code, e.g. B3-201"},
            "duration_minutes": {"type": "integer", "minimum": 15, "maximum": 480},
        },
    }
    for query, minutes in [
        ("reserve B3-201 for 2 hours", 120),
        ("B3-201 半小时", 30),
        ("B3-201 九十分钟", 90),
        ("B3-201 for an hour", 60),
    ]:
        assert extractor.extract(query, schema).arguments == {
            "room": "B3-201",
            "duration_minutes": minutes,
        }


def test_a_span_outside_the_bounds_is_not_used(extractor: ArgumentExtractor) -> None:
    """Two years is 730 days, over sales_query's 365: the span fills nothing, and the
    number 2 is not taken for a count of days either."""
    arguments = extractor.extract("SKU2024001 over two years", schema_of("sales_query")).arguments
    assert arguments == {"sku": "SKU2024001"}


@pytest.mark.parametrize(
    ("name", "description", "unit"),
    [
        ("days", "", "day"),
        ("lookbackDays", "", "day"),
        ("duration_minutes", "", "minute"),
        ("timeout", "Timeout in seconds", "second"),
        ("window", "How far back to look, in days", "day"),
        ("day", "Day of the month", None),  # a calendar field, not a length
        ("month", "", None),
        ("min_price", "", None),
        ("count", "Orders per day", None),
    ],
)
def test_which_numbers_count_time(name: str, description: str, unit: str | None) -> None:
    assert temporal.unit_of(name, {"description": description}) == unit


def test_an_identifier_typed_in_lower_case_takes_the_case_its_pattern_asks(
    extractor: ArgumentExtractor,
) -> None:
    arguments = extractor.extract("stock check sku2025018 pls", schema_of("inventory_query"))
    assert arguments.arguments == {"sku": "SKU2025018"}


def test_case_is_only_changed_into_a_form_the_pattern_accepts(
    extractor: ArgumentExtractor,
) -> None:
    schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^Ab\\d{3}$"}}}
    assert extractor.extract("code ab123", schema).arguments == {}


def test_reading_a_long_request_stays_linear() -> None:
    """Every pattern is fixed, with no nested repetition: 200 KB of near-misses is read
    at once (a backtracking pattern would not finish)."""
    hostile = "12月" * 20_000 + "2025年" * 20_000 + "last " * 20_000 + "三个" * 20_000
    assert temporal.resolve(hostile, TODAY).startswith("2026-12 2026-12")
    found = temporal.duration(hostile + " 3 days", "day")
    assert found is not None
    assert found[0] == 3


HELPDESK = Path(__file__).resolve().parents[2] / "data" / "helpdesk" / "manifests"


def helpdesk_schema(tool_id: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((HELPDESK / f"{tool_id}.json").read_text())["input_schema"]
    return schema


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        (
            "订一个会议室，2026-12-05 上午十点，A1-105，半小时",
            {"room": "A1-105", "date": "2026-12-05", "start_time": "10:00", "duration_minutes": 30},
        ),
        (
            "帮我订 B3-201，明天下午两点，一个小时",
            {"room": "B3-201", "date": "2026-12-02", "start_time": "14:00", "duration_minutes": 60},
        ),
        (
            "reserve B3-201 tomorrow 3:30 pm for 2 hours",
            {
                "room": "B3-201",
                "date": "2026-12-02",
                "start_time": "15:30",
                "duration_minutes": 120,
            },
        ),
        (  # 明早: tomorrow morning
            "明早9点订 B3-201，半小时",
            {"room": "B3-201", "date": "2026-12-02", "start_time": "09:00", "duration_minutes": 30},
        ),
        (  # 今晚八点 is 20:00: the evening is kept with the day
            "今晚八点订 A1-105 一个小时",
            {"room": "A1-105", "date": "2026-12-01", "start_time": "20:00", "duration_minutes": 60},
        ),
        (  # a 24-hour clock without its leading zero
            "reserve A1-105 on 2026-12-09 at 9:30?",
            {"room": "A1-105", "date": "2026-12-09", "start_time": "09:30"},
        ),
    ],
)
def test_a_booking_reads_its_day_time_and_length(
    extractor: ArgumentExtractor, query: str, arguments: dict[str, Any]
) -> None:
    """A manifest written elsewhere (tests/data/helpdesk): a date format, an HH:MM pattern
    and an integer enum of minutes, each named the way people say them."""
    assert extractor.extract(query, helpdesk_schema("meeting_room_book")).arguments == arguments


def test_two_dates_fill_two_parameters_in_the_order_they_are_written(
    extractor: ArgumentExtractor,
) -> None:
    schema = helpdesk_schema("leave_request")
    arguments = extractor.extract("sick leave E10482 from tomorrow to 2026-12-04", schema)
    assert arguments.arguments == {
        "employee_id": "E10482",
        "leave_type": "sick",
        "start_date": "2026-12-02",
        "end_date": "2026-12-04",
    }
    one_date = extractor.extract("annual leave E10482 on 2027-01-10", schema).arguments
    assert one_date["start_date"] == "2027-01-10"
    assert "end_date" not in one_date  # one date is not both ends: it is asked for


@pytest.mark.parametrize(
    ("query", "option"),
    [
        ("request a replacement dell laptop for E10482", "dell_latitude_7440"),
        ("can I get an upgrade to a thinkpad x1? I'm E22222", "thinkpad_x1"),
    ],
)
def test_an_enum_option_named_loosely(
    extractor: ArgumentExtractor, query: str, option: str
) -> None:
    """Underscores read as spaces, and a first word no other option shares."""
    assert extractor.extract(query, helpdesk_schema("laptop_request")).arguments["model"] == option


@pytest.mark.parametrize(
    ("query", "option"), [("E10482 病假还有几天", "sick"), ("E10482 调休还有多少", "comp")]
)
def test_an_enum_option_by_the_word_its_description_pairs_with_it(
    extractor: ArgumentExtractor, query: str, option: str
) -> None:
    """ "假期类型：年假 annual，病假 sick，调休 comp": the description says which word is which."""
    arguments = extractor.extract(query, helpdesk_schema("leave_balance")).arguments
    assert arguments == {"employee_id": "E10482", "leave_type": option}


@pytest.mark.parametrize("query", ["reset password for wang.fang", "帮 wang.fang 重置一下密码"])
def test_a_user_name_shaped_like_the_description_s_example(
    extractor: ArgumentExtractor, query: str
) -> None:
    """ "例如 zhang.wei": words joined by a dot, of any length."""
    arguments = extractor.extract(query, helpdesk_schema("password_reset")).arguments
    assert arguments["username"] == "wang.fang"


def test_a_range_of_days_fills_both_ends(extractor: ArgumentExtractor) -> None:
    schema = {
        "type": "object",
        "properties": {
            "start_date": {"type": "string", "format": "date"},
            "end_date": {"type": "string", "format": "date"},
        },
    }
    filled = extractor.extract("my parents stay June 20-26, 2025", schema).arguments
    assert filled == {"start_date": "2025-06-20", "end_date": "2025-06-26"}
    assert temporal.resolve("Dec 3-5pm", TODAY) == "2026-12-03 - 17:00"  # a clock, no range


@pytest.mark.parametrize(
    ("query", "guests"),
    [
        ("book the rooftop from 6pm to 9pm", None),  # hours of the clock are no count
        ("the rooftop at 7 o'clock", None),
        ("rooftop at 6pm, 12 guests", 12),
        ("想订 2025 年 7 月 4 号晚上 7 点的楼顶露台，我带 8 个朋友", 8),  # "7 月", "7 点"
    ],
)
def test_a_clock_or_a_date_is_no_count(
    extractor: ArgumentExtractor, query: str, guests: int | None
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "guests": {"type": "integer", "minimum": 0, "maximum": 25},
            "start_time": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
        },
    }
    assert extractor.extract(query, schema).arguments.get("guests") == guests


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        ("from March to May 2024", "from 2024-03 to 2024-05"),
        ("between March and May 2024", "between 2024-03 and 2024-05"),
        ("2024年3月到5月", "2024-03 到 2024-05"),
        # Written twice, or running backwards: each month keeps its own year.
        ("March 2023 to May 2024", "2023-03 to 2024-05"),
        ("from Dec 2024 to Feb", "from 2024-12 to 2026-02"),
    ],
)
def test_a_range_of_months_with_its_year_written_once_is_of_that_year(
    text: str, resolved: str
) -> None:
    assert temporal.resolve(text, date(2026, 12, 3)) == resolved


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        ("订今晚的牛排馆，5 位，7点半", "订 2026-12-03 晚上 的牛排馆，5 位， 19:30"),
        ("下午3点到5点", "15:00 到 17:00"),
        ("早上跑步，晚上8点见", "早上跑步， 20:00 见"),
        ("上午9点到11点", "09:00 到 11:00"),
        # another sentence's part of the day says nothing of this clock
        ("晚上几点关门？我航班11点", "晚上几点关门？我航班 11:00"),
        # none said: one to six o'clock is in the afternoon, unless the night is said
        ("再约一个，同一天3点", "再约一个，同一天 15:00"),
        ("凌晨3点", "凌晨 03:00"),
        ("早上跑步，6点见", "早上跑步， 06:00 见"),
        ("十点", "10:00"),
    ],
)
def test_a_bare_chinese_clock_is_in_the_part_of_the_day_said_before_it(
    text: str, resolved: str
) -> None:
    assert temporal.resolve(text, date(2026, 12, 3)) == resolved


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        ("frm BOS to DEN 4/18/2025", "frm BOS to DEN 2025-04-18"),
        ("born 03/14/1991", "born 1991-03-14"),
        ("18/4/2025", "2025-04-18"),
        ("5/5/2025", "2025-05-05"),
        # either the 10th of April or the 4th of October: left as written
        ("check in 10/04/2025", "check in 10/04/2025"),
    ],
)
def test_a_day_written_with_slashes_and_a_year_when_only_one_reading_is_a_day(
    text: str, resolved: str
) -> None:
    assert temporal.resolve(text, date(2026, 12, 1)) == resolved


@pytest.mark.parametrize(
    ("text", "today", "resolved"),
    [
        ("this weekend", date(2026, 12, 1), "2026-12-05 to 2026-12-06"),
        ("this coming weekend", date(2026, 12, 1), "2026-12-05 to 2026-12-06"),
        ("next weekend", date(2026, 12, 1), "2026-12-12 to 2026-12-13"),
        ("这个周末两天有效", date(2026, 12, 1), "2026-12-05 to 2026-12-06 两天有效"),
        ("下周末深圳", date(2026, 12, 1), "2026-12-12 to 2026-12-13 深圳"),
        ("this weekend", date(2026, 12, 6), "2026-12-06"),  # said on the Sunday
        # a weekend with no week named is no date to act on
        ("我周末不在家", date(2026, 12, 1), "我周末不在家"),
        ("before the weekend rush", date(2026, 12, 1), "before the weekend rush"),
    ],
)
def test_a_named_weekend_is_its_saturday_to_its_sunday(
    text: str, today: date, resolved: str
) -> None:
    assert temporal.resolve(text, today) == resolved


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        ("从明年1月1日起生效", "从 2027-01-01 起生效"),
        ("明年三月五号", "2027-03-05"),
        ("明年3月", "2027-03"),
        ("今年12月24日", "2026-12-24"),
        ("去年3月份的账单", "2025-03 的账单"),
    ],
)
def test_last_this_and_next_year_with_a_month_and_a_day(text: str, resolved: str) -> None:
    assert temporal.resolve(text, date(2026, 12, 1)) == resolved
