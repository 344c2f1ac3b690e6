"""Order lines, rates, weights in words, date-times, and days that belong to date parameters.

Found by the vet-clinic set (``tests/data/vetclinic``, written blind as OpenAPI-generated
schemas). Each of these was read as nothing, or as the wrong value:
- ``items: [{product, quantity}]`` from "1 litter box and two bags of tofu cat litter",
  买三袋皇家幼猫粮, 猫抓板2个，逗猫棒1个 (``lineitems``);
- ``doses_per_day`` from "three times a day", "once daily", 一天两次; and "a day" of a rate,
  or 一天 of 一天两次, was a ``days_supply`` of 1;
- "twenty-two point five kilos", 十八公斤 for a weight;
- a ``date-time`` is written as RFC 3339 does ("2025-07-08T15:00:00");
- "2026年2月14日送过来，2月22日接走": the 22nd is in 2026, not the next February after today;
- a day went to a loose pattern (``^[A-Z0-9-]{6,20}$`` of a policy number) or, for 上个月,
  a month to ``policy_number``;
- an appointment's ``action`` of ``reschedule`` / ``cancel`` from 改到, 往后挪, "cancle";
- a pet's name given as one: 我家猫咪叫咪咪.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gateway.routing.extract import ArgumentExtractor

extractor = ArgumentExtractor(today=lambda: date(2026, 12, 5))


def tool(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


def filled(query: str, schema: dict[str, Any]) -> dict[str, Any]:
    return extractor.extract(query, schema).arguments


LINE = {
    "type": "object",
    "properties": {"product": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1}},
    "required": ["product", "quantity"],
}
SHOP = tool(["items"], items={"type": "array", "items": LINE, "minItems": 1})


@pytest.mark.parametrize(
    ("query", "lines"),
    [
        (
            "i want 1 litter box and two bags of tofu cat litter, deliver to my house",
            [("litter box", 1), ("tofu cat litter", 2)],
        ),
        (
            "order four cans of Royal Canin Recovery, delivered on 2025-01-18",
            [("Royal Canin Recovery", 4)],
        ),
        ("买三袋皇家幼猫粮，送货上门", [("皇家幼猫粮", 3)]),
        ("帮我下单：猫抓板2个，逗猫棒1个，到店自提", [("猫抓板", 2), ("逗猫棒", 1)]),
        ("Can I buy a cone collar? I'll grab it at the clinic", [("cone collar", 1)]),
    ],
)
def test_order_lines(query: str, lines: list[tuple[str, int]]) -> None:
    assert filled(query, SHOP)["items"] == [{"product": p, "quantity": q} for p, q in lines]


def test_order_lines_by_their_pattern() -> None:
    patterned = {
        **LINE,
        "properties": {**LINE["properties"], "sku": {"type": "string", "pattern": r"^SKU\d{7}$"}},
    }
    del patterned["properties"]["product"]
    patterned["required"] = ["sku", "quantity"]
    schema = tool(["items"], items={"type": "array", "items": patterned})
    assert filled("3 x SKU2024001 and SKU2024002 x2, plus SKU2024003", schema)["items"] == [
        {"sku": "SKU2024001", "quantity": 3},
        {"sku": "SKU2024002", "quantity": 2},
        {"sku": "SKU2024003", "quantity": 1},
    ]


def test_no_order_line_from_time_or_an_item_with_more_to_fill() -> None:
    assert "items" not in filled("I need it in two days", SHOP)
    richer = {**LINE, "required": ["product", "quantity", "colour"]}
    assert "items" not in filled(
        "two bags of litter", tool([], items={"type": "array", "items": richer})
    )


REFILL = tool(
    [],
    doses_per_day={"type": "integer", "enum": [1, 2, 3]},
    days_supply={"type": ["integer", "null"], "minimum": 1, "maximum": 90},
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("three times a day, sixty days", {"doses_per_day": 3, "days_supply": 60}),
        ("once daily for 30 days", {"doses_per_day": 1, "days_supply": 30}),
        ("一天两次，吃十四天", {"doses_per_day": 2, "days_supply": 14}),
        ("续药，每天一次，九十天的量", {"doses_per_day": 1, "days_supply": 90}),
    ],
)
def test_a_rate_is_no_length(query: str, expected: dict[str, int]) -> None:
    assert filled(query, REFILL) == expected


WEIGHT = tool(
    ["weight_kg"],
    weight_kg={
        "type": "number",
        "minimum": 0.05,
        "maximum": 120,
        "description": "Body weight in kilograms (kg)",
    },
)


@pytest.mark.parametrize(
    ("query", "kilos"),
    [("she's down to twenty-two point five kilos", 22.5), ("狗狗体重十八公斤，登记一下", 18)],
)
def test_a_weight_in_words(query: str, kilos: float) -> None:
    assert filled(query, WEIGHT) == {"weight_kg": kilos}


def test_a_date_time_as_rfc_3339_writes_it() -> None:
    visit = tool(["start_time"], start_time={"type": "string", "format": "date-time"})
    assert filled("帮PET-130577约2025年7月8号下午三点复诊", visit) == {
        "start_time": "2025-07-08T15:00:00"
    }
    assert filled("book it for 2025-06-02 14:00", visit) == {"start_time": "2025-06-02T14:00:00"}


def test_a_day_without_its_year_follows_one_with_it() -> None:
    stay = tool(
        ["check_in", "check_out"],
        check_in={"type": "string", "format": "date"},
        check_out={"type": "string", "format": "date"},
    )
    assert filled("狗狗想寄养，2026年2月14日送过来，2月22日接走", stay) == {
        "check_in": "2026-02-14",
        "check_out": "2026-02-22",
    }
    assert filled("from March 3 2025 to March 9", stay) == {
        "check_in": "2025-03-03",
        "check_out": "2025-03-09",
    }


CLAIM = tool(
    ["invoice_no"],
    invoice_no={"type": "string", "pattern": r"^INV-[0-9]{6}$"},
    policy_number={"anyOf": [{"type": "string", "pattern": "^[A-Z0-9-]{6,20}$"}, {"type": "null"}]},
    treatment_date={"type": "string", "format": "date"},
)


def test_a_day_is_the_date_parameters() -> None:
    got = filled("claim INV-461200, treatment was on 2025-05-19", CLAIM)
    assert got == {"invoice_no": "INV-461200", "treatment_date": "2025-05-19"}
    assert "policy_number" not in filled("上个月看病的钱想报销，发票号INV-490310", CLAIM)


CHANGE = tool(
    ["appointment_id", "action"],
    appointment_id={"type": "string", "pattern": r"^APT-[0-9]{5}$"},
    action={"oneOf": [{"const": "reschedule"}, {"const": "cancel"}]},
)


@pytest.mark.parametrize(
    ("query", "action"),
    [
        ("把APT-20931改到2025年4月3日", "reschedule"),
        ("预约能不能往后挪一周？单号APT-88310", "reschedule"),
        ("plz cancle the appointment for tmrw, ref APT-40020", "cancel"),
        ("APT-67012那个预约我去不了了，帮我取消一下", "cancel"),
    ],
)
def test_an_appointment_moved_or_called_off(query: str, action: str) -> None:
    assert filled(query, CHANGE).get("action") == action


def test_a_name_given_as_one() -> None:
    pet = tool(["pet_name"], pet_name={"type": "string", "description": "宠物的名字"})
    assert filled("我家猫咪叫咪咪，2025年10月5日跑出去就没回来了", pet) == {"pet_name": "咪咪"}


SERVICES = tool(
    ["services"],
    services={
        "type": "array",
        "items": {"type": "string", "enum": ["bath", "haircut", "nail_trim", "deshedding"]},
        "description": "服务项目：bath=洗澡，haircut=剪毛造型，nail_trim=剪指甲，deshedding=去浮毛",
    },
)


@pytest.mark.parametrize(
    ("query", "services"),
    [
        ("周六给豆豆约个洗澡加剪指甲", ["bath", "nail_trim"]),
        ("想给它做个去浮毛，再洗澡", ["deshedding", "bath"]),
        ("can u get him in for a deshed + bath", ["deshedding", "bath"]),
    ],
)
def test_a_list_read_through_its_description_in_the_order_written(
    query: str, services: list[str]
) -> None:
    assert filled(query, SERVICES) == {"services": services}


def test_a_date_time_from_a_day_and_a_clock_apart() -> None:
    visit = tool(["start_time"], start_time={"type": "string", "format": "date-time"})
    assert filled("an annual checkup on march 14 2025 at 9:30am", visit) == {
        "start_time": "2025-03-14T09:30:00"
    }


def test_an_option_written_with_other_separators() -> None:
    lab = tool(["test_type"], test_type={"type": "string", "enum": ["blood", "urine", "xray"]})
    assert filled("are Daisy's x-ray results back yet", lab) == {"test_type": "xray"}
    assert "test_type" not in filled("are the results back", lab)
