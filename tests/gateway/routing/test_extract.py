"""Offline argument extraction, guided by the tool's input schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.routing.extract import ArgumentExtractor, examples_of, shape_of
from gateway.routing.gloss import dictionary

SKU_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "pattern": "^SKU\\d{7}$", "description": "e.g. SKU2024001"},
        "days": {"type": "integer", "description": "window in days"},
    },
    "required": ["sku"],
}

extractor = ArgumentExtractor()
REPO = Path(__file__).resolve().parents[3]


def test_pattern_finds_the_value_anywhere() -> None:
    result = extractor.extract("SKU2024001 还有多少库存", SKU_SCHEMA)
    assert result.arguments == {"sku": "SKU2024001"}
    assert result.missing == []


def test_numbers_go_to_the_parameter_they_follow() -> None:
    schema = {
        "type": "object",
        "properties": {"base": {"type": "integer"}, "height": {"type": "integer"}},
        "required": ["base", "height"],
    }
    result = extractor.extract("a triangle with height of 5 and a base of 10", schema)
    assert result.arguments == {"base": 10, "height": 5}


def test_an_unnamed_number_outside_the_bounds_is_about_something_else() -> None:
    schema = {
        "type": "object",
        "properties": {
            "sku": SKU_SCHEMA["properties"]["sku"],
            "days": {"type": "integer", "minimum": 1, "maximum": 365},
        },
        "required": ["sku"],
    }
    stray = extractor.extract("how is SKU2024003 selling? re ticket 1116", schema)
    assert stray.arguments == {"sku": "SKU2024003"}
    within = extractor.extract("sales of SKU2024003 over the past 14 days", schema)
    assert within.arguments == {"sku": "SKU2024003", "days": 14}
    # Named, it is taken as said, and validation tells the caller the bound.
    named = extractor.extract("SKU2024003 sales, days 500", schema)
    assert named.arguments == {"sku": "SKU2024003", "days": 500}


def test_enum_dates_quotes_and_names() -> None:
    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "date": {"type": "string", "format": "date"},
            "city": {"type": "string"},
            "note": {"type": "string", "description": "free text"},
        },
        "required": ["unit", "date", "city"],
    }
    query = 'Weather in San Francisco on 2024-07-15 in Fahrenheit, note "bring umbrella"'
    result = extractor.extract(query, schema)
    assert result.arguments == {
        "unit": "fahrenheit",
        "date": "2024-07-15",
        "city": "San Francisco",
        "note": "bring umbrella",
    }


def test_a_reference_back_takes_the_previous_calls_argument() -> None:
    result = extractor.extract(
        "那这个 SKU 最近卖得怎么样", SKU_SCHEMA, previous={"sku": "SKU2024001"}
    )
    assert result.arguments == {"sku": "SKU2024001"}
    assert result.from_context == ["sku"]


def test_no_reference_back_means_no_context_fill() -> None:
    result = extractor.extract("sales report please", SKU_SCHEMA, previous={"sku": "SKU2024001"})
    assert result.arguments == {}
    assert result.missing == ["sku"]
    message = result.missing_message(SKU_SCHEMA)
    assert "'sku'" in message
    assert "^SKU\\d{7}$" in message
    assert "SKU2024001" in message  # the description's example


def test_a_value_that_does_not_match_the_pattern_is_not_taken() -> None:
    result = extractor.extract("stock of SKU12", SKU_SCHEMA)
    assert result.missing == ["sku"]


# --- identifiers without a pattern -------------------------------------------------------------


def _one(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {name: spec}, "required": [name]}


ORIGINAL_SKU = _one("sku", {"type": "string", "description": "商品的 SKU 编码例如 SKU2024001"})


@pytest.mark.parametrize(
    ("example", "shape"),
    [
        ("SKU2024001", "SKU\\d{7}"),
        ("SO20240715001", "SO\\d{11}"),
        ("ABC-123", "ABC\\-\\d{3}"),
    ],
)
def test_an_example_becomes_a_shape(example: str, shape: str) -> None:
    assert shape_of(example) == shape


@pytest.mark.parametrize(
    ("description", "examples"),
    [
        ("商品的 SKU 编码例如 SKU2024001", ["SKU2024001"]),
        ("订单编号以 SO 开头格式如 SO20240715001", ["SO20240715001"]),
        ("Order number, e.g. SO20240715001.", ["SO20240715001"]),
        ("A ticket key like ABC-123", ["ABC-123"]),
        ("Look back this many days (1-365)", []),
        ("free text, e.g. bring an umbrella", []),
    ],
)
def test_examples_are_read_from_the_description(description: str, examples: list[str]) -> None:
    assert examples_of({"type": "string", "description": description}) == examples


def test_the_original_sku_is_found_from_the_descriptions_example() -> None:
    result = extractor.extract("SKU2024001 还有多少库存", ORIGINAL_SKU)
    assert result.arguments == {"sku": "SKU2024001"}
    assert result.missing == []


def test_an_id_of_another_shape_is_not_taken_and_the_message_shows_the_shape() -> None:
    result = extractor.extract("SKU12 和 SO20240715001 还有多少库存", ORIGINAL_SKU)
    assert result.arguments == {}
    assert result.missing == ["sku"]
    message = result.missing_message(ORIGINAL_SKU)
    assert "'sku'" in message
    assert "looks like SKU2024001 (SKU\\d{7})" in message


def test_a_file_name_example_is_shown_as_an_example_not_as_a_rule() -> None:
    """ "e.g. auth-v2.md" does not mean every source is named auth-v<digit>.md."""
    schema = {
        "type": "object",
        "properties": {"source": {"type": "string", "description": "Name, e.g. auth-v2.md"}},
        "required": ["source"],
    }
    message = extractor.extract("store this note", schema).missing_message(schema)
    assert "e.g. auth-v2.md" in message
    assert "looks like" not in message


def test_the_original_follow_up_still_comes_from_the_session() -> None:
    result = extractor.extract(
        "那这个 SKU 最近卖得怎么样", ORIGINAL_SKU, previous={"sku": "SKU2024001"}
    )
    assert result.arguments == {"sku": "SKU2024001"}
    assert result.from_context == ["sku"]


@pytest.mark.parametrize(
    ("spec", "query", "value"),
    [
        (
            {"type": "string", "description": "订单编号以 SO 开头格式如 SO20240715001"},
            "帮我查一下订单 SO20240715001 到哪了",
            "SO20240715001",
        ),
        (
            {"type": "string", "examples": ["INV-2024-0001"]},
            "pay invoice INV-2025-0042",
            "INV-2025-0042",
        ),
        (
            {"type": "string", "description": "like ABC-123"},
            "close ticket XYZ-4567 now",
            "XYZ-4567",
        ),
        ({"type": "string", "description": "e.g. 12345678"}, "ship 3 to 87654321", "87654321"),
    ],
)
def test_other_id_formats_are_found_by_their_examples(
    spec: dict[str, Any], query: str, value: str
) -> None:
    assert extractor.extract(query, _one("ref_id", spec)).arguments == {"ref_id": value}


def test_an_example_shape_does_not_take_a_number_of_another_length() -> None:
    result = extractor.extract(
        "ship 3 to 876", _one("ref_id", {"type": "string", "description": "e.g. 12345678"})
    )
    assert result.missing == ["ref_id"]


def test_with_no_example_an_id_like_name_finds_its_token() -> None:
    bare = {"type": "string"}
    assert extractor.extract("where is order SO20240715001?", _one("order_id", bare)).arguments == {
        "order_id": "SO20240715001"
    }
    assert extractor.extract("stock for sku2024001 and 5 more", _one("sku", bare)).arguments == {
        "sku": "sku2024001"
    }
    # not an id-like name: nothing is guessed
    assert extractor.extract("weather at A4 please", _one("mood", bare)).missing == ["mood"]


def test_two_parameters_of_one_shape_take_different_tokens() -> None:
    spec = {"type": "string", "examples": ["SKU2024001"]}
    schema = {
        "type": "object",
        "properties": {"from_sku": spec, "to_sku": spec},
        "required": ["from_sku", "to_sku"],
    }
    result = extractor.extract("move stock from SKU2024003 to SKU2024004", schema)
    assert result.arguments == {"from_sku": "SKU2024003", "to_sku": "SKU2024004"}


def test_a_pattern_still_wins_over_the_description() -> None:
    schema = _one("code", {"type": "string", "pattern": "^Z\\d{3}$", "description": "e.g. A123"})
    assert extractor.extract("codes A123 and Z999", schema).arguments == {"code": "Z999"}


def test_a_remembered_fact_fills_what_the_query_refers_to() -> None:
    remembered = ["Prefers answers in German", "My usual SKU is SKU2024003"]
    result = extractor.extract(
        "how is my usual product selling?", SKU_SCHEMA, remembered=remembered
    )
    assert result.arguments == {"sku": "SKU2024003"}
    assert result.from_memory == ["sku"]
    # Named in the query: the query wins; not referred to at all: nothing is borrowed.
    named = extractor.extract("stock of SKU2024001", SKU_SCHEMA, remembered=remembered)
    assert named.arguments == {"sku": "SKU2024001"}
    assert named.from_memory == []
    unrelated = extractor.extract("how are sales going?", SKU_SCHEMA, remembered=remembered)
    assert unrelated.missing == ["sku"]
    assert unrelated.from_memory == []


ORDER_CREATE = json.loads((REPO / "manifests" / "order_create.json").read_text())["input_schema"]


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        (
            "下个单：SKU2077001，数量100，客户是华强贸易",
            {"sku": "SKU2077001", "quantity": 100, "customer": "华强贸易"},
        ),
        ("给张三下单 SKU2024333 10件", {"sku": "SKU2024333", "quantity": 10, "customer": "张三"}),
        ("帮客户李娜订 5 个 SKU2101200", {"sku": "SKU2101200", "quantity": 5, "customer": "李娜"}),
        ("客户：王芳，SKU2024001 数量 3", {"sku": "SKU2024001", "quantity": 3, "customer": "王芳"}),
        (
            "order 2 SKU2056781 for Acme Ltd",
            {"sku": "SKU2056781", "quantity": 2, "customer": "Acme Ltd"},
        ),
    ],
)
def test_chinese_orders_give_their_numbers_and_customers(
    query: str, arguments: dict[str, object]
) -> None:
    """A number written against a Chinese character ("数量100", "要30件") is a number, and
    a customer is read after its label ("客户是 …") or as whom the order is for ("给张三下单")."""
    assert extractor.extract(query, ORDER_CREATE).arguments == arguments


def test_the_pronoun_an_order_is_for_is_not_a_customer() -> None:
    assert "customer" not in extractor.extract("给他下单 SKU2024333 10件", ORDER_CREATE).arguments


def test_a_source_called_by_name_is_read_without_a_suffix() -> None:
    schema = json.loads((REPO / "manifests" / "rag_delete_source.json").read_text())
    arguments = extractor.extract("wipe the source called test-upload", schema["input_schema"])
    assert arguments.arguments == {"source": "test-upload"}


INVOICE_PAY = {
    "type": "object",
    "properties": {
        "invoice_id": {"type": "string", "description": "invoice number, e.g. INV-2026-00042"},
        "amount": {"type": "number", "minimum": 0.01},
        "currency": {"type": "string", "pattern": "^[A-Z]{3}$"},
    },
    "required": ["invoice_id", "amount", "currency"],
}


@pytest.mark.parametrize(
    "query", ["pay INV-2026-00042, 1250.50 EUR", "支付发票 INV-2026-00042 共 1250.50 EUR"]
)
def test_an_identifier_s_pieces_are_neither_numbers_nor_codes(query: str) -> None:
    """The digits of "INV-2026-00042" are no amount, its "INV" no currency code."""
    assert extractor.extract(query, INVOICE_PAY).arguments == {
        "invoice_id": "INV-2026-00042",
        "amount": 1250.5,
        "currency": "EUR",
    }


def test_a_date_or_a_time_is_not_a_count() -> None:
    schema = {"type": "object", "properties": {"quantity": {"type": "integer", "minimum": 1}}}
    assert extractor.extract("on 2026-12-05 at 10:30, 7 boxes", schema).arguments == {"quantity": 7}


SHIPMENT = {
    "type": "object",
    "properties": {
        "origin": {"type": "string", "description": "Pickup location (warehouse or address)."},
        "destination": {"type": "string", "description": "Delivery address, free text."},
        "to_postcode": {"type": "string", "description": "Destination postal code"},
        "weight_kg": {"type": "number", "minimum": 0.1, "maximum": 30000},
    },
}


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        (
            "ship 12 kg from WH01 to 88 Orchard Road, Singapore, on 2026-12-05",
            {"origin": "WH01", "destination": "88 Orchard Road", "weight_kg": 12},
        ),
        (
            "I need to send a 25 kg pallet to our Rotterdam customer",
            {"destination": "our Rotterdam customer", "weight_kg": 25},
        ),
        (
            "从 WH01 发货 3 kg 寄到 上海浦东新区世纪大道100号",
            {"origin": "WH01", "destination": "上海浦东新区世纪大道100号", "weight_kg": 3},
        ),
    ],
)
def test_where_from_and_where_to(query: str, arguments: dict[str, object]) -> None:
    """A destination follows the last "to" (寄到), an origin "from" (从); a number
    followed by the parameter's unit ("12 kg" for ``weight_kg``) is that number."""
    schema = {**SHIPMENT, "properties": dict(SHIPMENT["properties"])}
    del schema["properties"]["to_postcode"]
    assert extractor.extract(query, schema).arguments == arguments


def test_a_code_after_to_is_one_token() -> None:
    schema = {**SHIPMENT, "properties": {"to_postcode": SHIPMENT["properties"]["to_postcode"]}}
    for query in ("quote 5 kg from 200000 to 10115", "a 20kg parcel to postcode 10115"):
        assert extractor.extract(query, schema).arguments == {"to_postcode": "10115"}


def test_a_common_word_is_not_a_code_in_capitals() -> None:
    """The case of an identifier is corrected ("sku2025018"), never a word's: "and" is
    no currency code."""
    schema = {"type": "object", "properties": {"base": {"type": "string", "pattern": "^[A-Z]{3}$"}}}
    assert extractor.extract("and on 2026-06-30?", schema).arguments == {}


def test_a_quoted_phrase_is_not_an_identifier_of_another_shape() -> None:
    """ "运单号，例如 SF1234567890": a quoted "bill of lading" is no tracking number (it used
    to be taken, and the tool then counted as fitting the request)."""
    schema = {
        "type": "object",
        "properties": {
            "tracking_no": {"type": "string", "description": "运单号，例如 SF1234567890"}
        },
        "required": ["tracking_no"],
    }
    assert extractor.extract("translate 'bill of lading' into Spanish", schema).arguments == {}
    assert extractor.extract("where is 'SF1234567890'", schema).arguments == {
        "tracking_no": "SF1234567890"
    }


@pytest.mark.parametrize(
    ("name", "query", "value"),
    [
        (
            "summary",
            "open a ticket: outlook crashes every time I attach a file",
            "outlook crashes every time I attach a file",
        ),
        ("reason", "请假三天：家里有事", "家里有事"),
        ("description", "log an incident: VPN drops every hour", "VPN drops every hour"),
    ],
)
def test_a_free_text_parameter_takes_what_follows_the_colon(
    name: str, query: str, value: str
) -> None:
    schema = {"type": "object", "properties": {name: {"type": "string"}}, "required": [name]}
    assert extractor.extract(query, schema).arguments == {name: value}
    # Without a colon nothing says which words are the text: the value stays missing
    # (a problem's summary or description is the request itself once it has six words
    # or more); the colon of a time introduces nothing.
    assert extractor.extract("my outlook keeps crashing", schema).missing == [name]
    timed = "book a room at 3:30 pm for 2 hours"
    if name in ("summary", "description"):
        assert extractor.extract(timed, schema).arguments == {name: timed}
    else:
        assert extractor.extract(timed, schema).missing == [name]


def test_a_document_is_named_after_as_when_the_name_looks_like_one() -> None:
    schema = json.loads((REPO / "manifests" / "rag_ingest.json").read_text())["input_schema"]
    saved = extractor.extract(
        "save the text below into the kb as faq-shipping: we ship in 2 days", schema
    )
    assert saved.arguments == {"source": "faq-shipping", "text": "we ship in 2 days"}
    # "as a note", "as annual leave": no name.
    assert "source" in extractor.extract("add this as a note: free gift wrapping", schema).missing


def test_a_parameter_named_as_its_identifiers_begin_takes_one() -> None:
    """``mrn`` is no id-like name, but "MRN-066241" begins with it."""
    schema = {"type": "object", "properties": {"mrn": {"type": "string"}}}
    assert extractor.extract("MRN-066241 还欠多少钱", schema).arguments == {"mrn": "MRN-066241"}
    assert extractor.extract("how much do I owe? mrn-004512", schema).arguments == {
        "mrn": "mrn-004512"
    }
    # The name alone, or a longer word that begins with it, is no identifier.
    assert extractor.extract("what is my mrn", schema).arguments == {}
    assert extractor.extract("the mrnx 12 thing", schema).arguments == {}


TERM = {"type": "string", "pattern": "^\\d{4}-(spring|summer|fall)$"}


@pytest.mark.parametrize(
    ("query", "term"),
    [
        ("grades for S20195531, fall 2024", "2024-fall"),
        ("S20236650 2024年秋季学期各科分数", "2024-fall"),  # 秋季: "autumn, fall"
        ("in the Summer of 2023", "2023-summer"),
        ("2025-spring", "2025-spring"),  # written whole
        ("fall 2024 or spring 2025", None),  # two years: which is meant is not known
        ("this fall", None),  # no year: none is made up
    ],
)
def test_a_value_written_in_pieces_is_joined_as_its_pattern_wants(
    query: str, term: str | None
) -> None:
    dictionary()
    schema = {"type": "object", "properties": {"term": TERM}}
    assert extractor.extract(query, schema).arguments.get("term") == term


def test_a_code_like_its_example_is_that_parameters_and_no_plain_ones() -> None:
    """ "like MATH-1102" is any department's code: "CS-2041" is one, and a plain
    ``student_id`` listed first does not take it."""
    schema = {
        "type": "object",
        "properties": {
            "student_id": {"type": "string"},
            "course_code": {"type": "string", "description": "Course, like MATH-1102"},
        },
    }
    assert extractor.extract("where do I sit for the CS-2041 resit", schema).arguments == {
        "course_code": "CS-2041"
    }
    both = extractor.extract("S20231234 exams for CS-2041", schema)
    assert both.arguments == {"student_id": "S20231234", "course_code": "CS-2041"}


def test_a_prefix_glued_to_its_digits_is_matched_as_written() -> None:
    """ "e.g. RSV46573829" names a fixed prefix: a member number M5510293 is no booking."""
    schema = {
        "type": "object",
        "properties": {
            "reservation_id": {"type": "string", "description": "Booking, e.g. RSV46573829"}
        },
    }
    assert extractor.extract("member M5510293 wants a room", schema).arguments == {}
    found = extractor.extract("move RSV12345678 please", schema)
    assert found.arguments == {"reservation_id": "RSV12345678"}


NOTICE = {
    "type": "object",
    "properties": {
        "class_group": {"type": "string"},
        "message": {"type": "string"},
        "urgent": {"type": "boolean"},
    },
    "required": ["message"],
}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "email the parents of S20240417 that she left her coat at school",
            "she left her coat at school",
        ),
        ("ping S20218843's guardians about the missing homework", "the missing homework"),
        ("text the 7A parents: school is closed tomorrow", "school is closed tomorrow"),
        ("给高一(3)班的家长发短信，下周一开家长会", "下周一开家长会"),
        ("send his parents a text", None),  # says nothing it should say: still asked for
    ],
)
def test_a_required_message_is_what_the_request_says_to_say(
    query: str, message: str | None
) -> None:
    result = extractor.extract(query, NOTICE)
    assert result.arguments.get("message") == message
    assert result.missing == ([] if message else ["message"])


@pytest.mark.parametrize(
    ("query", "flags"),
    [
        ("renew all my library books pls, card L0077301", {"renew_all": True}),
        ("any abnormal labs for P20230941?", {"abnormal_only": True}),
        ("只看异常的就行", {"abnormal_only": True}),  # 异常: "abnormal"
        ("cancel APT0340018 but don't notify the patient", {"notify_patient": False}),
        ("cancel APT0340018", {}),  # nothing said of either
        ("renew my books", {}),  # not all of renew_all's words
    ],
)
def test_a_flag_is_set_by_the_words_of_its_name(query: str, flags: dict[str, bool]) -> None:
    dictionary()
    schema = {
        "type": "object",
        "properties": {
            name: {"type": "boolean"} for name in ("renew_all", "abnormal_only", "notify_patient")
        },
    }
    assert extractor.extract(query, schema).arguments == flags


GUEST = {
    "type": "object",
    "properties": {"guest_name": {"type": "string"}, "room_type": {"type": "string"}},
    "required": ["guest_name"],
}


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("帮客人王芳订一间标准双床房，2026年10月1日入住", "王芳"),
        ("订一间套房给张敏，2026-12-23 入住", "张敏"),
        ("麻烦开个新预订：赵磊 13800138000，豪华房", "赵磊"),
        ("新订单：李建国，行政房，明晚入住", "李建国"),
        ("王医生明天上午在不在", None),  # a surname and a title is no name
        ("林先生要订房", None),
        ("我想订个房，下周五", None),
        # a name beside a title: "教练李娜", "约陈静教练"; a rank or a weekday is none
        ("约一节私教，教练李娜，这周六上午10点", "李娜"),
        ("想约陈静教练做康复训练，明天下午3点", "陈静"),
        ("给高级教练打电话", None),
        ("约周六，找王医生看看", None),
        ("约高铁票", None),
    ],
)
def test_a_chinese_name_fills_a_name_parameter(query: str, name: str | None) -> None:
    assert extractor.extract(query, GUEST).arguments.get("guest_name") == name


def test_a_required_description_is_the_request() -> None:
    schema = {
        "type": "object",
        "properties": {"room": {"type": "string"}, "description": {"type": "string"}},
        "required": ["description"],
    }
    found = extractor.extract("door lock on 1716 not reading keycards, guest locked out", schema)
    assert found.arguments["description"] == (
        "door lock on 1716 not reading keycards, guest locked out"
    )


@pytest.mark.parametrize(
    ("query", "user"),
    [
        ("show Marcus's meetings for next week", "Marcus"),
        ("查一下王芳下周的会议安排", "王芳"),
        ("show my meetings for next week", None),
    ],
)
def test_a_person_parameter_takes_a_persons_name(query: str, user: str | None) -> None:
    schema = {"type": "object", "properties": {"user": {"type": "string"}}}
    assert extractor.extract(query, schema).arguments.get("user") == user


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        ("退款：INV-205600，1,500 人民币，原因是重复扣费", {"reason": "重复扣费"}),
        ("安排一个内部会议，标题 pipeline review，拉上 sales-team", {"title": "pipeline review"}),
        ("cancel it, reason: duplicate booking", {"reason": "duplicate booking"}),
        ("book the Title Room", {}),  # an English label needs a colon or "is"
    ],
)
def test_a_free_text_value_follows_its_label(query: str, arguments: dict[str, str]) -> None:
    schema = {
        "type": "object",
        "properties": {"title": {"type": "string"}, "reason": {"type": "string"}},
    }
    assert extractor.extract(query, schema).arguments == arguments


BOOKING = {
    "type": "object",
    "properties": {
        "booking_ref": {"type": "string", "description": "Booking reference, e.g. K7QX2M"},
        "flight": {"type": "string", "pattern": "^[A-Z0-9]{2}[0-9]{1,4}$"},
        "last_name": {"type": "string"},
        "guest_name": {"type": "string"},
    },
}


@pytest.mark.parametrize(
    ("query", "ref"),
    [
        ("move booking BN5T2X to flight CA982", "BN5T2X"),
        ("cancel 3FQ8ZL please", "3FQ8ZL"),
        ("ref 7YTR2K, flight MU588", "7YTR2K"),
    ],
)
def test_a_scrambled_code_example_stands_for_any_code_of_its_length(query: str, ref: str) -> None:
    """ "e.g. K7QX2M" is a random code: its letters and digits fall anywhere in another."""
    assert extractor.extract(query, BOOKING).arguments["booking_ref"] == ref


def test_a_scrambled_example_takes_no_word_or_number_of_its_length() -> None:
    arguments = extractor.extract("please cancel 123456 SIMPLE", BOOKING).arguments
    assert "booking_ref" not in arguments


def test_a_pattern_read_case_blind_still_takes_only_a_whole_token() -> None:
    """ "FQ8" inside 3FQ8ZL is no flight number, in either case."""
    assert "flight" not in extractor.extract("cancel booking 3FQ8ZL", BOOKING).arguments
    assert extractor.extract("move me to mu588", BOOKING).arguments["flight"] == "MU588"


@pytest.mark.parametrize(
    ("query", "last_name"),
    [
        ("Hi, can I check in? Ref V9QM2L, surname Kowalski.", "Kowalski"),
        ("booking 6JSN3F lastname O'Brien", "O'Brien"),
        ("值机 订单号B3NV9Q 姓HUANG 只给我一个人办", "HUANG"),
        ("How much did I pay for TQ8N2B? Name: Lindqvist", "Lindqvist"),
    ],
)
def test_a_family_name_follows_its_label(query: str, last_name: str) -> None:
    assert extractor.extract(query, BOOKING).arguments["last_name"] == last_name


def test_i_and_a_month_are_no_ones_name() -> None:
    arguments = extractor.extract("Can I book 2 rooms from May 3 for ref J2KR8W", BOOKING)
    assert "guest_name" not in arguments.arguments
    assert "last_name" not in arguments.arguments


WORK_ORDER = {
    "type": "object",
    "properties": {
        "machine_id": {"type": "string"},
        "stage": {"type": "string", "enum": ["incoming", "in_process", "final"]},
        "storeroom": {"type": "string", "enum": ["main", "line_side", "all"]},
        "team": {"type": "string", "description": "班组名称，例如 维修班、装配一组、质检组。"},
        "problem_description": {"type": "string"},
        "reason": {"type": "string"},
        "requested_by": {"type": "string"},
    },
    "required": ["machine_id", "problem_description", "reason"],
}


def test_an_option_written_with_a_hyphen_is_named() -> None:
    arguments = extractor.extract("QC on CNC-0412 during in-process checks", WORK_ORDER).arguments
    assert arguments["stage"] == "in_process"


def test_a_chinese_words_stray_sense_names_no_vague_option() -> None:
    """一下 reads "all at once": no ``all`` storeroom."""
    dictionary()
    arguments = extractor.extract("查一下 CNC-0412 的库存", WORK_ORDER).arguments
    assert "storeroom" not in arguments


def test_a_chinese_example_the_request_names_is_taken() -> None:
    arguments = extractor.extract("下周维修班谁上夜班 CNC-0412", WORK_ORDER).arguments
    assert arguments["team"] == "维修班"


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("cancel CNC-0412's order, opened it by mistake", "opened it by mistake"),
        ("stop CNC-0412 because the coolant pump leaks", "the coolant pump leaks"),
        ("CNC-0412 取消掉，重复报修了", "重复报修了"),
    ],
)
def test_a_required_reason_is_the_clause_that_gives_it(query: str, reason: str) -> None:
    assert extractor.extract(query, WORK_ORDER).arguments["reason"] == reason


def test_a_required_compound_description_is_the_request_and_a_label_is_a_person() -> None:
    query = "PRS-07 液压油漏了一地，麻烦报修一下，急！报修人：王建国"
    result = extractor.extract(query, WORK_ORDER)
    assert result.arguments["problem_description"] == query  # not 王建国, the label's value
    assert result.arguments["requested_by"] == "王建国"
    assert result.arguments["machine_id"] == "PRS-07"


def test_a_required_enum_reason_takes_no_free_text() -> None:
    schema = {
        "type": "object",
        "properties": {"reason": {"type": "string", "enum": ["breakdown", "changeover"]}},
        "required": ["reason"],
    }
    assert extractor.extract("CNV-22 停了 30 分钟，登记一下停机", schema).missing == ["reason"]


def test_a_time_of_day_is_no_identifier() -> None:
    arguments = extractor.extract("2 hrs changeover on CNC-0418 starting 6am", WORK_ORDER)
    assert arguments.arguments["machine_id"] == "CNC-0418"


VISIT = {
    "type": "object",
    "properties": {
        "account": {"type": "string", "pattern": "^ACC-[0-9]{7}$"},
        "visit_date": {"type": "string", "format": "date"},
        "time_slot": {"type": "string", "enum": ["08:00-12:00", "12:00-16:00", "16:00-20:00"]},
        "job_type": {"type": "string", "enum": ["new_installation", "fault_repair", "relocation"]},
        "contact_name": {"type": "string"},
        "contact_phone": {"type": "string"},
        "phone_number": {"type": "string", "description": "需要停机的手机号码"},
    },
}


@pytest.mark.parametrize(
    ("query", "slot"),
    [
        ("a visit on 2025-03-28 between 12 and 4", "12:00-16:00"),
        ("install on 2025-04-02, 4pm-8pm slot", "16:00-20:00"),
        ("师傅上门，2025年7月1日，8点到12点", "08:00-12:00"),
        ("5月3号下午两点左右上门", "12:00-16:00"),
        ("come on 2025-04-08 in the morning", "08:00-12:00"),
    ],
)
def test_a_window_of_the_day_takes_the_time_the_request_gives(query: str, slot: str) -> None:
    assert extractor.extract(query, VISIT).arguments["time_slot"] == slot


def test_a_phone_parameter_takes_a_number_and_never_a_name_or_a_date() -> None:
    query = "visit ACC-4455667 on 2025-04-02, 联系人王伟，联系电话 0422 334 455"
    arguments = extractor.extract(query, VISIT).arguments
    assert arguments["contact_phone"] == "0422 334 455"  # as written
    assert arguments["contact_name"] == "王伟"
    assert "phone_number" not in arguments  # one number, taken once
    sim = {"type": "object", "properties": {"phone_number": VISIT["properties"]["phone_number"]}}
    assert extractor.extract("我手机丢了，号码 0433876512", sim).arguments == {
        "phone_number": "0433876512"
    }
    assert "contact_phone" not in extractor.extract("联系人王伟 2025-04-02", VISIT).arguments


@pytest.mark.parametrize(
    ("query", "job"),
    [("Book an install for ACC-2233118", "new_installation"), ("need a repair", "fault_repair")],
)
def test_a_later_word_no_other_option_has_names_its_option(query: str, job: str) -> None:
    assert extractor.extract(query, VISIT).arguments["job_type"] == job


FLIGHT = {
    "type": "object",
    "properties": {
        "departure_date": {"type": "string", "format": "date"},
        "adults": {"type": "integer", "minimum": 1, "maximum": 9},
        "nights": {"type": "integer", "minimum": 1},
        "cabin": {"type": "string", "enum": ["economy", "premium_economy", "business"]},
    },
}


def test_the_day_and_year_of_a_written_date_are_no_counts() -> None:
    arguments = extractor.extract("LHR to JFK on June 3rd 2025, just one adult", FLIGHT)
    assert arguments.arguments["adults"] == 1
    assert "nights" not in arguments.arguments
    assert extractor.extract("SYD to AKL on 3 June, 2 adults", FLIGHT).arguments["adults"] == 2


def test_a_count_in_words_counts_what_it_names_only() -> None:
    assert extractor.extract("a hotel in Doha for one night", FLIGHT).arguments["nights"] == 1
    assert "adults" not in extractor.extract("the one I saw yesterday", FLIGHT).arguments


TABLE = {
    "type": "object",
    "properties": {
        "party_size": {"type": "integer", "minimum": 1, "maximum": 20},
        "special_requests": {"type": "string"},
    },
}


@pytest.mark.parametrize(
    ("query", "size"),
    [
        ("steakhouse dinner for two, Friday 7pm", 2),
        ("a table for four by the window", 4),
        ("book us for three people tonight", 3),
        ("a table for six guests", 6),
        ("party of five, outside if possible", 5),
        # what "for" counts is not people
        ("the window seat for two nights", None),
        ("for one of the regulars", None),
        ("two extra chairs for two more", None),
    ],
)
def test_a_count_of_people_after_for(query: str, size: int | None) -> None:
    """A count in words after "for" is a party's size when nothing follows it but people."""
    assert extractor.extract(query, TABLE).arguments.get("party_size") == size


COUPON = {
    "type": "object",
    "properties": {
        "code": {"type": "string", "pattern": "^[A-Z0-9]{4,15}$"},
        "discount_value": {"type": "number", "description": "Percentage (e.g. 15) off."},
    },
}


@pytest.mark.parametrize(
    ("query", "off"),
    [
        ("创建一个九折优惠码 VIP10", 10),
        ("新建优惠码 SPRING85，全场八五折", 15),
        ("优惠码 X8888 打 8.5 折", 15),
        ("优惠码 X8888 打7折", 30),
    ],
)
def test_a_chinese_discount_is_the_percentage_off(query: str, off: int) -> None:
    """九折 pays 90%: 10 off, for a number said to be a percentage or a discount."""
    assert extractor.extract(query, COUPON).arguments["discount_value"] == off


def test_a_chinese_discount_fills_no_other_number() -> None:
    schema = {"type": "object", "properties": {"amount": {"type": "number"}}}
    assert "amount" not in extractor.extract("全场九折", schema).arguments


PRESCRIPTION = {
    "type": "object",
    "properties": {
        "patient_id": {"type": "string", "pattern": "^P-\\d{5}$"},
        "medication_name": {"type": "string"},
        "dose": {"type": "string", "description": "e.g. 500mg"},
    },
}


@pytest.mark.parametrize(
    ("query", "medicine"),
    [
        ("take him off lisinopril and put him on losartan 50mg daily, P-01266", "losartan"),
        ("P-00998 prednisone 10 mg qd x5d", "prednisone"),
        ("P-00451 needs 250 mg of amoxicillin three times a day", "amoxicillin"),
        ("给P-00451开阿莫西林 500mg 每日三次", "阿莫西林"),
        ("P-03145 头孢克肟 100mg bid", "头孢克肟"),
        # no dose, no medicine named beside it
        ("P-03145 needs something for the pain", None),
        ("P-03145 take 2 tablets", None),
    ],
)
def test_a_medicine_is_the_word_beside_its_dose(query: str, medicine: str | None) -> None:
    arguments = extractor.extract(query, PRESCRIPTION).arguments
    assert arguments.get("medication_name") == medicine


LOANS = {
    "type": "object",
    "properties": {
        "reader_card": {"type": "string", "description": "e.g. RC-20240517"},
        "loan_barcodes": {"type": "array", "items": {"type": "string"}},
        "renew_all": {"type": "boolean", "default": False},
    },
    "required": ["reader_card"],
}


@pytest.mark.parametrize(
    ("query", "everything"),
    [
        ("Renew everything on RC-20200316", True),
        ("extend all my loans, card RC-20211230", True),
        ("RC-20240517 全部续借", True),
        ("续借 RC-20230301 名下所有的书", True),
        ("renew 31002007765 on RC-20220045", None),
    ],
)
def test_a_flag_s_all_is_said_as_everything(query: str, everything: bool | None) -> None:
    assert extractor.extract(query, LOANS).arguments.get("renew_all") == everything


@pytest.mark.parametrize(
    ("query", "barcodes"),
    [
        ("renw 31002007765 and 31002007791 on card RC-20220045", ["31002007765", "31002007791"]),
        ("读者证RC-20240888，想续一下《三体》，条码31002011450", ["31002011450"]),
        ("Renew everything on RC-20200316", None),  # the card is the card's
    ],
)
def test_a_list_of_identifiers_takes_each_one_no_other_parameter_took(
    query: str, barcodes: list[str] | None
) -> None:
    assert extractor.extract(query, LOANS).arguments.get("loan_barcodes") == barcodes


PERMIT = {
    "type": "object",
    "properties": {
        "permit_number": {"type": "string", "pattern": "^RP-[0-9]{6}$"},
        "plate": {"type": "string", "maxLength": 12},
    },
}


@pytest.mark.parametrize(
    ("query", "plate"),
    [
        ("residents permit status pls, plate 7GHT512 and the other one", "7GHT512"),
        ("check the permit on plate KX19 TRW, my neighbour says it expired", "KX19 TRW"),
        ("reg number is KX19TRW", "KX19TRW"),
        ("plate KX19 TRW and permit RP-123456", "KX19 TRW"),
        ("车牌号 沪A5K391", "沪A5K391"),
        ("the plate is broken, permit RP-123456", None),
    ],
)
def test_a_plate_labelled_as_one(query: str, plate: str | None) -> None:
    assert extractor.extract(query, PERMIT).arguments.get("plate") == plate


BANK_BRANCH = {
    "type": "object",
    "properties": {"branch_name": {"type": "string", "description": "网点名称或所在街道"}},
}


@pytest.mark.parametrize(
    ("query", "branch"),
    [
        ("帮我约下午2点半去南京西路支行开户", "南京西路支行"),
        ("预约 上午10点 浦东大道支行 理财咨询", "浦东大道支行"),
        ("下周二上午想去高新区支行办点事", "高新区支行"),
        ("去人民路营业厅办个卡", "人民路营业厅"),
        ("送到南京西路100号", "南京西路100号"),  # an address as before
        ("约在王府井支行，名字刘强", "王府井支行"),
        ("再帮我老公也约一个，同一天3点，名字刘强", None),  # a person's name is no branch
    ],
)
def test_a_branch_is_named_with_its_street_or_district(query: str, branch: str | None) -> None:
    assert extractor.extract(query, BANK_BRANCH).arguments.get("branch_name") == branch


PEOPLE = {
    "type": "object",
    "properties": {
        "booking_ref": {"type": "string", "pattern": "^RSV-[0-9]{6}$"},
        "last_name": {"type": "string", "description": "Driver's last name."},
        "booker_name": {"type": "string"},
    },
}


@pytest.mark.parametrize(
    ("query", "surname"),
    [
        ("预订号RSV-845390，我订的车确认了没有啊，驾驶人姓张", "张"),
        ("RSV-845390 客人姓欧阳", "欧阳"),
        ("RSV-845390 surname Kowalski", "Kowalski"),
    ],
)
def test_a_chinese_surname_after_xing(query: str, surname: str) -> None:
    assert extractor.extract(query, PEOPLE).arguments.get("last_name") == surname


def test_who_booked_after_its_label() -> None:
    query = "帮忙订个足球场，2025-08-09 晚上7点，预订人王强"
    assert extractor.extract(query, PEOPLE).arguments.get("booker_name") == "王强"


STOCK = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "pattern": "^SKU\\d{7}$"},
        "quantity": {"type": "integer", "minimum": 1},
    },
}


@pytest.mark.parametrize(
    ("query", "quantity"),
    [
        ("transfer stock SKU2024555 x50 WH02 -> WH05", 50),
        ("order SKU2024555 ×3 please", 3),
        ("2 x SKU2024555", 2),
        ("SKU2024555 for thinkpad_x1", None),
    ],
)
def test_a_count_after_a_multiplication_sign(query: str, quantity: int | None) -> None:
    assert extractor.extract(query, STOCK).arguments.get("quantity") == quantity


def test_a_measured_number_fills_no_other_count() -> None:
    """A dose ("10mg") fills no count of days, which the request does not give."""
    days = {"type": "integer", "minimum": 1, "maximum": 90, "description": "用药天数"}
    course = {"type": "object", "properties": {"days": days}}
    assert "days" not in extractor.extract("prednisone 10mg qd", course).arguments
    assert extractor.extract("prednisone 10mg for 5 days", course).arguments["days"] == 5
    parcels = {"parcels": {"type": "integer"}, "weight_kg": {"type": "number"}}
    shipment = {"type": "object", "properties": parcels}
    arguments = extractor.extract("18.5 kg in 2 parcels", shipment).arguments
    assert arguments == {"parcels": 2, "weight_kg": 18.5}


HURRY = {
    "type": "object",
    "properties": {
        "card_last4": {"type": "string", "pattern": "^[0-9]{4}$"},
        "express": {"type": "boolean", "default": False},
        "urgent": {"type": "boolean", "default": False},
    },
}


@pytest.mark.parametrize(
    ("query", "express", "urgent"),
    [
        ("被偷了 卡号后四位 9034 补卡 加急", True, True),
        ("card 9034 stolen, please expedite the new one", True, None),
        ("card 9034: order the spare, we need it urgently", None, True),
        ("card 9034 replacement, not urgent", None, False),
    ],
)
def test_hurry_said_in_other_words(query: str, express: bool | None, urgent: bool | None) -> None:
    arguments = extractor.extract(query, HURRY).arguments
    assert (arguments.get("express"), arguments.get("urgent")) == (express, urgent)


@pytest.mark.parametrize(
    ("query", "campaign"),
    [
        ("webinar campaign results, id 2299", "2299"),
        ("results for the #2299 mailing", "2299"),
        ("ID: 2299, how did it do", "2299"),
        ("stats for the last 2299 sends", None),  # a bare number is no identifier
    ],
)
def test_a_number_labelled_as_an_id(query: str, campaign: str | None) -> None:
    schema = {"type": "object", "properties": {"campaign_id": {"type": "string"}}}
    assert extractor.extract(query, schema).arguments.get("campaign_id") == campaign


@pytest.mark.parametrize(
    ("query", "method"),
    [
        ("pay 250 dollars toward HO-7781203 using a new credit card", "new_card"),
        ("pay it with the card on file", "card_on_file"),
        ("just use my card", "card_on_file"),  # a first word still names its option
    ],
)
def test_an_option_every_word_of_which_is_said_before_one_its_first_word_names(
    query: str, method: str
) -> None:
    options = {"type": "string", "enum": ["card_on_file", "bank_account_on_file", "new_card"]}
    schema = {"type": "object", "properties": {"method": options}}
    assert extractor.extract(query, schema).arguments.get("method") == method


@pytest.mark.parametrize(
    ("service", "query", "value"),
    [
        (
            {"type": "string", "pattern": "^[a-z][a-z0-9-]{1,62}$"},
            "a follow-up on auth-gateway",
            "auth-gateway",
        ),
        ({"type": "string"}, "a follow-up incident for auth-gateway", "auth-gateway"),
        (
            {"type": "string", "pattern": "^[a-z][a-z0-9-]{1,62}$"},
            "restart the on-call pager",
            None,
        ),
    ],
)
def test_a_hyphenated_english_word_names_no_system(
    service: dict[str, Any], query: str, value: str | None
) -> None:
    """Words such as "follow-up" and "on-call" name no system, as a plain word does not."""
    schema = {"type": "object", "properties": {"service": service}}
    assert extractor.extract(query, schema).arguments.get("service") == value


def test_the_longest_option_wins_however_it_is_written() -> None:
    arguments = extractor.extract("a premium economy fare SYD to AKL", FLIGHT).arguments
    assert arguments["cabin"] == "premium_economy"


USAGE = {
    "type": "object",
    "properties": {
        "period": {"type": "string", "enum": ["current_cycle", "previous_cycle"]},
        "device": {"type": "string", "enum": ["router", "ont", "both"]},
    },
}


@pytest.mark.parametrize(
    ("query", "period"),
    [
        ("usage for the last billing period", "previous_cycle"),
        ("used so far this cycle", "current_cycle"),
    ],
)
def test_an_option_is_named_by_the_word_people_use_for_its_word(query: str, period: str) -> None:
    assert extractor.extract(query, USAGE).arguments["period"] == period


def test_an_option_naming_every_other_wins_when_written() -> None:
    arguments = extractor.extract("please reboot both the NBN box and the router", USAGE)
    assert arguments.arguments["device"] == "both"
    assert extractor.extract("reboot the router", USAGE).arguments["device"] == "router"


def test_an_organisation_parameter_takes_a_capitalised_name() -> None:
    schema = {
        "type": "object",
        "properties": {
            "phone_number": {"type": "string", "pattern": "^\\+?[0-9]{8,15}$"},
            "losing_operator": {"type": "string", "description": "The current provider"},
        },
    }
    query = "I want to bring my number 0412777654 over from Optus"
    assert extractor.extract(query, schema).arguments["losing_operator"] == "Optus"
    query = "Port request: 0422456789, current provider Aldi Mobile"
    assert extractor.extract(query, schema).arguments["losing_operator"] == "Aldi Mobile"


def test_an_english_request_names_an_option_by_its_paired_chinese_words_sense() -> None:
    dictionary()
    schema = {
        "type": "object",
        "properties": {
            "shift": {
                "type": "string",
                "enum": ["A", "B", "C"],
                "description": "班次：A 早班，B 中班，C 夜班",
            }
        },
    }
    assert extractor.extract("scrap count on L06 night shift", schema).arguments == {"shift": "C"}


def test_a_required_reason_may_be_the_next_sentence() -> None:
    query = "Please withdraw work order CNC-0412. The vendor fixed the chiller under warranty."
    arguments = extractor.extract(query, WORK_ORDER).arguments
    assert arguments["reason"] == "The vendor fixed the chiller under warranty"


# --- a large catalogue in steady state -----------------------------------------------------------


def test_a_large_catalogues_words_are_compiled_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Patterns built from the manifests' words (an enum option paired with its Chinese
    word, a parameter's name) are compiled once each. ``re`` keeps only 512 compiled
    patterns: a thousand tools' words used to be compiled again on every request."""
    import re._compiler

    schemas = [
        {
            "type": "object",
            "properties": {
                f"level{n}": {
                    "type": "string",
                    "enum": [f"tier{n}a", f"tier{n}b"],
                    "description": f"tier{n}a（基础） or tier{n}b（高级）",
                },
                f"weight{n}_kg": {"type": "number"},
                f"notify{n}": {"type": "boolean"},
            },
        }
        for n in range(400)  # 800 options: more than re's cache holds
    ]
    query = "send it at 12 kg, the premium one please, 高级"

    def fill_all() -> None:
        for schema in schemas:
            extractor.extract(query, schema)

    fill_all()
    fill_all()  # (a first pass may find the Chinese gloss read only by then: paths of its own)
    compiled = 0
    compile_pattern = re._compiler.compile

    def counted(*args: Any, **kwargs: Any) -> Any:
        nonlocal compiled
        compiled += 1
        return compile_pattern(*args, **kwargs)

    monkeypatch.setattr(re._compiler, "compile", counted)
    fill_all()
    assert compiled == 0


# --- numbers written in groups, and ids introduced by a label ---------------------------------

CARD = {
    "type": "object",
    "properties": {
        "card_number": {"type": "string", "pattern": "^[0-9]{16}$"},
        "pin": {"type": "string", "pattern": "^[0-9]{4}$"},
    },
}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "how much is left on my gift card 6037 9914 2280 5561? pin 4471",
            {"card_number": "6037991422805561", "pin": "4471"},
        ),
        ("balance of 6037-9914-7702-3316", {"card_number": "6037991477023316"}),
        # A date's or a phone's short groups are no card number.
        ("card issued 2025-06-14, call 917-555-0143", {}),
    ],
)
def test_a_long_number_written_in_groups_is_read_whole(
    query: str, expected: dict[str, str]
) -> None:
    assert extractor.extract(query, CARD).arguments == expected


def test_an_id_follows_its_parameters_word_and_label() -> None:
    schema = _one("employee_id", {"type": "string"})
    found = extractor.extract("am i working saturday? employee id 20417", schema)
    assert found.arguments == {"employee_id": "20417"}
    assert extractor.extract("employee no. 20417 shifts", schema).arguments == {
        "employee_id": "20417"
    }


@pytest.mark.parametrize(
    ("query", "plate"),
    [
        ("续办下个月的车位证，CDR-807，摩托车 粤B12345", "粤B12345"),
        ("申请停车证：OAK-0312，车牌京N5B821", "京N5B821"),
        ("车牌 沪A·7K392 的月卡", "沪A·7K392"),
        ("a permit for plate 8KLM392, unit ELM-221", "8KLM392"),  # elsewhere: as an id
    ],
)
def test_a_chinese_licence_plate_keeps_its_province(query: str, plate: str) -> None:
    schema = _one("plate_number", {"type": "string", "maxLength": 10, "description": "车牌号"})
    assert extractor.extract(query, schema).arguments == {"plate_number": plate}


def test_an_identifier_of_digits_is_no_amount() -> None:
    schema = {
        "type": "object",
        "properties": {
            "account_id": {"type": "string", "pattern": "^[0-9]{8}$"},
            "min_amount": {"type": "number", "minimum": 0},
        },
    }
    filled = extractor.extract("查一下账户 55102938 还有多少钱", schema).arguments
    assert filled == {"account_id": "55102938"}  # min_amount was 55102938
    filled = extractor.extract("payments over 250 on 55102938", schema).arguments
    assert filled == {"account_id": "55102938", "min_amount": 250}


def test_a_currency_code_names_no_one() -> None:
    schema = {
        "type": "object",
        "properties": {"payee_name": {"type": "string"}, "amount": {"type": "number"}},
    }
    assert extractor.extract("move 1000 USD to my savings", schema).arguments == {"amount": 1000}
    filled = extractor.extract("send 50 EUR to Li Wei", schema).arguments
    assert filled == {"amount": 50, "payee_name": "Li Wei"}


def test_a_months_short_name_names_no_one() -> None:
    schema = _one("visitor_name", {"type": "string"})
    assert extractor.extract("a pass for Dec 3, my friend Aisha", schema).arguments == {
        "visitor_name": "Aisha"
    }


def test_the_one_option_every_word_of_which_the_request_writes() -> None:
    issue = {
        "type": "string",
        "enum": ["pothole", "streetlight_out", "streetlight_flickering", "damaged_sign"],
    }
    schema = {"type": "object", "properties": {"issue_type": issue}, "required": ["issue_type"]}
    found = extractor.extract("Streetlight LP04417 on Kerry Street has been out a week", schema)
    assert found.arguments["issue_type"] == "streetlight_out"
    # Both options share "streetlight": neither is named by it alone.
    assert extractor.extract("the streetlight is weird", schema).missing == ["issue_type"]


BRANCH = {
    "type": "object",
    "properties": {
        "branch": {"type": "string", "description": "门店代码或名称，例如 PVG-T2、上海虹桥站"},
        "date": {"type": "string", "format": "date"},
    },
}


@pytest.mark.parametrize(
    ("query", "branch"),
    [
        ("is the MUC-CTR branch open on sundays?", "MUC-CTR"),
        ("CAN-AP 晚上几点关门？", "CAN-AP"),
        ("opening hours for the downtown SFO-DT office?", "SFO-DT"),
        ("does PEK-T3 open at 6?", "PEK-T3"),
    ],
)
def test_a_segmented_code_example_stands_for_codes_of_its_segments(query: str, branch: str) -> None:
    """ "e.g. PVG-T2" is a code of capital segments: another branch's may hold letters where
    it holds a digit."""
    assert extractor.extract(query, BRANCH).arguments["branch"] == branch


@pytest.mark.parametrize(
    "query",
    ["is the branch open on 2026-12-24?", "are you open on Sundays, OK?", "is mu-ctr open"],
)
def test_a_segmented_example_takes_no_date_word_or_lower_case_token(query: str) -> None:
    assert "branch" not in extractor.extract(query, BRANCH).arguments


@pytest.mark.parametrize(
    ("example", "query"),
    [
        ("LOT-24051807", "记录停机：IMM-02 换模用了 1.5 小时"),  # two digits are no batch's eight
        ("D1234-56789-01234", "生日 1987-11-02，驾照号 310104198711020012"),  # a date is no code
    ],
)
def test_a_segment_keeps_its_kind(example: str, query: str) -> None:
    schema = {"type": "object", "properties": {"code": {"type": "string", "examples": [example]}}}
    assert "code" not in extractor.extract(query, schema).arguments


REPLACEMENT = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "enum": ["lost", "stolen", "damaged", "expiring"]},
        "status": {"type": "string", "enum": ["paid", "unpaid", "overdue"]},
    },
}


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("我的卡丢了，尾号4471，帮我补一张", "lost"),  # 丢 reads "lose"
        ("被偷了 卡号后四位 9034 补卡 加急", "stolen"),  # 偷 reads "steal"
        ("I lose this card all the time", "lost"),
        ("replace my card please", None),
    ],
)
def test_an_irregular_participle_option_is_named_by_its_verb(
    query: str, reason: str | None
) -> None:
    assert extractor.extract(query, REPLACEMENT).arguments.get("reason") == reason


SUSPENSION = {
    "type": "object",
    "properties": {
        "phone_number": {"type": "string", "description": "需要停机的手机号码"},
        "reason": {
            "type": "string",
            "enum": ["丢失", "被盗", "临时停机"],
            "description": "停机原因",
        },
    },
}


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        # "phone" is a sense of 临时停机 ("suspend a phone line") too: what happened to the
        # phone names the option, and 被盗 (not a dictionary word) is read as "steal".
        ("My phone was stolen on the train this morning, please block the SIM", "被盗"),
        ("I lost my phone, suspend 0412009988", "丢失"),
        ("please suspend my line for a month", "临时停机"),
    ],
)
def test_a_chinese_option_is_named_by_the_verb_of_an_english_participle(
    query: str, reason: str
) -> None:
    assert extractor.extract(query, SUSPENSION).arguments.get("reason") == reason


def test_an_order_to_pay_names_no_paid_filter() -> None:
    assert "status" not in extractor.extract("帮我付款", REPLACEMENT).arguments
    assert "status" not in extractor.extract("I want to pay my invoice", REPLACEMENT).arguments


@pytest.mark.parametrize(
    ("options", "query", "chosen"),
    [
        (["freeze", "unfreeze"], "unlock my card pls", "unfreeze"),
        (["freeze", "unfreeze"], "temporarily block 3307", "freeze"),
        (["freeze", "unfreeze"], "card 3307, what's up with it", None),
        (["freeze", "unfreeze"], "我的信用卡 5530 先锁住", "freeze"),  # 锁住 reads "lock"
        (["freeze", "unfreeze"], "解锁我的卡", "unfreeze"),
        (["unrecognised", "duplicate", "not_received"], "I was charged twice for it", "duplicate"),
        (["lost", "damaged", "missing_contents"], "arrived with the screen smashed", "damaged"),
    ],
)
def test_an_option_is_named_by_a_word_people_use_for_it(
    options: list[str], query: str, chosen: str | None
) -> None:
    schema = {"type": "object", "properties": {"choice": {"type": "string", "enum": options}}}
    assert extractor.extract(query, schema).arguments.get("choice") == chosen


def _schema(properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_a_code_inside_a_longer_code_is_none_of_its_own() -> None:
    """ "ULT-99" of "XPL-ULT-99" has the shape of "TRF-900" but is a piece of a code of
    "MOB-5G-20"'s shape: the whole code is the value."""
    plan = _schema({"plan_code": {"type": "string", "description": "e.g. TRF-900 or MOB-5G-20"}})
    assert extractor.extract("move me to XPL-ULT-99 please", plan).arguments == {
        "plan_code": "XPL-ULT-99"
    }
    assert extractor.extract("switch to TRF-450", plan).arguments == {"plan_code": "TRF-450"}


def test_a_number_the_example_starts_with_is_no_example_value() -> None:
    """ "e.g. 12 High Street": a request's "12" is its own address's house number."""
    address = _schema({"address": {"type": "string", "description": "e.g. 12 High Street."}})
    result = extractor.extract("when are the bins collected at 12 Mill Lane?", address)
    assert result.arguments == {"address": "12 Mill Lane"}


def test_a_long_text_parameter_named_like_a_machines_thing_takes_no_code() -> None:
    """A ``topic`` of up to 300 characters is what someone wants to talk about, not a
    message queue's topic: the code the request labels is the rep's."""
    schema = _schema(
        {
            "topic": {"type": "string", "maxLength": 300, "description": "What to discuss"},
            "rep_code": {"type": "string"},
        }
    )
    result = extractor.extract("book a call with rep code R-2231 about my renewal", schema)
    assert result.arguments == {"rep_code": "R-2231"}


def test_an_acronym_is_a_persons_name_only_when_no_other_name_is_there() -> None:
    contact = _schema({"contact_name": {"type": "string", "description": "Person on site"}})
    request = "set up my new VPN router on Friday, contact Tom Baker"
    assert extractor.extract(request, contact).arguments == {"contact_name": "Tom Baker"}
    assert extractor.extract("set up the router, contact IBM", contact).arguments == {
        "contact_name": "IBM"
    }


@pytest.mark.parametrize(
    ("request_text", "minutes"),
    [
        ("squash court on 2025-09-02 from 5pm to 6:30pm", 90),
        ("the studio 2025-09-02, 09:00-11:00", 120),
        ("squash court on 2025-09-02 at 5pm for 2 hours", 120),  # said outright
    ],
)
def test_a_length_in_minutes_is_the_stretch_between_two_times(
    request_text: str, minutes: int
) -> None:
    schema = _schema(
        {
            "start_time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
            "duration_minutes": {"type": "integer", "minimum": 30, "maximum": 480},
        }
    )
    assert extractor.extract(request_text, schema).arguments["duration_minutes"] == minutes


def test_a_stretch_of_no_whole_hours_fills_no_count_of_hours() -> None:
    hours = _schema({"hours": {"type": "integer", "minimum": 1, "maximum": 8}})
    assert "hours" not in extractor.extract("from 10:30 to 12:00", hours).arguments
    assert extractor.extract("from 10am to 1pm", hours).arguments == {"hours": 3}


def test_a_name_labelled_with_an_apostrophe_s_is_the_name_alone() -> None:
    guest = _schema({"guest_name": {"type": "string"}})
    request = "Could you book me a double for Friday? Name's Olga Petrova"
    assert extractor.extract(request, guest).arguments == {"guest_name": "Olga Petrova"}


@pytest.mark.parametrize(
    ("request_text", "quantity"),
    [
        ("could we get three clean mugs at desk 12?", 3),
        ("send two pillows please", 2),
        ("keep the blanket for two weeks", None),  # a length of time counts nothing
        ("that one, please", None),
    ],
)
def test_a_count_in_words_fills_a_quantity_of_anything(
    request_text: str, quantity: int | None
) -> None:
    schema = _schema({"quantity": {"type": "integer", "minimum": 1, "maximum": 9}})
    assert extractor.extract(request_text, schema).arguments.get("quantity") == quantity


def test_the_options_of_a_list_come_in_the_order_the_request_names_them() -> None:
    schema = _schema(
        {
            "items": {
                "type": "array",
                "items": {"type": "string", "enum": ["charger", "adapter", "keyboard", "mouse"]},
            }
        }
    )
    request = "I need a mouse, a keyboard and two chargers"
    assert extractor.extract(request, schema).arguments == {
        "items": ["mouse", "keyboard", "charger"]
    }


@pytest.mark.parametrize(
    ("request_text", "priority"),
    [
        ("新建一个任务：季度报表核对，优先级低", "low"),
        ("这是个高优先级的任务，明早前处理", "high"),
        ("任务优先级设为高", "high"),
        ("机房温度很高，帮我建个任务", None),  # 高 beside no label of the parameter
    ],
)
def test_a_chinese_level_beside_the_parameters_label_is_its_option(
    request_text: str, priority: str | None
) -> None:
    dictionary()
    schema = _schema({"priority": {"type": "string", "enum": ["low", "medium", "high"]}})
    assert extractor.extract(request_text, schema).arguments.get("priority") == priority


@pytest.mark.parametrize(
    "request_text",
    ["tyre's flat on the A40. call me back on 0161 496 0321", "tyre's flat. 0161 496 0321"],
)
def test_a_pattern_that_allows_blanks_takes_none_from_around_the_value(request_text: str) -> None:
    schema = _schema({"phone": {"type": "string", "pattern": "^\\+?[0-9 ()-]{6,20}$"}})
    assert extractor.extract(request_text, schema).arguments == {"phone": "0161 496 0321"}


def test_a_number_apart_from_a_code_written_whole_is_a_number_of_its_own() -> None:
    schema = _schema(
        {
            "code": {"type": "string", "pattern": "^[A-Z0-9]{4,15}$"},
            "percent_off": {"type": "number", "exclusiveMinimum": 0},
        }
    )
    result = extractor.extract("make code SPRING25 for 25 percent off", schema)
    assert result.arguments == {"code": "SPRING25", "percent_off": 25}


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("show the last 30 payments on my card", {"limit": 30}),
        ("最近30笔消费", {"limit": 30}),
        ("payments over 30 dollars", {"min_amount": 30}),
        ("payments over 30 Swiss francs", {"min_amount": 30}),
        ("send 120 towards my balance", {"min_amount": 120}),
    ],
)
def test_a_number_that_counts_things_is_no_sum_of_money(
    request_text: str, expected: dict[str, int]
) -> None:
    schema = _schema(
        {
            "min_amount": {"type": "number", "minimum": 0},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100},
        }
    )
    assert extractor.extract(request_text, schema).arguments == expected


def test_a_percent_sign_names_the_percent_option() -> None:
    schema = _schema({"kind": {"type": "string", "enum": ["percentage", "flat"]}})
    assert extractor.extract("knock 12% off", schema).arguments == {"kind": "percentage"}
    assert extractor.extract("knock 12 off", schema).arguments == {}


def test_a_token_of_another_parameters_example_shape_is_not_a_guess() -> None:
    """ "e.g. 10B" gives a class group's shape: "11C" is the group's, not a student number
    that a guess by the name ``student_id`` took."""
    schema = _schema(
        {
            "student_id": {"type": "string", "description": "Student number"},
            "class_group": {"type": "string", "description": "Homeroom, e.g. 10B"},
        }
    )
    assert extractor.extract("timetable of 11C on monday", schema).arguments == {
        "class_group": "11C"
    }
    assert extractor.extract("timetable of S2023 on monday", schema).arguments == {
        "student_id": "S2023"
    }
