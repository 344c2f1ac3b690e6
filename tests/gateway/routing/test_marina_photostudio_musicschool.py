"""Arguments and routes found by the marina, photo-studio and music-school sets
(``tests/data/marina``, ``photostudio``, ``musicschool``, written blind to the router):

- "can I cancel…" orders as "can you cancel…" does; "amend" and "switch" change ("switch
  it off" toggles); a verb with two letters swapped or one left out ("cancle", "updte")
  is the verb; "push my session … to Saturday" moves it in time; "how much is left to
  pay" asks for an amount, no payment;
- a description's sentence whose subject is an action it does not take ("Cancellations
  are not handled here") disclaims that action, and a change is no cancel tool's request;
- a quoted name ends before its closing quote ('Windrose', not Windrose');
- a Chinese option is not named by a sense word the parameter's own description holds
  (柴油 "diesel fuel" for "book fuel" of 燃油种类), "petrol" is 汽油 "gasoline", and a sense
  several options share names the one whose senses it begins (小提琴 "fiddle violin");
- a count past twelve in words ("forty litres"); a length of time counts no people
  ("for 6 people", 两位客人); "team of twelve" is a headcount;
- a stay's departure is what leaving ends ("leave on the 22nd", "new departure date");
- 不急 and 不是很急 negate an urgent flag;
- the guests of a pass are named people (王磊 after 朋友, "Tom Lee"), no "E-" of E-05;
- a list of image numbers takes the shape its description's example has (IMG_0012, no 4x6);
- 7点 一小时 is seven o'clock for an hour, and 7点30分's minutes are no count.
"""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent, vocabulary
from gateway.routing import text as routing_text
from tests.gateway.routing.conftest import blind_set, dry_run, extracted, object_schema

CATALOGUE = blind_set("marina")


@pytest.mark.parametrize(
    ("text", "actions"),
    [
        ("can i cancel my booking BK-100200", {"cancel"}),
        ("could I change my booking", {"update"}),
        ("i need to amend booking BK-100200", {"update"}),
        ("can i switch booking BK-381177 from a pontoon to a swing mooring?", {"update"}),
        ("switch off the kitchen lights", {"toggle"}),
        ("switch the hall light on", {"toggle"}),
        ("cancle BK-448812 please", {"cancel"}),
        ("pls updte my address", {"update"}),
        ("need to push my session BK-309447 to Saturday the 19th", {"update"}),
        ("move 200 units to WH03", set()),
        ("how much is left to pay on my berth account", set()),
        ("how many days do I have to cancel?", set()),
        ("how much do i owe? and pay it now", {"pay"}),
        ("remote access for Sam", set()),  # a letter changed is no slip of "remove"
    ],
)
def test_the_actions_a_request_asks_for(text: str, actions: set[str]) -> None:
    assert vocabulary.requested_actions(text) == actions


@pytest.mark.parametrize(
    ("description", "disclaimed"),
    [
        ("Amend a berth booking's dates. Cancellations are not handled here.", {"cancel"}),
        ("Amend a booking's dates. Refunds cannot be processed here.", {"refund"}),
        ("Amend a booking's dates. Fields that are not changed stay as they are.", set()),
    ],
)
def test_a_subject_the_description_says_is_not_done(description: str, disclaimed: set) -> None:
    manifest = {"tool_id": "amend_booking", "name": "Amend booking", "description": description}
    assert vocabulary.disclaimed_actions(manifest) == disclaimed
    assert (routing_text.disclaimed_text(description) != "") is bool(disclaimed)


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("Plans changed, pls cancel booking bk-615530", "cancel_berth_booking"),
        ("BK-775230 不来了，天气太差，帮我取消", "cancel_berth_booking"),
        (
            "can i switch booking BK-381177 from a pontoon to a swing mooring? same dates",
            "change_berth_booking",
        ),
        ("how much is left to pay on my berth account", "get_account_balance"),
        ("cancle BK-448812 please, weather looks terible", "cancel_berth_booking"),
    ],
)
async def test_marina_routes(gateway: httpx.AsyncClient, query: str, tool_id: str) -> None:
    body = (await dry_run(gateway, query, "skipper")).json()
    assert body.get("tool_id") == tool_id, body


BERTH = object_schema(
    {
        "vessel_name": {"type": "string", "description": "Name of the boat"},
        "arrival_date": {"type": "string", "format": "date"},
        "nights": {"type": "integer", "minimum": 1, "maximum": 60},
    }
)


def test_a_quoted_name_ends_before_its_quote() -> None:
    query = "Hi, I'd like to book a visitor berth for 'Windrose', 11.5m, arriving Friday"
    assert extracted(query, BERTH)["vessel_name"] == "Windrose"
    assert extracted("twenty-one nights from friday for 'Blue Heron'", BERTH) == {
        "vessel_name": "Blue Heron",
        "arrival_date": "2026-12-11",
        "nights": 21,
    }


FUEL = object_schema(
    {
        "fuel_type": {
            "type": "string",
            "enum": ["柴油", "汽油", "双冲程混合油"],
            "description": "燃油种类",
        },
        "litres": {
            "type": "integer",
            "minimum": 10,
            "maximum": 3000,
            "description": "预计加油量（升）",
        },
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("book fuel for 'Selkie' on 2026-12-10, petrol", {"fuel_type": "汽油"}),
        ("diesel tomorrow, forty litres", {"fuel_type": "柴油", "litres": 40}),
        ("two-stroke mix, 60 litres", {"fuel_type": "双冲程混合油", "litres": 60}),
    ],
)
def test_fuel_by_its_kind_and_amount(query: str, expected: dict[str, object]) -> None:
    assert extracted(query, FUEL) == expected


INSTRUMENT = object_schema(
    {
        "instrument": {
            "type": "string",
            "enum": ["小提琴", "中提琴", "大提琴", "长笛", "小号"],
            "description": "乐器种类",
        }
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [("rent a violin for STU-30019", "小提琴"), ("rent a cello", "大提琴"), ("a trumpet", "小号")],
)
def test_an_instrument_by_the_sense_its_option_begins_with(query: str, expected: str) -> None:
    assert extracted(query, INSTRUMENT)["instrument"] == expected


STAY = object_schema(
    {
        "booking_ref": {"type": "string", "pattern": "^BK-\\d{6}$"},
        "new_arrival_date": {"type": "string", "format": "date"},
        "new_departure_date": {"type": "string", "format": "date"},
    },
    ["booking_ref"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "Please move BK-204930 so we leave on the 22nd instead of the 19th",
            {"new_departure_date": "2026-12-22"},
        ),
        (
            "extend my stay: BK-667120, new departure date 2027-01-03",
            {"new_departure_date": "2027-01-03"},
        ),
        ("move BK-338201 to arrive on the 15th", {"new_arrival_date": "2026-12-15"}),
    ],
)
def test_leaving_ends_a_stay(query: str, expected: dict[str, str]) -> None:
    arguments = extracted(query, STAY)
    arguments.pop("booking_ref")
    assert arguments == expected


REPAIR = object_schema(
    {
        "category": {"type": "string", "enum": ["发动机", "船体"], "description": "故障类别"},
        "urgent": {"type": "boolean", "description": "是否紧急（进水、无法启动等）"},
    }
)


@pytest.mark.parametrize(
    ("query", "urgent"),
    [
        ("船体有道划痕需要补胶衣，不急", False),
        ("发动机坏了，不是很急", False),
        ("发动机坏了，很急", True),
    ],
)
def test_a_chinese_flag_negated_by_its_own_word(query: str, urgent: bool) -> None:
    assert extracted(query, REPAIR)["urgent"] is urgent


PASS = object_schema(
    {
        "guest_names": {
            "type": "array",
            "items": {"type": "string", "minLength": 1},
            "description": "访客姓名",
        },
        "days": {"type": "integer", "minimum": 1, "maximum": 14, "description": "有效天数"},
        "berth_number": {"type": "string", "description": "泊位号，例如 C-14"},
    }
)


@pytest.mark.parametrize(
    ("query", "guests"),
    [
        ("I need a visitor pass for my brother Tom Lee this Saturday", ["Tom Lee"]),
        ("给我朋友王磊开一张访客通行证，周日来", ["王磊"]),
        ("明天有两位客人上船：张敏、刘洋，泊位 E-05", ["张敏", "刘洋"]),
        ("passes for Mary-Jane O'Neil and Li Wei tomorrow", ["Mary-Jane O'Neil", "Li Wei"]),
    ],
)
def test_the_guests_of_a_pass_by_name(query: str, guests: list[str]) -> None:
    arguments = extracted(query, PASS)
    assert arguments["guest_names"] == guests
    assert arguments.get("days") != 2  # 两位客人 are two people, no two days


SHOOT = object_schema(
    {
        "duration_hours": {"type": "integer", "minimum": 1, "maximum": 10},
        "people_count": {"type": "integer", "minimum": 1, "maximum": 40},
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("can we book a family shoot outdoors for 6 people this saturday", {"people_count": 6}),
        ("corporate headshots for my team of twelve", {"people_count": 12}),
        ("a 3 hour shoot for 4 people", {"duration_hours": 3, "people_count": 4}),
    ],
)
def test_people_are_no_length_of_time(query: str, expected: dict[str, int]) -> None:
    assert extracted(query, SHOOT) == expected


PRINTS = object_schema(
    {
        "photo_numbers": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Image numbers like IMG_0012.",
        },
        "size": {"type": "string", "enum": ["4x6", "5x7"]},
    }
)


def test_image_numbers_of_the_example_shape() -> None:
    query = "can i get 5x7 prints of IMG_0203 and IMG_0219, glossy"
    assert extracted(query, PRINTS) == {"photo_numbers": ["IMG_0203", "IMG_0219"], "size": "5x7"}


LESSON = object_schema(
    {
        "start_time": {"type": "string", "pattern": "^\\d{2}:\\d{2}$"},
        "duration_minutes": {"type": "integer", "minimum": 15, "maximum": 120},
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("下周一晚上7点 一小时", {"start_time": "19:00", "duration_minutes": 60}),
        ("下周一晚上7点30分上课", {"start_time": "19:30"}),
        ("下周一晚上7点30分上课，45分钟", {"start_time": "19:30", "duration_minutes": 45}),
    ],
)
def test_a_clock_and_a_length_apart(query: str, expected: dict[str, object]) -> None:
    assert extracted(query, LESSON) == expected


def test_a_slip_of_a_verb_is_read_as_the_verb() -> None:
    assert vocabulary.respelt("cancle BK-448812 please") == "cancel BK-448812 please"
    assert (
        vocabulary.respelt("pls updte it, the remote is broken")
        == "pls update it, the remote is broken"
    )


def test_moving_in_time_later_in_a_request_is_its_action() -> None:
    text = "something came up, need to push my session BK-309447 to Saturday the 19th"
    assert intent.action_word(text) == "reschedule"
    assert intent.action_word("something came up, can you move 200 units to WH03") is None


def test_what_to_do_instead_in_another_case_is_not_what_the_tool_does() -> None:
    description = (
        "Cancels a shoot booking. If the customer just wants another date, reschedule "
        "instead of cancelling."
    )
    assert routing_text.positive_description(description) == "Cancels a shoot booking."
    assert "reschedule" in routing_text.disclaimed_text(description)
