"""Arguments and routes of an event venue's and an IT department's requests, found by the
venue and IT-asset sets (``tests/data/venue``, ``tests/data/itassets``, written blind to
the router): an IPv4 address, a software name in a Chinese request, adding or removing
seats, a list of visitors' names, a list of licence plates, a deposit's percentage that is
no amount, an event moved by "push" or "reschedule", and a tool whose act parameter names
what it does.
"""

from __future__ import annotations

from datetime import date

import httpx
import pytest

from tests.gateway.routing.conftest import blind_set, dry_run, extracted, object_schema

CATALOGUE = blind_set("itassets")


@pytest.mark.parametrize(
    ("query", "address"),
    [
        ("Requesting access to the Lab Network from 198.51.100.23 for a week", "198.51.100.23"),
        ("要连公司VPN，IP 192.0.2.18，开两周就行", "192.0.2.18"),
        ("install Python 3.11.4 please", None),  # a version is no address
        ("from 999.1.1.1", None),
    ],
)
def test_an_ipv4_parameter_takes_an_address(query: str, address: str | None) -> None:
    tool = object_schema({"sourceIp": {"type": "string", "format": "ipv4"}})
    assert extracted(query, tool).get("sourceIp") == address


INSTALL = object_schema(
    {
        "software": {"type": "string", "description": "软件名称，例如 Visual Studio Code"},
        "version": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+\\.[0-9]+$"},
        "hostname": {"type": "string", "pattern": "^[a-z]{2,4}-[a-z]+-[0-9]{2,3}$"},
    },
    ["software", "hostname"],
)


@pytest.mark.parametrize(
    ("query", "software"),
    [
        ("麻烦给我电脑 cd-ops-09 装一下 Wireshark", "Wireshark"),
        ("sz-rd-115 需要装 Node.js，版本 20.10.0，比较急", "Node.js"),
        ("please install Docker Desktop 4.25.0 on bj-qa-07", "Docker Desktop"),
    ],
)
def test_a_software_name_is_the_thing_the_request_names(query: str, software: str) -> None:
    assert extracted(query, INSTALL)["software"] == software


SEATS = object_schema(
    {
        "seats": {"type": "integer", "minimum": 1},
        "change": {"type": "string", "enum": ["add", "remove"]},
    }
)


@pytest.mark.parametrize(
    ("query", "change"),
    [
        ("cut 4 figma seats, nobody uses them", "remove"),
        ("JetBrains 全家桶减掉 3 个席位", "remove"),
        ("M365 E3 再加20个", "add"),
        ("we need five more Adobe CC licences", "add"),
        ("how many seats do we have", None),
    ],
)
def test_adding_or_taking_away_by_the_requests_words(query: str, change: str | None) -> None:
    assert extracted(query, SEATS).get("change") == change


BADGES = object_schema(
    {"visitor_names": {"type": "array", "items": {"type": "string"}, "description": "访客姓名"}}
)


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("下周二有两个客人：Kevin Tan、黄思琪，来自星河传媒", ["Kevin Tan", "黄思琪"]),
        ("明天上午10点有三位访客：王磊、刘洋、陈静", ["王磊", "刘洋", "陈静"]),
        ("名字是Tom Becker和Anna Schulz，公司叫Kessler GmbH", ["Tom Becker", "Anna Schulz"]),
        ("给张伟办个访客证，下午两点到", ["张伟"]),
        ("make a temp badge for Sun Hao pls", ["Sun Hao"]),
    ],
)
def test_a_list_of_names_takes_every_person_named(query: str, names: list[str]) -> None:
    assert extracted(query, BADGES) == {"visitor_names": names}


def test_a_list_of_plates_takes_the_plates_not_the_words_around_them() -> None:
    tool = object_schema(
        {
            "plates": {
                "type": "array",
                "items": {"type": "string", "pattern": "^[A-Z0-9\u4e00-\u9fa5]{5,9}$"},
            }
        }
    )
    assert extracted("老板后天开车过来，车牌京N0U777，帮忙弄个停车证呗", tool) == {
        "plates": ["京N0U777"]
    }


PAYMENT = object_schema(
    {
        "amount": {"type": "number", "minimum": 0.01},
        "depositPercent": {"type": "integer", "minimum": 0, "maximum": 100},
    }
)


@pytest.mark.parametrize(
    "query",
    [
        "We'd like to put down a 30% deposit via bank transfer",
        "want to do the 30 percent deposit by card",
        "定金付百分之三十，微信支付",
    ],
)
def test_a_percentage_is_no_amount(query: str) -> None:
    assert extracted(query, PAYMENT) == {"depositPercent": 30}


@pytest.mark.parametrize(
    "query", ["Can we push EVT-330172 to jan 20th?", "Reschedule EVT-771204 to Jan 22 2027 pls"]
)
def test_moving_an_event_is_its_move_option(query: str) -> None:
    tool = object_schema(
        {
            "event_id": {"type": "string", "pattern": "^EVT-[0-9]{6}$"},
            "action": {"type": "string", "enum": ["cancel", "move"]},
        }
    )
    assert extracted(query, tool)["action"] == "move"


@pytest.mark.parametrize(
    "query", ["add 10 Figma seats, bill CC-4410", "cut 4 figma seats, nobody uses them"]
)
async def test_a_tool_does_what_its_act_parameter_names(
    gateway: httpx.AsyncClient, query: str
) -> None:
    """ "Buy extra seats on, or give back seats from, one of the company's SaaS
    subscriptions" names neither adding nor removing; its ``change`` of ["add", "remove"]
    does, and the order is no longer held to be for another kind of tool."""
    body = (await dry_run(gateway, query, "it")).json()
    assert body.get("tool_id") == "license_seats_adjust", body


@pytest.mark.parametrize(
    ("text", "clocks"),
    [
        ("Jan 5 2027, 1-3pm, just 6 ppl", "13:00 to 15:00"),
        ("11-1pm", "11:00 to 13:00"),
        ("between 12-2pm", "12:00 to 14:00"),
        ("10:30 to 12 pm", "10:30 to 12:00"),
        ("8 till 11 am", "08:00 to 11:00"),
    ],
)
def test_a_range_of_hours_takes_the_half_of_the_day_written_after_it(
    text: str, clocks: str
) -> None:
    from gateway.routing.temporal import resolve

    assert clocks in resolve(text, date(2026, 12, 7))
