"""A Chinese name is read where the request gives it, and a question is no name.

Found by the ticketing set (``tests/data/ticketing``), on a tool that changes the name on
a ticket (``new_holder_name``, "新的观演人姓名"):

- "票面名字能改吗？…他叫刘洋" gave the name "能改吗": the label 名字 was read as
  introducing a value. A question or an act after a label ("名字能改吗", "名字写错了")
  is no value of it; the name after 叫 is.
- A name after 改成, 换成 or 应该是 ("改成陈思远", "应该是张伟，不是张玮") was not read.
"""

from __future__ import annotations

from typing import Any

from gateway.routing.extract import ArgumentExtractor

extractor = ArgumentExtractor()

HOLDER = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^TK-\\d{4}-\\d{6}$", "description": "订单号。"},
        "ticket_no": {"type": "integer", "minimum": 1, "description": "订单中的第几张票。"},
        "new_holder_name": {"type": "string", "description": "新的观演人姓名，需与证件一致。"},
    },
    "required": ["order_id", "new_holder_name"],
}


def name_in(query: str) -> Any:
    return extractor.extract(query, HOLDER).arguments.get("new_holder_name")


def test_a_question_after_the_label_is_no_name() -> None:
    assert name_in("票面名字能改吗？朋友替我去 TK-2026-295518，他叫刘洋") == "刘洋"
    assert name_in("名字写错了，TK-2026-295518") is None


def test_the_name_a_change_gives() -> None:
    assert name_in("TK-2026-173306 第1张票换人去看，改成陈思远") == "陈思远"
    assert name_in("订单 TK-2026-037785 观演人应该是张伟，不是张玮") == "张伟"
    assert name_in("名字是王芳，订单TK-2026-000111") == "王芳"
