"""A tool whose description says it does not take an action ("本接口只负责新建预约：不负责查询、
修改或取消已有预约") is not given a request that asks for only that action, however close
its words are: before, "能改到下周三吗" of an earlier pickup went to the pickup *booker*.
Catalogue: tests/data/municipal, written blind to the router."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from gateway.routing import vocabulary
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("municipal")
MANIFESTS = Path(__file__).resolve().parents[2] / "data" / "municipal" / "manifests"


def test_the_actions_a_description_disclaims() -> None:
    booker = json.loads((MANIFESTS / "bulky_item_pickup_book.json").read_text())
    # 只负责新建预约: only new bookings; and 不负责…修改或取消.
    assert {"update", "cancel"} <= vocabulary.disclaimed_actions(booker)
    assert not {"book", "create"} & vocabulary.disclaimed_actions(booker)
    # What its own words offer is never disclaimed: a cancel tool that "cannot change a
    # date" still cancels.
    canceller = {"tool_id": "x_cancel", "description": "Cancels a visit. It cannot change one."}
    assert vocabulary.disclaimed_actions(canceller) == {"update"}
    # "Only adds": every other action; and what the name says it does is never disclaimed.
    adder = {"tool_id": "add_driver", "description": "Only adds: removals go to an agent."}
    assert "delete" in vocabulary.disclaimed_actions(adder)
    booker = {"tool_id": "create_booking", "description": "Only creates a reservation."}
    assert not {"book", "create"} & vocabulary.disclaimed_actions(booker)


async def test_a_change_the_tool_disclaims_is_not_given_to_it(
    gateway: httpx.AsyncClient,
) -> None:
    response = await dry_run(gateway, "上周预约的大件垃圾清运，能改到下周三吗", "municipal")
    assert response.json().get("tool_id") != "bulky_item_pickup_book", response.text


async def test_a_new_pickup_still_reaches_it(gateway: httpx.AsyncClient) -> None:
    body = (await dry_run(gateway, "大件垃圾预约 床垫两张 滨江花园5栋1单元", "municipal")).json()
    assert body.get("tool_id") == "bulky_item_pickup_book", body
    assert body["arguments"]["address"] == "滨江花园5栋1单元"


def test_what_a_tool_will_not_do_is_disclaimed_and_resending_is_notifying() -> None:
    """不会 ("will not") turns a sentence to what the tool does not do, after its subject
    as 不能 does (tests/data/courier's locker redirect); 重新发 and "resend" notify."""
    locker = {
        "tool_id": "redirect_to_locker",
        "description": "将包裹改投到快递柜。本工具不会重新发送取件码，也不能改派到其他街道地址。",
    }
    assert "notify" in vocabulary.disclaimed_actions(locker)
    assert "notify" in vocabulary.requested_actions("取件码能重新发一遍吗 CX7171717171")
    assert "notify" in vocabulary.requested_actions("resend invoice INV-204518 to their AP email")
