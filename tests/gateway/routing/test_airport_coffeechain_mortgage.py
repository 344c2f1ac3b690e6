"""Arguments and routes found by the airport, coffee-chain and mortgage sets
(``tests/data/airport``, ``coffeechain``, ``mortgage``, written blind to the router):

- a code written apart from its letters ("SQ 838", "ek 385") is one code;
- a date-time with no offset of its own takes the one its sibling date-times write, and
  a time zone the request names in words ("2pm Pacific", 美西时间) gives the offset of
  that zone on that day;
- one date-time of an entry/exit pair goes to the end its words name ("the exit",
  出场时间);
- an option of Latin letters and Chinese (T2国内) is read where the request writes it;
- a social title is no part of a name;
- a tool that adds money to a card tops it up; a PATCH or PUT tool that "does not
  change prices" still changes something; "automatic payments" are AutoPay's;
- an identifier parameter with no shape takes the pattern its namesakes in the
  catalogue agree on.
"""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import kin, vocabulary, zones
from tests.gateway.routing.conftest import (
    blind_set,
    dry_run,
    extracted,
    manifest_of,
    object_schema,
    schema_of,
)

COFFEE = {"giftcard_balance", "giftcard_reload", "order_place", "order_status"}
CATALOGUE = blind_set("mortgage") + [m for m in blind_set("coffeechain") if m["tool_id"] in COFFEE]


@pytest.mark.parametrize(
    ("query", "flight"),
    [
        ("my mum lands on SQ 838 tommorow morning, has it been delayed at all", "SQ838"),
        ("Has JL 26 been cancelled? It was meant to take off on the 9th.", "JL26"),
        ("whats going on with ek 385", "EK385"),
        ("status of ba0027", "BA0027"),
    ],
)
def test_a_code_written_apart_from_its_letters_is_one_code(query: str, flight: str) -> None:
    assert extracted(query, schema_of("airport", "flight_status"))["flight_number"] == flight


def test_a_date_time_takes_the_offset_its_siblings_write() -> None:
    reserve = schema_of("airport", "parking_reserve")  # only the entry's example has +08:00
    found = extracted("book me a spot in the multi storey dec 20 14:00 - dec 27 18:00", reserve)
    assert found["entry_time"] == "2026-12-20T14:00:00+08:00"
    assert found["exit_time"] == "2026-12-27T18:00:00+08:00"
    two = object_schema(
        {
            "opens": {"type": "string", "format": "date-time", "description": "e.g. …T09:00Z"},
            "closes": {"type": "string", "format": "date-time", "description": "e.g. …+08:00"},
            "ends": {"type": "string", "format": "date-time"},
        },
        required=["ends"],
    )
    # siblings that disagree give no offset to one without its own
    assert extracted("ends friday at 6pm", two)["ends"] == "2026-12-11T18:00:00"


@pytest.mark.parametrize(
    ("query", "when"),
    [
        ("帮我约个贷款顾问，下周三上午10点（美西时间），聊再融资", "2026-12-16T10:00:00-08:00"),
        ("set up a call with a loan officer tomorrow at 2pm Pacific", "2026-12-08T14:00:00-08:00"),
        ("call me at 10:00 ET on 2027-07-01 about refinancing", "2027-07-01T10:00:00-04:00"),
        ("PT session at 3pm tomorrow, refinance", "2026-12-08T15:00:00"),
    ],
)
def test_a_zone_named_in_words_gives_its_offset_that_day(query: str, when: str) -> None:
    book = schema_of("mortgage", "officer_appointment_book")
    assert extracted(query, book)["start_time"] == when


def test_a_zone_named_twice_over_is_no_zone() -> None:
    assert zones.named_zone("2pm PT, that's 5pm ET") is None
    assert zones.named_zone("北京时间明早8点半") == "Asia/Shanghai"
    assert zones.offset_on("Asia/Shanghai", "2026-12-08T08:30:00") == "+08:00"


@pytest.mark.parametrize(
    ("query", "end"),
    [
        ("can you make the exit on PK31200987 Thursday 8pm?", "newExitTime"),
        ("把PK31008876的出场时间挪到周五下午5点", "newExitTime"),
        ("预约号 PK20770031，入场能不能改成明早八点？", "newEntryTime"),
    ],
)
def test_one_date_time_goes_to_the_end_its_words_name(query: str, end: str) -> None:
    found = extracted(query, schema_of("airport", "parking_booking_modify"))
    assert [k for k in found if k.startswith("new")] == [end]


@pytest.mark.parametrize(
    ("query", "checkpoint"),
    [("赶飞机！！T2国内安检队伍长吗", "T2国内"), ("T1国际出发那边安检人多不多", "T1国际")],
)
def test_an_option_of_latin_and_chinese_is_read_as_written(query: str, checkpoint: str) -> None:
    found = extracted(query, schema_of("airport", "security_wait_times"))
    assert found["checkpoint"] == checkpoint
    assert "checkpoint" not in extracted("XT2国内", schema_of("airport", "security_wait_times"))


def test_a_social_title_is_no_part_of_a_name() -> None:
    assist = schema_of("airport", "assistance_request")
    found = extracted("Mr Abdi Hassan needs a wheelchair on CX250 on 12/22", assist)
    assert found["passenger_name"] == "Abdi Hassan"
    found = extracted("Please book assistance for Mrs. Joan Baxter on QF127", assist)
    assert found["passenger_name"] == "Joan Baxter"


def test_a_changing_endpoint_disclaims_objects_not_change() -> None:
    menu = manifest_of("coffeechain", "menu_item_availability")  # PATCH, "does not change prices"
    assert "update" not in vocabulary.disclaimed_actions(menu)
    reader = {**menu, "endpoint": {**menu["endpoint"], "method": "GET"}}
    assert "update" in vocabulary.disclaimed_actions(reader)


def test_namesakes_lend_an_unshaped_identifier_their_pattern() -> None:
    schemas = [schema_of("mortgage", t) for t in ("payment_submit", "escrow_summary_get")]
    patterns = kin.shared_patterns(schemas)
    assert patterns["loannumber"] == "^[0-9]{10}$"  # loanNumber's, for loan_number too
    read = kin.with_kin(schemas[1], patterns)
    assert read["properties"]["loan_number"]["pattern"] == "^[0-9]{10}$"
    assert "pattern" not in schemas[1]["properties"]["loan_number"]  # the tool's own: as is
    other = object_schema({"loan_number": {"type": "string", "pattern": "^L\\d{6}$"}})
    assert "loannumber" not in kin.shared_patterns([*schemas, other])  # namesakes disagree


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("查下0047719002 escrow 里还剩多少钱", "escrow_summary_get"),
        (
            "Please turn off automatic payments for loan 0060137722, I'm switching banks.",
            "autopay_update",
        ),
        ("Top up card 4000123456789010 by fifty bucks", "giftcard_reload"),
    ],
)
async def test_mortgage_and_coffee_routes(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    body = (await dry_run(gateway, query, "borrower")).json()
    assert body.get("tool_id") == tool_id, body


def test_a_clocks_minutes_order_nothing() -> None:
    place = schema_of("coffeechain", "order_place")
    query = "need 3 flat whites w/ oat milk, ST1180, picking up at the counter around 8:15 tmrw"
    assert extracted(query, place)["items"] == [{"name": "flat whites", "quantity": 3}]


def test_lent_patterns_follow_the_tools_that_come_and_go() -> None:
    patterns = kin.Patterns()
    patterns.put("pay", schema_of("mortgage", "payment_submit"))
    assert patterns["loannumber"] == "^[0-9]{10}$"
    patterns.put("other", object_schema({"loan_no": {"type": "string", "pattern": "^L\\d+$"}}))
    patterns.put("odd", object_schema({"loanNumber": {"type": "string", "pattern": "^L\\d+$"}}))
    assert "loannumber" not in patterns  # two patterns for one name: none
    patterns.put("odd", None)  # that tool is gone
    assert patterns["loannumber"] == "^[0-9]{10}$"
    patterns.put("pay", None)
    assert "loannumber" not in patterns


async def test_a_lent_shape_that_finds_nothing_leaves_the_tools_own_reading(
    gateway: httpx.AsyncClient,
) -> None:
    """A missing argument is described in the tool's own words, with no shape lent."""
    body = (await dry_run(gateway, "what's in escrow for my loan?", "borrower")).json()
    assert body.get("tool_id") == "escrow_summary_get", body
    assert "loan_number" in body["message"], body
    assert "^[0-9]{10}$" not in body["message"], body


def test_a_tools_own_example_shapes_its_one_plain_identifier() -> None:
    status = manifest_of("airport", "lost_item_status")  # "by its reference (e.g. LF-26-00871)"
    read = kin.with_kin(status["input_schema"], kin.Patterns(), status["description"])
    assert "LF-26-00871" in read["properties"]["report_id"]["description"]
    report = manifest_of("airport", "lost_item_report")  # three plain required strings
    assert (
        kin.with_kin(report["input_schema"], kin.Patterns(), report["description"])
        is (report["input_schema"])
    )


def test_an_example_the_description_gives_another_parameter_is_not_lent() -> None:
    promo = manifest_of("grocery", "apply_promo_code")
    orders = kin.Patterns()
    orders.put("order", object_schema({"orderId": {"type": "string", "pattern": "^GR-[0-9]{6}$"}}))
    read = kin.with_kin(promo["input_schema"], orders, promo["description"])  # "orderId like …"
    assert read["properties"]["orderId"]["pattern"] == "^GR-[0-9]{6}$"
    assert "GR-123456" not in str(read["properties"]["promoCode"].get("description"))
