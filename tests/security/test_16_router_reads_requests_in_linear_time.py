"""A request cannot make the router's reading of it cost the square of its length.

A /run request holds up to 4,000 characters, and the router reads it on the event
loop: which verb it starts with, its dates, numbers, identifiers and search terms, its
shape for the route cache. Runs of one repeated piece ("1:1:1:…", blanks, "十十十…")
once made single steps quadratic: "x " followed by "1:" repeated took 1.4 s to route,
a run of blanks 0.3 s (the clock pattern entered the run again from each blank), and a
Chinese text made each identifier pattern's search re-measure the whole text (and, for
a shape taken from an example, "e.g. 1208", once per date it turned down). Here the
work of 8 times the text must stay well under the 64 times a square would cost.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date

import pytest

from gateway.routing import cache, intent, options, temporal, vocabulary
from gateway.routing.choose import named_identifier_values
from gateway.routing.extract import ArgumentExtractor

SCHEMA = {
    "type": "object",
    "properties": {
        "service": {"type": "string", "pattern": "^[a-z][a-z0-9-]{1,40}$"},
        "count": {"type": "integer", "description": "how many replicas"},
        "query": {"type": "string"},
        "team": {"type": "string", "description": "e.g. sre, payments"},
        "day": {"type": "string", "format": "date"},
        "claim_id": {"type": "string"},
        "destination": {"type": "string", "description": "Destination country"},
        "slot": {"type": "string", "enum": ["08:00-12:00", "12:00-16:00"]},
        "contact_phone": {"type": "string"},
        "last_name": {"type": "string"},
        "reported_by": {"type": "string"},
        "card_number": {"type": "string", "pattern": "^[0-9]{16}$"},
        "employee_id": {"type": "string"},
        "plate_number": {"type": "string", "description": "车牌号"},
        "address": {"type": "string", "description": "Street address"},
        "area": {"type": "string", "description": "Street, neighbourhood or postcode"},
        "parcel_id": {"type": "string"},
        "branch_code": {"type": "string", "description": "Branch code, e.g. 1208"},
        "medication": {"type": "string"},
        "contact_email": {"type": "string", "format": "email"},
        "starts_at": {"type": "string", "format": "date-time"},
        "ends_at": {"type": "string", "format": "date-time"},
        "multiplier": {"type": "number"},
        "frequency": {"type": "string", "enum": ["每天一次", "每天两次", "每周一次"]},
        "times": {
            "type": "array",
            "items": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
        },
        "store_id": {"type": "string", "pattern": "^[0-9]{4}$", "description": "zero-padded"},
        "from_rx_number": {"type": "string"},
        "instance": {"type": "string", "description": "e.g. i-0abc123def4567890"},
        "kind": {"type": "string", "enum": ["reserved_instance", "savings_plan"]},
        "from_station": {"type": "string", "description": "Departure station"},  # 从a到b
        "to_station": {"type": "string", "description": "Arrival station"},
        "domain": {"type": "string", "description": "域名"},  # x.com
        "family_account": {"type": "string", "description": "Family account number."},
        "amount": {"type": "number"},  # "twelve hundred and fifty dollars"
        "tlds": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]{2,24}$"}},
        "dates": {
            "type": "array",
            "items": {"type": "string", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"},
        },
        "travel_card": {"type": "string", "pattern": "^TC\\d{8}$"},  # TC 1045 8820
        "auto_renew": {"type": "string", "enum": ["开启", "关闭"]},
        "thresholds": {"type": "array", "items": {"type": "integer"}, "description": "percent"},
        "anomaly_id": {"type": "string", "pattern": "^ANM-[0-9]{6}$"},
        "changeNote": {"type": "string"},
        "drugs": {"type": "array", "items": {"type": "string"}},
        "start_date": {"type": "string", "format": "date"},  # a period: "Q3", "last month"
        "end_date": {"type": "string", "format": "date"},
        "product": {"type": "string"},  # what a shop is asked to have
        "topic": {"type": "string", "description": "想咨询的问题"},
        "invoice_title": {"type": "string", "description": "发票抬头"},  # 抬头写…
        "connector_no": {"type": "integer", "description": "枪号"},  # 2号枪
        "near": {"type": "string", "description": "place or postcode"},
        "isbn": {"type": "string", "pattern": "^(97[89])?[0-9]{9}[0-9X]$"},  # in groups
        "vehiclePlates": {"type": "array", "items": {"type": "string"}},
        "rxNumbers": {"type": "array", "items": {"type": "string", "pattern": "^RX[0-9]{7}$"}},
        "allowed_days": {"type": "array", "items": {"enum": ["mon", "sat", "sun"]}},
        "ship_to": {
            "type": "object",
            "properties": {
                "line1": {"type": "string"},
                "line2": {"type": "string"},
                "city": {"type": "string"},
                "state": {"type": "string"},
                "zip": {"type": "string"},
            },
        },
    },
    "required": ["service", "query", "claim_id"],
}
EXTRACTOR = ArgumentExtractor(today=lambda: date(2026, 12, 1))
PIECES = ["1:", "1-", " ", "\t\n", "十", "1点", "SO1", "-", "(a", "a a", "count 1 ", "找a "]
PIECES += ["claim CLM-1 ", "claim  ", "Japan ", "中国", "4pm-", "0412 345 ", "jun 1st "]
PIECES += ["surname  ", "报修人 ", "6037 ", "1234-", "employee id ", "Saturday ", "June 20-"]
PIECES += ["粤B ", "19 Elm ", "flat 4B ", "和平街", "滨江花园5栋", "in Old ", "postcode "]
PIECES += ["0452-118-", "1 Elm Street, Leith, ", "1 Elm St, A1 ", "漕溪北路88号万达广场B座"]
PIECES += ["2026-12-05 ", "今晚"]  # dates: each four digits a piece the code turns down
PIECES += ["1", "1.", "a 1"]  # one run of digits: a dose's number entered it at each digit
PIECES += ["_", "no.1 "]  # an address entered a run of letters at each; each "no." every token
PIECES += ["1 and a half ", "一个半", "Wed the 1st ", "2026-12-05 at 9 ", "last 3 days ", "1.5x "]
PIECES += ["+1 512 ", "store #7 ", "on the 2nd ", "月底", "twice a day ", "8am and ", "早8点晚"]
PIECES += ["rx1 ", "atorvastatin ", "i-0ab1 ", "from a (", "9点 20"]
PIECES += [
    "RI ",
    "1, 2 and 3% ",
    "5%",
    "anm1 ",
    "top 1 ",
    "备注写：",
    "every weekday ",
    "Q1 ",
    "第一季度",
]
PIECES += ["a: b, c", ": a and b ", "他汀", "吃双胍和", "lisinopril with "]
PIECES += ["any a ", "有没有a", "抬头写", "1号枪", "附近", "near Leeds station ", "978-7-"]
PIECES += ["vehicle AB12 CDE and ", "粤B12345、", "rx 1234567 and ", "1 Elm St Apt 4B, Austin TX "]
PIECES += ["1.2M ", "12块5", "next Monday ", ", can you start ", "《a》"]
PIECES += ["a.b ", "x.com ", "a hundred ", "twenty dollars ", "acct 1 ", "账户 1", "从a到b"]
PIECES += ["A to B ", ".net ", "TC 1 2 ", "12月1日、", "Dec 1, 2 and ", "1 and 2 December "]
PIECES += ["same for ", "关掉", "autorenew ", "dollars "]


def read(text: str) -> None:
    """What the router reads of a request before and beside its embedding."""
    EXTRACTOR.extract(text, SCHEMA)
    named_identifier_values(EXTRACTOR, text, SCHEMA)
    temporal.resolve(text, date(2026, 12, 1))
    intent.order_verb(text)
    vocabulary.requested_actions(text)
    cache.abstract(text)


def timed(work: Callable[[], None]) -> float:
    """The CPU time ``work`` takes on this thread: what the reading costs, not how long
    another process (a test on the other worker, the database) held the core meanwhile."""
    started = time.thread_time()
    work()
    return time.thread_time() - started


def ratio(long: Callable[[], None], short: Callable[[], None]) -> float:
    """The long work's cost over the short one's, each its least of three runs (a busy
    machine only adds). The short one is cheap and always run three times; the long one
    runs again only while the ratio is over the bar, since a first run that passes
    would pass as the least of three too (most of this module's time went to runs
    that could not change its verdict)."""
    floor = max(min(timed(short) for _ in range(3)), 1e-4)
    best = float("inf")
    for _ in range(3):
        best = min(best, timed(long))
        if best / floor < RATIO_BAR:
            break
    return best / floor


RATIO_BAR = 24  # 8x the text: linear work costs ~8x, a square 64x


@pytest.mark.parametrize("piece", PIECES)
def test_reading_a_request_grows_with_its_length_not_its_square(piece: str) -> None:
    def text(length: int) -> str:
        return ("x " + piece * (length // len(piece)))[:length]

    short, long = text(2_000), text(16_000)
    cost = ratio(lambda: read(long), lambda: read(short))
    assert cost < RATIO_BAR, f"{piece!r}: 8x the text cost {cost:.0f}x the time"


def test_a_kind_word_before_a_run_of_blanks_costs_the_run_once() -> None:
    """ "claim", 4,000 blanks and a word before a claim number: reading whether the word
    introduces the number once tried each split of the blanks (0.19 s at 4,000)."""

    def text(length: int) -> str:
        return "claim" + " " * length + "x CLM-611940"

    def work(length: int) -> Callable[[], None]:
        return lambda: named_identifier_values(EXTRACTOR, text(length), SCHEMA)

    cost = ratio(work(16_000), work(2_000))
    assert cost < RATIO_BAR, f"8x the blanks cost {cost:.0f}x the time"


def test_blanking_a_requests_identifiers_costs_its_length() -> None:
    """Reading which enum option a clause of the request means (``options``) first
    blanks its identifiers: in a run of letters without a digit, ``_KEYS`` was tried from
    each letter to the run's end (4,000 letters: 130 ms; 16,000: 1.8 s)."""
    for piece in ("a", "a-", "a_b", "1-"):
        cost = ratio(
            lambda piece=piece: options._without_keys(piece * 16_000),
            lambda piece=piece: options._without_keys(piece * 2_000),
        )
        assert cost < RATIO_BAR, f"{piece!r}: 8x the text cost {cost:.0f}x the time"
