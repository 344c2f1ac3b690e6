"""Arguments of a law firm's and a game platform's requests, found by the legal and gaming
sets (``tests/data/legal``, ``tests/data/gaming``, written blind to the router): a length
of time in two units or "and a half", the start and end of an event from one stretch of a
day's clock or a length after the start, the time zone the request names, a day of the
month named with its weekday, an hour written alone after a day, a court's code that holds
no count, a weekday that holds no count, accounts linked and unlinked, and a weekday a
past act happened on.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gateway.routing import temporal
from tests.gateway.routing.conftest import extracted, object_schema

MONDAY = date(2026, 12, 7)  # the "today" the two sets were written for

TIME_ENTRY = object_schema(
    {
        "matter": {"type": "string", "description": "Matter number, e.g. M-2024-00317"},
        "hours": {"type": "number", "multipleOf": 0.1, "minimum": 0.1, "maximum": 24},
        "work_date": {"type": "string", "format": "date"},
    },
    ["matter", "hours"],
)


@pytest.mark.parametrize(
    ("query", "hours"),
    [
        ("M-2024-00317 记一个半小时，起草答辩意见", 1.5),
        ("给M-2024-00400补录一条：审阅证据材料，两小时十二分钟", 2.2),
        ("1.5h drafting on M-2024-00317", 1.5),
        ("log an hour and a half of research on M-2024-00317", 1.5),
        ("M-2024-00317: 2 hours 30 minutes on the call", 2.5),
        ("M-2024-00317: two and a half hours reviewing discovery", 2.5),
        ("M-2024-00317 开会半小时", 0.5),  # a half alone is still half an hour
    ],
)
def test_a_length_of_time_in_two_units_or_and_a_half(query: str, hours: float) -> None:
    assert extracted(query, TIME_ENTRY)["hours"] == pytest.approx(hours)


def test_an_h_after_no_number_is_no_hour() -> None:
    assert temporal.duration("an h", "hour") is None
    assert temporal.duration("72h ban", "hour") == (72.0, 0, 3)


EVENT = object_schema(
    {
        "title": {"type": "string", "description": "Display name shown to players"},
        "event_type": {"type": "string", "enum": ["double_xp", "store_sale", "tournament"]},
        "starts_at": {"type": "string", "format": "date-time"},
        "ends_at": {"type": "string", "format": "date-time"},
        "multiplier": {"type": "number", "minimum": 1, "maximum": 5},
    },
    ["event_type", "starts_at", "ends_at"],
)


@pytest.mark.parametrize(
    ("query", "starts", "ends"),
    [
        ("tomorrow 6pm-10pm, double xp", "2026-12-08T18:00:00", "2026-12-08T22:00:00"),
        ("a cup on Dec 19 from 14:00 to 20:00", "2026-12-19T14:00:00", "2026-12-19T20:00:00"),
        ("store sale 2026-12-25 00:00 to 23:59", "2026-12-25T00:00:00", "2026-12-25T23:59:00"),
        ("double xp friday 22:00-02:00", "2026-12-11T22:00:00", "2026-12-12T02:00:00"),
        ("新年活动，12月31号0点到1月7号0点", "2026-12-31T00:00:00", "2027-01-07T00:00:00"),
        ("下周五晚上8点到12点搞个双倍经验", "2026-12-18T20:00:00", "2026-12-19T00:00:00"),
        ("明天上午9点到12点", "2026-12-08T09:00:00", "2026-12-08T12:00:00"),  # noon
    ],
)
def test_one_stretch_of_a_days_clock_gives_the_start_and_the_end(
    query: str, starts: str, ends: str
) -> None:
    arguments = extracted(query, EVENT)
    assert (arguments["starts_at"], arguments["ends_at"]) == (starts, ends)


@pytest.mark.parametrize(
    ("query", "ends"),
    [
        ("下周五晚上8点开一个商城打折活动，持续48小时", "2026-12-20T20:00:00"),
        ("store sale friday 8pm for 2 days", "2026-12-13T20:00:00"),
        ("double xp tomorrow 18:00 lasting 90 minutes", "2026-12-08T19:30:00"),
    ],
)
def test_a_length_after_the_start_gives_the_end(query: str, ends: str) -> None:
    assert extracted(query, EVENT)["ends_at"] == ends


def test_one_time_is_not_both_ends() -> None:
    """A single time fills the start, and the end stays missing rather than a copy."""
    arguments = extracted("double xp tomorrow at 6pm", EVENT)
    assert arguments["starts_at"] == "2026-12-08T18:00:00"
    assert "ends_at" not in arguments


@pytest.mark.parametrize(
    ("query", "starts"),
    [
        ("tomorrow 6pm-10pm utc, double xp", "2026-12-08T18:00:00Z"),
        ("下周五晚上8点（UTC）开个双倍经验", "2026-12-18T20:00:00Z"),
        ("double xp tomorrow 20:00 UTC+8", "2026-12-08T20:00:00+08:00"),
        ("double xp tomorrow 20:00 GMT-05:30", "2026-12-08T20:00:00-05:30"),
        ("double xp tomorrow 20:00", "2026-12-08T20:00:00"),  # no zone named: as written
        ("double xp tomorrow 20:00 UTC, that's 21:00 GMT+1", "2026-12-08T20:00:00"),  # two
    ],
)
def test_a_date_time_is_in_the_zone_the_request_names(query: str, starts: str) -> None:
    arguments = extracted(query, EVENT)
    assert arguments["starts_at"] == starts
    assert arguments.get("title") in (None, "")  # UTC names no event


def test_a_title_called_in_quotes_keeps_none_of_them() -> None:
    query = "we need a tournament called 'Winter Clash', Dec 19 from 14:00 to 20:00"
    assert extracted(query, EVENT)["title"] == "Winter Clash"


DEADLINE = object_schema(
    {
        "matter_number": {"type": "string", "pattern": "^M-\\d{4}-\\d{5}$"},
        "starts_at": {"type": "string", "format": "date-time"},
        "case_number": {"type": "string", "description": "Court case number as on the order"},
        "remind_days_before": {"type": "integer", "minimum": 0, "maximum": 30},
    },
    ["matter_number", "starts_at"],
)


@pytest.mark.parametrize(
    ("query", "starts"),
    [
        ("Depo of the expert, M-2025-00740, Wednesday the 16th at 9:30am", "2026-12-16T09:30:00"),
        ("trial set for March 1, 2027 at 9 in M-2023-01188", "2027-03-01T09:00:00"),
        ("hearing on Dec 18 at 2 for M-2025-00112", "2026-12-18T14:00:00"),
    ],
)
def test_a_day_named_with_its_weekday_or_an_hour_written_alone(query: str, starts: str) -> None:
    arguments = extracted(query, DEADLINE)
    assert arguments["starts_at"] == starts
    # the day's and the hour's numbers are no days of notice, and "16th" no case number
    assert "remind_days_before" not in arguments
    assert "case_number" not in arguments


def test_an_hour_is_not_read_from_a_street_number() -> None:
    arguments = extracted("hearing on Dec 18 at 9 Elm Street for M-2025-00112", DEADLINE)
    assert "starts_at" not in arguments


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        ("Wednesday the 16th", "2026-12-16"),
        ("Fri, 4th", "2026-12-04"),  # the Friday that was the 4th, gone by
        ("it landed on Friday", "it landed 2026-12-04"),
        ("the wire came in Tuesday", "the wire came in 2026-12-01"),
        ("see you on Friday", "see you 2026-12-11"),  # nothing happened: the coming one
        ("it will be received on Friday", "it will be received 2026-12-11"),
        ("case 1:24-cv-01234", "case 1:24-cv-01234"),  # a court's number is no clock
    ],
)
def test_days_and_clocks_as_written(text: str, resolved: str) -> None:
    assert temporal.resolve(text, MONDAY) == resolved


def test_a_courts_code_holds_no_count() -> None:
    docket = object_schema(
        {
            "case_number": {"type": "string"},
            "days_ahead": {"type": "integer", "minimum": 1, "maximum": 180},
        }
    )
    assert "days_ahead" not in extracted("（2025）沪0105民初1234号 下次开庭是哪天？", docket)


def test_a_weekday_and_an_evening_hold_no_count() -> None:
    stay = object_schema({"nights": {"type": "integer", "minimum": 1, "maximum": 30}})
    assert "nights" not in extracted("下周五晚上入住", stay)
    assert extracted("下周五入住，住三晚", stay)["nights"] == 3


LINK = object_schema(
    {
        "player_id": {"type": "string", "pattern": "^PLR-[0-9]{7}$"},
        "action": {"type": "string", "enum": ["link", "unlink"]},
        "platform": {"type": "string", "enum": ["steam", "psn", "xbox", "switch"]},
    },
    ["player_id", "action", "platform"],
)


@pytest.mark.parametrize(
    ("query", "action"),
    [
        ("PLR-2093318 想解绑PSN，他换了个新的PS账号", "unlink"),
        ("我的号绑错Steam了，ID PLR-9980123，先帮我把Steam解掉", "unlink"),
        ("disconnect my steam from PLR-9980123", "unlink"),
        ("link my switch to PLR-9980123", "link"),
        ("PLR-9980123 绑定一下 xbox", "link"),
        ("connect my psn to PLR-9980123", "link"),
    ],
)
def test_an_account_is_linked_or_unlinked_as_the_words_say(query: str, action: str) -> None:
    arguments: dict[str, Any] = extracted(query, LINK)
    assert arguments["action"] == action


HISTORY = object_schema(
    {
        "playerId": {"type": "string", "description": "Player ID, e.g. PLR-8830211"},
        "from_date": {"type": "string", "format": "date"},
        "to_date": {"type": "string", "format": "date"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 200},
    },
    ["playerId"],
)


@pytest.mark.parametrize(
    ("query", "since"),
    [
        ("what has PLR-4471230 bought in the last 30 days", "2026-11-07"),
        ("PLR-4471230 past 2 weeks purchases", "2026-11-23"),
        ("PLR-9012337 最近7天的充值", "2026-11-30"),
        ("PLR-9012337 近三个月的充值", "2026-09-07"),
    ],
)
def test_a_stretch_back_from_today_is_where_the_dates_start(query: str, since: str) -> None:
    arguments = extracted(query, HISTORY)
    assert arguments["from_date"] == since
    assert "to_date" not in arguments
    assert "limit" not in arguments  # its count is no limit


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        ("截至上个月底", "截至 2026-11-30"),
        ("11月初到12月底", "2026-11-01 到 2026-12-31"),
        ("2025年2月底", "2025-02-28"),
        ("by the end of last month", "by 2026-11-30"),
        ("上个月的账单", "2026-11 的账单"),  # the month alone stays a month
    ],
)
def test_the_end_or_the_start_of_a_month_is_its_day(text: str, resolved: str) -> None:
    assert temporal.resolve(text, MONDAY) == resolved


MATTER = object_schema(
    {
        "client_id": {"type": "string", "pattern": "^C-[0-9]{5}$"},
        "title": {"type": "string", "description": "案件名称或简述"},
        "opposing_party": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "counsel": {"type": "string"}},
            "required": ["name"],
        },
    },
    ["client_id", "title"],
)


def test_a_quoted_title_is_held_whole_and_read_by_nothing_else() -> None:
    query = 'Open a new matter for client C-10482, title "Acme v. Northgate – breach of supply"'
    arguments = extracted(query, MATTER)
    assert arguments["title"] == "Acme v. Northgate – breach of supply"
    assert "opposing_party" not in arguments  # "Acme" is the title's, no party's


def test_a_sum_of_money_is_no_number_of_minutes() -> None:
    controls = object_schema(
        {
            "playerId": {"type": "string", "pattern": "^PLR-[0-9]{7}$"},
            "daily_minutes": {"type": "integer", "minimum": 0, "maximum": 1440},
            "monthly_spend_cap": {"type": "number", "minimum": 0, "maximum": 1000},
        },
        ["playerId"],
    )
    assert extracted("cap PLR-7781204 spending at $10 a month", controls) == {
        "playerId": "PLR-7781204",
        "monthly_spend_cap": 10,
    }
    both = extracted("limit PLR-7781204 to 60 minutes a day and $20 a month", controls)
    assert (both["daily_minutes"], both["monthly_spend_cap"]) == (60, 20)


def test_a_rooms_code_holds_no_count() -> None:
    query = "mediation set for jan 12 2027 10am, M-2024-00400, room 4B. add it"
    assert "remind_days_before" not in extracted(query, DEADLINE)
    five_k = object_schema({"amount": {"type": "number"}})
    assert extracted("transfer 5K to savings", five_k)["amount"] == 5000  # K is a thousand


def test_a_wire_is_the_chinese_option_for_it() -> None:
    method = {"type": "string", "enum": ["电汇", "支票", "现金"]}
    deposit = object_schema({"amount": {"type": "number"}, "method": method})
    assert extracted("record a $2,500 retainer, came in today by wire", deposit)["method"] == "电汇"


def test_hyphenated_words_are_no_accounts_id() -> None:
    appeal = object_schema({"player_id": {"type": "string"}, "decision": {"type": "string"}})
    assert "player_id" not in extracted("cancel my battle pass auto-renew", appeal)
    deploy = object_schema({"service": {"type": "string"}})  # a machine's name may be words
    assert extracted("restart payments-api please", deploy)["service"] == "payments-api"


@pytest.mark.parametrize(
    ("query", "factor"),
    [
        ("tomorrow 6pm-10pm utc, triple xp happy hour", 3),
        ("schedule 1.5x drop rates for christmas day", 1.5),
        ("三倍经验，这周六晚上8点", 3),
        ("set the multiplier to 2 for the drop boost tomorrow 8pm", 2),
        ("下周五晚上8点开一个商城打折活动，持续48小时", None),  # 一个 is one event
        ("store sale friday 8pm for 2 days", None),
    ],
)
def test_a_factor_is_written_as_one(query: str, factor: float | None) -> None:
    assert extracted(query, EVENT).get("multiplier") == factor


BAN = object_schema(
    {
        "player_id": {"type": "string", "description": "Account to action, e.g. PLR-8830211"},
        "reason": {
            "type": "string",
            "enum": ["cheating", "harassment", "spam", "account_sharing", "inappropriate_name"],
        },
    },
    ["player_id", "reason"],
)


def test_an_option_the_tool_acts_on_is_not_what_the_request_chooses() -> None:
    """开挂 means "cheat"; 封号 "ban an account" names the thing banned, no account sharing."""
    assert extracted("PLR-3380012 开挂被实锤了，直接封号", BAN)["reason"] == "cheating"


REPORT = object_schema(
    {
        "match_id": {"type": "string", "pattern": "^[0-9]{12,19}$"},
        "reported_player": {"type": "string", "pattern": "^PLR-[0-9]{7}$"},
        "category": {"type": "string", "enum": ["外挂", "辱骂", "刷屏", "消极比赛", "违规昵称"]},
    },
    ["match_id", "reported_player", "category"],
)


@pytest.mark.parametrize(
    ("query", "category"),
    [
        ("对局 7730018822419 里的 PLR-6621903 开挂，锁头锁得太明显了", "外挂"),
        ("刚才那把对面有人开挂，帮我举报一下", "外挂"),
        # 对局 "match" is the schema's own word (match_id): no 消极比赛 "passive match"
        ("举报 PLR-2290114，对局 1029384756102，整局在语音里种族歧视", None),
    ],
)
def test_a_chinese_option_is_read_from_a_word_of_the_same_sense(
    query: str, category: str | None
) -> None:
    assert extracted(query, REPORT).get("category") == category
