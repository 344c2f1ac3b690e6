"""Arguments and routes found by the golf-club, cruise-line and museum sets
(``tests/data/golfclub``, ``cruiseline``, ``museum``, written blind to the router):

- a date-time takes the offset its parameter's example or description writes ("e.g.
  2026-12-12T07:40:00+08:00") when the request names no zone;
- a thing's number after "is" or 是 ("卡号是5512330098"), a Chinese description that
  names a thing's number (舱房号) and a room's other words ("room 8412", 房间号 9214);
  the one long number of a request for a parameter that is a thing's number ("its
  3019940075"), never a phone's;
- a whole name split between a given-name and a family-name parameter, a family name
  alone holding the last word, and no day of birth still to come;
- who goes, counted from the one asking ("solo", "me and my dad", "me and 2 mates"),
  players counted as people, and 三个大人 counted as people, not nights;
- Chinese clock times and counts of people are values, not words a tool must explain;
- a verb of what a tool itself does, in a sentence saying what it cannot do ("cannot
  switch to a different ship"), disclaims an object, not the act.
"""

from __future__ import annotations

from datetime import date

import httpx
import pytest

from gateway.routing import temporal, vocabulary
from gateway.routing.lexical import BM25Index
from gateway.routing.text import positive_description, without_day_words
from tests.gateway.routing.conftest import (
    best_tool,
    blind_set,
    dry_run,
    extracted,
    object_schema,
    schema_of,
)

CATALOGUE = blind_set("cruiseline")


def test_a_date_time_takes_its_parameters_offset() -> None:
    book = schema_of("golfclub", "teetime_book")  # "e.g. 2026-12-12T07:40:00+08:00"
    found = extracted("帮我订周六早上7点半北场，四个人，会员号M10877", book)
    assert found["tee_time"] == "2026-12-12T07:30:00+08:00"
    move = schema_of("golfclub", "teetime_reschedule")  # 球会当地时间（+08:00）
    found = extracted("Can you move TT2612504 to Sunday 7am instead?", move)
    assert found["newStartTime"] == "2026-12-13T07:00:00+08:00"
    utc = object_schema(
        {
            "starts_at": {
                "type": "string",
                "format": "date-time",
                "description": "UTC, e.g. 2026-12-12T00:00:00Z",
            }
        }
    )
    assert extracted("start it friday at 8pm", utc)["starts_at"] == "2026-12-11T20:00:00Z"


def test_an_offset_is_written_as_its_parameter_writes_it() -> None:
    plus_zero = object_schema(
        {
            "new_start": {
                "type": "string",
                "format": "date-time",
                "description": "英国当地时间，带时区，例如 2026-12-16T15:00:00+00:00。",
            }
        }
    )
    found = extracted("Can we push viewing VW-30817 to Wednesday at 3pm instead?", plus_zero)
    assert found["new_start"] == "2026-12-09T15:00:00+00:00"


def test_a_zone_the_request_names_or_no_zone_at_all() -> None:
    local = schema_of("cruiseline", "specialty_dining_reserve")  # 船上当地时间, no offset
    found = extracted("明天晚上7点半订海鲜餐厅，3位，房号 9214", local)
    assert found["reservation_time"] == "2026-12-08T19:30:00"
    offset = object_schema(
        {"at": {"type": "string", "format": "date-time", "description": "ISO 8601 with UTC offset"}}
    )  # "with UTC offset" names no zone
    assert extracted("charge tomorrow at 9am", offset)["at"] == "2026-12-08T09:00:00"
    zoned = object_schema(
        {
            "at": {
                "type": "string",
                "format": "date-time",
                "description": "e.g. 2026-12-12T07:40:00+08:00",
            }
        }
    )
    assert extracted("tomorrow at 9am UTC", zoned)["at"] == "2026-12-08T09:00:00Z"


def test_a_things_number_after_is_or_after_its_chinese_word() -> None:
    card = schema_of("museum", "giftcard_balance")  # "The number on the gift card."
    assert extracted("帮我看看礼品卡还有多少余额，卡号是5512330098", card) == {
        "card_number": "5512330098"
    }
    assert extracted("is there still money on my giftcard? its 3019940075", card) == {
        "card_number": "3019940075"
    }
    # a phone's number is nobody's card
    assert extracted("what's left on my gift card? call me on 07911 123456", card) == {}
    assert extracted("what's left on my gift card? phone 0791112345", card) == {}
    # a number another word labels is that word's: a barcode is no library card
    renew = schema_of("library", "loan_renew")
    found = extracted("my book's due tmrw, can i keep it longer? barcode 3100776540", renew)
    assert "card_number" not in found
    assert "card_number" not in extracted("续借一下3100234598", renew)
    package = schema_of("cruiseline", "onboard_package_purchase")  # cabin: 舱房号
    assert extracted("舱房 7415 要买畅饮套餐，从明天开始", package)["cabin"] == "7415"
    assert extracted("给孩子加个不含酒精的饮料套餐，房间号 9214", package)["cabin"] == "9214"
    assert extracted("wifi for 3 devices please, room 8412", package)["cabin"] == "8412"


def test_a_whole_name_is_split_between_given_and_family_names() -> None:
    documents = schema_of("cruiseline", "travel_documents_submit")
    found = extracted(
        "I renewed my passport - new number 563201987, expiry 2 March 2036. Name's James "
        "Whitfield, booking 7730215",
        documents,
    )
    assert found["guest"]["first_name"] == "James"
    assert found["guest"]["last_name"] == "Whitfield"
    assert "date_of_birth" not in found["guest"]  # an expiry to come is no birthday
    found = extracted(
        "adding travel info for my daughter Chloe Bennett, born 14 Aug 2015, US citizen. "
        "res 5918422",
        documents,
    )
    assert found["guest"]["first_name"] == "Chloe"
    assert found["guest"]["last_name"] == "Bennett"
    assert found["guest"]["date_of_birth"] == "2015-08-14"
    lookup = schema_of("cruiseline", "booking_lookup")  # last_name alone
    found = extracted("Booking 1190342, I'm Tomasz Nowak, can you check it", lookup)
    assert found["last_name"] == "Nowak"


@pytest.mark.parametrize(
    ("query", "players"),
    [
        ("M40112 here - lakes nine tmrw at 4pm, solo, walking", 1),
        ("book a round for me and my dad sunday on the south, M10234", 2),
        ("me and 2 mates, north course saturday 8am, M10234", 3),
        ("my wife and I want the south course friday at 9, M10234", 2),
        ("south course at 2:30pm on Dec 15th for M22871, party of two", 2),
    ],
)
def test_who_goes_counted_from_the_one_asking(query: str, players: int) -> None:
    assert extracted(query, schema_of("golfclub", "teetime_book"))["players"] == players


def test_children_are_no_adults_and_a_plural_without_a_count_is_no_count() -> None:
    adults = object_schema({"adults": {"type": "integer", "minimum": 1, "maximum": 9}})
    assert "adults" not in extracted("tickets for me and my two kids on friday", adults)
    people = object_schema({"guests": {"type": "integer", "minimum": 1, "maximum": 9}})
    assert "guests" not in extracted("a table for me and my friends tonight", people)


def test_chinese_adults_are_people_not_nights() -> None:
    search = schema_of("cruiseline", "sailing_search")
    found = extracted("想看看明年二月份北欧的邮轮，我们三个大人", search)
    assert found["guests"] == 3
    assert "minNights" not in found


def test_chinese_clock_times_and_counts_of_people_are_values() -> None:
    assert without_day_words("能订意大利餐厅吗 明天中午12点 四个人").split() == ["能订意大利餐厅吗"]
    assert without_day_words("三位客人").strip() == "客人"
    assert without_day_words("十点半到").strip() == "到"
    # "a little" and a time of day alone are words
    assert without_day_words("便宜一点") == "便宜一点"
    assert without_day_words("上午的班") == "上午的班"


def test_a_verb_of_the_tools_own_act_disclaims_no_act() -> None:
    manifests = [
        {
            "tool_id": "booking_change",
            "description": "Modifies an existing reservation: changes the stateroom category. "
            "It cannot switch to a different ship or itinerary.",
        },
        {
            "tool_id": "booking_lookup",
            "description": "Read-only view of one reservation. It cannot teleport guests.",
        },
    ]
    index = BM25Index([positive_description(m["description"]) for m in manifests])
    disclaimed = vocabulary.disclaimed(index, manifests)
    assert "switch" not in disclaimed  # booking_change changes: switching is its act
    assert "teleport" in disclaimed


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("switch res 1190342 to an ocean view room pls", "booking_change"),
        ("能订意大利餐厅吗 明天中午12点 四个人", "specialty_dining_reserve"),
    ],
)
async def test_cruise_line_routes(gateway: httpx.AsyncClient, query: str, tool_id: str) -> None:
    body = (await dry_run(gateway, query, "guest")).json()
    assert best_tool(body) == tool_id, body


@pytest.mark.parametrize(
    ("query", "tickets"),
    [
        ("3 adults for New Year's Eve", [{"type": "adult", "quantity": 3}]),
        (
            "2 adults and 1 kid for this saturday, 11am if there's room",
            [{"type": "adult", "quantity": 2}, {"type": "child", "quantity": 1}],
        ),
        ("book four adult tix tommorow 10:00", [{"type": "adult", "quantity": 4}]),
        (
            "1 adult and 2 children, 3 concession",
            [
                {"type": "adult", "quantity": 1},
                {"type": "child", "quantity": 2},
                {"type": "concession", "quantity": 3},
            ],
        ),
    ],
)
def test_tickets_counted_by_kind(query: str, tickets: list[dict]) -> None:
    assert extracted(query, schema_of("museum", "ticket_book"))["tickets"] == tickets


def test_a_kind_no_option_names_makes_no_line() -> None:
    # "11am" is no kind of ticket, nor is "a family of five"
    found = extracted("a family of five, sunday 3pm", schema_of("museum", "ticket_book"))
    assert "tickets" not in found


def test_the_one_day_and_the_one_clock_of_a_request_make_its_date_time() -> None:
    dining = schema_of("cruiseline", "specialty_dining_reserve")
    found = extracted("帮我订明晚的海鲜餐厅，3位，7点半，房号 9214", dining)
    assert found["reservation_time"] == "2026-12-08T19:30:00"
    found = extracted("book friday for the steakhouse, party of 4, 8:30pm, cabin 8412", dining)
    assert found["reservation_time"] == "2026-12-11T20:30:00"
    # two days and one clock: which day is not said
    found = extracted("friday or saturday, table for 4, 8:30pm, cabin 8412", dining)
    assert "reservation_time" not in found


def test_a_ticket_opened_is_created() -> None:
    assert vocabulary.requested_actions("开个维修单：一号木杆头松了，M27365") == {"create"}
    assert vocabulary.requested_actions("开个 SEV2 故障单，billing-api 重复扣费") == {"create"}
    # a receipt reissued is no new record
    assert "create" not in vocabulary.requested_actions("收据找不到了，能重新开一张吗")


def test_guests_besides_the_one_asking_do_not_count_them() -> None:
    amenity = schema_of("property", "amenity_booking_create")  # "guests besides the resident"
    query = "Need the meeting room on July 8, 2025 at 2:30pm for 90 min, just me and 3 clients"
    assert extracted(f"{query}. BIR-1502", amenity)["guests"] == 3


def test_a_count_of_us_includes_the_one_asking() -> None:
    search = schema_of("cruiseline", "sailing_search")
    assert extracted("any caribbean cruises out of Miami? two of us", search)["guests"] == 2
    dining = schema_of("cruiseline", "specialty_dining_reserve")
    query = "the teppanyaki place for cabin 8412 on Thursday at 6:30pm, just the two of us"
    assert extracted(query, dining)["party_size"] == 2
    amenity = schema_of("property", "amenity_booking_create")  # guests besides the resident
    assert "guests" not in extracted("the rooftop on July 4 2025 at 7pm, three of us", amenity)


@pytest.mark.parametrize(
    ("query", "month"),
    [
        ("Book STU-22871 into the flute grade 6 performance exam in march", "2027-03"),
        ("Register my daughter for the violin practical in June", "2027-06"),
        ("can you book me in for march", "2027-03"),
        ("报名三月份的考试", "2027-03"),
        # what was done, or a report, is of the month gone by
        ("what did I book in March?", "2026-03"),
        ("What did we reserve in February?", "2026-02"),
        ("sales in January", "2026-01"),
    ],
)
def test_a_month_a_request_books_for_is_the_one_to_come(query: str, month: str) -> None:
    assert month in temporal.resolve(query, date(2026, 12, 7))


def test_a_month_in_words_picks_an_enum_of_months() -> None:
    exam = {
        "type": "object",
        "properties": {
            "session": {"type": "string", "enum": ["2027-03", "2027-06", "2027-11"]},
            "student_id": {"type": "string", "pattern": "^STU-\\d{5}$"},
        },
        "required": ["session", "student_id"],
    }
    query = "Register my daughter STU-30019 for the grade 3 violin practical in June"
    assert extracted(query, exam)["session"] == "2027-06"
    assert extracted("enter STU-10234 in the March 2027 session", exam)["session"] == "2027-03"
    assert extracted("报名三月份的考试 STU-22871", exam)["session"] == "2027-03"
    assert "session" not in extracted("Register STU-30019 for the violin practical", exam)


def test_a_member_parameter_takes_the_members_identifier() -> None:
    handicap = schema_of("golfclub", "handicap_lookup")  # ``member``: no pattern, no words
    assert extracted("Need the handicap for M55310 for the entry form", handicap) == {
        "member": "M55310"
    }
    assert extracted("what's my handicapp now? M10234", handicap)["member"] == "M10234"
    # an amount is no member's number
    assert "member" not in extracted("is my handicap under 12.4 now?", handicap)
