"""Arguments of an EV-charging network's and a public library's requests, found by the
EV-charging and library sets (``tests/data/evcharge``, ``tests/data/library``, written
blind to the router): "tomorrow" typed in a hurry, "Saturday noon", a text after a
label its description holds (抬头写…), add and remove said as bind and delete, a number
named in Chinese (2号枪), a kWh that is no percentage, a place looked near, plates on a
vehicle and in a list, a weekday that dates something, a card number or an ISBN in
groups, a title in 《》, 12块5, and a Chinese month after an id's digits.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gateway.routing import intent, temporal, text, weekdays
from tests.gateway.routing.conftest import extracted, object_schema

MONDAY = date(2026, 12, 7)  # the "today" the two sets were written for

RESERVE = object_schema(
    {
        "charger_id": {"type": "string", "pattern": "^CP-[0-9]{5}$"},
        "date": {"type": "string", "format": "date"},
        "start_time": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
    },
    ["charger_id", "date", "start_time"],
)


@pytest.mark.parametrize(
    ("query", "day", "clock"),
    [
        ("reserve CP-20417 tommorow at 3pm", "2026-12-08", "15:00"),
        ("book CP-20417 tmrw 9am", "2026-12-08", "09:00"),
        ("book a slot at CP-88001 this saturday noon, 90 mins", "2026-12-12", "12:00"),
        ("CP-88001 for tomorrow midnight", "2026-12-08", "00:00"),
    ],
)
def test_a_hurried_tomorrow_and_a_day_at_noon(query: str, day: str, clock: str) -> None:
    found = extracted(query, RESERVE)
    assert (found["date"], found["start_time"]) == (day, clock)


def test_midday_alone_is_no_clock() -> None:
    assert temporal.resolve("a midday meeting", MONDAY) == "a midday meeting"


RECEIPT = object_schema(
    {
        "session_id": {"type": "string", "pattern": "^CS-[0-9]{7}$"},
        "email": {"type": "string", "format": "email"},
        "invoice_title": {
            "type": "string",
            "description": "收据/发票抬头（个人姓名或公司名称），可选",
        },
    },
    ["session_id"],
)
CARD = object_schema(
    {
        "card_uid": {"type": "string", "pattern": "^[0-9A-F]{8}$"},
        "nickname": {"type": "string", "description": "卡片备注名，可选，仅绑定时使用"},
    },
    ["card_uid"],
)


def test_the_text_after_a_label_its_description_holds() -> None:
    receipt = extracted(
        "把CS-7800001的收据发到我邮箱 li.wei@qq.com 抬头写上海某某科技有限公司", RECEIPT
    )
    assert receipt["invoice_title"] == "上海某某科技有限公司"
    assert extracted("绑定新卡 5566AABB 备注写老婆的卡", CARD)["nickname"] == "老婆的卡"


def test_a_label_its_description_lacks_gives_nothing() -> None:
    assert "nickname" not in extracted("绑定新卡 5566AABB 颜色写红色", CARD)


PAYMENT = object_schema(
    {
        "action": {"type": "string", "enum": ["add", "remove", "set_default"]},
        "method_type": {"type": "string", "enum": ["credit_card", "wechat_pay", "paypal"]},
        "card_last4": {"type": "string", "pattern": "^[0-9]{4}$"},
    },
    ["action"],
)


@pytest.mark.parametrize(
    ("query", "action"),
    [
        ("绑个微信支付", "add"),
        ("删掉那张尾号8810的卡", "remove"),
        ("please unlink my paypal", "remove"),
        ("link my paypal to the account", "add"),
    ],
)
def test_add_and_remove_said_as_bind_and_delete(query: str, action: str) -> None:
    assert extracted(query, PAYMENT)["action"] == action


STATUS = object_schema(
    {
        "charger_id": {
            "type": "string",
            "pattern": "^CP-[0-9]{5}$",
            "description": "桩编号，印在桩体铭牌上，格式为 CP- 加 5 位数字",
        },
        "connector_no": {
            "type": "integer",
            "minimum": 1,
            "maximum": 4,
            "description": "枪号（1-4），不填则返回该桩所有枪口",
        },
    },
    ["charger_id"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("查一下桩 CP 55810 的2号枪是不是故障了", {"charger_id": "CP-55810", "connector_no": 2}),
        ("20418那个桩 1号枪能用不", {"charger_id": "CP-20418", "connector_no": 1}),
    ],
)
def test_a_number_named_in_chinese(query: str, expected: dict[str, Any]) -> None:
    assert extracted(query, STATUS) == expected


def test_a_numbered_thing_the_description_does_not_name_is_no_connector() -> None:
    assert "connector_no" not in extracted("CP-55810 在3号车位", STATUS)


START = object_schema(
    {
        "chargerId": {"type": "string", "pattern": "^CP-[0-9]{5}$"},
        "stopAtPercent": {
            "type": "integer",
            "minimum": 20,
            "maximum": 100,
            "description": "Stop when the battery reaches this state of charge (%)",
        },
        "maxKwh": {"type": "number", "minimum": 1, "maximum": 200},
    },
    ["chargerId"],
)


def test_kwh_is_no_percentage_and_a_percentage_no_kwh() -> None:
    energy = extracted("start cp 55810, stop at 30 kWh", START)
    assert energy == {"chargerId": "CP-55810", "maxKwh": 30}
    share = extracted("帮我在cp-31002开始充电，充到80%就停", START)
    assert share == {"chargerId": "CP-31002", "stopAtPercent": 80}


SEARCH = object_schema(
    {
        "near": {
            "type": "string",
            "description": "Where to search around: address, place or station name, postcode, "
            "or 'lat,lon'",
        },
        "radius_km": {"type": "number", "minimum": 0.5, "maximum": 50},
    },
    ["near"],
)


@pytest.mark.parametrize(
    ("query", "near"),
    [
        ("虹桥火车站附近哪里有空闲的国标桩", "虹桥火车站"),
        ("帮我找下南山科技园那边的充电站", "南山科技园"),
        ("附近2km 有没有现在能用的桩啊 我在国贸", "国贸"),
        ("人民广场附近5公里内有没有直流快充", "人民广场"),
        ("any CCS2 chargers near Heathrow T5 that are free right now?", "Heathrow T5"),
        ("find me a chademo charger around Leeds station, 10 km radius", "Leeds station"),
        ("where can i charge near 51.5072,-0.1276", "51.5072,-0.1276"),
    ],
)
def test_a_place_to_look_near(query: str, near: str) -> None:
    assert extracted(query, SEARCH)["near"] == near


FLEET = object_schema(
    {
        "fleetId": {"type": "string", "pattern": "^FL-[0-9]{4}$"},
        "vehiclePlates": {
            "type": "array",
            "items": {"type": "string", "pattern": "^[A-Z0-9\\u4e00-\\u9fff]{5,10}$"},
            "description": "Registration plates, upper case, no spaces (e.g. KX21ABC, 沪AD12345)",
        },
        "allowedDays": {
            "type": "array",
            "items": {"type": "string", "enum": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]},
        },
        "effectiveFrom": {"type": "string", "format": "date"},
    },
    ["fleetId"],
)


@pytest.mark.parametrize(
    ("query", "plates"),
    [
        ("For fleet FL-2031, cap vehicle KX21ABC at 400 kWh a month", ["KX21ABC"]),
        ("allow fast charging again for van YT70 KLM in fleet FL-5520", ["YT70KLM"]),
        ("FL-0874 的粤B·D12345 周末不让充了", ["粤BD12345"]),
        ("车队FL-2031 的沪AD12345、沪AD12346 每月上限1500度", ["沪AD12345", "沪AD12346"]),
        ("fleet FL-0874: plates KX21ABC and KX21ABD weekdays only", ["KX21ABC", "KX21ABD"]),
    ],
)
def test_plates_on_a_vehicle_and_in_a_list(query: str, plates: list[str]) -> None:
    assert extracted(query, FLEET)["vehiclePlates"] == plates


def test_a_vehicle_numbered_without_letters_has_no_plate() -> None:
    assert "vehiclePlates" not in extracted("fleet FL-0874 vehicle 12 is ours", FLEET)


def test_a_weekday_that_dates_something_is_no_day_of_the_week() -> None:
    found = extracted("fleet FL-5520 can charge again starting next Monday", FLEET)
    assert found["effectiveFrom"] == "2026-12-14"
    assert "allowedDays" not in found
    both = extracted("fleet FL-3390 only mondays and fridays from next monday", FLEET)
    assert both["allowedDays"] == ["mon", "fri"]
    week = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    assert weekdays.options_named("从下周一开始只能周六日充", week) == ["sat", "sun"]


@pytest.mark.parametrize(
    ("query", "name", "pattern", "value"),
    [
        ("what's my balance? card 2100 3344 55", "card_no", "^21[0-9]{8}$", "2100334455"),
        ("extend item 31 0045 6671", "barcode", "^31[0-9]{8}$", "3100456671"),
        ("ISBN 7-5366-9293-5 馆里有吗", "isbn", "^(97[89])?[0-9]{9}[0-9X]$", "7536692935"),
        (
            "isbn 978-0-14-312854-0 -- do u have it",
            "isbn",
            "^(97[89])?[0-9]{9}[0-9X]$",
            "9780143128540",
        ),
    ],
)
def test_a_number_in_groups_the_pattern_fixes_the_start_of(
    query: str, name: str, pattern: str, value: str
) -> None:
    schema = object_schema({name: {"type": "string", "pattern": pattern}}, [name])
    assert extracted(query, schema) == {name: value}


def test_a_phone_in_groups_is_no_number_of_a_pattern_without_fixed_digits() -> None:
    schema = object_schema({"account": {"type": "string", "pattern": "^[0-9]{10}$"}}, ["account"])
    assert extracted("call me on 604 555 01", schema) == {}


ILL = object_schema(
    {
        "title": {"type": "string"},
        "author": {"type": "string"},
        "needed_by": {"type": "string", "format": "date"},
    },
    ["title"],
)


def test_a_title_in_chinese_quotes_names_no_author() -> None:
    found = extracted("馆里没有《The Overstory》，能帮我从别的图书馆调一本吗？月底前要", ILL)
    assert found == {"title": "The Overstory", "needed_by": "2026-12-31"}
    assert extracted("帮我从外馆借《乡土中国》", ILL)["title"] == "乡土中国"


FINE = object_schema({"amount": {"type": "number", "minimum": 0.01}}, ["amount"])


@pytest.mark.parametrize(
    ("query", "amount"),
    [("交罚款12块5", 12.5), ("付3元50", 3.5), ("罚款8元5角", 8.5), ("罚款20元5张", 20)],
)
def test_yuan_and_its_tenths(query: str, amount: float) -> None:
    assert extracted(query, FINE) == {"amount": amount}


def test_a_chinese_month_after_an_ids_digits() -> None:
    assert temporal.resolve("读者2100665544十月份都借过什么", MONDAY) == (
        "读者2100665544 2026-10 都借过什么"
    )
    assert temporal.resolve("3个月", MONDAY) == "3个月"


@pytest.mark.parametrize(
    ("query", "reads"),
    [
        ("i'm plugged in at CP-10293 but nothing happens, can you start it remotely?", False),
        ("I left my sunglasses in the car I returned yesterday, can someone check?", True),
        ("bal for 48820175?", True),
    ],
)
def test_a_polite_order_in_a_questions_last_clause(query: str, reads: bool) -> None:
    assert intent.asks_to_read(query) is reads


METER = object_schema(
    {
        "reading": {
            "type": "number",
            "minimum": 0,
            "description": "The number on the display (kWh for electricity, m3 for gas and water)",
        },
    },
    ["reading"],
)


@pytest.mark.parametrize(
    ("query", "reading"),
    [("电表读数 5620.7 度", 5620.7), ("gas meter reads 3021.45 m3", 3021.45)],
)
def test_a_meters_own_units(query: str, reading: float) -> None:
    assert extracted(query, METER) == {"reading": reading}


BUDGET = object_schema(
    {
        "budgetId": {"type": "string", "description": "预算编号，例如 BUD-40512"},
        "newAmount": {"type": "number"},
        "comment": {"type": "string", "description": "备注"},
    },
    ["budgetId"],
)


def test_a_new_value_is_no_label_and_an_id_takes_no_label_text() -> None:
    assert extracted("BUD-20931 预算改成4万", BUDGET) == {
        "budgetId": "BUD-20931",
        "newAmount": 40000,
    }
    assert extracted("BUD-20931 备注写“迁移超支”", BUDGET)["comment"] == "迁移超支"


def test_a_polite_request_for_oneself_in_the_last_clause() -> None:
    assert not intent.asks_to_read(
        "I paid for the team lunch yesterday, £120, can I get that back?"
    )
    assert intent.asks_to_read("my bill went up, can I see last month's?")


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("harbour", "harbor"),
        ("neighbourhood", "neighborhood"),
        ("centred", "centered"),
        ("catalogue", "catalog"),
        ("licence", "license"),
        ("organisation", "organization"),
        ("tyres", "tires"),
        ("instalments", "installments"),
    ],
)
def test_a_british_spelling_meets_the_american_one(british: str, american: str) -> None:
    assert text.american(british) == american
    assert text.stem(british) == text.stem(american)


@pytest.mark.parametrize("word", ["four", "your", "hours", "flour", "detour", "genre", "advise"])
def test_words_that_only_look_british_are_left_alone(word: str) -> None:
    assert text.american(word) == word


def test_a_chinese_option_glossed_in_american_for_a_british_request() -> None:
    rooms = object_schema(
        {
            "branch": {
                "type": "string",
                "enum": ["总馆", "河畔分馆", "港湾分馆"],
                "description": "分馆",
            }
        },
        ["branch"],
    )
    assert extracted("book a study room at harbour branch tomorrow", rooms) == {
        "branch": "港湾分馆"
    }


def test_not_yet_in_either_word() -> None:
    refund = object_schema(
        {"reason": {"type": "string", "enum": ["未充上电", "中途断电", "重复扣费", "其他"]}},
        ["reason"],
    )
    assert extracted("CS-7781234 没充上电但扣了38.5元，申请退款", refund) == {"reason": "未充上电"}
    assert extracted("充电中途断电了", refund) == {"reason": "中途断电"}


def test_a_plate_the_items_pattern_refuses_is_not_listed() -> None:
    found = extracted("fleet FL-0874: plates ab12 cde and ab13 cde, mon-fri only", FLEET)
    assert "vehiclePlates" not in found


def test_a_codes_letters_are_no_hurried_tomorrow() -> None:
    assert temporal.resolve("check TMR-20391 tmrw", MONDAY) == "check TMR-20391 2026-12-08"


CARD_SERVICE = object_schema(
    {
        "requestType": {
            "type": "string",
            "enum": ["report_lost", "replace", "renew", "update_address", "update_contact"],
        },
        "newAddress": {
            "type": "object",
            "description": "For update_address",
            "properties": {
                "street": {"type": "string"},
                "city": {"type": "string"},
                "postcode": {"type": "string", "pattern": "^[0-9]{5}$"},
            },
            "required": ["street", "city", "postcode"],
        },
        "email": {"type": "string", "format": "email"},
    },
    ["requestType"],
)
TRANSCRIPT = object_schema(
    {
        "delivery": {"type": "string", "enum": ["email", "mail", "pickup"]},
        "mailing_address": {"type": "string", "description": "邮寄地址，交付方式为 mail 时填写"},
    },
    ["delivery"],
)
FINE_PAYMENT = object_schema(
    {
        "action": {"type": "string", "enum": ["pay", "waive"]},
        "payment_method": {
            "type": "string",
            "enum": ["card", "paypal", "gift_voucher"],
            "description": "Only for action=pay",
        },
        "waive_reason": {"type": "string", "description": "Staff note (action=waive)"},
    },
    ["action"],
)


@pytest.mark.parametrize(
    ("query", "schema", "option"),
    [
        (
            "搬家了，新地址 12 Maple Road, Port Alder 90210",
            CARD_SERVICE,
            ("requestType", "update_address"),
        ),
        ("成绩单寄到 上海市徐汇区漕溪北路88号", TRANSCRIPT, ("delivery", "mail")),
        ("put 15 bucks toward my fines using a gift voucher", FINE_PAYMENT, ("action", "pay")),
    ],
)
def test_an_option_a_given_value_is_described_as_for(
    query: str, schema: dict[str, Any], option: tuple[str, str]
) -> None:
    name, value = option
    assert extracted(query, schema)[name] == value


def test_no_option_where_the_values_given_point_nowhere_alone() -> None:
    # (an email alone is update_contact's now, by the option's own words:
    # test_states_and_implied_options; described as for no option, it was none)
    described = {**CARD_SERVICE["properties"]["requestType"], "enum": ["renew", "update_details"]}
    schema = {
        **CARD_SERVICE,
        "properties": {**CARD_SERVICE["properties"], "requestType": described},
    }
    assert "requestType" not in extracted("my email is now maria.g@example.org", schema)
    switch = object_schema(
        {
            "preferred_channel": {"type": "string", "enum": ["email", "post"]},
            "paperless": {"type": "boolean", "description": "true = bills by email only"},
        },
        ["preferred_channel"],
    )
    assert "preferred_channel" not in extracted("go paperless please", switch)


def test_a_value_that_may_be_left_out_for_an_option_implies_nothing() -> None:
    repayment = object_schema(
        {
            "repayment_type": {"type": "string", "enum": ["按期还款", "提前部分还款", "提前结清"]},
            "amount": {"type": "number", "description": "还款金额。提前结清时可不填，由系统计算。"},
        },
        ["repayment_type"],
    )
    assert extracted("帮我转账给 Zhang Min 800元", repayment) == {"amount": 800}
    invoice = object_schema(
        {
            "action": {"type": "string", "enum": ["pay", "dispute"]},
            "amount": {"type": "number", "description": "Not needed for pay: the balance"},
        },
        ["action"],
    )
    assert extracted("£40 of it is wrong", invoice) == {"amount": 40}
