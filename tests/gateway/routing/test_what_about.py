""" "What about …?" in Chinese (…呢) asks again what was asked last, with a new value: a
question after a question ("USD 兑 JPY 汇率", then "换成欧元 EUR 呢"), an order after an
order. After a question it is a question too, so no writer takes it ("它的发票
INV-2026-00055 呢" went to the invoice payer), and the session's last tool takes it
when it takes the new value. Catalogue: tests/data/backoffice, written blind to the
router."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("backoffice")


async def _asked(gateway: httpx.AsyncClient, app: FastAPI, query: str, session: str) -> str:
    """``query`` routed and recorded in ``session`` as running it would have."""
    routed = (await dry_run(gateway, query, "u1", session)).json()
    context = app.state.runtime.run.context
    await context.remember("u1", session, routed["tool_id"], routed["arguments"], "ok")
    return str(routed["tool_id"])


def test_what_about_is_read_only_where_it_asks_for_nothing() -> None:
    assert intent.asks_what_about("它的发票 INV-2026-00055 呢")
    assert intent.asks_what_about("那 16 号同一时间呢？")
    assert not intent.asks_what_about("那帮我取消呢")  # asks for a cancellation
    assert not intent.asks_what_about("发票 INV-2026-00055 的状态")


async def test_asked_again_after_a_question_goes_to_the_last_tool(
    gateway: httpx.AsyncClient, app: FastAPI
) -> None:
    assert await _asked(gateway, app, "USD 兑 JPY 汇率", "s-fx") == "fx_rate"
    again = await dry_run(gateway, "换成欧元 EUR 呢", "u1", "s-fx")
    assert again.json().get("tool_id") == "fx_rate", again.text


async def test_asked_about_another_thing_after_a_question_no_writer_takes_it(
    gateway: httpx.AsyncClient, app: FastAPI
) -> None:
    context = app.state.runtime.run.context
    await context.remember("u1", "s-vendor", "vendor_lookup", {"name": "Acme"}, "ok")
    again = await dry_run(gateway, "它的发票 INV-2026-00055 呢", "u1", "s-vendor")
    assert again.json().get("tool_id") == "invoice_get", again.text
