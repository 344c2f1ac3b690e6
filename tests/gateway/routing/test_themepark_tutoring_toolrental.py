"""Routes and arguments found by the theme-park, tutoring and tool-rental sets
(``tests/data/themepark``, ``tutoring``, ``toolrental``, written blind to the router):

- a tool's description may set the clock of its date-times ("Times are Vancouver local
  time", 按温哥华当地时间): a date-time parameter that names no zone of its own is
  written in that one, at that day's offset (``extract.with_tool_zone``);
- a date-time given by its clock alone is today's ("an express slot at 4pm");
- a camelCase parameter's name is read as its words (``partySize`` counts a party), and
  "three people" counts people;
- ``pickup_at`` and ``return_date`` are the two ends of one rental, and the end's day is
  not the start's: "pick up Dec 10 8am, back Dec 11" returns on the 11th; in Chinese a
  later day of the same month may stand alone ("12月19号早上8点取，21号还");
- 下周 is "next week" and 有货 "in stock" in a Chinese request's English reading;
- a sentence that disclaims an act by naming the tool that does it ("It cannot file a new
  claim (lost_item_report)") leaves the act to the catalogue: "file a report" is not held
  against every tool;
- of two readers that take the request's identifier, the one that also takes its day
  ("明天有没有课 ST-…") is the fuller fit;
- someone sent to do a thing asks for the thing ("send someone to collect RA…"), not for
  a sending;
- a unit written after a number says what it measures: "stop at 30 kWh" is no battery
  percentage (found by the EV-charging set once ``stopAtPercent`` read as its words);
- money: "CA$375" is Canadian dollars (and "S$", "NZ$", "₹" …), a bare "$" of a bill in
  Canadian dollars by default is the default's own, "two hundred and forty US dollars"
  is 240, the digits of "the visa ending 4417" are no sum, and 一张 of 用一张新的信用卡 is a
  card counted, no sum.
"""

from __future__ import annotations

from datetime import date

import httpx
import pytest

from gateway.routing import roles, temporal, vocabulary, zones
from gateway.routing.extract import with_tool_zone
from gateway.routing.gloss import dictionary, gloss
from tests.gateway.routing.conftest import best_tool, blind_set, extracted, manifest_of, schema_of

PICKED = {
    "tutoring": {"session_lookup", "lesson_credit_balance", "session_book"}
    | {"session_reschedule", "session_cancel", "progress_report_get"},
    "themepark": {"lost_item_report", "lost_item_status", "express_pass_book"}
    | {"ride_wait_times", "wallet_balance"},
}
CATALOGUE = [m for name, ids in PICKED.items() for m in blind_set(name) if m["tool_id"] in ids]


@pytest.mark.parametrize(
    ("text", "zone", "words"),
    [
        ("Times are Vancouver local time; send them with the offset", "America/Vancouver",
         "Vancouver local time"),
        ("时间按温哥华当地时间填写并带时区", "America/Vancouver", "温哥华当地时间"),
        ("Pacific time or Eastern time", None, None),  # two zones: neither
        ("Look up booked sessions", None, None),
    ],
)  # fmt: skip
def test_the_zone_a_text_names(text: str, zone: str | None, words: str | None) -> None:
    assert zones.named_zone(text) == zone
    assert zones.zone_words(text) == words


def _zoned_schema(folder: str, tool_id: str) -> dict[str, object]:
    manifest = manifest_of(folder, tool_id)
    return with_tool_zone(manifest["input_schema"], manifest["description"])


@pytest.mark.parametrize(
    ("tool_id", "query", "name", "value"),
    [
        ("session_book", "ST-12009 with TU0954 on the 14th at 10am, biology, two hours",
         "startTime", "2026-12-14T10:00:00-08:00"),
        ("session_book", "ST-12009 with TU0954 on July 14 2027 at 10am, biology",
         "startTime", "2027-07-14T10:00:00-07:00"),  # Vancouver's summer offset
        ("session_reschedule", "预约号BK9120056，改成12月12号上午9点", "new_start",
         "2026-12-12T09:00:00-08:00"),  # the zone named in Chinese
    ],
)  # fmt: skip
def test_a_tool_sets_the_clock_of_its_date_times(
    tool_id: str, query: str, name: str, value: str
) -> None:
    schema = _zoned_schema("tutoring", tool_id)
    assert extracted(query, schema)[name] == value
    # without the tool's words, no zone is guessed
    bare = extracted(query, schema_of("tutoring", tool_id))[name]
    assert bare == value[:19]


def test_a_parameter_with_its_own_zone_is_not_lent_the_tools() -> None:
    schema = {
        "type": "object",
        "properties": {"at": {"type": "string", "format": "date-time", "description": "UTC"}},
    }
    assert with_tool_zone(schema, "Times are Vancouver local time.") is schema
    # a zone taken as an argument is the request's to say
    converter = {
        "type": "object",
        "properties": {
            "time": {"type": "string", "format": "date-time"},
            "from_tz": {"type": "string"},
            "to_tz": {"type": "string"},
        },
    }
    assert with_tool_zone(converter, "Converts a time, e.g. from UTC to Asia/Tokyo.") is converter
    plain = {"type": "object", "properties": {"time": {"type": "string", "format": "date-time"}}}
    lent = with_tool_zone(plain, "All times are UTC.")
    assert lent["properties"]["time"]["description"] == "(UTC)"


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        ("Can we get skip the line on Thunder Canyon around 11:30? two people, TP20990314",
         {"returnTime": "2026-12-07T11:30:00+08:00", "partySize": 2}),
        ("帮我约一个 Dragon Flight 的快速通道，下午四点，3个人，订单TP40017733",
         {"returnTime": "2026-12-07T16:00:00+08:00", "partySize": 3}),
        ("Thunder Canyon at 11:30, three people, TP20990314", {"partySize": 3}),
        ("Thunder Canyon at 11:30, six of us, TP20990314", {"partySize": 6}),
    ],
)  # fmt: skip
def test_a_clock_alone_is_today_and_a_camel_case_count_counts(
    query: str, arguments: dict[str, object]
) -> None:
    found = extracted(query, schema_of("themepark", "express_pass_book"))
    assert {k: found.get(k) for k in arguments} == arguments


def test_a_clock_with_its_day_is_not_today() -> None:
    found = extracted(
        "Book express for Dragon Flight tomorrow at 3pm, 4 of us, order TP31250076",
        schema_of("themepark", "express_pass_book"),
    )
    assert found["returnTime"] == "2026-12-08T15:00:00+08:00"


def test_a_pickup_time_and_a_return_date_are_one_rentals_ends() -> None:
    assert roles.pairs(["item_code", "pickup_at", "return_date"]) == [("pickup_at", "return_date")]
    schema = schema_of("toolrental", "reservation_create")
    found = extracted("One EQ5120, Hayward, Dec 10 8am to Dec 11. I need the trailer.", schema)
    assert found["pickup_at"].startswith("2026-12-10T08:00:00")
    assert found["return_date"] == "2026-12-11"
    found = extracted("帮我订一台 EQ3052，伯克利店，12月19号早上8点取，21号还。", schema)
    assert found["return_date"] == "2026-12-21"
    # with no second day, the return date is not the pickup's
    found = extracted("EQ6034 at san jose, pick up on the 22nd at noon", schema)
    assert "return_date" not in found


@pytest.mark.parametrize(
    ("query", "resolved"),
    [
        ("12月19号早上8点取，21号还", "2026-12-19 08:00 取， 2026-12-21 还"),
        ("12月30号取，2号还", "2026-12-30 取， 2027-01-02 还"),  # into the next month
        ("12月19号取，21号楼见", "2026-12-19 取，21号楼见"),  # a building, not a day
        ("12月19号取车，3号线地铁站见，21号还", "2026-12-19 取车，3号线地铁站见，21号还"),
    ],
)
def test_a_later_day_of_the_same_month(query: str, resolved: str) -> None:
    assert temporal.resolve(query, date(2026, 12, 7)) == resolved


def test_next_week_and_in_stock_in_english() -> None:
    dictionary()
    assert "in stock" in gloss("EQ0931 下周一到下周三 海沃德店有货吗")
    assert gloss("下周") == "next week"
    assert "last month" in gloss("上个月的账单")


def test_a_disclaimer_naming_the_tool_that_does_it_disclaims_nothing() -> None:
    from gateway.routing.lexical import BM25Index
    from gateway.routing.text import tool_document

    manifests = [manifest_of("themepark", t) for t in ("lost_item_status", "lost_item_report")]
    bm25 = BM25Index([tool_document(m) for m in manifests])
    disclaimed = vocabulary.disclaimed(bm25, manifests)
    assert "file" not in disclaimed  # filing is lost_item_report's
    assert "postag" in disclaimed or "postage" in disclaimed  # truly disclaimed


def test_someone_sent_to_do_a_thing_asks_for_the_thing() -> None:
    assert vocabulary.requested_actions("can you send someone to collect RA26004471") == set()
    assert "notify" in vocabulary.requested_actions("send the invoice to my accountant")


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        ("Kick off a session at cp 55810 gun 2, bill it to my card 04a1b2c3, stop at 30 kWh",
         {"maxKwh": 30}),
        ("start CP-55810 gun 1 and stop at 80%", {"stopAtPercent": 80}),
        ("start CP-55810 gun 1, stop at 80 percent", {"stopAtPercent": 80}),
    ],
)  # fmt: skip
def test_a_unit_after_a_number_says_what_it_measures(
    query: str, arguments: dict[str, object]
) -> None:
    found = extracted(query, schema_of("evcharge", "session_start"))
    assert {k: v for k, v in found.items() if k in ("maxKwh", "stopAtPercent")} == arguments


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        ("账单INV-12876先付一半，也就是CA$375", {"amount": 375, "currency": "CAD"}),
        ("pay INV-12876 $375", {"amount": 375}),  # CAD by default: the "$" is its own
        ("pay INV-12876 US$375", {"amount": 375, "currency": "USD"}),
        ("I'd like to pay two hundred and forty US dollars on INV-60812 by e-transfer",
         {"amount": 240, "currency": "USD", "paymentMethod": "e_transfer"}),
        ("Can you charge the visa ending 4417 for INV-50233? whole thing",
         {"cardLast4": "4417"}),
        ("pay 120 on INV-50233 with the card ending in 4417",
         {"amount": 120, "cardLast4": "4417"}),
        ("用一张新的信用卡付 INV-33318", {}),  # 一张 counts a card
        ("INV-33318 付五百块", {"amount": 500}),
    ],
)  # fmt: skip
def test_money_as_people_write_it(query: str, arguments: dict[str, object]) -> None:
    found = extracted(query, schema_of("tutoring", "invoice_pay"))
    for key in ("amount", "currency", "cardLast4"):  # absent where not given
        assert found.get(key) == arguments.get(key), (key, found)
    if "paymentMethod" in arguments:
        assert found["paymentMethod"] == arguments["paymentMethod"]


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("查一下 ST-11873 明天有没有课", "session_lookup"),  # the reader of that day
        ("Is my kid's lesson on Thursday still on? his id is ST-22981", "session_lookup"),
        ("I'd like to file a report for an AirPods case I lost at about 11am, you can reach"
         " me on 13800001111", "lost_item_report"),
    ],
)  # fmt: skip
async def test_theme_park_and_tutoring_routes(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    response = await gateway.post(
        "/run",
        json={"user_query": query, "user_context": {"user_id": "u1"}, "dry_run": True},
    )
    body = response.json()
    assert best_tool(body) == tool_id, body
