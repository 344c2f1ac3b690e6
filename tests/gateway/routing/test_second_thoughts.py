""" "Actually" and "wait" open a change of mind, not the request: "actually drop it, changed
my mind" orders a drop as "drop it" does (``intent._LEAD``). After enrolling S20231234 in
CS-2041 it had been refused: its first word was read as the request's, so no verb
held the enrolment tool back. Catalogue: tests/data/school, written blind to the router."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from gateway.routing import intent
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("school")


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("actually drop it, changed my mind", "drop"),
        ("Actually, cancel that", "cancel"),
        ("wait, delete the second one", "delete"),
    ],
)
def test_a_change_of_mind_orders_its_verb(text: str, verb: str) -> None:
    assert intent.order_verb(text) == verb


def test_a_change_of_mind_may_still_ask() -> None:
    assert intent.asks_to_read("Actually, what is my balance?")
    assert intent.order_verb("Actually, what is my balance?") is None


async def test_dropping_the_course_just_enrolled_in(
    gateway: httpx.AsyncClient, app: FastAPI
) -> None:
    first = await dry_run(gateway, "enroll S20231234 in CS-2041", "student", "s-drop")
    assert first.json()["tool_id"] == "course_enroll", first.text
    context = app.state.runtime.run.context
    await context.remember("student", "s-drop", "course_enroll", first.json()["arguments"], "ok")

    response = await dry_run(gateway, "actually drop it, changed my mind", "student", "s-drop")
    body = response.json()
    assert body.get("tool_id") == "course_drop", response.text
    assert body["arguments"]["student_id"] == "S20231234"
    assert body["arguments"]["course_code"] == "CS-2041"
