"""Arguments and routes found by the bike-shop, optician and caterer sets
(``tests/data/bikeshop``, ``optician``, ``catering``, written blind to the router):

- what is no longer wanted is cancelled (之前订的那个仓位不要了), and the last Chinese
  action word of a request is one used as a verb (not 预订 of 预订号);
- a Chinese flag described by its two values ("true 表示暂停配送，false 表示恢复配送") takes
  the value whose words the request writes (恢复配送 resumes);
- a flag switched off ("turn off auto-renew", "stop the reminders") is false;
- a length of time counts no people or things ("an extra chef … about 6 hours"), a count of
  things is no length of time ("3 city bikes"), "an extra chef" and "one more bartender"
  are one, and a count of people is the one 人 or 位 measures (一次品鉴，三个人);
- an account is a record its name introduces ("account CU-12090"), and "membership" a
  member's label;
- "waiters" and 服务员 are servers, an accented word names its plain option ("canapés"),
  and "all" said of another option's things is that option ("all my paid invoices");
"""

from __future__ import annotations

import pytest

from gateway.routing import vocabulary
from tests.gateway.routing.conftest import extracted, object_schema


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("之前订的那个仓位不要了，预订号 RSV-62781", "不要了"),  # 预订号 is a noun
        ("把 RF123 这笔退款撤销掉", "撤销"),
        ("我的预约是几点", None),
    ],
)
def test_the_last_chinese_action_is_a_verb(text: str, word: str | None) -> None:
    assert vocabulary.last_chinese_action(text) == word


def test_what_is_no_longer_wanted_is_cancelled() -> None:
    assert vocabulary.requested_actions("AP-921004 这个预约不要了") == {"cancel"}


SUBSCRIPTION = object_schema(
    {
        "subscription_id": {"type": "string", "description": "订阅号，例如 CL-30412"},
        "paused": {"type": "boolean", "description": "true 表示暂停配送，false 表示恢复配送"},
    },
    ["subscription_id"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [("订阅恢复配送吧，CL-67302", False), ("CL-67302 先暂停配送", True)],
)
def test_a_chinese_flag_by_its_described_values(query: str, expected: bool) -> None:
    assert extracted(query, SUBSCRIPTION)["paused"] is expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("please extend membership M-81007 by two years and turn off auto-renew", False),
        ("renew M-81007, stop the auto-renew", False),
        ("renew M-81007 for a year with auto-renew on", True),
    ],
)
def test_a_flag_switched_off(query: str, expected: bool) -> None:
    schema = object_schema(
        {
            "member_number": {"type": "string", "description": "会员号，例如 M-30571"},
            "auto_renew": {"type": "boolean", "description": "是否开启到期自动续费"},
        },
        ["member_number"],
    )
    assert extracted(query, schema)["auto_renew"] is expected


STAFF = object_schema(
    {
        "order_id": {"type": "string", "description": "Event order number, e.g. EV-20481"},
        "role": {"type": "string", "enum": ["server", "bartender", "chef", "dishwasher"]},
        "headcount": {"type": "integer", "minimum": 1, "maximum": 30},
        "hours": {"type": "number", "minimum": 1, "maximum": 16},
    },
    ["order_id", "role", "headcount"],
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        (
            "We need an extra chef for event EV-41822, about 6 hours",
            {"role": "chef", "headcount": 1, "hours": 6},
        ),
        (
            "Could we get one more bartender on EV-77310 for the whole evening (8 hrs)?",
            {"role": "bartender", "headcount": 1, "hours": 8},
        ),
        ("can you send 4 more waiters for EV-12004", {"role": "server", "headcount": 4}),
        ("EV-33107 再加三个服务员，工作5小时", {"role": "server", "headcount": 3, "hours": 5}),
    ],
)
def test_staff_counted_apart_from_their_hours(query: str, expected: dict[str, object]) -> None:
    arguments = extracted(query, STAFF)
    assert {k: v for k, v in arguments.items() if k != "order_id"} == expected


RENTAL = object_schema(
    {
        "bike_type": {"type": "string", "enum": ["road", "mountain", "ebike", "city", "kids"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "quantity": {"type": "integer", "minimum": 1, "maximum": 6},
    }
)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("reserve 3 city bikes for tomorrow for 2 days", {"quantity": 3, "days": 2}),
        ("reserve 3 city bikes for tomorrow", {"quantity": 3}),
        ("a city bike for 3 days", {"days": 3}),
    ],
)
def test_a_count_of_things_is_no_length_of_time(query: str, expected: dict[str, int]) -> None:
    arguments = extracted(query, RENTAL)
    assert {k: v for k, v in arguments.items() if k != "bike_type"} == expected


def test_a_count_of_people_is_measured_by_people() -> None:
    schema = object_schema(
        {
            "party_size": {
                "type": "integer",
                "minimum": 1,
                "maximum": 6,
                "description": "参加试菜的人数",
            }
        }
    )
    assert extracted("下周五晚上安排一次品鉴，三个人", schema) == {"party_size": 3}


@pytest.mark.parametrize(
    ("query", "name", "expected"),
    [
        ("do I have any store credit left? account CU-12090", "account", "CU-12090"),
        ("balance for account 55102 please", "account", "55102"),
        ("What tier am I on? membership 40772", "member_number", "40772"),
    ],
)
def test_a_record_named_by_its_kind(query: str, name: str, expected: str) -> None:
    schema = object_schema({name: {"type": "string"}})
    assert extracted(query, schema) == {name: expected}


@pytest.mark.parametrize(
    ("query", "enum", "expected"),
    [
        ("canapés for 60 people", ["buffet", "plated", "canapes"], "canapes"),
        ("list all my paid invoices from this year", ["unpaid", "paid", "all"], "paid"),
        ("show all invoices", ["unpaid", "paid", "all"], "all"),
    ],
)
def test_options_said_in_other_forms(query: str, enum: list[str], expected: str) -> None:
    schema = object_schema({"choice": {"type": "string", "enum": enum}})
    assert extracted(query, schema)["choice"] == expected
