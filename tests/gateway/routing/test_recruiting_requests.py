"""Arguments of an applicant-tracking system's requests, found by the recruiting set
(``tests/data/recruiting``, written blind to the router): a list of skills, a job's title,
a rating out of five or in stars, an identifier's letters that begin no option, a list
of Chinese options in the order written, sums in Chinese numerals, a quoted note, and a
brand's Chinese name for its option.
"""

from __future__ import annotations

from typing import Any

import pytest

from gateway.routing.temporal import cn_number
from tests.gateway.routing.conftest import extracted, object_schema

SEARCH = object_schema(
    {
        "skills": {"type": "array", "items": {"type": "string"}},
        "min_years_experience": {"type": "integer", "minimum": 0, "maximum": 40},
        "location": {"type": "string", "description": "City"},
    }
)


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        (
            "need backend folks w/ Python and Django, 5+ yrs, based in Berlin",
            {"skills": ["Python", "Django"], "min_years_experience": 5, "location": "Berlin"},
        ),
        (
            "any React Native devs in Toronto? at least three years experience",
            {"skills": ["React Native"], "min_years_experience": 3, "location": "Toronto"},
        ),
        ("有没有会 Golang 和 K8s 的", {"skills": ["Golang", "K8s"]}),
        (
            "帮我搜一下上海做 Java 的候选人，至少三年经验",  # (a "City" parameter takes 上海)
            {"skills": ["Java"], "min_years_experience": 3, "location": "上海"},
        ),
    ],
)
def test_a_list_of_skills_takes_what_the_request_names(
    query: str, arguments: dict[str, Any]
) -> None:
    assert extracted(query, SEARCH) == arguments


def test_a_list_of_skills_takes_no_identifier() -> None:
    assert extracted("who of CAND-20931 and JOB-2087 knows Rust", SEARCH) == {"skills": ["Rust"]}


POSTING = object_schema(
    {
        "title": {"type": "string", "description": "职位名称，例如「高级后端工程师」"},
        "employment_type": {"type": "string", "enum": ["full_time", "part_time", "intern"]},
        "location": {"type": "string", "description": "工作城市"},
    },
    ["title"],
)


@pytest.mark.parametrize(
    ("query", "title"),
    [
        (
            "open a req for a full-time Senior Backend Engineer, pay band 150k-190k",
            "Senior Backend Engineer",
        ),
        (
            "publish a part time role called Recruiting Coordinator under HR",
            "Recruiting Coordinator",
        ),
        ("create a contract job: Product Designer, design team, 3 openings", "Product Designer"),
        ("财务部要招两个实习生，职位就叫财务实习生，帮忙挂出去", "财务实习生"),
    ],
)
def test_a_title_that_names_a_thing_takes_its_name(query: str, title: str) -> None:
    assert extracted(query, POSTING)["title"] == title


def test_an_incident_title_is_still_the_request() -> None:
    """A title that is no thing's name ("Short summary") keeps the request's own words."""
    incident = object_schema(
        {"title": {"type": "string", "description": "Short summary"}}, ["title"]
    )
    assert extracted("open an incident: Outlook crashes when I attach a file", incident) == {
        "title": "Outlook crashes when I attach a file"
    }


SCORECARD = object_schema(
    {
        "rating": {"type": "integer", "minimum": 1, "maximum": 5},
        "notes": {"type": "string"},
    }
)


@pytest.mark.parametrize(
    ("query", "rating"),
    [
        ("log a 2/5 no-hire for CAND-58001", 2),
        ("my feedback on cand-33418: five stars, hire her", 5),
        ("CAND-59900的面评 五分 强烈推荐", 5),
        ("4 out of 5 for her", 4),
        ("a 7/10 candidate", None),  # another scale than the schema's
    ],
)
def test_a_rating_out_of_its_scale_or_in_stars(query: str, rating: int | None) -> None:
    assert extracted(query, SCORECARD).get("rating") == rating


def test_a_quoted_note_runs_to_its_closing_quote() -> None:
    query = 'feedback for CAND-10234: rating 4, notes: "solid system design, weak on testing"'
    assert extracted(query, SCORECARD) == {
        "rating": 4,
        "notes": "solid system design, weak on testing",
    }


REJECT = object_schema(
    {
        "reason": {
            "type": "string",
            "enum": ["skills_mismatch", "salary_mismatch", "candidate_withdrew"],
            "description": "原因：skills_mismatch 技能不匹配；salary_mismatch 薪资期望不符；"
            "candidate_withdrew 候选人主动放弃",
        }
    }
)


@pytest.mark.parametrize(
    ("query", "reason"),
    [("CAND-28000 技能不匹配，拒了吧", "skills_mismatch"), ("reject CAND-28000 please", None)],
)
def test_an_identifiers_letters_begin_no_option(query: str, reason: str | None) -> None:
    """ "cand" of CAND-28000 is no shortened ``candidate_withdrew``."""
    assert extracted(query, REJECT).get("reason") == reason


def test_chinese_options_of_a_list_come_in_the_order_written() -> None:
    options = ["学历验证", "工作履历", "犯罪记录", "征信", "职业资格"]
    checks = object_schema(
        {
            "check_items": {
                "type": "array",
                "items": {"type": "string", "enum": options},
                "description": "调查项目，不填则按标准套餐执行",
            }
        }
    )
    assert extracted("给 CAND-41007 发起背调，查学历和工作履历", checks) == {
        "check_items": ["学历验证", "工作履历"]
    }


@pytest.mark.parametrize(
    ("text", "value"),
    [("三十八万", 380000), ("两千五", 2500), ("一万二", 12000), ("三百零五", 305), ("十八", 18)],
)
def test_chinese_numerals_past_a_thousand(text: str, value: int) -> None:
    assert cn_number(text) == value


def test_a_salary_and_a_payment_in_chinese_numerals() -> None:
    offer = object_schema({"base_salary": {"type": "number", "minimum": 0}})
    assert extracted("CAND-80017 的 offer 可以发了 年薪三十八万", offer) == {"base_salary": 380000}
    pay = object_schema(
        {
            "amount": {"type": "number"},
            "method": {"type": "string", "enum": ["card", "wechat_pay", "alipay"]},
        }
    )
    assert extracted("INV-533870 用支付宝付五百块", pay) == {"amount": 500, "method": "alipay"}


def test_a_lone_characters_reading_names_no_option() -> None:
    """高 alone is "high", but 机房温度很高 sets no priority."""
    task = object_schema({"priority": {"type": "string", "enum": ["low", "medium", "high"]}})
    assert extracted("机房温度很高，帮我建个任务", task) == {}


@pytest.mark.parametrize(
    ("query", "enum", "option"),
    [
        ("用微信交 5000 学费", ["pay", "refund"], "pay"),
        ("我家猫最近老是挠耳朵，想约个医生看看", ["dog", "cat", "rabbit"], "cat"),
    ],
)
def test_a_lone_characters_reading_names_an_option_of_what_it_is(
    query: str, enum: list[str], option: str
) -> None:
    """交 "pay" and 猫 "cat" are one character each: their reading names the option."""
    assert extracted(query, object_schema({"choice": {"type": "string", "enum": enum}})) == {
        "choice": option
    }


@pytest.mark.parametrize(
    ("query", "name"),
    [
        ("Groom Rufus please, full haircut", "Rufus"),  # the vet-clinic set's
        ("Cancel Maria Lopez's booking", "Maria Lopez"),
        ("Send Tom Becker the door code", "Tom Becker"),
        ("Mark Johnson called about it", "Mark Johnson"),  # a name that is also a verb
    ],
)
def test_an_order_written_first_is_no_part_of_a_name(query: str, name: str) -> None:
    assert extracted(query, object_schema({"customer_name": {"type": "string"}})) == {
        "customer_name": name
    }
