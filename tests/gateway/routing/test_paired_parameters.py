"""A start and an end of one thing (``routing/roles.py``): a value goes to the end the
request's words give it, a named month or year fills a pair of dates, and a code of
either end is read from where the request writes it."""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx
import pytest

from gateway.routing import roles
from gateway.routing.extract import ArgumentExtractor
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("carrental") + blind_set("banking")
TODAY = date(2026, 12, 3)
DAY = {"type": "string", "format": "date"}
RANGE = {"type": "object", "properties": {"start_date": DAY, "end_date": DAY}}


def schema_of(tool_id: str) -> dict[str, Any]:
    return next(m["input_schema"] for m in CATALOGUE if m["tool_id"] == tool_id)


def extracted(query: str, schema: dict[str, Any]) -> dict[str, Any]:
    return ArgumentExtractor(lambda: TODAY).extract(query, schema).arguments


def test_pairs_are_names_that_differ_in_a_start_and_an_end_word() -> None:
    names = [
        "booking_ref",
        "new_pickup_date",
        "new_return_date",
        "pickupBranch",
        "returnBranch",
        "check_in",
        "check_out",
        "from",
        "to",
        "total",  # "to" is a whole word of a name, not a piece of one
        "return_method",  # no start of its own
    ]
    assert roles.pairs(names) == [
        ("new_pickup_date", "new_return_date"),
        ("pickupBranch", "returnBranch"),
        ("check_in", "check_out"),
        ("from", "to"),
    ]
    assert roles.pairs(["origin", "destination", "departure_date", "return_date"]) == [
        ("origin", "destination"),
        ("departure_date", "return_date"),
    ]


@pytest.mark.parametrize(
    ("text", "value", "expected"),
    [
        ("Can I extend RSV-228904 until 2025-03-22?", "2025-03-22", roles.END),
        ("I'm checking out on 2026-08-19 now", "2026-08-19", roles.END),
        ("还车日期改到 2025-05-09", "2025-05-09", roles.END),
        ("2025-08-08 取车，2025-08-12 还，司机叫李娜", "2025-08-12", roles.END),
        ("2025-08-08 取车，2025-08-12 还，司机叫李娜", "2025-08-08", roles.START),
        ("transfer 200 to 61009374", "61009374", roles.END),
        ("pick up at LHR-T5 please", "LHR-T5", roles.START),
        # A change is "to" its new value, whichever end it is.
        ("move my pickup to 2025-05-09", "2025-05-09", roles.START),
        ("change it to 2025-05-09", "2025-05-09", None),
        # Words of another clause say nothing of this value.
        ("returning the car is fine, pickup 2025-05-01", "2025-05-01", roles.START),
        ("booking RSV-228904 on 2025-03-22", "2025-03-22", None),
    ],
)
def test_the_words_beside_a_value_say_which_end_it_is(
    text: str, value: str, expected: str | None
) -> None:
    assert roles.side(text, value) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("show me the transactions last month", ("2026-11-01", "2026-11-30")),
        ("10月份的交易明细", ("2026-10-01", "2026-10-31")),
        ("list transactions for February 2024", ("2024-02-01", "2024-02-29")),
        ("all my membership payments for 2026", ("2026-01-01", "2026-12-31")),
        ("2025年全年的流水", ("2025-01-01", "2025-12-31")),
        ("去年的账单", ("2025-01-01", "2025-12-31")),
        ("everything since March 2024", ("2024-03-01", None)),
        ("everything until March 2024", (None, "2024-03-31")),
        # Two months a range joins, the year written once: both of that year.
        ("transactions from March to May 2024", ("2024-03-01", "2024-05-31")),
        ("2024年3月到5月的流水", ("2024-03-01", "2024-05-31")),
        ("from Dec 2024 to Feb", None),  # a year it did not write: no 14-month range
        # A day written, two periods, or none: no period.
        ("from 2024-02-01 to 2024-02-29", None),
        ("compare March 2024 with April 2024", None),
        ("show me my transactions", None),
        ("send 2024 units", None),
    ],
)
def test_a_named_month_or_year_is_its_first_and_last_day(
    query: str, expected: tuple[str | None, str | None] | None
) -> None:
    from gateway.routing import temporal

    assert roles.period(temporal.resolve(query, TODAY), TODAY) == expected


def test_a_period_fills_a_pair_of_dates_and_its_year_is_no_amount() -> None:
    schema = schema_of("list_account_transactions")
    assert extracted("list transactions on 40128876 for March 2024", schema) == {
        "account_id": "40128876",
        "start_date": "2024-03-01",
        "end_date": "2024-03-31",
    }
    assert extracted("上个月的交易明细", RANGE) == {
        "start_date": "2026-11-01",
        "end_date": "2026-11-30",
    }
    # Days written are read as days, in order.
    assert extracted("from 2024-02-01 to 2024-02-29", RANGE) == {
        "start_date": "2024-02-01",
        "end_date": "2024-02-29",
    }


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "Can I extend RSV-228904 until 2025-03-22?",
            {"booking_ref": "RSV-228904", "new_return_date": "2025-03-22"},
        ),
        (
            "RSV-950336 想续租两天，还车日期改到2025年5月9日",
            {"booking_ref": "RSV-950336", "new_return_date": "2025-05-09"},
        ),
        (
            "RSV-950336 把还车门店改成 SHA-HQ",
            {"booking_ref": "RSV-950336", "new_return_branch": "SHA-HQ"},
        ),
        (
            "move the pickup of RSV-950336 to 2025-05-09",
            {"booking_ref": "RSV-950336", "new_pickup_date": "2025-05-09"},
        ),
    ],
)
def test_one_value_of_a_pair_goes_to_the_end_its_words_name(
    query: str, expected: dict[str, Any]
) -> None:
    assert extracted(query, schema_of("modify_booking")) == expected


def test_codes_of_both_ends_are_read_where_the_request_writes_them() -> None:
    # "e.g. LAX-AP, PVG-T2": LHR-T5 is shaped like the second example, EDI-WAV (written
    # second) only loosely like the first; the return branch gives no shape of its own.
    arguments = extracted(
        "one way from LHR-T5 to EDI-WAV, 2025-08-20 to 2025-08-27, manual is ok",
        schema_of("search_vehicles"),
    )
    assert arguments["pickup_branch"] == "LHR-T5"
    assert arguments["return_branch"] == "EDI-WAV"
    assert (arguments["pickup_date"], arguments["return_date"]) == ("2025-08-20", "2025-08-27")


def test_one_account_written_once_is_one_end_of_a_transfer() -> None:
    schema = schema_of("create_transfer")
    arguments = extracted("transfer 200 to 61009374", schema)
    assert arguments.get("to_account_id") == "61009374"
    assert "from_account_id" not in arguments
    crossed = extracted("transfer 200 to 61009374 from 40128876", schema)
    assert (crossed["from_account_id"], crossed["to_account_id"]) == ("40128876", "61009374")


async def test_a_routed_call_gets_the_end_its_words_name(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "Can I extend my rental RSV-228904 until 2025-03-22?", "u")
    body = response.json()
    assert body["tool_id"] == "modify_booking", body
    assert body["arguments"] == {"booking_ref": "RSV-228904", "new_return_date": "2025-03-22"}


def test_a_to_before_another_value_is_that_values() -> None:
    assert roles.side("need flights SFO to NRT on 2025-05-02", "2025-05-02") is None
    assert roles.side("need flights SFO to NRT on 2025-05-02", "NRT") == roles.END
    assert roles.side("send 500 to my savings 61009374", "61009374") == roles.END


def test_a_place_takes_the_placed_name_and_a_person_the_other() -> None:
    schema = schema_of("book_branch_appointment")  # branch_name: 网点名称或所在街道
    arguments = extracted(
        "Can I book a slot for my mother Wang Lan at Kowloon Bay branch on 2024-09-09 09:30",
        schema,
    )
    assert (arguments["branch_name"], arguments["customer_name"]) == ("Kowloon Bay", "Wang Lan")
    # A street is no customer, and a branch that is a place is no git branch ("step-free").
    arguments = extracted(
        "appointment at Oxford Street 2024-11-15 15:00 to open a joint account. "
        "I use a wheelchair so need step-free access",
        schema,
    )
    assert arguments["branch_name"] == "Oxford Street"
    assert "customer_name" not in arguments


def test_a_code_glued_to_a_chinese_word_is_no_name() -> None:
    arguments = extracted(
        "我要预订一台SUV，SHA-HQ门店，2025-08-08 上午10点取车，2025-08-12 还，司机叫李娜",
        schema_of("create_booking"),
    )
    assert arguments["driver_name"] == "李娜"
    assert arguments["pickup_branch"] == "SHA-HQ"
    assert (arguments["pickup_date"], arguments["return_date"]) == ("2025-08-08", "2025-08-12")
