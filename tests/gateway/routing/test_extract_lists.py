"""Argument filling for lists and for amounts as people write them: every email of a
request in a list of attendees, every id a list's items match, every option named;
"€1,200", "10万" and "$5k" as the amounts they are; an email's domain is no account id."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from gateway.routing.extract import ArgumentExtractor
from gateway.routing.gloss import dictionary

extractor = ArgumentExtractor(today=lambda: date(2026, 12, 1))


def schema(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required}


PEOPLE = {"type": "array", "items": {"type": "string"}, "description": "Emails of the guests."}
MEETING = schema(
    ["attendees", "date"],
    attendees={**PEOPLE, "minItems": 1},
    date={"type": "string", "format": "date"},
    account_id={"type": "string", "description": "Related customer account, if any."},
)


def test_a_list_of_people_takes_every_email_in_the_order_written() -> None:
    result = extractor.extract(
        "book a call with kevin@hooli.com and ann.lee@hooli.com on 2026-03-18", MEETING
    )
    assert result.arguments == {
        "attendees": ["kevin@hooli.com", "ann.lee@hooli.com"],
        "date": "2026-03-18",
    }  # and no account id made of "hooli.com"
    assert result.missing == []


def test_a_list_of_plain_strings_about_something_else_takes_no_email() -> None:
    tags = schema(["name"], name={"type": "string"}, tags={"type": "array", "items": {}})
    assert "tags" not in extractor.extract("label it for bob@acme.io", tags).arguments


def test_a_list_of_patterned_items_takes_every_match() -> None:
    tool = schema(
        ["skus"],
        skus={"type": "array", "items": {"type": "string", "pattern": "^SKU\\d{7}$"}},
    )
    result = extractor.extract("compare SKU2024001, SKU2024003 and SKU2024001", tool)
    assert result.arguments == {"skus": ["SKU2024001", "SKU2024003"]}


def test_a_list_of_options_takes_each_named_and_respects_its_bounds() -> None:
    options = {"type": "string", "enum": ["email", "sms", "push"]}
    tool = schema(["channels"], channels={"type": "array", "items": options, "maxItems": 2})
    result = extractor.extract("notify them by sms, push and email", tool)
    assert len(result.arguments["channels"]) == 2
    assert set(result.arguments["channels"]) <= {"email", "sms", "push"}
    at_least_two = schema(["channels"], channels={"type": "array", "items": options, "minItems": 2})
    assert extractor.extract("notify them by sms", at_least_two).missing == ["channels"]


AMOUNT = schema(["amount"], amount={"type": "number", "minimum": 0})


@pytest.mark.parametrize(
    ("query", "amount"),
    [
        ("refund €1,200 to them", 1200),
        ("退款 1,500 人民币", 1500),
        ("refund 12,500.50 USD", 12500.5),
        ("报销 10万 元", 100000),
        ("refund $5k", 5000),
        ("refund 1.5万", 15000),
    ],
)
def test_an_amount_reads_as_written(query: str, amount: float) -> None:
    assert extractor.extract(query, AMOUNT).arguments == {"amount": amount}


def test_commas_between_small_numbers_still_separate_them() -> None:
    three = schema(["a", "b", "c"], **{k: {"type": "integer"} for k in "abc"})
    assert extractor.extract("a b c are 1,2,3", three).arguments == {"a": 1, "b": 2, "c": 3}
    weight = schema(["weight"], weight={"type": "number"})
    assert extractor.extract("寄 5千克 的包裹", weight).arguments == {"weight": 5}


DEAL = {"type": "string", "pattern": "^DL-\\d{5}$", "description": "商机编号，DL- 加 5 位数字"}


@pytest.mark.parametrize(
    ("query", "deal_id"),
    [
        ("we lost deal 40388, mark it lost", "DL-40388"),
        ("40921 这个商机进入谈判了", "DL-40921"),
        ("move dl-40112 on", "DL-40112"),  # the case its pattern asks
        ("move 40921 and 40922 on", None),  # two: which one is not for the router to guess
        ("move deal 4092 on", None),  # four digits are not five
        ("move 40921 on", None),  # nothing beside it says it is a deal
    ],
)
def test_an_identifier_typed_without_its_prefix_gets_it_back(
    query: str, deal_id: str | None
) -> None:
    result = extractor.extract(query, schema(["deal_id"], deal_id=DEAL))
    assert result.arguments.get("deal_id") == deal_id


RESERVATION = {"type": "string", "pattern": "^RSV\\d{8}$", "description": "Confirmation number."}


@pytest.mark.parametrize(
    ("query", "reservation_id"),
    [
        # A long number, the only one of its length, whatever word stands before it.
        ("Guest says her confirmation is 30551872, which room type?", "RSV30551872"),
        ("I need to cancel my reservation, the number is 44190268.", "RSV44190268"),
        ("reschedule booking 72819304 to 2026-05-01", "RSV72819304"),
        ("cancel 20260412", None),  # a day written as eight digits
        ("swap 30551872 for 44190268", None),  # two: not for the router to guess
        ("call me on 13812345678", None),  # eleven digits are not eight
    ],
)
def test_a_long_number_of_the_identifier_s_length_gets_its_prefix_back(
    query: str, reservation_id: str | None
) -> None:
    result = extractor.extract(query, schema(["reservation_id"], reservation_id=RESERVATION))
    assert result.arguments.get("reservation_id") == reservation_id


def test_a_four_digit_year_is_no_identifier_and_typed_digits_are_no_amount() -> None:
    campaign = schema(["campaign_id"], campaign_id={"type": "string", "pattern": "^CMP-\\d{4}$"})
    assert extractor.extract("send the 2024 campaign", campaign).missing == ["campaign_id"]
    refund = schema(
        ["invoice_id", "amount"],
        invoice_id={"type": "string", "pattern": "^INV-\\d{6}$"},
        amount={"type": "number"},
    )
    result = extractor.extract("refund inv 205230 in full", refund)
    assert result.arguments == {"invoice_id": "INV-205230"}  # 205230 is no amount
    assert result.missing == ["amount"]


def test_a_parameter_that_takes_an_email_takes_the_request_s() -> None:
    calendar = schema(
        [],
        user={"type": "string", "description": "要看谁的日历，邮箱或姓名"},
        note={"type": "string"},
    )
    assert extractor.extract("看看 lena@ourco.com 这周的日程", calendar).arguments == {
        "user": "lena@ourco.com"
    }


def test_a_name_ends_with_its_sentence_and_loses_its_possessive() -> None:
    lead = schema(
        ["contact_name"],
        contact_name={"type": "string"},
        company={"type": "string", "description": "Company the person works for."},
    )
    result = extractor.extract(
        "log a new prospect: Priya Nair, Kestrel Analytics. She came in via the website", lead
    )
    assert result.arguments == {"contact_name": "Priya Nair", "company": "Kestrel Analytics"}
    owner = schema(["owner"], owner={"type": "string", "description": "Rep who owns them."})
    assert extractor.extract("what's in Priya's pipeline?", owner).arguments == {"owner": "Priya"}


def test_a_range_s_second_day_without_a_year_follows_the_first() -> None:
    dates = {"type": "string", "format": "date"}
    span = schema([], from_date=dates, to_date=dates)
    result = extractor.extract("列一下 2026年4月1日 到 4月3日 我的会议", span)
    assert result.arguments == {"from_date": "2026-04-01", "to_date": "2026-04-03"}
    across = extractor.extract("from 2026-12-28 to Jan 3", span)
    assert across.arguments == {"from_date": "2026-12-28", "to_date": "2027-01-03"}


@pytest.mark.parametrize(
    ("query", "category"),
    [
        ("报销打车费 86 元", "taxi"),  # 打车 "take a taxi", though 打车费 segments as 打 / 车费
        ("出差住酒店花了 650 块", "hotel"),  # 酒店 "wine shop" first, "hotel" later
        ("团建吃饭 1200 元要报销", "meals"),
    ],
)
def test_an_english_option_is_named_by_any_sense_of_a_chinese_word(
    query: str, category: str
) -> None:
    dictionary()  # the router reads it off the event loop on the first Chinese request
    options = {"type": "string", "enum": ["travel", "meals", "taxi", "hotel", "other"]}
    assert extractor.extract(query, schema(["category"], category=options)).arguments == {
        "category": category
    }


def test_a_piece_of_a_date_is_no_identifier_of_the_example_s_shape() -> None:
    room = {"type": "string", "description": "e.g. 1208 (optional)"}
    tool = schema(["date"], date={"type": "string", "format": "date"}, room_number=room)
    result = extractor.extract("table on 2026-12-23 at 19:30, room 1208", tool)
    assert result.arguments == {"date": "2026-12-23", "room_number": "1208"}  # not "2026"
    alone = extractor.extract("订一间套房，2026-12-23 入住", tool)
    assert alone.arguments == {"date": "2026-12-23"}


DINING = schema(
    ["outlet", "party_size"],
    outlet={"type": "string", "enum": ["jade_garden", "harbour_grill"]},
    date={"type": "string", "format": "date"},
    party_size={"type": "integer", "minimum": 1, "maximum": 20},
    guest_name={"type": "string"},
    room_number={"type": "string", "description": "e.g. 1208 (optional)"},
)


def test_a_chinese_date_s_numbers_are_no_count_and_an_option_is_no_name() -> None:
    """ "2026年5月20日 19:00，8人" gave party size 5, room 2026 and guest "Harbour Grill"."""
    result = extractor.extract("订位：Harbour Grill，2026年5月20日 19:00，8人", DINING)
    assert result.arguments == {"outlet": "harbour_grill", "date": "2026-05-20", "party_size": 8}
    clock = extractor.extract("明天中午12点 Jade Garden，三个人", DINING)
    assert clock.arguments["party_size"] == 3  # 三个人, not the 12 of 12点
    two = extractor.extract("Jade Garden 晚上7点，两位", DINING)
    assert two.arguments["party_size"] == 2
    none = extractor.extract("Jade Garden 五月三号", DINING)
    assert "party_size" not in none.arguments  # no measure word: no count
    month = schema(["month"], month={"type": "integer", "minimum": 1, "maximum": 12})
    assert extractor.extract("5月的报表", month).arguments == {"month": 5}  # its own unit
