"""A tool that switches things on and off is asked to turn one off, and a light's level is
set or dimmed.

Found by the smart-home set (``tests/data/smarthome``, written blind to the router): its
light tool says only "Lights: on/off, dim (0-100%), white colour temp. Per room.", with
three aliases. So its words offered no action, and "turn off the kitchen lights" (a toggle)
or 关掉儿童房的灯 (关掉: closing) lost the confidence of an action the tool does not offer:
the first went to the scene tool, the second was refused. "on/off" now offers toggling
and closing (``vocabulary._SWITCHES``), and "dim" is a change of a value.
"""

from __future__ import annotations

import httpx
import pytest

from tests.gateway.routing.conftest import blind_set, dry_run

CATALOGUE = blind_set("smarthome")


@pytest.mark.parametrize(
    ("query", "arguments"),
    [
        ("turn off the kitchen lights", {"room": "kitchen", "on": False}),
        ("关掉儿童房的灯", {"room": "儿童房", "on": False}),
        ("set the dining room lights to cool white, 80 percent", {"brightness": 80}),
    ],
)
async def test_a_light_switched_or_set(
    gateway: httpx.AsyncClient, query: str, arguments: dict[str, object]
) -> None:
    body = (await dry_run(gateway, query, "home")).json()
    assert body.get("tool_id") == "light_control", body
    assert {key: body["arguments"].get(key) for key in arguments} == arguments


async def test_a_switch_is_no_lock(gateway: httpx.AsyncClient) -> None:
    """Switching off a light does not make every tool a switch: a lock is still locked."""
    body = (await dry_run(gateway, "lock the front door", "home")).json()
    assert body.get("tool_id") == "door_lock", body
    assert body["arguments"] == {"door": "front", "action": "lock"}
