"""Arguments and routes found by the driving-school, self-storage and florist sets
(``tests/data/drivingschool``, ``selfstorage``, ``florist``, written blind to the router),
and by the translation set's leftovers:

- a count in Chinese numerals before 词, 字 or 页 ("两千词", "一万字"), not 十字路口;
- a ``rush`` flag asked by 加急 or "express", and a ``notify`` flag by "tell";
- 延到 and 提前到 move a date: an update;
- a request for what is still free to book names months to come ("availability in
  january", said in December, is next year's January);
- holidays on a fixed day ("christmas eve", 平安夜, 元旦), a range that ends before a day
  ("before christmas" ends on the 24th), and "from the 14th to the 18th";
- a test centre, a branch or a store is a place ("at Hendon", "Borehamwood 考场"), and an
  example written in two capitalised words ("e.g. Wood Green") is read whole;
- a postcode without a label ("deliver to 60614", "送到200030", "near SW11", "E14 附近");
- a Chinese flag's negation is read beside its word (不要署名，匿名送 is anonymous);
- a price's bound in pounds or in Chinese numerals (500镑以内, 两百块以内);
- a card's number after 卡号 or 礼品卡, a name after "as" for ``sign_as``, and an "only"
  flag turned off by what it keeps out ("incl. the past ones" of ``upcoming_only``);
- a value another parameter holds is no example-shaped identifier's (``instructor_id``
  "e.g. INS-207" never takes the student's ST-73314), and a record's name introduces a
  number of four digits or more ("ticket 77120");
- routes: "我要看…" and "我想看…" ask to read, "Need to move …" is an order with the "I"
  left out, "subscribe" is an order's verb.
"""

from __future__ import annotations

from datetime import date

import httpx
import pytest

from gateway.routing import intent, places, temporal, vocabulary
from gateway.routing.service import _prefixed_alike
from tests.gateway.routing.conftest import blind_set, dry_run, extracted, object_schema

CATALOGUE = blind_set("drivingschool")

TODAY = date(2026, 12, 7)

QUOTE = object_schema(
    {
        "word_count": {"type": "integer", "minimum": 1, "maximum": 200000},
        "rush": {"type": "boolean", "description": "Express delivery (+40%)."},
    },
    ["word_count"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("帮我估个价：英译日，大概两千词", 2000),
        ("请报个价：法律文件，一万字", 10000),
        ("英译日，两千五百字", 2500),
        ("a quote for 3000 words", 3000),
    ],
)
def test_a_count_of_words_in_chinese_numerals(query: str, expected: int) -> None:
    assert extracted(query, QUOTE)["word_count"] == expected


def test_a_crossroads_counts_no_characters() -> None:
    assert "word_count" not in extracted("十字路口那家店还开着吗", QUOTE)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("英译日，两千词，加急", True),
        ("2000 words, express please", True),
        ("2000 words, no hurry", False),
    ],
)
def test_a_rush_flag_is_asked_in_other_words(query: str, expected: bool | None) -> None:
    assert extracted(query, QUOTE).get("rush") is expected


def test_moving_a_date_later_or_earlier_is_an_update() -> None:
    assert vocabulary.requested_actions("TJ-480066 的交稿时间能不能延到1月10号") == {"update"}
    assert vocabulary.requested_actions("交稿提前到周五") == {"update"}


SLOTS = object_schema(
    {
        "test_type": {"type": "string", "enum": ["theory", "practical"]},
        "test_centre": {
            "type": "string",
            "description": "Test centre name, e.g. Wood Green. Leave empty for all centres.",
        },
        "from_date": {"type": "string", "format": "date"},
        "to_date": {"type": "string", "format": "date"},
    },
    ["test_type"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("theory test availability in january", ("2027-01-01", "2027-01-31")),
        ("any theory slots in March?", ("2027-03-01", "2027-03-31")),
        ("理论考试1月还有名额吗", ("2027-01-01", "2027-01-31")),
        ("practical slots in december", ("2026-12-01", "2026-12-31")),
    ],
)
def test_a_request_for_openings_names_months_to_come(query: str, expected: tuple[str, str]) -> None:
    arguments = extracted(query, SLOTS)
    assert (arguments["from_date"], arguments["to_date"]) == expected


def test_a_month_alone_is_still_the_one_gone_by() -> None:
    assert temporal.resolve("sales in January", TODAY) == "sales in 2026-01"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("deliver on christmas eve", "deliver on 2026-12-24"),
        ("skip christmas day", "skip 2026-12-25"),
        ("平安夜送到", "2026-12-24 送到"),
        ("元旦那天要用车", "2027-01-01 那天要用车"),
        ("anything before christmas?", "anything before 2026-12-25 ?"),
        ("for new year's eve", "for 2026-12-31"),
        ("the christmas party", "the christmas party"),  # a thing, no day
        ("happy new year", "happy new year"),
    ],
)
def test_holidays_on_a_fixed_day(text: str, expected: str) -> None:
    assert temporal.resolve(text, TODAY) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("any practical test dates before christmas?", {"to_date": "2026-12-24"}),
        ("practical tests before the 20th?", {"to_date": "2026-12-19"}),
        ("理论考试，12月20号之前有位置吗", {"to_date": "2026-12-19"}),
        (
            "practical slots from the 14th to the 18th",
            {"from_date": "2026-12-14", "to_date": "2026-12-18"},
        ),
        (
            "practical slots between the 28th and the 3rd",
            {"from_date": "2026-12-28", "to_date": "2027-01-03"},
        ),
    ],
)
def test_the_days_of_a_range(query: str, expected: dict[str, str]) -> None:
    arguments = extracted(query, SLOTS)
    assert {k: v for k, v in arguments.items() if k.endswith("_date")} == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Are there any road test slots at Hendon?", "Hendon"),
        ("show practical test slots at Mill Hill from Dec 14", "Mill Hill"),
        ("理论考试，Borehamwood 考场，最近有位置吗", "Borehamwood"),
        ("any practical test dates at Wood Green?", "Wood Green"),
    ],
)
def test_a_test_centre_is_a_place(query: str, expected: str) -> None:
    assert extracted(query, SLOTS)["test_centre"] == expected


def test_a_cost_centre_or_a_branch_code_is_no_place() -> None:
    spec = {"type": "string", "description": "Cost centre to charge"}
    assert not places.takes_a_place("cost_centre", spec)
    assert places.takes_a_place("branch", {"type": "string"})
    coded = {"type": "string", "description": "新的还车门店代码（异地还车可能产生费用）"}
    assert not places.takes_a_place("new_return_branch", coded)
    assert not places.takes_a_place("store_id", {"type": "string"})


@pytest.mark.parametrize(
    ("query", "description", "expected"),
    [
        ("can you deliver to 60614 tomorrow morning?", "收花地址的邮编", "60614"),
        ("what delivery times are available for 94107 on Friday?", "收花地址的邮编", "94107"),
        ("平安夜送到200030还有空的时段吗", "收花地址的邮编", "200030"),
        ("100020 明天能送吗", "收花地址的邮编", "100020"),
        ("想找个男教练，自动挡，邮编 B15", "Postcode district, e.g. SW11", "B15"),
        ("find me manual instructors around M14", "Postcode district, e.g. SW11", "M14"),
        ("我住在 E14 附近，想找个教练", "Postcode district, e.g. SW11", "E14"),
    ],
)
def test_a_postcode_without_a_label(query: str, description: str, expected: str) -> None:
    schema = object_schema({"postcode": {"type": "string", "description": description}})
    assert extracted(query, schema)["postcode"] == expected


@pytest.mark.parametrize(
    "query",
    [
        "送到 200030 和 200031 哪个快",  # two numbers: neither is the one
        "预算 12000元，送到哪都行",  # a price
        "order FL-200030 please",  # an id's digits
    ],
)
def test_numbers_that_are_no_postcode(query: str) -> None:
    schema = object_schema({"postcode": {"type": "string", "description": "收花地址的邮编"}})
    assert "postcode" not in extracted(query, schema)


CARD = object_schema(
    {
        "order_id": {"type": "string", "description": "order number, e.g. FL-310772"},
        "sign_as": {"type": "string", "description": "Signature line on the card"},
        "anonymous": {"type": "boolean", "description": "Leave the card unsigned"},
    },
    ["order_id"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("订单 FL-440918 的卡片不要署名，匿名送", True),
        ("订单 FL-440918 不要匿名", False),
    ],
)
def test_a_chinese_flag_is_negated_beside_its_word(query: str, expected: bool) -> None:
    assert extracted(query, CARD)["anonymous"] is expected


@pytest.mark.parametrize(
    "query",
    [
        "把 CAND-39120 拒掉，候选人自己说不来了，不用发邮件通知",  # the clause of 通知
        "看一下 CAND-39120，通知候选人不用了",  # negated after its word
    ],
)
def test_a_chinese_flag_negated_in_its_own_clause(query: str) -> None:
    schema = object_schema(
        {"candidate_id": {"type": "string"}, "notify_candidate": {"type": "boolean"}}
    )
    assert extracted(query, schema)["notify_candidate"] is False


def test_a_name_after_as() -> None:
    query = "for order FL-615002 please sign the card as Uncle Bob"
    assert extracted(query, CARD) == {"order_id": "FL-615002", "sign_as": "Uncle Bob"}
    alias = object_schema({"alias": {"type": "string"}})
    assert "alias" not in extracted("save it as Main Account", alias)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("cancel LB-630914 but don't tell the instructor yet", False),
        ("cancel LB-630914 and tell the instructor", True),
    ],
)
def test_telling_someone_notifies_them(query: str, expected: bool) -> None:
    schema = object_schema(
        {
            "booking_ref": {"type": "string", "pattern": "^LB-\\d{6}$"},
            "notify_instructor": {"type": "boolean", "default": True},
        },
        ["booking_ref"],
    )
    assert extracted(query, schema)["notify_instructor"] is expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("有没有500镑以内的套餐", 500),
        ("有没有适合周年纪念的红玫瑰，两百块以内", 200),
        ("packages under £450", 450),
    ],
)
def test_a_price_bound_in_pounds_or_chinese_numerals(query: str, expected: int) -> None:
    schema = object_schema({"max_price": {"type": "number", "minimum": 0, "maximum": 5000}})
    assert extracted(query, schema) == {"max_price": expected}


def test_a_count_of_things_is_no_price_bound() -> None:
    schema = object_schema({"max_price": {"type": "number", "minimum": 0, "maximum": 5000}})
    assert extracted("两百支玫瑰", schema) == {}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("gift card balance check pls, card 7730011902", "7730011902"),
        ("查一下礼品卡 990011223344 的余额", "990011223344"),
        ("我的购物卡还剩多少钱？卡号 55601239", "55601239"),
    ],
)
def test_a_card_number_after_its_label(query: str, expected: str) -> None:
    schema = object_schema({"card_number": {"type": "string"}}, ["card_number"])
    assert extracted(query, schema) == {"card_number": expected}


LESSONS = object_schema(
    {
        "student_id": {"type": "string", "pattern": "^ST-\\d{5}$"},
        "upcoming_only": {"type": "boolean", "default": True},
        "instructor_id": {"type": "string", "description": "Preferred instructor, e.g. INS-207"},
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("list all my lessons incl. the past ones, student ST-52090", False),
        ("list my upcoming lessons, student ST-52090", True),
    ],
)
def test_an_only_flag_is_off_for_what_it_keeps_out(query: str, expected: bool) -> None:
    assert extracted(query, LESSONS)["upcoming_only"] is expected


def test_an_example_shaped_id_is_not_another_parameters() -> None:
    assert extracted("lessons for student ST-73314", LESSONS) == {"student_id": "ST-73314"}
    both = extracted("lessons for ST-73314 with INS-207", LESSONS)
    assert both == {"student_id": "ST-73314", "instructor_id": "INS-207"}


def test_a_value_of_the_examples_own_shape_is_still_read() -> None:
    restart = object_schema(
        {
            "service": {"type": "string", "pattern": "^[a-z][a-z0-9-]{1,62}$"},
            "instance": {"type": "string", "description": "pod, e.g. payments-api-7d9f8-x2k4q"},
        },
        ["service"],
    )
    query = "please restart ledger-api-5c8b7-q9x2m only, the other pods are fine"
    assert extracted(query, restart)["instance"] == "ledger-api-5c8b7-q9x2m"


@pytest.mark.parametrize(
    ("query", "name", "expected"),
    [
        ("any update on ticket 77120?", "ticket", "77120"),
        ("claim 48812 status", "claim", "48812"),
        ("ticket 2025 status", "ticket", None),  # a year
        ("ticket 12 please", "ticket", None),  # a short number counts or orders
        ("refund 1200 to my card", "refund", None),  # a sum: the record's name is a verb
    ],
)
def test_a_record_number_its_name_introduces(query: str, name: str, expected: str | None) -> None:
    schema = object_schema({name: {"type": "string"}}, [name])
    assert extracted(query, schema).get(name) == expected


@pytest.mark.parametrize(
    ("text", "reads"),
    [
        ("我要看一下发票 INV-3310457", True),
        ("我想看 SMP-381220 的 CBC 结果，带参考范围", True),
        ("我想看牙，明天上午", False),  # a visit to book
        ("need to see a heart doctor, my number is MRN-020931", False),
        ("see my invoices", True),
    ],
)
def test_wanting_to_look_is_a_read(text: str, reads: bool) -> None:
    assert intent.asks_to_read(text) is reads


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("Need to move my lesson LB-118830 to Dec 19, same time", "reschedule"),
        ("want to cancel LB-118830", "cancel"),
        ("subscribe me to flowers every two weeks", "subscribe"),
        ("Need to write up a head knock for CH40077", "create"),
    ],
)
def test_orders_without_their_subject(text: str, verb: str) -> None:
    assert intent.order_verb(text) == verb


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("我要看一下发票 INV-3310457", "get_invoice"),
        ("Need to move my lesson LB-118830 to Dec 19, same time", "reschedule_lesson"),
    ],
)
async def test_driving_school_routes(gateway: httpx.AsyncClient, query: str, tool_id: str) -> None:
    body = (await dry_run(gateway, query, "student")).json()
    assert body.get("tool_id") == tool_id, body


ORDER = object_schema(
    {
        "bouquet_sku": {"type": "string", "description": "Catalogue SKU, e.g. BQ-1042"},
        "recipient": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "street": {"type": "string", "description": "street and house number"},
                "city": {"type": "string"},
                "postcode": {"type": "string"},
                "notes": {"type": "array", "items": {"type": "string", "enum": ["gate", "lift"]}},
            },
            "required": ["name", "street", "postcode"],
        },
        "card_message": {"type": "string", "description": "text printed on the gift card"},
    },
    ["bouquet_sku", "recipient"],
)


@pytest.mark.parametrize(
    ("query", "recipient"),
    [
        (
            'order BQ-1042 to Anna Li, 14 Elm Street, 10115, card says "Happy birthday, love"',
            {"name": "Anna Li", "street": "14 Elm Street", "postcode": "10115"},
        ),
        (
            "buy BQ-3301 for Tom Baker, 8 Hill Lane, 60614",
            {"name": "Tom Baker", "street": "8 Hill Lane", "postcode": "60614"},
        ),
        (
            "帮我下单 BQ-1042，送到 王芳，朝阳路88号，邮编100020，卡片写“周年快乐”",
            {"name": "王芳", "street": "朝阳路88号", "postcode": "100020"},
        ),
        (
            "我要订花，BQ-0551，收件人张伟 人民路12号 200001",
            {"name": "张伟", "street": "人民路12号", "postcode": "200001"},
        ),
    ],
)
def test_a_recipient_object(query: str, recipient: dict[str, str]) -> None:
    assert extracted(query, ORDER)["recipient"] == recipient


def test_a_text_message_is_sms() -> None:
    schema = object_schema(
        {
            "rental_id": {"type": "string", "pattern": "^RA-\\d{6}$"},
            "notify_by": {"type": "string", "enum": ["sms", "email"]},
        },
        ["rental_id"],
    )
    query = "reset keypad pin for ra-645320 and text me the new one"
    assert extracted(query, schema) == {"rental_id": "RA-645320", "notify_by": "sms"}


@pytest.mark.parametrize(
    ("value", "alike"),
    [
        ("RSV-40418", True),
        ("RA-445190", False),  # a rental's number, read loosely for a reservation's
    ],
)
def test_an_identifier_of_the_examples_prefix(value: str, alike: bool) -> None:
    schema = object_schema(
        {"reservation_id": {"type": "string", "description": "Reservation number, e.g. RSV-48213"}},
        ["reservation_id"],
    )
    assert _prefixed_alike({"reservation_id": value}, schema) is alike
    scrambled = object_schema(
        {"booking_ref": {"type": "string", "description": "Booking reference, e.g. K7QX2M"}},
        ["booking_ref"],
    )
    assert _prefixed_alike({"booking_ref": "D6HR2M"}, scrambled)


@pytest.mark.parametrize(
    ("query", "expected"),
    [("今天还能当天送的花束有哪些", True), ("明天送的花束有哪些", None)],
)
def test_a_chinese_flag_by_another_sense_of_its_word(query: str, expected: bool | None) -> None:
    schema = object_schema({"same_day_only": {"type": "boolean"}})
    assert extracted(query, schema).get("same_day_only") is expected
