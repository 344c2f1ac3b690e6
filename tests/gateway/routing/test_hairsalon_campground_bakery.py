"""Routes found by the hair-salon, campground and bakery sets (``tests/data/hairsalon``,
``campground``, ``bakery``, written blind to the router):

- a word that names a fee, a charge or a policy is no action of its tool: "Pay no-show /
  late cancellation fee" pays and does not cancel;
- an aside on how to do something else ("(to change the service, cancel and book
  again)") names another tool's actions;
- an order after what led to it ("I'm sick and can't make it tomorrow, cancel AP-…")
  points to the writer its verb names, in the other language too;
- what is called off is cancelled.
"""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent, vocabulary
from gateway.routing import text as routing_text
from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("hairsalon")


def test_a_fee_named_for_an_action_is_no_action() -> None:
    manifest = {
        "tool_id": "pay_no_show_fee",
        "name": "Pay no-show / late cancellation fee",
        "description": "Pay an outstanding no-show or late-cancellation fee.",
    }
    assert vocabulary.named_actions(manifest) == {"pay"}
    words = intent.own_words(manifest)
    assert intent.does(words, "pay", strict=True)
    assert not intent.does(words, "cancel", strict=True)
    assert vocabulary.without_fee_names("a refund policy applies").split() == [
        "a",
        "policy",
        "applies",
    ]


def test_an_aside_on_doing_something_else() -> None:
    description = (
        "Move an existing appointment to a new date. The service stays the same (to change "
        "the service, cancel and book again)."
    )
    assert "cancel" not in routing_text.own_actions_text(description)


@pytest.mark.parametrize(
    ("text", "verb"),
    [
        ("I'm sick and can't make it tomorrow, cancel AP-660175", "cancel"),
        ("取消预约AP-310488，谢谢", "取消"),
        ("is AP-100387 still confirmed?", None),
        ("exit row 12F on UA857 please, booking ref 2KDP7M. happy to pay for it", None),
        ("预约AP-385512能不能改到周四下午4点", "改到"),  # the appointment's number, no booking
    ],
)
def test_the_action_of_an_order_after_its_reason(text: str, verb: str | None) -> None:
    assert intent.action_word(text) == verb


@pytest.mark.parametrize(
    ("text", "actions"),
    [
        ("预约AP-385512能不能改到周四下午4点", {"update"}),
        ("帮我预订 D9 本周五", {"book"}),  # a site booked, no booking's number
        ("取消AP-310488", {"cancel"}),
    ],
)
def test_a_booking_word_before_its_number_names_it(text: str, actions: set[str]) -> None:
    assert vocabulary.requested_actions(text) == actions


def test_what_is_called_off_is_cancelled() -> None:
    text = "We have to call off the wedding cake, order number CK-61102, very sorry"
    assert vocabulary.requested_actions(text) == {"cancel"}
    assert vocabulary.requested_actions("please call the office") == set()


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("取消预约AP-310488，谢谢", "cancel_appointment"),
        ("I'm sick and can't make it tomorrow, cancel AP-660175", "cancel_appointment"),
        ("Cancel AP-997301 — I'll go to your other branch instead.", "cancel_appointment"),
    ],
)
async def test_hair_salon_routes(gateway: httpx.AsyncClient, query: str, tool_id: str) -> None:
    body = (await dry_run(gateway, query, "client")).json()
    assert body.get("tool_id") == tool_id, body
