"""Arguments of a pharmacy's and a cloud-cost console's requests, found by the pharmacy
and FinOps sets (``tests/data/pharmacy``, ``tests/data/finops``, written blind to the
router): an instance id after its short word, minutes that end where a store's number
starts, a zero-padded store number, a phone's digits that count nothing, a drug's
generic name, how often, a list of clocks, a list of ids typed in lower case, and days
of the month said without their month.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gateway.routing import temporal
from tests.gateway.routing.conftest import extracted, object_schema

MONDAY = date(2026, 12, 7)  # the "today" the two sets were written for

RIGHTSIZING = object_schema(
    {
        "resource_id": {"type": "string", "description": "Instance id, e.g. i-0abc123def4567890"},
        "lookback_days": {"type": "integer", "minimum": 7, "maximum": 90},
    },
    ["resource_id"],
)


@pytest.mark.parametrize(
    ("query", "resource"),
    [
        ("our db box i-0deadbeef0000abcd looks way too big", "i-0deadbeef0000abcd"),
        (
            "suggest a smaller size for vm i-0aa11bb22cc33dd44 in eu-central-1",
            "i-0aa11bb22cc33dd44",
        ),
    ],
)
def test_a_scrambled_id_after_its_short_word_is_read(query: str, resource: str) -> None:
    assert extracted(query, RIGHTSIZING)["resource_id"] == resource


def test_an_id_of_another_length_is_not_the_instance() -> None:
    assert "resource_id" not in extracted("rightsize i-0deadbeef for me", RIGHTSIZING)


VACCINE = object_schema(
    {
        "store_id": {
            "type": "string",
            "pattern": "^[0-9]{4}$",
            "description": "4-digit store number, zero-padded (store 77 is 0077)",
        },
        "date": {"type": "string", "format": "date"},
        "time": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
    },
    ["store_id", "date", "time"],
)


def test_the_minutes_of_a_chinese_clock_end_before_a_longer_number() -> None:
    got = extracted("hpv第一针 这周六早上9点 2040店 帮我约一下", VACCINE)
    assert (got["time"], got["store_id"], got["date"]) == ("09:00", "2040", "2026-12-12")
    assert extracted("这周六早上9点20分 2040店", VACCINE)["time"] == "09:20"


@pytest.mark.parametrize(
    ("query", "store"),
    [
        ("book me a flu shot at store 412 tomorrow at 3pm", "0412"),
        ("schedule tdap for dec 18 at 11am, store #77", "0077"),
        ("Shingrix 2nd dose, store 3301, next Monday 9:30am", "3301"),
    ],
)
def test_a_store_number_is_zero_padded_when_its_description_says_so(query: str, store: str) -> None:
    assert extracted(query, VACCINE)["store_id"] == store


def test_a_short_number_is_not_padded_without_the_description_saying_so() -> None:
    plain = object_schema({"store_id": {"type": "string", "pattern": "^[0-9]{4}$"}}, [])
    assert "store_id" not in extracted("flu shot at store 412 tomorrow", plain)


TRANSFER = object_schema(
    {
        "patient_id": {"type": "string", "description": "Our patient id, e.g. P00412377"},
        "drug_name": {"type": "string", "description": "Medication name, brand or generic"},
        "strength_mg": {"type": "number", "exclusiveMinimum": 0},
        "from_pharmacy_name": {"type": "string"},
        "from_pharmacy_phone": {
            "type": "string",
            "pattern": "^\\+[1-9][0-9]{7,14}$",
            "description": "That pharmacy's phone in E.164, e.g. +15125550147",
        },
        "from_rx_number": {"type": "string"},
        "to_store": {"type": "integer", "minimum": 1, "maximum": 9999},
    },
    ["drug_name"],
)


def test_a_phones_digits_are_no_strength_or_store() -> None:
    got = extracted(
        "Transfer my atorvastatin from the CVS on Main St to you guys, their number is "
        "+1 512 555 0147, my patient id is P00412377",
        TRANSFER,
    )
    assert got["from_pharmacy_phone"] == "+15125550147"
    assert got["drug_name"] == "atorvastatin"  # a generic drug's name, with no dose beside it
    assert "strength_mg" not in got
    assert "to_store" not in got
    assert "from_rx_number" not in got  # a number: not "the CVS"


def test_a_prescription_number_is_no_phone_and_a_name_ends_at_its_bracket() -> None:
    got = extracted(
        "move rx from walgreens (their rx # 0781123-05) to store 219, pt id p00219904, "
        "drug is sertraline 50mg",
        TRANSFER,
    )
    assert "from_pharmacy_phone" not in got
    assert got["from_rx_number"] == "0781123-05"
    assert got["from_pharmacy_name"] == "walgreens"
    assert (got["to_store"], got["strength_mg"]) == (219, 50)


def test_a_pharmacys_name_ends_before_its_phone() -> None:
    got = extracted("transfer in: eliquis 5 mg, from Costco pharmacy ph +1-206-555-0192", TRANSFER)
    assert got["from_pharmacy_name"] == "Costco pharmacy"
    assert got["from_pharmacy_phone"] == "+12065550192"


def test_an_english_word_that_ends_like_a_drug_class_is_no_drug() -> None:
    got = extracted("please examine the transfer from Kroger", TRANSFER)
    assert got.get("drug_name") != "examine"


REMINDER = object_schema(
    {
        "patient_id": {"type": "string", "description": "患者编号"},
        "drug_name": {"type": "string", "description": "药品名称"},
        "dose_mg": {"type": "number", "exclusiveMinimum": 0, "description": "每次剂量（毫克）"},
        "frequency": {
            "type": "string",
            "enum": ["每天一次", "每天两次", "每天三次", "每周一次", "需要时"],
            "description": "服药频率",
        },
        "times": {
            "type": "array",
            "items": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$"},
        },
    },
    ["drug_name", "frequency"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "set a reminder for prednisone 10mg twice a day, 8am and 6pm",
            {"frequency": "每天两次", "times": ["08:00", "18:00"], "dose_mg": 10},
        ),
        (
            "氨氯地平 5mg 一天两次 早8点晚8点 从明天开始提醒我",
            {"frequency": "每天两次", "times": ["08:00", "20:00"], "drug_name": "氨氯地平"},
        ),
        (
            "set up a weekly reminder for my methotrexate 2.5mg, sundays 9am",
            {"frequency": "每周一次", "dose_mg": 2.5, "times": ["09:00"]},
        ),
        (
            "remind me to take my levothyroxine 0.088 mg every morning at 6:30",
            {"frequency": "每天一次", "dose_mg": 0.088},
        ),
        (
            "帮我设个提醒，每天早上8点吃二甲双胍 500mg",
            {"frequency": "每天一次", "drug_name": "二甲双胍"},
        ),
    ],
)
def test_how_often_and_at_which_clocks(query: str, expected: dict[str, Any]) -> None:
    got = extracted(query, REMINDER)
    assert {key: got.get(key) for key in expected} == expected
    assert "patient_id" not in got  # "2.5mg" is a dose, no identifier


def test_a_prescriptions_latin_abbreviation_is_how_often() -> None:
    schema = object_schema(
        {"frequency": {"type": "string", "enum": ["qd", "bid", "tid", "qid", "prn"]}}, []
    )
    assert extracted("amoxicillin 500mg three times a day", schema)["frequency"] == "tid"


def test_each_lower_case_id_of_a_list_is_read() -> None:
    schema = object_schema(
        {"rxNumbers": {"type": "array", "items": {"type": "string", "pattern": "^RX[0-9]{7}$"}}},
        [],
    )
    got = extracted("下周三送药上门 处方 rx3390117 rx3390125 晚上送", schema)
    assert got["rxNumbers"] == ["RX3390117", "RX3390125"]


@pytest.mark.parametrize(
    ("text", "resolved"),
    [
        ("RX8830215 月底那天送过来", "RX8830215 2026-12-31 那天送过来"),
        ("deliver it by the end of the month", "deliver it by 2026-12-31"),
        ("deliver RX2209775 on the 22nd", "deliver RX2209775 on 2026-12-22"),
        ("until the 14th", "until 2026-12-14"),
        ("on the 3rd", "on 2027-01-03"),  # gone by this month: the next
        ("BUD-50077 减到12000，下个月1号生效", "BUD-50077 减到12000， 2027-01-01 生效"),
        ("上个月底", "2026-11-30"),
        ("from the 3rd", "from the 3rd"),  # a report's start may be gone by: left as said
        ("the 2nd of the month", "the 2nd of the month"),
    ],
)
def test_a_day_of_the_month_said_without_its_month(text: str, resolved: str) -> None:
    assert temporal.resolve(text, MONDAY) == resolved


COMMITMENTS = object_schema(
    {
        "commitment_type": {"type": "string", "enum": ["reserved_instance", "savings_plan"]},
        "region": {"type": "string"},
    },
    ["commitment_type"],
)


@pytest.mark.parametrize(
    ("query", "option"),
    [
        ("what RIs should we buy in us-east-1?", "reserved_instance"),
        ("us-east-1 的 RI 建议看一下", "reserved_instance"),
        ("any SP worth buying this quarter", "savings_plan"),
    ],
)
def test_an_option_written_as_its_initials(query: str, option: str) -> None:
    assert extracted(query, COMMITMENTS)["commitment_type"] == option


def test_lower_case_letters_are_no_initials() -> None:
    assert "commitment_type" not in extracted("ri or sp, whatever is cheaper", COMMITMENTS)


ANOMALIES = object_schema(
    {
        "min_impact_usd": {"type": "number", "minimum": 0, "description": "Minimum impact in USD"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    },
    [],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("top 10 spend spikes in Compute Engine", {"limit": 10}),
        ("show me the last 20 resolved anomalies", {"limit": 20}),
        ("anomalies over $500 on BigQuery", {"min_impact_usd": 500}),
    ],
)
def test_a_bound_in_a_currency_is_written_as_money(query: str, expected: dict[str, Any]) -> None:
    assert extracted(query, ANOMALIES) == expected


BUDGET = object_schema(
    {
        "name": {"type": "string", "description": "Display name for the budget"},
        "amount": {"type": "number"},
        "alert_thresholds": {
            "type": "array",
            "items": {"type": "integer", "minimum": 1, "maximum": 200},
            "description": "Percentages of the amount at which to alert, e.g. [50, 90, 100]",
        },
    },
    ["amount"],
)


@pytest.mark.parametrize(
    ("query", "thresholds"),
    [
        ("monthly budget of $25,000, alert at 50, 80 and 100%", [50, 80, 100]),
        ("年度预算300万日元，到75%和100%的时候发邮件", [75, 100]),
        ("budget 5000 USD, alert at 90%", [90]),
    ],
)
def test_a_list_of_percentages(query: str, thresholds: list[int]) -> None:
    assert extracted(query, BUDGET)["alert_thresholds"] == thresholds


def test_numbers_with_no_percent_are_no_thresholds() -> None:
    assert "alert_thresholds" not in extracted("budget of 5000 for 3 teams and 2 projects", BUDGET)


def test_a_quoted_name_is_held_whole() -> None:
    got = extracted('new budget called "Q1 ML experiments", 40k USD per quarter', BUDGET)
    assert got["name"] == "Q1 ML experiments"


BUDGET_UPDATE = object_schema(
    {
        "budgetId": {"type": "string", "description": "预算编号，例如 BUD-20931"},
        "newAmount": {"type": "number", "exclusiveMinimum": 0, "description": "新的预算金额"},
        "alertThresholdPercent": {"type": "integer", "minimum": 1, "maximum": 200},
        "changeNote": {"type": "string", "description": "变更说明，自由填写"},
    },
    ["budgetId"],
)


def test_a_percentage_is_no_camel_case_amount() -> None:
    got = extracted("BUD-20931 告警阈值调到90%", BUDGET_UPDATE)
    assert got == {"budgetId": "BUD-20931", "alertThresholdPercent": 90}


def test_a_camel_case_note_is_read_after_its_label() -> None:
    got = extracted("BUD-50077 减到12000，备注写：Q1缩减", BUDGET_UPDATE)
    assert (got["newAmount"], got["changeNote"]) == (12000, "Q1缩减")


ACKNOWLEDGE = object_schema(
    {
        "anomaly_id": {"type": "string", "pattern": "^ANM-[0-9]{6}$"},
        "notify_owner": {"type": "boolean"},
    },
    ["anomaly_id"],
)


@pytest.mark.parametrize("query", ["anm005412 确认一下", "ack ANM 005412 please"])
def test_a_prefixed_id_typed_without_its_hyphen(query: str) -> None:
    assert extracted(query, ACKNOWLEDGE)["anomaly_id"] == "ANM-005412"


def test_a_false_positive_says_nothing_of_a_switch() -> None:
    assert "notify_owner" not in extracted(
        "ack anomaly anm-004388 as a false positive", ACKNOWLEDGE
    )


def test_every_weekday_is_monday_to_friday() -> None:
    schema = object_schema(
        {
            "days": {
                "type": "array",
                "items": {
                    "type": "string",
                    "enum": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
                },
            }
        },
        [],
    )
    got = extracted("stop i-0abc123def4567890 every weekday at 8pm", schema)
    assert got["days"] == ["mon", "tue", "wed", "thu", "fri"]


COST_REPORT = object_schema(
    {
        "project_id": {"type": "string"},
        "start_date": {"type": "string", "format": "date"},
        "end_date": {"type": "string", "format": "date"},
    },
    ["start_date", "end_date"],
)


@pytest.mark.parametrize(
    ("query", "today", "span"),
    [
        ("how much did payments-prod-381 cost in Q3?", MONDAY, ("2026-07-01", "2026-09-30")),
        ("Q3 2025 spend for payments-prod-381", MONDAY, ("2025-07-01", "2025-09-30")),
        ("第三季度的费用", MONDAY, ("2026-07-01", "2026-09-30")),
        ("上季度的费用", MONDAY, ("2026-07-01", "2026-09-30")),
        ("spend this quarter", MONDAY, ("2026-10-01", "2026-12-31")),
        ("spend in Q3", date(2026, 2, 10), ("2025-07-01", "2025-09-30")),  # not begun: last year's
        ("last quarter's spend", date(2027, 1, 15), ("2026-10-01", "2026-12-31")),
    ],
)
def test_a_quarter_is_its_first_and_last_day(
    query: str, today: date, span: tuple[str, str]
) -> None:
    got = extracted(query, COST_REPORT, today)
    assert (got["start_date"], got["end_date"]) == span


INTERACTIONS = object_schema(
    {"drugs": {"type": "array", "items": {"type": "string"}, "minItems": 2, "maxItems": 10}},
    ["drugs"],
)


@pytest.mark.parametrize(
    ("query", "drugs"),
    [
        (
            "check interactions: sertraline, tramadol, sumatriptan",
            ["sertraline", "tramadol", "sumatriptan"],
        ),
        ("can i take ibuprofen with my lisinopril?", ["ibuprofen", "lisinopril"]),
        ("华法林和阿司匹林一起吃有没有问题", ["华法林", "阿司匹林"]),
        ("布洛芬跟对乙酰氨基酚能一起吃吗？", ["布洛芬", "对乙酰氨基酚"]),
        ("新开的克拉霉素跟他在吃的辛伐他汀冲不冲突", ["克拉霉素", "辛伐他汀"]),
    ],
)
def test_a_list_of_medicines(query: str, drugs: list[str]) -> None:
    assert extracted(query, INTERACTIONS)["drugs"] == drugs


def test_one_medicine_is_no_list_of_two() -> None:
    assert "drugs" not in extracted(
        "Is it safe to have grapefruit juice while on atorvastatin", INTERACTIONS
    )


@pytest.mark.parametrize(
    ("query", "drug"),
    [
        ("我在外地药店还有一张氯吡格雷的处方，能转过来吗", "氯吡格雷"),
        ("想把在老百姓大药房开的二甲双胍转到你们这里", "二甲双胍"),
    ],
)
def test_a_chinese_generic_name_without_the_words_before_it(query: str, drug: str) -> None:
    assert extracted(query, TRANSFER)["drug_name"] == drug
