"""What the micromobility, warehouse, EV-charging and library sets (``tests/data``, written
blind to the router) showed missing: a state a Chinese reader reports (已被预约) is not
its act; a Chinese order may begin with when it is for; a writer does the order its own
words say ("End a charging session" ends one); a Chinese name says what a verb of no
class does (购买骑行卡 buys); and a required option is the one that names the values
the request gave (an email or a phone: update_contact).
"""

from __future__ import annotations

import pytest

from gateway.routing import intent, vocabulary
from gateway.routing.gloss import dictionary
from tests.gateway.routing.conftest import extracted, manifest, object_schema

STATUS = manifest(
    "charger_status",
    "GET",
    "查询某一个充电桩及其各枪口的实时状态（空闲 / 充电中 / 已被预约 / 故障 / 离线）。",
    {"charger_id": {"type": "string", "pattern": "^CP-[0-9]{5}$"}},
)
BOOKING = manifest(
    "slot_book",
    "POST",
    "为充电桩预约一个时段，预约后他人无法使用。",
    {"charger_id": {"type": "string", "pattern": "^CP-[0-9]{5}$"}},
)


def test_a_state_a_chinese_reader_reports_is_not_what_it_does() -> None:
    status = intent.own_words(STATUS)
    assert not intent.does(status, "reserve", strict=True, reader=True)
    assert not intent.does(status, "预约", strict=True, reader=True)
    # a writer's words in any form, and a reader's where it acts
    assert intent.does(status, "预约")
    assert intent.does(intent.own_words(BOOKING), "reserve", strict=True, reader=True)


@pytest.mark.parametrize(
    ("query", "verb"),
    [
        ("后天早上7点半预约一下40021的桩", "预约"),
        ("月底那天上午十点帮我取消CP-20418的预约", "取消"),
        ("明天晚上8点 订个桩 CP-77120 半小时", "订个"),
        ("下周三下午3点，帮我预约一下", "预约"),
    ],
)
def test_a_chinese_order_may_begin_with_when_it_is_for(query: str, verb: str) -> None:
    assert intent.order_verb(query) == verb


@pytest.mark.parametrize(
    "query", ["明天下午3点有空的桩吗", "后天早上那个预约是几点", "下周三充电多少钱"]
)
def test_when_alone_orders_nothing(query: str) -> None:
    assert intent.order_verb(query) is None


CARD = object_schema(
    {
        "cardNumber": {"type": "string", "pattern": "^21[0-9]{8}$"},
        "requestType": {
            "type": "string",
            "enum": ["report_lost", "replace", "renew", "update_address", "update_contact"],
        },
        "newAddress": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        },
        "email": {"type": "string", "format": "email"},
        "phone": {"type": "string", "pattern": "^\\+?[0-9]{7,15}$"},
    },
    ["requestType"],
)


@pytest.mark.parametrize(
    "query",
    [
        "update my email on file to maria.g@example.org",
        "换手机号了，新号码 +1 604 555 0172，帮我更新一下",
    ],
)
def test_an_email_or_a_phone_given_is_the_contact_option(query: str) -> None:
    assert extracted(query, CARD)["requestType"] == "update_contact"


def test_values_of_two_options_or_of_none_imply_none() -> None:
    # a value that is no option's: the card's number
    assert "requestType" not in extracted("about my card 2100223344", CARD)
    channel = object_schema(
        {
            "order_id": {"type": "string", "pattern": "^SO[0-9]{6}$"},
            "channel": {"type": "string", "enum": ["sms_update", "email_update"]},
            "email": {"type": "string", "format": "email"},
            "phone": {"type": "string"},
        },
        ["channel"],
    )
    said = extracted("notify me about SO123456 at ann@example.org or +44 7700 900123", channel)
    assert "channel" not in said
    assert extracted("notify me about SO123456 at ann@example.org", channel)["channel"] == (
        "email_update"
    )


STOP = manifest(
    "session_stop",
    "POST",
    "End a charging session that is currently running.",
    {"session_id": {"type": "string"}},
    name="Stop charging",
)
CONTRACT = manifest(
    "contract_lookup",
    "GET",
    "Shows a contract's parties, start and end dates.",
    {"contract_id": {"type": "string"}},
)


@pytest.mark.parametrize("verb", ["end", "terminate"])
def test_a_writer_does_the_order_its_own_words_say(verb: str) -> None:
    # "end" and "terminate" are read as cancelling, a word "End a … session" does not use
    assert intent.does(intent.own_words(STOP), verb, strict=True)
    # a reader's "end dates" are still no ending
    assert not intent.does(intent.own_words(CONTRACT), verb, strict=True, reader=True)


def test_kicking_off_restarts_nothing() -> None:
    kick_off = "Kick off a session at cp 55810 gun 2, stop at 30 kWh"
    assert "restart" not in vocabulary.requested_actions(kick_off)
    assert "restart" in vocabulary.requested_actions("kick the build server")


PASS = manifest(
    "pass_purchase",
    "POST",
    "为当前骑手购买骑行卡：日卡、月卡或年卡。",
    {"pass_type": {"type": "string", "enum": ["日卡", "月卡", "年卡"]}},
    name="购买骑行卡",
)
SWAP = manifest(
    "request_shift_swap",
    "POST",
    "向同岗位的同事发起换班：对方确认、排班主管批准后生效。",
    {"colleague": {"type": "string"}},
    name="换班申请",
)


def test_a_chinese_name_says_what_a_verb_of_no_class_does() -> None:
    dictionary()  # the names are read in English through it
    assert intent.order_verb("buy a monthly pass") == "buy"
    assert intent.does(intent.own_words(PASS), "buy", strict=True)
    # a verb of a class goes by the class's Chinese words: 换班 ("shift change") updates
    # nothing, and "update the bank account my salary goes into" is no shift swap's
    assert not intent.does(intent.own_words(SWAP), "update", strict=True)


def test_booking_said_with_a_bare_ding() -> None:
    english, chinese = vocabulary.synonyms("订个")
    assert "book" in english
    assert "预约" in chinese


def test_an_option_is_implied_only_by_all_its_words() -> None:
    coupon = object_schema(
        {
            "code": {"type": "string", "pattern": "^[A-Z0-9]{4,15}$"},
            "discount_type": {"type": "string", "enum": ["percent", "fixed_amount"]},
            "min_order_amount": {"type": "number", "minimum": 0},
        },
        ["code", "discount_type"],
    )
    # "amount" of min_order_amount says nothing of the discount's type
    assert "discount_type" not in extracted("code VIP10, min order 30", coupon)


SIGNUP = manifest(
    "event_signup",
    "POST",
    "Sign someone up for a community event (workshops, breakfasts, talks), with guests.",
    {"event_code": {"type": "string"}},
    name="Community event sign-up",
)
PLAN = manifest(
    "membership_change",
    "POST",
    "会员套餐的升级、降级、暂停或退订。退订在当前计费周期结束时生效。",
    {"action": {"type": "string", "enum": ["升级", "降级", "暂停", "退订"]}},
    name="会员套餐变更",
)


def test_a_tools_phrasal_verb_is_read_as_one() -> None:
    # (the coworking set: "报名周五的圣诞派对" of a tool that signs people up)
    assert intent.does(intent.own_words(SIGNUP), "报名", strict=True)
    assert intent.does(intent.own_words(SIGNUP), "enroll", strict=True)


def test_cancelling_a_membership_unsubscribes() -> None:
    assert "退订" in vocabulary.synonyms("cancel")[1]
    assert intent.does(intent.own_words(PLAN), "cancel", strict=True)
    assert "退订" not in vocabulary.synonyms("delete")[1]
