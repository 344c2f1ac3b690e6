"""Questions and orders (``routing.intent``). A request that asks to read is never sent to
a tool that writes: "has CT-2026-0107 been signed yet?" is closer, for the embedder, to
the tool that signs contracts (its example "countersign contract CT-2026-0107…" differs
in a word or two) than to the one that shows them. An order is never sent to a tool that
only reads, nor to a writer whose words do not name its verb: "cancel contract
CT-2026-0042" signed it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from gateway.routing.cache import abstract, scope_of
from gateway.routing.choose import choose
from gateway.routing.index import Candidate
from gateway.routing.intent import (
    asks_to_read,
    later_order_verb,
    order_verb,
    own_words,
    writes,
)
from gateway.routing.intent import does as does_words
from gateway.routing.service import Router
from reach_common.auth.caller import Caller
from reach_common.embeddings import Embedder
from tests.conftest import Backends
from tests.gateway.routing.conftest import catalogue_app, dry_run, registered

ID = {"type": "string", "pattern": "^CT-\\d{4}-\\d{4}$"}


def tool(tool_id: str, method: str, description: str, **extra: Any) -> dict[str, Any]:
    properties = extra.pop("properties", {"contract_id": ID})
    return {
        "tool_id": tool_id,
        "name": tool_id.replace("_", " "),
        "description": description,
        "input_schema": {
            "type": "object",
            "properties": properties,
            "required": list(properties)[:1],
            "additionalProperties": False,
        },
        "endpoint": {"type": "http", "method": method, "url": f"http://127.0.0.1:9/{tool_id}"},
        "permission": "public",
        **extra,
    }


CONTRACT_GET = tool(
    "contract_get",
    "GET",
    "Shows one customer contract: parties, value, start and end dates, and whether it "
    "has been signed.",
    aliases=["contract details", "show contract"],
)
CONTRACT_SIGN = tool(
    "contract_sign",
    "POST",
    "Signs a customer contract on behalf of the company, with the signing date.",
    examples=[
        "sign contract CT-2026-0042 today",
        "countersign contract CT-2026-0107 on 2026-12-10",
    ],
    properties={"contract_id": ID, "sign_date": {"type": "string", "format": "date"}},
)
NOTES_SEARCH = tool(
    "notes_search",
    "POST",
    "Searches the sales team's meeting notes for a phrase and returns matching passages.",
    properties={"query": {"type": "string"}},
)


@pytest.mark.parametrize(
    ("text", "reads"),
    [
        ("show me contract CT-2026-0042", True),
        ("has CT-2026-0107 been signed yet?", True),
        ("hey, can you check what's going on with shipment YT2026113000123", True),
        ("what's the due date on INV-2026-00107?", True),
        ("do I have any leave left", True),
        ("合同 CT-2026-0042 的金额是多少", True),
        ("麻烦看下 INV-2026-00808 这张单子付没付", True),
        # Orders, however politely put, and questions that ask for a write action.
        ("sign contract CT-2026-0042", False),
        ("can you countersign CT-2026-0107 tomorrow", False),
        ("Can I order 5 units of SKU2024001?", False),
        ("could you cancel order SO20261130004?", False),
        ("do it now", False),
        ("能帮我下个单吗", False),
        ("帮我下个寄件单，3 kg，寄到杭州西湖区文三路 90 号", False),
        # An action word used as a noun asks for no action: 预约 is the appointment here.
        ("我的预约是几点来着？编号APT0061522", True),
        ("预约号APT0305519是哪天", True),
        ("能帮我预约明天上午吗", False),
        # A bare question, or a noun of reading first, with no verb of writing.
        ("status of DL55012983", True),
        ("bal for 48820175?", True),
        ("eta on my courier? he left 15 min ago", True),
        ("sp-44120 qty?", True),
        # A question that asks for something done, in its own sentence, is no question.
        ("Could I get two extra pillows in room 1512 please?", False),
        ("dishwasher wont drain, BIR-1502. could someone come on 2025-06-10?", False),
        ("move it to friday?", False),
        ("cancel it?", False),
        # A yes-or-no question, unless it asks for something done.
        ("inventory-api 是不是挂了", True),
        ("保单能过户给我女儿吗", True),
        ("新房入住前要验房，MPL-1204，2025-07-01 下午可以吗", False),
        ("能帮我延长一下保管期吗", False),
        # A reading verb may open a later clause, after what the user was told.
        ("供应商说发票还没付，帮我看看 INV-2026-00077 的状态", True),
        ("之前报修的路灯到现在还没修，帮我查下处理进度", True),
        ("发票开错了，帮我作废掉，再看看能不能重开", False),
        # Checking in writes; checking in on something looks at it.
        ("check me in for tomorrow, booking E5TY7H, last name Smith", False),
        ("check-in for BA117 please", False),
        ("check in on order SO20261130004", True),
    ],
)
def test_a_request_asks_to_read_when_it_questions_or_begins_with_reading(
    text: str, reads: bool
) -> None:
    assert asks_to_read(text) is reads


def test_a_tool_writes_unless_its_method_or_its_words_say_it_reads() -> None:
    assert writes(CONTRACT_SIGN, reads_only=False)
    assert not writes(CONTRACT_SIGN, reads_only=True)  # declared idempotent: trusted
    # A search behind a POST: its name, or its description's first word, says it reads.
    assert not writes(NOTES_SEARCH, reads_only=False)
    assert not writes(tool("x", "POST", "Searches tickets."), reads_only=False)
    assert not writes(tool("get_weather", "POST", "Weather now."), reads_only=False)
    # in Chinese, its name or its description's first clause (found by the grocery and
    # fleet sets: an idempotent POST is held to a question now, so a reader must be known)
    clips = {
        **tool("camera_clips", "POST", "按日期和时间段查询某个摄像头的云端录像片段。"),
        "name": "x",
    }
    assert not writes(clips, reads_only=False)
    named = {**tool("camera_clips", "POST", "返回片段列表。"), "name": "摄像头录像查询"}
    assert not writes(named, reads_only=False)
    assert not writes(
        tool("session_receipt", "POST", "查看某一次充电的费用明细。"), reads_only=False
    )
    assert writes(tool("update_basket", "PATCH", "修改每周定期购物篮，不能查询订单状态。"), False)


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("submit annual leave for E20931 from 2027-01-10 to 2027-01-14", "submit"),
        ("can you close ticket INC0012345", "close"),
        ("I want to cancel my leave request for next week", "cancel"),
        ("open a ticket: outlook crashes every time I attach a file", "open"),
        ("申请 2027-01-10 到 2027-01-14 的年假", "申请"),
        ("帮我取消明天的会议室预订", "取消"),
        # 把 puts the object first: the action word follows it.
        ("把 INC0055555 的优先级调成 P2", "调成"),
        ("帮我把 SKU2024002 的价格改成 199", "改成"),
        ("把 RF87654321 这笔退款撤销掉", "撤销"),  # the object names a refund
        ("客户不想续了，把 ACC-23790 的订阅取消掉", "取消"),  # 把 begins the second clause
        ("restock SKU2024555 with 200 units", "restock"),
        ("mark SO20250215033 as delivered", "mark"),
        ("SO20261125001 取消", "取消"),  # the object first, no 把
        # Changing a running system: no lookup of its state does that.
        ("trigger a backup of pg-main now", "trigger"),
        ("please rotate the api key of mailer-api", "rotate"),
        # Moving something in time is rescheduling it; moving stock is not.
        ("switch APT0203390 to the 9th of June 2025, 4:30pm", "reschedule"),
        ("can I move APT0451177 to 2025-03-28 at 11:00?", "reschedule"),
        # the "I" left out ("need to push …") is an order as "I need to push …" is
        ("need to push my appointment back a week", "reschedule"),
        ("push my appointment back a week, APT0918834", "reschedule"),
        ("move 200 units of SKU2024001 from WH01 to WH03", None),
        ("move 1000 USD from 40128876 to 73350219", None),  # to an account, not a day
        ("move my session to 3pm", "reschedule"),
        ("发条提醒到13912345678，预约号APT0637712", "发条提醒"),
        ("提醒病人明天来复诊，APT0840021", "提醒"),
        # Orders no lookup carries out: a reader is not given them, and a writer only if
        # its words name them.
        ("can you waive the late payment fee on my account", "waive"),
        ("I want to appeal my ECON-2010 grade, the marking was unfair", "appeal"),
        ("charge the card on file for whatever she owes", "charge"),
        ("帮我补签一下昨天的考勤", "补签"),
        ("split the folio for RSV11029384 between two cards", "split"),
        ("release LOT-24052210 from quality hold", "release"),
        ("rate yesterday's spin instructor 5 stars", "rate"),
        ("明天想请假一天", None),  # not at the start: no order by its first word
        # Orders in two words, named by their action class.
        ("roll back payments-api in prod, error rate went through the roof", "rollback"),
        ("go back to the previous build of ledger-api, production", "rollback"),
        ("we need to go back to the previous build of ledger-api", "rollback"),
        ("add more pods to orders-svc, we're getting hammered", "scale"),
        ("kick search-indexer, it hung again", "kick"),
        ("sign me up for the Friday yoga class", "enroll"),  # not a signature
        ("end contract CT-2026-0042 early", "end"),
        # Checking in is an order (a booking's reader is not given it); checking in on
        # something reads it.
        ("check me in for tomorrow, booking E5TY7H, last name Smith", "check"),
        ("check in just me, not the others on the booking — UW4P8B, Patel", "check"),
        ("check in on order SO20261130004", None),
        # Not orders: reading first, a verb that also reads, a noun first, a question.
        ("open the October report", None),
        ("show me contract CT-2026-0042", None),
        ("退款单RF87654321查下进度", None),
        ("has CT-2026-0107 been signed yet?", None),
    ],
)
def test_an_order_is_known_by_its_first_verb(text: str, verb: str | None) -> None:
    assert order_verb(text) == verb


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("the customer asked us to stop their subscription after this cycle", "stop"),
        ("Jenny from Northwind wants 150 units of SKU2099003, book it", "book"),
        ("it hangs again, restart it", "restart"),
        # An order by its first verb, a question, no verb of writing: none later.
        ("cancel contract CT-2026-0042", None),
        ("how do I cancel a subscription?", None),
        ("the store's numbers for March, please", None),
    ],
)
def test_an_order_may_stand_later_in_the_request(text: str, verb: str | None) -> None:
    assert later_order_verb(text) == verb


def does(
    manifest: dict[str, Any], verb: str, *, strict: bool = False, reader: bool = False
) -> bool:
    return does_words(own_words(manifest), verb, strict=strict, reader=reader)


def test_a_reader_that_shows_a_state_does_not_do_its_verb() -> None:
    """A subscription lookup listing "status (active, canceled)" named the verb of "cancel
    the subscription for ACC-20118", and took the order from the tool that cancels."""
    lookup = tool(
        "subscription_get",
        "GET",
        "Returns a subscription: plan, seats and status (trialing, active, canceled).",
    )
    assert does(lookup, "cancel")  # a writer's words in any form
    assert not does(lookup, "cancel", strict=True, reader=True)
    assert not does(CONTRACT_GET, "sign", strict=True, reader=True)  # "has been signed"
    refunds = tool("refund_status", "GET", "Shows where a refund is.")
    assert does(refunds, "refund", strict=True, reader=True)  # its subject still counts


def test_a_tool_does_a_verb_its_words_or_their_action_class_name() -> None:
    assert does(CONTRACT_SIGN, "sign")
    assert not does(CONTRACT_SIGN, "cancel")
    deletes = tool("doc_delete", "DELETE", "Deletes a document from the index.")
    assert does(deletes, "purge")  # the class of delete
    # Across languages through the action class (取消: cancel), else taken at its word.
    assert not does(CONTRACT_SIGN, "取消")
    assert does(tool("order_cancel", "POST", "Cancels an order."), "取消")
    assert does(tool("leave_request", "POST", "提交请假申请，需要开始日期和结束日期。"), "submit")
    assert does(CONTRACT_SIGN, "申请")
    # A reader is held to its words ("refund RF… status" names refund_status's subject);
    # one described in Chinese is not taken at its word for an English order.
    refunds = tool("refund_status", "GET", "Shows where a refund is.")
    assert does(refunds, "refund", strict=True)
    leave = tool("leave_balance", "GET", "查询员工剩余假期天数。")
    assert does(leave, "submit")
    assert not does(leave, "submit", strict=True)
    # Operators' verbs have their Chinese words too: a Chinese leave tool does not fire
    # anyone ("fire employee E10482" was taken to it at its word), a restart tool restarts.
    leave_request = tool("leave_request", "POST", "提交请假申请，提交后由直属上级审批。")
    assert not does(leave_request, "fire")
    assert does(tool("service_restart", "POST", "滚动重启服务的全部实例。"), "bounce")
    assert does(tool("release_revert", "POST", "把服务回滚到上一个版本。"), "rollback")
    # What a tool says it cannot do is not what it does.
    lookup = tool("order_query", "GET", "Shows one order. It cannot change or cancel orders.")
    assert not does(lookup, "cancel", strict=True)


def test_a_tool_named_for_an_action_noun_does_its_verb() -> None:
    """Porter's stemmer keeps "payment" whole: "pay my rent with card" lost every candidate
    to the rule, and a tool named "Make a Rent Payment" was refused the order."""
    payer = tool("rent_payment_submit", "POST", "Submits a one-time charge toward a balance.")
    payer["name"] = "Make a Rent Payment"
    assert does(payer, "pay", strict=True)
    assert does(tool("shipment_create", "POST", "Creates a consignment."), "ship", strict=True)
    # Read in the name only: a description names the payments a reader shows too.
    reader = tool("fee_balance", "GET", "Shows fees owed and payments received.")
    assert not does(reader, "pay", strict=True)


def test_moving_renewing_and_dropping_are_actions_in_either_language() -> None:
    """ "Renew book 31002004567812 on card L0099812" went to the loans lookup whose card
    number it named ("renewing is library_renew" had counted as the lookup's own words),
    and "reschedule booking …" to a lookup: each verb now names its action class."""
    assert order_verb("Renew book 31002004567812 on card L0099812") == "renew"
    assert order_verb("reschedule booking 72819304 to 2026-05-01 please") == "reschedule"
    assert order_verb("I want to withdraw from BIO-1100") == "withdraw"
    assert order_verb("drop MATH-1102 for S20218843 please") == "drop"
    loans = tool(
        "library_loans",
        "GET",
        "Lists the items a patron has on loan with due dates. Look-up only; renewing is "
        "library_renew.",
    )
    assert not does(loans, "renew", strict=True)
    assert does(tool("library_renew", "POST", "为已借出的图书办理续借，顺延应还日期。"), "renew")
    moves = tool("stay_change", "POST", "Changes the arrival or departure date of a booking.")
    assert does(moves, "reschedule", strict=True)  # moving a date changes it
    assert does(moves, "改期", strict=True)
    assert does(tool("course_drop", "DELETE", "为学生办理退课。"), "withdraw", strict=True)
    # Withdrawing a request cancels it, and still drops a course.
    cancels = tool("workorder_cancel", "POST", "取消尚未完工的维修工单。")
    assert does(cancels, "withdraw", strict=True)
    assert does(cancels, "撤回", strict=True)
    assert does(cancels, "kill", strict=True)  # "kill the booking RSV06612834"
    # Enrolling is creating a registration; a reminder is sent.
    assert order_verb("帮我选一下 ECON-2010，学号 S20221107") == "选一下"
    assert order_verb("remind mrs wong about tmrw's appt APT0311457") == "remind"
    flags = tool("feature_flag_set", "POST", "Turn a feature flag on or off.")
    assert does(flags, "disable", strict=True)  # turning off is disabling
    assert does(tool("app_restart", "POST", "Restarts a service."), "kick", strict=True)
    enrol = tool("course_enroll", "POST", "Registers a student in a course section.")
    assert does(enrol, "选一下", strict=True)
    assert not does(tool("course_drop", "DELETE", "为学生办理退课。"), "选一下", strict=True)


def candidate(tool_id: str, score: float, confidence: float) -> Candidate:
    return Candidate(tool_id, score, dense=0.0, lexical=0.0, confidence=confidence)


def test_a_writing_tool_is_not_chosen_for_a_request_to_read() -> None:
    candidates = [candidate("contract_sign", 1.0, 0.6), candidate("contract_get", 0.5, 0.35)]
    chosen = choose(
        candidates, threshold=0.3, fits=lambda _: False, misread=lambda t: t == "contract_sign"
    )
    assert chosen.candidate is not None
    assert chosen.candidate.tool_id == "contract_get"
    # With no reader confident enough, nothing is chosen rather than the writer.
    alone = choose(candidates[:1], threshold=0.3, fits=lambda _: False, misread=lambda _: True)
    assert alone.candidate is None


@pytest.fixture(scope="module")
def app(backends: Backends, shop_url: str, embedder: Embedder) -> FastAPI:
    return catalogue_app(backends, shop_url, embedder)


@pytest.fixture(scope="module")
async def gateway(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with registered(app, (CONTRACT_GET, CONTRACT_SIGN, NOTES_SEARCH)) as client:
        yield client


async def routed(gateway: httpx.AsyncClient, query: str) -> httpx.Response:
    return await dry_run(gateway, query, "reader")


@pytest.mark.parametrize(
    "query",
    [
        "cancel contract CT-2026-0042",
        "void contract CT-2026-0042",
        "取消合同 CT-2026-0042",
        "terminate contract CT-2026-0042",
        "end contract CT-2026-0042 early",  # the lookup's "end dates" offer no ending
        "suspend contract CT-2026-0107 until March",
    ],
)
async def test_an_order_no_tool_names_is_refused_not_given_to_the_nearest_writer(
    gateway: httpx.AsyncClient, query: str
) -> None:
    # The English ones went to contract_sign before the rule: a cancel that signed.
    response = await routed(gateway, query)
    assert response.status_code == 404, response.text
    assert response.json()["reason"] == "no_matching_tool"


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        # Each of these went to contract_sign before the rule.
        ("has CT-2026-0107 been signed yet?", "contract_get"),
        ("what's the end date of contract CT-2026-0042?", "contract_get"),
        # Writes still reach the writer; a question to a search behind a POST its search.
        ("sign contract CT-2026-0042", "contract_sign"),
        ("can you countersign CT-2026-0107 tomorrow", "contract_sign"),
        ("what did the team say about the Acme renewal in the meeting notes?", "notes_search"),
    ],
)
async def test_questions_reach_the_reader_and_orders_the_writer(
    gateway: httpx.AsyncClient, query: str, tool_id: str
) -> None:
    response = await routed(gateway, query)
    assert response.status_code == 200, response.text
    assert response.json()["tool_id"] == tool_id


async def test_a_route_cached_before_the_rule_does_not_take_a_question_to_a_writer(
    app: FastAPI, gateway: httpx.AsyncClient
) -> None:
    """Upgrading keeps Redis: a route the old router cached ("has … been signed" →
    contract_sign, confidently) is a hit of the top candidate, and is still not served."""
    router: Router = app.state.runtime.router
    caller = Caller(user_id="reader", via="user_context")
    scope = scope_of(router.registry.revision, router.visible(caller, None))
    query = "has CT-2026-0042 been signed yet?"
    shape_vector = router.embedder.embed_one(abstract(query))
    await router.cache.put(scope, query, shape_vector, "contract_sign", 0.9, "semantic_match")
    assert (await router.cache.get_exact(scope, query)) is not None

    response = await routed(gateway, query)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tool_id"] == "contract_get"
    assert "cached route contract_sign (exact hit) not used" in body["route"]["why"]


def test_extending_renews_and_raising_or_filing_creates() -> None:
    """ "extend my lease one more year" was refused by the renewal tool, and "raise a
    critical maintenance job" by the one that opens work orders: neither tool says the
    verb, but each does its action class."""
    renewal = tool("lease_renewal", "POST", "Requests a renewal of a lease for a new term.")
    assert does(renewal, "extend", strict=True)
    assert order_verb("extend my lease one more year") == "extend"
    opens = tool("job_create", "POST", "Creates a maintenance job for a machine.")
    assert does(opens, "raise", strict=True)
    assert does(tool("claim_new", "POST", "Creates an insurance claim."), "lodge", strict=True)
    assert not does(tool("job_cancel", "POST", "Cancels a maintenance job."), "raise")
