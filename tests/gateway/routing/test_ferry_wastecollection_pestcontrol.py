"""Arguments found by the ferry set (``tests/data/ferry``, written blind to the router):

- an enum of codes is read by the names the tool's description gives them ("Port codes:
  PSM = Portsmere, ARD = Ardmoor, …"): "any boats from portsmere to ardmoor?" is PSM to
  ARD (``routing/codes.py``);
- two parameters of the same options (an origin and a destination port) hold two
  different ones: "NHV to SDB" gave the origin NHV and the destination nothing;
- the end of such a pair is the one a "to" precedes, the other its start ("SDB to NHV",
  "Sandby -> Northhaven", "ARD-KLR", 从 KLR 去 PSM), not the first in the enum's order.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from gateway.routing import codes
from tests.gateway.routing.conftest import blind_set, dry_run, extracted, object_schema

CATALOGUE = [m for m in blind_set("ferry") if m["tool_id"] == "sailing_search"]
PORTS = ["PSM", "ARD", "KLR", "NHV", "SDB"]
TOOL_WORDS = (
    "Lists the crossings between two of our ports. Port codes: PSM = Portsmere, "
    "ARD = Ardmoor, KLR = Kilrush Isle, NHV = Northhaven, SDB = Sandby. Published "
    "timetable only."
)


def ports(description: str = "") -> dict[str, Any]:
    port = {"type": "string", "enum": PORTS, "description": description}
    return object_schema({"origin": port, "destination": dict(port)}, ["origin", "destination"])


@pytest.mark.parametrize(
    ("description", "named"),
    [
        (TOOL_WORDS, {"PSM": ("Portsmere",), "KLR": ("Kilrush Isle",), "SDB": ("Sandby",)}),
        ("Departure port: Portsmere (PSM), Kilrush Isle (KLR).", {"KLR": ("Kilrush Isle",)}),
        ("SDB: Sandby; NHV - Northhaven", {"SDB": ("Sandby",)}),
    ],
)
def test_the_names_a_description_gives_codes(
    description: str, named: dict[str, tuple[str, ...]]
) -> None:
    found = codes.names_of(description, PORTS)
    for code, names in named.items():
        assert found[code] == names


@pytest.mark.parametrize(
    ("description", "options"),
    [
        ("NEW: Created but not yet paid. OPEN: Paid.", ["NEW", "OPEN"]),  # no names: words
        ("Port codes: PSM = Portsmere.", ["psm", "ard"]),  # not codes
        ("", PORTS),
    ],
)
def test_no_names_where_none_are_given(description: str, options: list[str]) -> None:
    assert codes.names_of(description, options) == {}


def test_a_tools_names_are_lent_to_its_coded_parameters() -> None:
    lent = codes.with_coded_names(ports(), TOOL_WORDS)
    assert "NHV = Northhaven" in lent["properties"]["destination"]["description"]
    assert codes.with_coded_names(ports(), "Lists crossings.") == ports()


@pytest.mark.parametrize(
    ("query", "origin", "destination"),
    [
        ("NHV to SDB on friday", "NHV", "SDB"),
        ("SDB to NHV on friday", "SDB", "NHV"),
        ("to PSM from KLR tomorrow", "KLR", "PSM"),
        ("SDB -> NHV friday", "SDB", "NHV"),
        ("ARD-PSM tomorrow", "ARD", "PSM"),
        ("从 KLR 去 PSM", "KLR", "PSM"),
        ("KLR 到 PSM 明天", "KLR", "PSM"),
        ("any boats from portsmere to ardmoor tomorow morning?", "PSM", "ARD"),
        ("Do you run anything Sandby to Northhaven on Christmas Eve?", "SDB", "NHV"),
        ("to Kilrush from Portsmere on friday", "PSM", "KLR"),
        ("明天 Northhaven 到 Sandby 还有船吗？", "NHV", "SDB"),
    ],
)
def test_two_ports_fill_both_ends(query: str, origin: str, destination: str) -> None:
    schema = codes.with_coded_names(ports("Port code."), TOOL_WORDS)
    found = extracted(query, schema)
    assert (found.get("origin"), found.get("destination")) == (origin, destination), found


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "What time's the last crossing Northhaven -> Sandby on Saturday?",
            {"origin": "NHV", "destination": "SDB"},
        ),
        (
            "下周五从 Portsmere 去 Kilrush Isle 有哪些班次？我们三个人",
            {"origin": "PSM", "destination": "KLR", "passengers": 3},
        ),
    ],
)
async def test_a_sailing_search_by_the_ports_names(
    gateway: httpx.AsyncClient, query: str, expected: dict[str, Any]
) -> None:
    body = (await dry_run(gateway, query, "u1")).json()
    assert body.get("success") is True, body
    assert body["tool_id"] == "sailing_search"
    for key, value in expected.items():
        assert body["arguments"].get(key) == value, body["arguments"]


def address_schema(description: str) -> dict[str, Any]:
    address = {"type": "string", "minLength": 3, "description": description}
    return object_schema({"address": address}, ["address"])


@pytest.mark.parametrize(
    ("query", "address"),
    [
        ("when is garbage day at 4521 Fraser St?", "4521 Fraser St"),
        ("请问 6120 Knight St 的回收是哪天收？", "6120 Knight St"),
        ("with christmas coming up r my pickups moving? 2209 W 4th Ave", "2209 W 4th Ave"),
        (
            "Is recycling still getting picked up this week at 1187 E 33rd Ave, Vancouver?"
            " The holidays mess it up every year",
            "1187 E 33rd Ave, Vancouver",
        ),
    ],
)
def test_an_address_whose_example_begins_with_a_number(query: str, address: str) -> None:
    """ "e.g. 4521 Fraser St, Vancouver" gives no identifier "4521": the address was read
    as its house number alone; a numbered street ("W 4th Ave") is a street."""
    schema = address_schema("Street address of the home, e.g. 4521 Fraser St, Vancouver.")
    assert extracted(query, schema).get("address") == address


def test_a_numbered_example_is_still_an_identifiers_example() -> None:
    account = {"type": "string", "description": "Residential account number, e.g. 310045872"}
    schema = object_schema({"account_number": account}, ["account_number"])
    assert extracted("they missed the green bin, 318220946", schema) == {
        "account_number": "318220946"
    }


@pytest.mark.parametrize(
    ("query", "pest"),
    [
        ("ants again in the bathroom", "蚂蚁"),  # "ant": a sense of three letters
        ("The roaches are back two weeks after your treatment", "蟑螂"),  # of "cockroach"
        ("bed bugs came back", "臭虫"),  # "bedbug" written apart
        ("we've got rats again", "老鼠"),
        ("termites again", "白蚁"),
    ],
)
def test_a_chinese_option_by_a_short_or_compound_english_word(query: str, pest: str) -> None:
    options = ["蚂蚁", "蟑螂", "老鼠", "白蚁", "臭虫", "黄蜂", "跳蚤", "其他"]
    schema = object_schema({"pest": {"type": "string", "enum": options}}, ["pest"])
    assert extracted(query, schema).get("pest") == pest


def test_a_flag_said_with_with_still_reads() -> None:
    """The words after "with" are read for the flag's name (a name clash in
    ``extract`` once replaced that reader and crashed such requests)."""
    schema = object_schema({"ev_charging": {"type": "boolean"}})
    assert extracted("a spot with an EV charger please", schema) == {"ev_charging": True}
