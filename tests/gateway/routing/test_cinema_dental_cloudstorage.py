"""Arguments and routes found by the cinema, dental and cloud-storage sets
(``tests/data/cinema``, ``dental``, ``cloudstorage``, written blind to the router):

- a list of objects keyed by an email (invitees ``{email, role}``) takes one item per
  address written, each with the option the request names for them all;
- an object of counts by kind (tickets ``{adult, child, senior}``) takes each count
  written before its noun, in Chinese through the gloss (四张学生票);
- of two options written, the one the request turns to ("改成微信") is meant;
- a label's text starts after its colon (留言写：…);
- a Chinese sentence that sends a request to another tool by its id ("请用
  appointment_reschedule"), or to other people ("需联系活动组"), is not the tool's;
- an undone action names no action asked (撤销删除 restores; 取消预约 books nothing);
- a sum put on a card tops it up ("add ¥300 to gift card …"); what is rolled back is
  reverted, and an action a sentence leaves to another place ("is done in the web app")
  is disclaimed;
- a length in one unit is no count of another (提前3天 of ``interval_months``), 4个月一次
  is once in four months, and a negated option (不提醒) is named only by a negation;
- an option is named by another word derived from its root ("projector" for
  ``projection``);
- a title in 《》 or a capitalised run goes to a parameter named for a work (``film``),
  and a month or a day shortened ("Dec") is no place.
"""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import vocabulary
from gateway.routing.text import negative_sentences
from tests.gateway.routing.conftest import blind_set, dry_run, extracted, manifest_of, schema_of

PICKED = {
    "cinema": {"booking_cancel", "booking_change", "booking_lookup", "giftcard_balance"}
    | {"giftcard_reload"},
    "dental": {"appt_cancel", "appointment_reschedule", "appt_lookup", "book_visit"},
    "cloudstorage": {"trash_restore", "file_trash", "file_versions", "activity_log"},
}
CATALOGUE = [m for name, ids in PICKED.items() for m in blind_set(name) if m["tool_id"] in ids]


@pytest.mark.parametrize(
    ("query", "invitees"),
    [
        (
            "Invite priya.n@brightpath.co and tom.h@brightpath.co to fd_17QX5A, view only for both",
            [
                {"email": "priya.n@brightpath.co", "role": "仅查看"},
                {"email": "tom.h@brightpath.co", "role": "仅查看"},
            ],
        ),
        (
            "add jake@brightpath.co to folder fd_93KD02 as an editor",
            [{"email": "jake@brightpath.co", "role": "可编辑"}],
        ),
        (
            "邀请 wang.lei@hexa.cn 进 fd_93KD02 这个文件夹，给他编辑权限",
            [{"email": "wang.lei@hexa.cn", "role": "可编辑"}],
        ),
    ],
)
def test_a_list_keyed_by_email_takes_an_item_per_address(query: str, invitees: list) -> None:
    found = extracted(query, schema_of("cloudstorage", "folder_invite"))
    assert found["invitees"] == invitees
    assert "message" not in found  # an invitee's address is no message


def test_a_keyed_list_needs_its_required_option() -> None:
    # no role named and none by default: the item cannot be made, so the list is missing
    found = extracted(
        "share fd_21HOME with mei.zhou@163.com", schema_of("cloudstorage", "folder_invite")
    )
    assert "invitees" not in found


def test_a_label_text_starts_after_its_colon() -> None:
    query = "请邀请 sophie.li@gmail.com 一起编辑文件夹 fd_08ZZP3，留言写：年会照片都传这里"
    assert (
        extracted(query, schema_of("cloudstorage", "folder_invite"))["message"]
        == "年会照片都传这里"
    )


@pytest.mark.parametrize(
    ("query", "tickets"),
    [
        (
            "my grandparents are coming along so I need 2 senior tix + 1 adult for ST6600415",
            {"senior": 2, "adult": 1},
        ),
        ("ST2288710 这场买四张学生票", {"student": 4}),
        ("two adults and one child for ST1234567", {"adult": 2, "child": 1}),
        ("ST1234567 两张成人票一张儿童票", {"adult": 2, "child": 1}),
    ],
)
def test_counts_by_kind_are_read_before_their_nouns(query: str, tickets: dict) -> None:
    assert extracted(query, schema_of("cinema", "tickets_book"))["tickets"] == tickets


def test_a_count_out_of_bounds_reads_no_counts() -> None:
    found = extracted("40 adults for ST1234567", schema_of("cinema", "tickets_book"))
    assert found.get("tickets") != {"adult": 40}


@pytest.mark.parametrize(
    ("query", "channel"),
    [
        ("P0041877 别再打电话提醒了，改成微信", "微信"),
        ("switch P0041877 from sms to email", "电子邮件"),
        ("P0041877 的提醒用电话", "电话"),
    ],
)
def test_of_two_options_the_one_turned_to_is_meant(query: str, channel: str) -> None:
    assert extracted(query, schema_of("dental", "recall_reminder_update"))["channel"] == channel


def test_a_chinese_sentence_sending_to_a_tool_by_id_is_not_the_tools() -> None:
    cancel = manifest_of("dental", "appt_cancel")["description"]
    assert any("appointment_reschedule" in s for s in negative_sentences(cancel))
    plan = manifest_of("cloudstorage", "plan_change")["description"]
    assert "查账单请用 invoice_list。" in negative_sentences(plan)


def test_a_request_left_to_other_people_is_not_the_tools() -> None:
    hire = manifest_of("cinema", "private_hire_request")
    assert "修改或撤销申请需联系活动组。" in negative_sentences(hire["description"])
    assert "update" not in (vocabulary.offered_actions(hire) or frozenset())


def test_an_undone_action_is_no_action_asked() -> None:
    restore = manifest_of("cloudstorage", "trash_restore")  # aliases: 撤销删除; 不能删除文件
    assert "delete" in vocabulary.disclaimed_actions(restore)
    assert vocabulary.requested_actions("帮我取消预约 AP-385512") == frozenset({"cancel"})


@pytest.mark.parametrize(
    ("query", "tops_up"),
    [
        ("I want to put 500 more on my gift card 6035771200557310", True),
        ("Please add ¥300 to gift card 6035771200991845, I'll pay by WeChat", True),
        ("add 2 seats to my booking", False),
        ("put 3 more on the order", False),
    ],
)
def test_a_sum_put_on_a_card_tops_it_up(query: str, tops_up: bool) -> None:
    assert ("pay" in vocabulary.requested_actions(query)) is tops_up


def test_an_action_done_elsewhere_is_disclaimed() -> None:
    versions = manifest_of("cloudstorage", "file_versions")  # "… is done in the web app"
    assert "rollback" in vocabulary.disclaimed_actions(versions)
    status = manifest_of("cinema", "private_hire_status")  # "… is done by the events team"
    assert {"update", "withdraw"} <= vocabulary.disclaimed_actions(status)
    assert vocabulary.requested_actions("roll F3N8Q2W7ZP back to version 4 please") == {"rollback"}


@pytest.mark.parametrize(
    ("query", "wanted", "absent"),
    [
        ("P1187642 复诊提醒改成4个月一次", {"interval_months": 4}, "lead_days"),
        ("P1187642 提前3天提醒", {"lead_days": 3}, "interval_months"),
        ("P1187642 remind me every 4 months", {"interval_months": 4}, "channel"),
    ],
)
def test_a_length_goes_to_the_count_of_its_unit(query: str, wanted: dict, absent: str) -> None:
    # 一次 is how often, no count of days; three days are no count of months; and a
    # request that negates nothing names no 不提醒
    found = extracted(query, schema_of("dental", "recall_reminder_update"))
    assert found.items() >= wanted.items()
    assert absent not in found


@pytest.mark.parametrize(
    ("query", "category"),
    [
        ("Screen 4 at SH03 - projector lamp died mid-film at 19:20 today, sev 4", "projection"),
        ("popcorn spilled all over row D in screen 7, needs a cleaner, sev 2", "cleaning"),
    ],
)
def test_an_option_is_named_by_a_word_of_its_root(query: str, category: str) -> None:
    assert extracted(query, schema_of("cinema", "incident_report"))["category"] == category


def test_a_bare_root_names_no_derived_option() -> None:
    schema = {
        "type": "object",
        "properties": {"stage": {"type": "string", "enum": ["production", "design"]}},
    }
    assert "stage" not in extracted("the product page is broken", schema)


def test_a_length_the_parameter_cannot_take_gives_way_to_the_next() -> None:
    # "30yr" is no lock of 30, 45, 60 or 90 days; six months no three days' notice
    lock = extracted(
        "VA 30yr lock for APP-63390 please, ninety days since it's new construction",
        schema_of("mortgage", "rate_lock_create"),
    )
    assert lock["lockPeriodDays"] == 90
    found = extracted(
        "提醒间隔改成每六个月一次，提前三天提醒 P2210458",
        schema_of("dental", "recall_reminder_update"),
    )
    assert found["interval_months"] == 6
    assert found["lead_days"] == 3


def test_a_sum_in_words_put_on_an_account_pays_it() -> None:
    assert "pay" in vocabulary.requested_actions("put two hundred and fifty on my account. M41177")
    assert "pay" not in vocabulary.requested_actions("put one more on the list")


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("换个时间吧，APT73302291 周四改成下午5点", "appointment_reschedule"),  # 请用 <id>
        ("把 F8W3E5R2TQ 删掉", "file_trash"),  # the restore's 撤销删除 deletes nothing
        ("取消预订 BK-H4J6K8", "booking_cancel"),  # 取消预订 books nothing
        ("I want to put 500 more on my gift card 6035771200557310", "giftcard_reload"),
        ("roll F3N8Q2W7ZP back to version 4 please", None),  # "… is done in the web app"
    ],
)
async def test_cinema_dental_and_drive_routes(
    gateway: httpx.AsyncClient, query: str, tool_id: str | None
) -> None:
    body = (await dry_run(gateway, query, "patron")).json()
    assert body.get("tool_id") == tool_id, body


@pytest.mark.parametrize(
    ("query", "wanted", "absent"),
    [
        ("Paddington times for Dec 19 pls", {"date": "2026-12-19"}, "cinema"),  # no "Dec"
        (
            "明天环球港有没有《疯狂动物城2》的3D场",
            {"film": "疯狂动物城2", "date": "2026-12-08"},
            None,
        ),
        (
            "When is Dune Messiah showing on Saturday at Westgate?",
            {"film": "Dune Messiah", "cinema": "Westgate"},
            None,
        ),
        ("any 4dx sessions of the new Spider-Man on thursday?", {"film": "Spider-Man"}, None),
    ],
)
def test_a_work_takes_its_title_and_a_place_takes_none(
    query: str, wanted: dict, absent: str | None
) -> None:
    found = extracted(query, schema_of("cinema", "showtimes_search"))
    assert found.items() >= wanted.items()
    assert found.get("cinema") != "疯狂动物城2"
    if absent is not None:
        assert absent not in found


def test_a_bracketed_title_is_no_place_in_chinese_either() -> None:
    query = (
        "公司年会想包场看《阿凡达3》，120人左右，12月30日晚上7点半，环球港，联系人王磊 13900001111"
    )
    found = extracted(query, schema_of("cinema", "private_hire_request"))
    assert found["film"] == "阿凡达3"
    assert found.get("cinema") != "阿凡达3"
