"""Chinese read in English words (``gloss``): a Chinese request reaches a tool described
only in English, and an English request a tool described only in Chinese."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.extract import ArgumentExtractor
from gateway.routing.gloss import dictionary, every_sense, gloss, segment
from tests.gateway.routing.conftest import dry_run, manifest


def test_words_are_cut_into_the_fewest_pieces() -> None:
    # Greedy matching from the left cuts "一个数据库" as 一 / 个数 / 据 / 库.
    assert segment("一个数据库", dictionary()) == ["一", "个", "数据库"]


def test_a_gloss_is_english_words_and_keeps_what_was_latin() -> None:
    assert gloss("备份 mailer-api 数据库") == "backup mailer-api database"
    # Function words say nothing a tool's description would: 的, 一下, 帮, 我 go.
    assert gloss("帮我查一下的数据库") == gloss("查数据库")
    assert gloss("no Chinese here") == "no Chinese here"
    assert gloss("备份 mailer-api", latin=False) == "backup"
    assert gloss("mailer-api", latin=False) == ""


def test_a_word_with_a_software_sense_reads_in_it_too() -> None:
    # CC-CEDICT's first senses are everyday ones; tools are software.
    words = dictionary()
    assert words["实例"].split()[-1] == "instance"  # first "actual example"
    assert words["日志"] == "journal log"
    assert words["运行"].endswith(" run")  # first "move along one's course"
    assert words["标签"].startswith("label")  # the everyday sense stays first ("tab")
    assert "instance" in gloss("缩容到 3 个实例")


def test_a_headword_with_several_readings_reads_in_its_common_one() -> None:
    # 结果 jiē guǒ "to bear fruit" comes first in the file; jié guǒ "outcome" is common.
    assert dictionary()["结果"] == "outcome"
    assert dictionary()["大夫"] == "doctor"  # not dà fū "senior official"


def test_a_number_and_a_date_read_as_a_request_means_them() -> None:
    # 号 alone is háo "roar" first in the file; in 会员号 and 订单号 it is a number.
    assert "number" in gloss("会员号 MB-442018").split()
    assert "roar" not in gloss("订单号 TE3W9Z")
    # a date written the Chinese way is digits, not "year moon sun"
    assert gloss("2025年7月3号入住") == "2025-07-03 check in"
    assert "07-05" in gloss("7月5日下午")


def test_a_long_text_is_glossed_up_to_a_bound() -> None:
    assert len(gloss("数据库" * 100_000)) < 50_000


APP = {"type": "string", "description": "the app, e.g. mailer-api"}
CATALOGUE = [
    manifest(
        "app_restart", "POST", "Restart every instance of an app, one at a time.", {"app": APP}
    ),
    manifest(
        "app_logs",
        "GET",
        "Search an app's log lines for a phrase.",
        {"app": APP, "query": {"type": "string"}},
    ),
    manifest("invoice_pay", "POST", "Pay a supplier invoice from the company account.", {}),
    manifest(
        "ticket_priority",
        "PATCH",
        "Changes the priority of an existing helpdesk ticket (escalate or downgrade).",
        {
            "ticket_id": {"type": "string", "description": "ticket number, for example INC0012345"},
            "priority": {"type": "string", "enum": ["P1", "P2", "P3"]},
        },
    ),
    manifest(
        "duty_roster",
        "GET",
        "查询某个团队今天的值班人员和联系电话。",
        {"team": {"type": "string", "description": "团队，例如 sre"}},
        name="值班查询",
    ),
    manifest("meal_order", "POST", "给公司员工预订午餐外卖，按人数下单。", {}, name="订午餐"),
]


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("重启 billing-worker 服务", "app_restart"),
        ("帮我重启一下 billing-worker", "app_restart"),
        ("在 billing-worker 的日志里搜 timeout", "app_logs"),
    ],
)
async def test_a_chinese_request_reaches_a_tool_described_in_english(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    # Refused before: no word of the request was in the tool's text, and the embedder
    # does not read Chinese.
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == tool_id
    assert response.json()["arguments"]["app"] == "billing-worker"


async def test_an_english_request_reaches_a_tool_described_in_chinese(
    gateway: httpx.AsyncClient,
) -> None:
    response = await dry_run(gateway, "who is on duty today in Platform, and their phone?", "u1")
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == "duty_roster"
    assert response.json()["arguments"] == {"team": "Platform"}


@pytest.mark.parametrize("query", ["今天天气怎么样", "写一首关于春天的诗"])
async def test_what_no_tool_does_is_still_refused(gateway: httpx.AsyncClient, query: str) -> None:
    response = await dry_run(gateway, query, "u1")
    assert response.status_code == 404, response.text


async def test_an_order_is_held_to_its_english_reading(gateway: httpx.AsyncClient) -> None:
    # "close work order": the priority change does not close tickets, in either language.
    response = await dry_run(gateway, "关闭工单 INC0012345", "u1")
    assert response.status_code == 404, response.text
    response = await dry_run(gateway, "把工单 INC0012345 的优先级改成 P1", "u1")
    assert response.json()["tool_id"] == "ticket_priority", response.text


def test_every_sense_holds_the_readings_given_here() -> None:
    """A reading this module gives a word (河滨 "riverside", where the dictionary has only
    "brook") is one of its senses too: an enum option ``Riverside`` is named by 河滨店."""
    dictionary()
    assert "riverside" in every_sense("在河滨店租一个储物柜").split()
    assert "brook" in every_sense("在河滨店").split()  # the dictionary's senses stay
    club = {"type": "string", "enum": ["Downtown", "Riverside", "Northgate", "Harbor Point"]}
    schema = {"type": "object", "properties": {"club": club}}
    arguments = ArgumentExtractor().extract("帮我在河滨店租一个大号储物柜", schema).arguments
    assert arguments == {"club": "Riverside"}
