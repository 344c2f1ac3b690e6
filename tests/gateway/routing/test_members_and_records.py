"""Requests from two catalogues written blind to the router (tests/data/saasadmin and
tests/data/hrpayroll), on what they taught:

- a parameter that takes an email address gets the whole address: its example
  ("例如 li.wei@acme.com") has the shape of "wang.fang" too, which is not the address;
  a ``user`` with no description takes the address that names the user;
- a tool whose description opens by logging or filing a record ("Log overtime hours.")
  makes one, so "add 4 hrs overtime" is for it, and 登记 and 录入 are Chinese for it;
- disabling a key revokes it; "kick out" and "offboard" remove; 吊销 and 注销 cancel, and
  吊销 reads "revoke" in English (its dictionary sense, "suspend", would hold the
  English-only revocation tool to pausing);
- an order in one language for the one writer in the other that takes its identifier
  and does its verb: that writer is vouched for ("ak_c0ffee01 泄露了，赶紧吊销！").
"""

from __future__ import annotations

from datetime import date

import httpx
import pytest

from gateway.routing import intent, vocabulary
from gateway.routing.extract import ArgumentExtractor
from gateway.routing.gloss import gloss
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("saasadmin") + blind_set("hrpayroll")
TOOLS = {m["tool_id"]: m for m in CATALOGUE}
extractor = ArgumentExtractor()


@pytest.mark.parametrize(
    ("query", "email"),
    [
        ("把 wang.fang@acme.cn 改成管理员", "wang.fang@acme.cn"),
        ("zhou@acme.cn 升成管理员", "zhou@acme.cn"),
    ],
)
def test_an_email_example_takes_the_whole_address(query: str, email: str) -> None:
    schema = TOOLS["change_member_role"]["input_schema"]
    assert extractor.extract(query, schema).arguments["member_email"] == email


def test_a_bare_user_parameter_takes_the_address_that_names_the_user() -> None:
    schema = TOOLS["remove_member"]["input_schema"]
    query = "pls remove mike@acme.com and hand his files over to sara@acme.com"
    assert extractor.extract(query, schema).arguments == {
        "user": "mike@acme.com",
        "transfer_content_to": "sara@acme.com",
    }


def test_a_member_id_with_an_example_of_its_own_takes_no_address() -> None:
    schema = {
        "type": "object",
        "properties": {
            "member_id": {"type": "string", "description": "Rewards member ID, e.g. LM-0048213"},
            "email": {"type": "string", "format": "email"},
        },
    }
    query = "Can you check my rewards points? I signed up with jen.okafor@gmail.com"
    assert extractor.extract(query, schema).arguments == {"email": "jen.okafor@gmail.com"}


def test_a_description_that_opens_by_logging_makes_records() -> None:
    words = intent.own_words(TOOLS["log_overtime"])
    assert intent.does(words, "add", strict=True)
    assert not intent.does(intent.own_words(TOOLS["query_audit_log"]), "add", strict=True)


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("登记加班：2025-04-12，5小时", "create"),
        ("录入一个潜在客户", "create"),
        ("disable api key ak_00be7a41", "cancel"),
        ("Offboard greg@acme.com", "delete"),
        ("吊销 API key ak_abcdef12", "cancel"),
        ("帮我把这个号码注销掉，以后不用了", "cancel"),
    ],
)
def test_the_action_words_learned(text: str, action: str) -> None:
    assert action in vocabulary.requested_actions(text)


def test_revoking_reads_revoke_in_english() -> None:
    assert gloss("吊销 API key ak_abcdef12") == "revoke API key ak_abcdef12"


def test_kick_out_is_a_removal() -> None:
    assert intent.order_verb("Kick out jdoe@acme.com, he left") == "remove"
    assert intent.order_verb("kick the build agent") == "kick"


@pytest.mark.parametrize(
    ("query", "tool_id", "arguments"),
    [
        (
            "add 4 hrs overtime yesterday, charge it to ALPHA-7",
            "log_overtime",
            {"hours": 4.0, "project_code": "ALPHA-7"},
        ),
        ("disable api key ak_00be7a41, nobody uses it anymore", "revoke_api_key", {}),
        ("吊销 API key ak_abcdef12", "revoke_api_key", {"key_id": "ak_abcdef12"}),
        ("ak_c0ffee01 泄露了，赶紧吊销！", "revoke_api_key", {"key_id": "ak_c0ffee01"}),
        (
            "pls remove mike@acme.com and hand his files over to sara@acme.com",
            "remove_member",
            {"user": "mike@acme.com"},
        ),
    ],
)
async def test_the_requests_reach_their_tools(
    gateway: httpx.AsyncClient, query: str, tool_id: str, arguments: dict[str, object]
) -> None:
    body = (await dry_run(gateway, query, "member")).json()
    assert body.get("tool_id") == tool_id, body
    assert arguments.items() <= body["arguments"].items(), body


def test_a_latin_option_written_against_chinese_is_named() -> None:
    """Chinese puts no space after Latin letters: "1042-S表格" writes the option 1042-S."""
    schema = TOOLS["get_tax_form"]["input_schema"]
    assert extractor.extract("我需要2023年度的1042-S表格报税", schema).arguments == {
        "form_type": "1042-S",
        "tax_year": 2023,
    }


@pytest.mark.parametrize(
    "query",
    [
        "off sick 2025-02-17, just the one day. cant come in",
        "帮我请个病假，2025-03-03 一天",
        "could I take a half day of annual leave on 2025-06-20?",
    ],
)
def test_a_one_day_leave_ends_the_day_it_starts(query: str) -> None:
    arguments = extractor.extract(query, TOOLS["submit_leave_request"]["input_schema"]).arguments
    assert arguments["end_date"] == arguments["start_date"]


def test_a_range_without_its_end_is_left_missing() -> None:
    schema = TOOLS["submit_leave_request"]["input_schema"]
    extraction = extractor.extract("annual leave from 2025-03-10", schema)
    assert "end_date" not in extraction.arguments
    assert "end_date" in extraction.missing


def test_a_month_written_out_wins_over_this_month() -> None:
    schema = TOOLS["check_salary_payment_status"]["input_schema"]
    assert extractor.extract("这个月工资发了没？2025-05", schema).arguments["month"] == "2025-05"
    last = ArgumentExtractor(today=lambda: date(2026, 12, 2))
    assert last.extract("上个月的工资发了吗", schema).arguments["month"] == "2026-11"


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("can CX6868686868 come on 2025-04-09 instead? I'm out all day on the 8th", "change"),
        ("guest on RSV67381920 wants to come in next Fri instead of Thursday", "change"),
        ("please cancel PNR W2KD9S and give me miles instead of cash back", None),
        ("can CX6868686868 come on 2025-04-09?", None),
    ],
)
def test_something_else_instead_is_a_change(text: str, verb: str | None) -> None:
    assert intent.changes_instead(text) == verb


async def test_a_role_instead_of_another_reaches_the_role_change(
    gateway: httpx.AsyncClient,
) -> None:
    query = "can u make anna@acme.com a normal member instead of admin"
    body = (await dry_run(gateway, query, "member")).json()
    assert body.get("tool_id") == "change_member_role", body
