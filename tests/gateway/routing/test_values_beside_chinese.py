"""A phone number, an email address, a link or a commit typed right against Chinese text
is read as itself.

Chinese puts no space between words and values: "他手机号是18600001234",
"邮箱是anna@example.com，谢谢", "链接是https://x.cn/a，谢谢". A Chinese character is a
word character to Python's ``\\w``, so edges written with ``\\w`` saw no edge there: the
phone number was not read (and a transfer's ``quantity`` took it: 18,600,001,234
tickets), the address came back as "邮箱是anna@example.com", and the link ran on into
"，谢谢". Found by the ticketing set (``tests/data/ticketing``).
"""

from __future__ import annotations

from typing import Any

from gateway.routing.extract import ArgumentExtractor

extractor = ArgumentExtractor()

TRANSFER = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^TK-\\d{4}-\\d{6}$"},
        "recipient_email": {"type": "string", "description": "接收人的邮箱地址。"},
        "recipient_phone": {"type": "string", "description": "接收人的手机号码。"},
        "quantity": {"type": "integer", "minimum": 1},
    },
    "required": ["order_id"],
}


def filled(query: str, schema: dict[str, Any]) -> dict[str, Any]:
    return extractor.extract(query, schema).arguments


def one(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {name: spec}, "required": [name]}


def test_a_phone_number_against_chinese_is_the_phone_not_a_count() -> None:
    query = "能不能把订单TK-2026-233580里的票全部转到我老公账号上，他手机号是18600001234"
    assert filled(query, TRANSFER) == {
        "order_id": "TK-2026-233580",
        "recipient_phone": "18600001234",
    }
    assert filled("两张票转给13800138000吧", TRANSFER)["recipient_phone"] == "13800138000"


def test_an_email_address_against_chinese_is_the_address_alone() -> None:
    query = "把TK-2026-233580的票转给我妹妹，邮箱是anna@example.com，谢谢"
    assert filled(query, TRANSFER)["recipient_email"] == "anna@example.com"
    schema = one("email", {"type": "string", "format": "email"})
    assert filled("发到bob.li+tix@mail.example.cn就行", schema) == {
        "email": "bob.li+tix@mail.example.cn"
    }


def test_a_link_ends_where_the_text_around_it_starts() -> None:
    schema = one("url", {"type": "string", "format": "uri"})
    assert filled("链接是https://x.cn/a?b=1，谢谢", schema) == {"url": "https://x.cn/a?b=1"}
    assert filled("check https://example.com/docs/page.", schema) == {
        "url": "https://example.com/docs/page"
    }
    assert filled("the page (https://example.com/a_b) is down", schema) == {
        "url": "https://example.com/a_b"
    }


def test_a_commit_against_chinese_is_read() -> None:
    schema = one("commit", {"type": "string", "description": "Commit SHA, e.g. 9f3c2ab"})
    assert filled("回滚到a1b2c3d这个提交", schema) == {"commit": "a1b2c3d"}


def test_values_with_spaces_around_them_read_as_before() -> None:
    assert filled("transfer 2 tickets on TK-2026-233580 to +44 7700 900123", TRANSFER) == {
        "order_id": "TK-2026-233580",
        "recipient_phone": "+44 7700 900123",
        "quantity": 2,
    }
    assert filled("send them to anna@example.com please", TRANSFER)["recipient_email"] == (
        "anna@example.com"
    )
