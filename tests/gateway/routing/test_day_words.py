"""A day named in Chinese (今天, 下周三, 上个月) is a value, as a date's digits are: it says
when, not what. A Chinese request's confidence is how much of it a tool's text explains
(``BM25Index.coverage``), so a day word shared with a tool ("今天谁坐诊", a roster's alias)
made "今天股市怎么样" (how is the stock market today) look explained (tests/data/clinic)."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.lexical import BM25Index
from gateway.routing.text import without_day_words
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("clinic")


def test_day_words_are_blanked_and_other_words_kept() -> None:
    assert without_day_words("今天股市怎么样").strip() == "股市怎么样"
    assert without_day_words("下个月就搬走，上周三来过").split() == ["就搬走，", "来过"]
    # a time of day can be what a tool is about (a roster's 上午/下午 shifts): kept
    assert without_day_words("眼科下午有大夫吗") == "眼科下午有大夫吗"


def test_a_shared_day_word_explains_nothing() -> None:
    index = BM25Index(["今天谁坐诊 出诊安排", "股票行情 股市 指数"])
    covered = index.coverage("今天股市怎么样")
    assert covered[0] == 0.0
    assert covered[1] > 0.0


@pytest.mark.parametrize("query", ["今天股市怎么样", "今天天气怎么样"])
async def test_a_request_sharing_only_a_day_is_refused(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 404, response.text
    assert response.json()["reason"] == "no_matching_tool"


@pytest.mark.parametrize("query", ["今天谁坐诊", "明天上午儿科谁出诊", "眼科下午有大夫吗"])
async def test_the_roster_is_still_asked_about_a_day(
    gateway: httpx.AsyncClient, query: str
) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.json().get("tool_id") == "doctor_schedule", response.text
