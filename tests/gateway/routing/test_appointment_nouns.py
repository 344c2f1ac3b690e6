"""预约 is an order to book only where it is the verb: "APT-67012那个预约我去不了了，帮我取消一下"
cancels the appointment, and "预约能不能往后挪一周？" moves it.

Found by the vet-clinic set (``tests/data/vetclinic``, written blind to the router).
Before, the reference's pattern read Chinese characters as part of the reference
("APT-67012那个" then 预约), and 预约 before a modal ("能不能") was read as the verb: both
requests asked for a booking, so the appointment-change tool lost the confidence of an
act it does not offer and both were refused. And "record" is an order to add an entry.
"""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("vetclinic")


@pytest.mark.parametrize(
    ("query", "action"),
    [
        ("APT-67012那个预约我去不了了，帮我取消一下", "cancel"),
        ("预约能不能往后挪一周？单号APT-88310", "reschedule"),
    ],
)
async def test_the_appointment_is_changed(
    gateway: httpx.AsyncClient, query: str, action: str
) -> None:
    body = (await dry_run(gateway, query, "owner")).json()
    assert body.get("tool_id") == "appointment_change", body
    assert body["arguments"]["action"] == action


async def test_booking_by_the_verb_still_books(gateway: httpx.AsyncClient) -> None:
    body = (await dry_run(gateway, "预约2025年7月8号下午三点给PET-130577复诊", "owner")).json()
    assert body.get("tool_id") == "appointment_book", body


async def test_recording_a_weight_adds_an_entry(gateway: httpx.AsyncClient) -> None:
    """ "record" orders an entry made, as "add" does: the weight log ("Add a weigh-in to a
    patient's weight chart") does what "record weight for …" asks. Before, "record" was
    no verb of any action class, so the log was held not to do it and was refused."""
    query = "record weight for PET-318844: 8.75 kg, measured 2025-04-21"
    body = (await dry_run(gateway, query, "owner")).json()
    assert body.get("tool_id") == "weight_log", body
    assert body["arguments"]["weight_kg"] == 8.75
