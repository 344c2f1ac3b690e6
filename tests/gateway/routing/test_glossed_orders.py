"""A Chinese order is read word by word for the tools described only in English, and a
dictionary names its verb as a dictionary does: 申请 reads "apply for". Only a verb of an
action class (取消 "cancel") may say such a tool does not do what is asked; "申请采购…"
was refused by every English writer of a catalogue written blind to the router."""

from __future__ import annotations

import httpx

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("factory")


async def test_a_verb_a_dictionary_names_does_not_refuse_an_english_writer(
    gateway: httpx.AsyncClient,
) -> None:
    query = "申请采购一把新的扭矩扳手，预估 1200 块，申请人邮箱 liuyang@plant-ops.com"
    response = await dry_run(gateway, query, "glossed")
    assert response.json().get("tool_id") == "purchase_request_create", response.text


async def test_withdrawing_a_work_order_cancels_it(gateway: httpx.AsyncClient) -> None:
    query = "Please withdraw work order WO-100455. The vendor fixed the chiller under warranty."
    response = await dry_run(gateway, query, "glossed")
    assert response.json().get("tool_id") == "workorder_cancel", response.text
