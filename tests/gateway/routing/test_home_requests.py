"""Home-automation requests: weekdays, rooms, device acts, a nested object, numbers in words.

Found by the smart-home set (``tests/data/smarthome``, scored blind first). Its tools take
what earlier sets never asked for, and each was read as nothing:
- a weekly rule's ``days`` (an array of ``mon`` ... ``sun``) from "weekdays", "on fridays
  and saturdays", 周六周日, 周一到周五, "every night";
- a free-text ``room`` or ``door`` from "dim the lounge", "porch light on", 书房的灯, "the
  front door"; a thermostat's ``room`` enum from 婴儿房 or 客厅;
- the act an enum of acts or states asks for: "let me in" unlocks, 撤防 disarms, "we're
  heading out" arms for ``armed_away``, "回去充电" docks, 开暖气 is ``heat_on``;
- a ``validity: {start, end}`` object from "2025-05-01 to 2025-05-05";
- "twenty-two degrees", 二十二度, 百分之五十; "6.30am" and "eleven pm";
- Chinese options glossed in the description's list, in their order: "(away / home /
  sleep / cinema / party)" for ["离家", "回家", "睡眠", "影院", "派对"].
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gateway.routing import weekdays
from gateway.routing.extract import ArgumentExtractor

extractor = ArgumentExtractor()
DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


def tool(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


def filled(query: str, schema: dict[str, Any]) -> dict[str, Any]:
    return extractor.extract(query, schema).arguments


RULE = tool(
    ["days", "time", "action"],
    days={"type": "array", "items": {"type": "string", "enum": DAYS}, "minItems": 1},
    time={"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
    action={
        "type": "string",
        "enum": ["lights_on", "lights_off", "heat_on", "heat_off", "lock_all", "vacuum_start"],
    },
)


@pytest.mark.parametrize(
    ("query", "days", "time", "action"),
    [
        ("weekdays 6.30am heating on automatically", DAYS[:5], "06:30", "heat_on"),
        ("lights on at 19:45 on fridays and saturdays", ["fri", "sat"], "19:45", "lights_on"),
        ("lock all the doors at eleven pm every night", DAYS, "23:00", "lock_all"),
        ("每周六周日早上九点自动开扫地机", ["sat", "sun"], "09:00", "vacuum_start"),
        ("周一到周五晚上十点半关掉所有灯", DAYS[:5], "22:30", "lights_off"),
        ("每天早上6点开暖气", DAYS, "06:00", "heat_on"),
    ],
)
def test_a_weekly_rule(query: str, days: list[str], time: str, action: str) -> None:
    assert filled(query, RULE) == {"days": days, "time": time, "action": action}


@pytest.mark.parametrize(
    ("query", "days"),
    [
        ("every day except sunday", DAYS[:6]),
        ("mon-fri", DAYS[:5]),
        ("Fri to Mon", ["mon", "fri", "sat", "sun"]),
        ("每周一三五", ["mon", "wed", "fri"]),
        ("周一至五", DAYS[:5]),
        ("weekends only", ["sat", "sun"]),
        ("sat and sun", ["sat", "sun"]),
        # no day: "the sun", "三次一周", 周末 is no 周 + day
        ("when the sun sets", []),
        ("一周三次", []),
    ],
)
def test_days_as_people_write_them(query: str, days: list[str]) -> None:
    assert weekdays.options_named(query, DAYS) == days


def test_day_options_in_other_forms() -> None:
    assert weekdays.options_named("weekdays", ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]) == [
        "MO", "TU", "WE", "TH", "FR",
    ]  # fmt: skip
    assert weekdays.options_named("周三", ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"])
    assert weekdays.option_days(["happy", "sad", "sat", "sun", "mon"]) is None


LIGHT = tool(
    ["room"],
    room={"type": "string", "description": "room/area as the user names it"},
    on={"type": "boolean"},
    brightness={"type": "integer", "minimum": 0, "maximum": 100, "description": "percent"},
)
LOCK = tool(
    ["action"],
    door={"type": "string", "description": "Door label, used when no device id is given"},
    action={"type": "string", "enum": ["lock", "unlock"]},
)


@pytest.mark.parametrize(
    ("query", "schema", "expected"),
    [
        ("dim the lounge to 30%", LIGHT, {"room": "lounge", "brightness": 30}),
        ("porch light on", LIGHT, {"room": "porch", "on": True}),
        ("set the dining room lights to 80 percent", LIGHT, {"room": "dining room"}),
        ("主卧灯光调到百分之五十", LIGHT, {"room": "主卧", "brightness": 50}),
        ("关掉儿童房的灯", LIGHT, {"room": "儿童房", "on": False}),
        ("lock the front door", LOCK, {"door": "front", "action": "lock"}),
        ("let me in, front door please", LOCK, {"door": "front", "action": "unlock"}),
        ("帮我把后门锁上", LOCK, {"door": "后门", "action": "lock"}),
        ("把前门解锁", LOCK, {"door": "前门", "action": "unlock"}),
    ],
)
def test_rooms_doors_and_switches(query: str, schema: dict[str, Any], expected: dict) -> None:
    got = filled(query, schema)
    assert {key: got.get(key) for key in expected} == expected


def test_a_room_number_is_no_room() -> None:
    """A ``room`` whose description shows a number takes the number, not a room's name."""
    hotel = tool(["room"], room={"type": "string", "description": "Room number, e.g. 1208"})
    assert filled("towels to room 1208 and the bathroom light is out", hotel) == {"room": "1208"}


THERMOSTAT = tool(
    ["target_c"],
    room={"type": "string", "enum": ["living_room", "bedroom", "kitchen", "nursery"]},
    target_c={"type": "number", "minimum": 5, "maximum": 30, "description": "degrees Celsius"},
    hold_minutes={"type": "integer", "minimum": 0, "maximum": 720},
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("put the heat on, twenty-two degrees pls", {"target_c": 22}),
        ("把客厅温度调到二十二度", {"room": "living_room", "target_c": 22}),
        ("婴儿房太热了，调成20度", {"room": "nursery", "target_c": 20}),
    ],
)
def test_a_temperature_in_words_and_a_room_in_chinese(query: str, expected: dict) -> None:
    assert filled(query, THERMOSTAT) == expected  # hold_minutes takes no degree


ALARM = tool(["state"], state={"type": "string", "enum": ["armed_away", "armed_stay", "disarmed"]})
VACUUM = tool(["command"], command={"type": "string", "enum": ["start", "stop", "pause", "dock"]})


@pytest.mark.parametrize(
    ("query", "schema", "key", "option"),
    [
        ("arm the alarm, we're heading out", ALARM, "state", "armed_away"),
        ("晚上睡觉了，把安防设成在家布防", ALARM, "state", "armed_stay"),
        ("撤防，密码是 770215", ALARM, "state", "disarmed"),
        ("turn off the alarm before my kid gets home", ALARM, "state", "disarmed"),
        ("vacuum the hallway, half an hour", VACUUM, "command", "start"),
        ("RV-112 回去充电", VACUUM, "command", "dock"),
        ("扫地机暂停一下", VACUUM, "command", "pause"),
        ("扫地机别扫了，彻底停掉", VACUUM, "command", "stop"),
    ],
)
def test_the_act_a_device_is_asked(query: str, schema: dict, key: str, option: str) -> None:
    assert filled(query, schema).get(key) == option


def test_an_act_between_two_states_is_not_guessed() -> None:
    """ "arm the alarm" says neither away nor stay."""
    assert "state" not in filled("arm the alarm", ALARM)


GUEST = tool(
    ["guest_name", "validity"],
    guest_name={"type": "string", "description": "Name of the guest"},
    validity={
        "type": "object",
        "properties": {
            "start": {"type": "string", "format": "date"},
            "end": {"type": "string", "format": "date"},
        },
        "required": ["start", "end"],
    },
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "send Priya a door code, valid 2025-07-04 to 2025-07-08",
            {"guest_name": "Priya", "validity": {"start": "2025-07-04", "end": "2025-07-08"}},
        ),
        (
            "给张伟一个访客码，2025年5月1日到5月5日",
            {"guest_name": "张伟", "validity": {"start": "2025-05-01", "end": "2025-05-05"}},
        ),
    ],
)
def test_a_nested_object(query: str, expected: dict) -> None:
    assert filled(query, GUEST) == expected


def test_a_nested_object_half_read_is_left_out() -> None:
    """One date of two is no ``validity``: the 422 asks for it whole."""
    result = extractor.extract("give Priya a code from 2025-07-04", GUEST)
    assert "validity" not in result.arguments
    assert "validity" in result.missing


SCENE = tool(
    ["mode"],
    mode={
        "type": "string",
        "enum": ["离家", "回家", "睡眠", "影院", "派对"],
        "description": "Scene to apply (away / home / sleep / cinema / party)",
    },
)


@pytest.mark.parametrize(
    ("query", "mode"),
    [
        ("movie night!! switch to cinema mode", "影院"),
        ("switch the house to away mode, we're off for the weekend", "离家"),
        ("home mode on, im back", "回家"),
        ("party scene for 90 minutes", "派对"),
    ],
)
def test_options_glossed_in_the_description(query: str, mode: str) -> None:
    assert filled(query, SCENE) == {"mode": mode}


def test_a_question_is_no_negation() -> None:
    """有没有 asks "is there any"; it does not say the flag is false."""
    leaks = tool(
        [],
        days={"type": "integer", "minimum": 1, "maximum": 90},
        only_alerts={"type": "boolean", "description": "为 true 时只显示漏水报警事件"},
    )
    assert filled("最近十天有没有漏水报警", leaks) == {"days": 10, "only_alerts": True}


REPORT = tool(
    ["start_date", "end_date"],
    start_date={"type": "string", "format": "date"},
    end_date={"type": "string", "format": "date"},
    granularity={"type": "string", "enum": ["hour", "day", "week", "month"]},
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "PL-0725这个插座上周每小时的耗电情况",
            {"start_date": "2026-11-23", "end_date": "2026-11-29", "granularity": "hour"},
        ),
        (
            "power used this week, by day",
            {"start_date": "2026-11-30", "end_date": "2026-12-06", "granularity": "day"},
        ),
        (
            "查一下2024年10月1日到10月31日的用电量，按天显示",
            {"start_date": "2024-10-01", "end_date": "2024-10-31", "granularity": "day"},
        ),
        # the month names the time, not the cut: 每天 does
        (
            "2023年12月每天用电多少？",
            {"start_date": "2023-12-01", "end_date": "2023-12-31", "granularity": "day"},
        ),
        ("usage for 2025, monthly", {"start_date": "2025-01-01", "end_date": "2025-12-31"}),
    ],
)
def test_a_week_and_the_cut_of_a_report(query: str, expected: dict) -> None:
    on_saturday = ArgumentExtractor(today=lambda: date(2026, 12, 5))
    got = on_saturday.extract(query, REPORT).arguments
    assert {key: got.get(key) for key in expected} == expected


def test_a_day_of_next_week_is_a_day() -> None:
    on_saturday = ArgumentExtractor(today=lambda: date(2026, 12, 5))
    got = on_saturday.extract("下周三的用电", REPORT).arguments
    assert got.get("start_date") != "2026-12-07"  # not the whole week


def test_a_degree_is_no_count_of_minutes() -> None:
    """ "2 degrees" is a temperature's; ``hold_minutes`` takes no degree."""
    assert "hold_minutes" not in filled("make it 21 degrees in the kitchen", THERMOSTAT)
    assert "hold_minutes" not in filled("make it 2 degrees warmer", THERMOSTAT)
    assert filled("hold 21 degrees for 90 minutes", THERMOSTAT) == {
        "target_c": 21,
        "hold_minutes": 90,
    }


def test_lock_it_back() -> None:
    assert filled("好了，再锁回去吧", LOCK).get("action") == "lock"
