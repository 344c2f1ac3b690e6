"""A flag the request names by its description's own words (``extract._described_flag``):
two of them, that no other parameter's name or description has; false when negated just
before, and nothing for what the description says false means ("instead of …")."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.routing.extract import ArgumentExtractor


def schema(flag: dict[str, Any], **others: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {**others, "flag": {"type": "boolean", **flag}}}


CLASS = {"type": "string", "description": "Class id, e.g. CL-20261204-11"}
WAITLIST = schema(
    {"description": "Join the waitlist if the class is full (default false)"}, class_id=CLASS
)
ROUTER = schema(
    {"description": "是否恢复出厂设置（会清除自定义的 Wi-Fi 名称和密码）"},
    account={"type": "string", "description": "宽带账号"},
)
ROAMING = schema(
    {"description": "是否把境外漫游用量单独列出"},
    line={"type": "string", "description": "手机号码"},
)
CHECK_IN = schema(
    {"description": "是否为订单内所有旅客一起办理值机"},
    booking={"type": "string", "description": "订单号"},
)
REFUND = schema(
    {
        "default": False,
        "description": "Keep the refund as credit on the council account instead of "
        "refunding the card.",
    },
    permit={"type": "string"},
)


def flag(query: str, schema: dict[str, Any]) -> bool | None:
    value: bool | None = ArgumentExtractor().extract(query, schema).arguments.get("flag")
    return value


@pytest.mark.parametrize(
    ("query", "tool", "expected"),
    [
        ("CL-20261204-11 is full, put me on the waitlist", WAITLIST, True),
        ("查一下0461239876上期的用量，漫游的也单独列出来", ROAMING, True),
        ("BB88045120 重启一下，不要恢复出厂设置", ROUTER, False),
        ("帮我们全家一起值机吧，订单 L6PR3D", CHECK_IN, True),
        # One word of the description is often the tool's own: 值机 alone sets nothing.
        ("帮我值机，订单 C8RT5N，姓 LIU", CHECK_IN, None),
        ("book me into CL-20261204-11", WAITLIST, None),
        # "Refund back to my card" is what false means: said, it sets nothing.
        ("stop permit RP-902114, refund back to my card is fine", REFUND, None),
        ("no need to join the waitlist if it's full", WAITLIST, False),
    ],
)
def test_a_flag_named_by_its_description(
    query: str, tool: dict[str, Any], expected: bool | None
) -> None:
    assert flag(query, tool) is expected


def test_a_flag_named_by_its_name_is_false_after_no_need_to() -> None:
    notify = {"type": "object", "properties": {"notify_requester": {"type": "boolean"}}}
    arguments = ArgumentExtractor().extract("No need to notify the requester", notify).arguments
    assert arguments == {"notify_requester": False}


def test_a_schema_of_many_flags_costs_its_length_not_its_square() -> None:
    """Each flag reads the other parameters' words: once per request and bounded, so 8x
    the parameters cost about 8x the time, not the 64x a reading per flag would."""
    import time

    def many(count: int) -> dict[str, Any]:
        described = {"type": "boolean", "description": "是否把境外漫游用量单独列出 " * 10}
        return {"type": "object", "properties": {f"flag_{i}": described for i in range(count)}}

    def cost(schema: dict[str, Any]) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.thread_time()
            ArgumentExtractor().extract("漫游的也单独列出来", schema)
            best = min(best, time.thread_time() - started)
        return max(best, 1e-4)

    small, large = many(100), many(800)
    assert cost(large) / cost(small) < 24


@pytest.mark.parametrize(
    ("request_text", "history"),
    [
        ("帮我查下 AC-5521 今年的充值记录", True),  # 记录: records
        ("会员 AC-5521 的积分明细", True),  # 明细: the itemised list
        ("AC-5521 历史记录也给我看看", True),
        ("balance of AC-5521, and the history please", True),
        ("balance of AC-5521 only, no history", False),  # "no" just before
        ("AC-5521 还有多少余额", None),
    ],
)
def test_a_history_flag_is_set_by_the_words_people_use_for_one(
    request_text: str, history: bool | None
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "account": {"type": "string", "pattern": "^AC-[0-9]{4}$"},
            "include_history": {"type": "boolean"},
        },
    }
    arguments = ArgumentExtractor().extract(request_text, schema).arguments
    assert arguments.get("include_history") == history


@pytest.mark.parametrize(
    ("request_text", "itemised"),
    [
        ("send me the breakdown of invoice 7781", True),
        ("total of invoice 7781 only, no breakdown", False),
        ("what's the total on acc no 7781?", None),  # "no" of "acc no" is a number's
    ],
)
def test_an_itemised_flag_is_set_by_a_breakdown_and_no_number_unsets_it(
    request_text: str, itemised: bool | None
) -> None:
    schema = {"type": "object", "properties": {"include_itemised": {"type": "boolean"}}}
    arguments = ArgumentExtractor().extract(request_text, schema).arguments
    assert arguments.get("include_itemised") == itemised
