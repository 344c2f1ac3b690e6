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
