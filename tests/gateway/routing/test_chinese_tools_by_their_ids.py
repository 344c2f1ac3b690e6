"""A tool described only in Chinese is read by its English id too, and a Chinese order
that ends by asking to look at something is still an order.

Found by the recruiting set (``tests/data/recruiting``, written blind to the router): its
background-check tool is named 发起背景调查 and described in Chinese, with the id
``background_check_order``. An English request ("run a background check on CAND-20550")
was compared with the description's word-by-word reading and the name's vector, which
the English model cannot read, and went to the profile viewer. The id's words now lead
the reading ("background check order: …") and stand for the name. Across all request
sets this moved top-1 from 2607 to 2655 of 3213 (``docs/architecture.md``, "What the
utility and recruiting sets taught").

"给 CAND-41007 发起背调，查学历和工作履历" begins with an order (发起) and ends with 查; it
read as a question, and the profile viewer, the one reader taking the candidate's id,
was vouched for across languages.
"""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("recruiting")


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("run a background check on CAND-20550", "background_check_order"),
        ("给 CAND-41007 发起背调，查学历和工作履历", "background_check_order"),
        ("open the profile for CAND-30112", "candidate_profile_view"),  # the reader still reads
        ("查一下 CAND-30112 的资料", "candidate_profile_view"),
    ],
)
async def test_a_chinese_tool_is_found_by_its_english_id(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    body = (await dry_run(gateway, query, "recruiter")).json()
    assert body.get("tool_id") == tool_id, body


def test_an_order_before_a_look_is_an_order() -> None:
    from gateway.routing import intent

    assert not intent.asks_to_read("给 CAND-41007 发起背调，查学历和工作履历")
    assert not intent.asks_to_read("发起背调，查学历")
    assert intent.asks_to_read("查一下 CAND-41007")
