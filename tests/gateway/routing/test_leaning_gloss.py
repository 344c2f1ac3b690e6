"""A Chinese request's leaning reading (``gloss.gloss_toward``): each Chinese word in the
sense the tools described only in English share, used to order those tools and never to
give them confidence."""

from __future__ import annotations

import httpx

from gateway.routing.gloss import catalogue_words, dictionary, gloss, gloss_toward
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("library")


def test_a_word_takes_the_sense_the_catalogue_shares() -> None:
    dictionary()
    query = "读者证2100998877 目前在借的 按借出日期排一下"
    catalogue = catalogue_words("the loans a patron has out: what they borrow, by borrow date")
    assert "borrow" not in gloss(query)  # 借 reads "lend" first
    assert "borrow" in gloss_toward(query, catalogue)


def test_with_no_shared_word_the_reading_is_the_gloss() -> None:
    dictionary()
    query = "明天的大提琴课不上了，帮我取消"
    assert gloss_toward(query, frozenset()) == gloss(query)
    assert gloss_toward(query, catalogue_words("the and for with")) == gloss(query)


async def test_the_leaning_reading_orders_the_english_tools(gateway: httpx.AsyncClient) -> None:
    # The plain gloss ("… at the present time lend by lend date row") reached the
    # borrowing history; "currently borrow" is what the current loans are for.
    body = (await dry_run(gateway, "读者证2100998877 目前在借的 按借出日期排一下", "reader")).json()
    assert body.get("tool_id") == "loans_current", body


async def test_the_leaning_reading_gives_no_confidence(gateway: httpx.AsyncClient) -> None:
    # A request no tool serves is still refused: a reading drawn to the catalogue's
    # words would find some tool's words in anything.
    body = (await dry_run(gateway, "帮我订一张去上海的高铁票", "reader")).json()
    assert body.get("reason") == "no_matching_tool", body
