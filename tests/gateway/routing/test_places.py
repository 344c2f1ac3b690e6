"""A parameter that takes a place gets the place the request names, as it is written."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.routing.extract import ArgumentExtractor

extractor = ArgumentExtractor()


def _one(name: str, description: str, **more: Any) -> dict[str, Any]:
    spec = {"type": "string", "description": description, **more}
    return {"type": "object", "properties": {name: spec}, "required": [name]}


ADDRESS = _one("address", "Street address of the property.")
ZH_ADDRESS = _one("address", "上门清运地址，需写到楼栋门牌号。")
AREA = _one("area", "Street, neighbourhood or postcode.")
LOCATION = _one("location", "Where the problem is.")


@pytest.mark.parametrize(
    ("query", "place"),
    [
        ("which days do the green bins get emptied at 19 Larch Avenue?", "19 Larch Avenue"),
        ("garbage pickup schedule 221 Elm St", "221 Elm St"),
        ("bin day for 7 Harbour View Terrace?", "7 Harbour View Terrace"),
        ("3 old chairs, flat 4B 30 Canal Street, Saturday", "flat 4B 30 Canal Street"),
    ],
)
def test_a_street_address_in_english(query: str, place: str) -> None:
    assert extractor.extract(query, ADDRESS).arguments == {"address": place}


@pytest.mark.parametrize(
    ("query", "place"),
    [
        (
            "Please arrange a collection from 22 Elm Street, Manchester M1 2AB on 2025-05-06.",
            "22 Elm Street, Manchester M1 2AB",
        ),
        (
            "collect 3 boxes from 14 Harbour Road, Leith, Edinburgh EH6 6LX on 2025-03-14",
            "14 Harbour Road, Leith, Edinburgh EH6 6LX",
        ),
        ("please send it to 45 Queen's Park Avenue, Glasgow G42 8DT instead", None),
        ("ship to 350 Fifth Avenue, New York, NY 10118 by Friday", None),
        ("Her new place is 3 Beech Close, Oxford. Sorry for the hassle!", None),
        ("pickup at 19 Larch Avenue, I'm home all day", "19 Larch Avenue"),
        ("pickup at 19 Larch Avenue, Please ring twice", "19 Larch Avenue"),
    ],
)
def test_the_town_and_postcode_after_a_street_belong_to_the_address(
    query: str, place: str | None
) -> None:
    """A town (or two) and a postcode written after the street are part of the address;
    a capitalised word that begins the next sentence is not a town."""
    expected = (
        place
        or {
            "p": "45 Queen's Park Avenue, Glasgow G42 8DT",
            "s": "350 Fifth Avenue, New York, NY 10118",
            "H": "3 Beech Close, Oxford",
        }[query[0]]
    )
    assert extractor.extract(query, ADDRESS).arguments == {"address": expected}


def test_the_numbers_of_an_address_are_no_count_or_weight() -> None:
    schema = {
        "type": "object",
        "properties": {
            "address": {"type": "string", "description": "Full collection address."},
            "parcel_count": {"type": "integer", "minimum": 1},
            "total_weight_kg": {"type": "number"},
        },
        "required": ["address"],
    }
    query = "Please arrange a collection from 22 Elm Street, Manchester M1 2AB tomorrow."
    assert extractor.extract(query, schema).arguments == {
        "address": "22 Elm Street, Manchester M1 2AB"
    }
    query = "collect 3 boxes from 14 Harbour Road, Leith, Edinburgh EH6 6LX"
    assert extractor.extract(query, schema).arguments["parcel_count"] == 3


@pytest.mark.parametrize(
    ("query", "place"),
    [
        ("改送到北京市朝阳区建国路93号万达广场B座1205", "北京市朝阳区建国路93号万达广场B座1205"),
        ("地址是上海市徐汇区漕溪北路88号3楼，一共2个箱子", "上海市徐汇区漕溪北路88号3楼"),
        ("5件货，地址：深圳市南山区科技园南区12栋", "深圳市南山区科技园南区12栋"),
        ("新地址杭州市西湖区文三路478号，电话13800138000", "杭州市西湖区文三路478号"),
    ],
)
def test_a_chinese_address_keeps_its_building_floor_and_room(query: str, place: str) -> None:
    assert extractor.extract(query, ZH_ADDRESS).arguments == {"address": place}


@pytest.mark.parametrize(
    ("query", "place"),
    [
        ("家里两台旧冰箱要扔，下周六能来拉走吗？光明路7号，6楼没电梯", "光明路7号"),
        ("大件垃圾预约 床垫两张 滨江花园5栋1单元 3月15号", "滨江花园5栋1单元"),
        ("想预约上门收旧沙发，一件，地址：阳光小区3栋502", "阳光小区3栋502"),
        ("下个月的垃圾收运时间表发我一下，地址是和平街12号", "和平街12号"),
        ("请问幸福路88号的厨余垃圾每周几收？", "幸福路88号"),
        ("成绩单要寄到 上海市徐汇区漕溪北路88号", "上海市徐汇区漕溪北路88号"),
    ],
)
def test_a_street_address_in_chinese(query: str, place: str) -> None:
    assert extractor.extract(query, ZH_ADDRESS).arguments == {"address": place}


@pytest.mark.parametrize(
    ("query", "place"),
    [
        ("only show me unplanned power outages in Westfield", "Westfield"),
        ("is the water off in Old Town today", "Old Town"),
        ("any outages planned for postcode 4410 on 2025-05-03?", "4410"),
        ("internet down in 2150 again?", "2150"),
        ("No water coming out of the taps on Bridge Street", "Bridge Street"),
        ("Hurstville 是不是没信号了？", "Hurstville"),
        ("明天滨江花园那边会不会停电", "滨江花园"),
        ("和平街停电了，是不是整片都停了？", "和平街"),
        # a postcode in capitals, in a shape of its own, needs no label
        ("price for 12.5 kg, express, from SW1A 1AA to Germany", "SW1A 1AA"),
        ("any outages around LS10 1AB?", "LS10 1AB"),
        ("ship it to K1A 0B1", "K1A 0B1"),
    ],
)
def test_an_area_a_street_or_a_postcode(query: str, place: str) -> None:
    assert extractor.extract(query, AREA).arguments == {"area": place}


@pytest.mark.parametrize(
    "query",
    [
        "pickup 2 kg on the way to the office",  # no street: "on the way"
        "宽带线路有问题，一直掉线",  # 线路 is a line, not a road
        "there is a pothole in the main road",  # no street named
        "outages on Monday?",  # a weekday is no area
        "is the A1 closed?",  # a road's number is no postcode
    ],
)
def test_what_names_no_place_fills_nothing(query: str) -> None:
    assert extractor.extract(query, AREA).missing == ["area"]


def test_a_place_parameter_with_an_enum_keeps_its_options() -> None:
    schema = _one("location", "Which outlet.", enum=["riverside", "downtown"])
    assert extractor.extract("need 30kg chicken at riverside", schema).arguments == {
        "location": "riverside"
    }


def test_a_street_fills_a_location_but_a_room_is_left_to_the_other_readers() -> None:
    assert extractor.extract("streetlight dead outside 5 Rowan Way", LOCATION).arguments == {
        "location": "5 Rowan Way"
    }
    assert extractor.extract("room 1314 needs towels", LOCATION).arguments.get("location") != (
        "room 1314 needs towels"
    )


# --- names and codes beside places ----------------------------------------------------------


def test_a_contraction_or_a_word_beginning_with_a_particle_names_no_one() -> None:
    owner = {
        "type": "object",
        "properties": {"owner_name": {"type": "string", "description": "业主姓名"}},
    }
    said = extractor.extract("What's due on my property tax bill?", owner)
    assert said.arguments == {}  # it was "What's du": the "du" of "due" read as a particle
    assert extractor.extract("It's Maria Lopez here", owner).arguments == {
        "owner_name": "Maria Lopez"
    }


@pytest.mark.parametrize(
    "query",
    ["房产税账单 编号0718-240-33 今年一共要交多少", "did my payment for 5120-090-17 get in?"],
)
def test_dash_joined_digit_groups_are_an_id_with_no_example(query: str) -> None:
    schema = _one("parcel_id", "房产编号。")
    assert extractor.extract(query, schema).arguments["parcel_id"] in query


def test_a_date_is_no_dash_joined_id() -> None:
    schema = _one("parcel_id", "房产编号。")
    assert extractor.extract("物业税有没有逾期 2025-04-01", schema).missing == ["parcel_id"]
