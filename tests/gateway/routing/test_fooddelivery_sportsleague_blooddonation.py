"""Routes found by the food-delivery, sports-league and blood-donation sets
(``tests/data/fooddelivery``, ``sportsleague``, ``blooddonation``, written blind to the
router):

- "add", "give" and "leave" take the act as their object: "add $1 tip to FD…" is done by
  a writer named for tipping ("Tip the rider"), though its words never say "add";
- 申请, 提交 and 申报 name no act either: what is applied for does (申请弃权 forfeits; the
  transfer tool's 转队申请 is another application);
- a sentence that sends other requests to other tools ("Changes go through
  field_booking_change and cancellations through field_booking_cancel") is not the tool's
  own words: a booking lookup does not cancel; another tool's id set apart in brackets
  disclaims no act ("… not for practice-field bookings (field_booking_change)" still
  changes a game's time), and a verb sent elsewhere by another tool's id is still done by
  a tool whose own Chinese words do its class (修改 of "move BK-55120 to 7pm");
- 打赏 tips a rider, 赔付 is a compensation claim, and 撤掉 cancels;
- a day of the month written as a word beside its month is a day ("January fifth", "the
  twenty-third of December");
- a centre taken "by name or site code" takes a named place ("at Tampines"), and an area
  is read after "within 5km of" and as a postcode after "near" ("near 560123").
"""

from __future__ import annotations

import httpx
import pytest

from gateway.routing import intent, vocabulary
from gateway.routing.text import own_actions_text
from tests.gateway.routing.conftest import blind_set, extracted, manifest_of, schema_of

PICKED = {
    "fooddelivery": {"courier_tip", "order_place", "order_cancel", "order_track"}
    | {"order_change_address", "refund_status", "order_issue_report"},
    "sportsleague": {"match_forfeit", "player_transfer_request", "player_register"}
    | {"field_booking_lookup", "field_booking_cancel", "field_booking_change"}
    | {"match_reschedule_request", "match_schedule_lookup"},
}
CATALOGUE = [m for name, ids in PICKED.items() for m in blind_set(name) if m["tool_id"] in ids]


@pytest.mark.parametrize(
    ("query", "act"),
    [
        ("add $1 tip to order FD2612060944", "tip"),
        ("Can I add a tip of S$2.50 on FD2612061108?", "tip"),
        ("please leave a review for order 881", "review"),
        ("add 2 guests to my booking", "guest"),
        ("cancel FD2612071611", None),
    ],
)
def test_what_is_added_or_given_is_the_act(query: str, act: str | None) -> None:
    assert intent.given(query) == act


@pytest.mark.parametrize(
    ("query", "thing"),
    [
        ("T0871 申请弃权 M203341，人不够", "弃权"),
        ("帮我提交一份报销", "报销"),
        ("我申请一下", None),  # nothing applied for
        ("取消 BK-44702", None),
    ],
)
def test_what_is_applied_for_is_the_act(query: str, thing: str | None) -> None:
    assert intent.applied_for(query, intent.action_word(query)) == thing


def test_a_sentence_sending_requests_elsewhere_is_not_the_tools() -> None:
    description = manifest_of("sportsleague", "field_booking_lookup")["description"]
    own = own_actions_text(description)
    assert "field_booking_cancel" in description
    assert "cancellations" not in own
    assert own.startswith("Shows one practice field/gym booking")


@pytest.mark.parametrize(
    ("query", "day"),
    [
        ("Need a slot on January fifth at 10am, D77120045", "2027-01-05"),
        ("slot on the fifth of January please, D77120045", "2027-01-05"),
        ("can I come in on December twenty-third? D77120045", "2026-12-23"),
        ("the thirty-first of December works, D77120045", "2026-12-31"),
        ("Feb twenty first, D77120045", "2027-02-21"),
    ],
)
def test_a_day_written_as_a_word_beside_its_month(query: str, day: str) -> None:
    assert extracted(query, schema_of("blooddonation", "appointment_book"))["date"] == day


def test_first_of_all_is_no_day() -> None:
    found = extracted(
        "first of all, march on D77120045", schema_of("blooddonation", "appointment_book")
    )
    assert "date" not in found


def test_a_centre_taken_by_name_or_code_takes_a_named_place() -> None:
    query = "Need a slot for plasma on January fifth at Tampines. D77120045"
    found = extracted(query, schema_of("blooddonation", "appointment_book"))
    assert found["site"] == "Tampines"
    assert found.get("notes") != "Tampines"


@pytest.mark.parametrize(
    ("query", "near"),
    [
        ("where's the closest place to donate near 560123?", "560123"),
        ("which centres within 5km of Tampines take platelets", "Tampines"),
        ("any blood drives in Woodlands this Saturday?", "Woodlands"),
    ],
)
def test_an_area_after_near_or_within_a_distance(query: str, near: str) -> None:
    assert extracted(query, schema_of("blooddonation", "donation_site_search"))["near"] == near


def test_a_bracketed_id_disclaims_no_act() -> None:
    # "not for practice-field bookings (field_booking_change)" names what another tool is
    # for: the game-reschedule request still changes a game's time
    reschedule = intent.own_words(manifest_of("sportsleague", "match_reschedule_request"))
    assert "cancel" in reschedule.disclaimed  # "It cannot cancel a game"
    assert not intent.disowns(reschedule, "change")
    # "use appointment_reschedule to move" still says the lookup does not reschedule
    lookup = intent.own_words(manifest_of("clinic", "appointment_lookup"))
    assert intent.disowns(lookup, "reschedule")


def test_a_verb_sent_elsewhere_is_still_done_by_own_chinese_words() -> None:
    # "正式比赛改期请用 match_reschedule_request" sends matches' rescheduling elsewhere; the
    # field booking's own 修改 still changes a booking's time
    change = intent.own_words(manifest_of("sportsleague", "field_booking_change"))
    assert "reschedul" in change.disclaimed  # (a stem)
    assert not intent.disowns(change, "reschedule")


def test_a_withdrawn_order_is_cancelled() -> None:
    assert "cancel" in vocabulary.requested_actions("重复下单了，把 FD2612071519 撤掉")


@pytest.mark.parametrize(
    ("query", "tool_id"),
    [
        ("add $1 tip to order FD2612060944", "courier_tip"),  # "Tip the rider" does "add"
        ("Can I add a tip of S$2.50 on FD2612061108? She was super quick", "courier_tip"),
        ("给 FD2612061699 的骑手打赏 5 块", "courier_tip"),  # 打赏: tip
        ("我申请的赔付审核通过了吗？单号 FD2612021478", "refund_status"),  # 赔付: a claim
        ("T0871 申请弃权 M203341，人不够", "match_forfeit"),  # not the transfer's 申请
        ("drop reservation BK-81053, we found a free gym to use", "field_booking_cancel"),
        ("move BK-55120 to 7pm instead", "field_booking_change"),
        (  # "(field_booking_change)" disowns no change
            "Snow's forecast all weekend. Requesting that M205512 gets played Jan 9th at 1pm"
            " instead",
            "match_reschedule_request",
        ),
    ],
)
async def test_food_delivery_and_league_routes(
    gateway: httpx.AsyncClient, query: str, tool_id: str | None
) -> None:
    # a team captain: the forfeit is an admin tool of that scope
    context = {"user_id": "captain", "roles": ["team_captain"]}
    response = await gateway.post(
        "/run", json={"user_query": query, "user_context": context, "dry_run": True}
    )
    body = response.json()
    assert body.get("tool_id") == tool_id, body
