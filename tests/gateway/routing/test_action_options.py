"""An ``action`` parameter's option is read from what the request asks, when no option's
own word is in it.

Found by the garage set (``tests/data/garage``, scored blind first): a booking tool takes
``action`` of ["reschedule", "cancel"] and an invoice tool ``action`` of ["view", "pay"].
"Can you move BK-588204 to the 3rd of June 2026?" names neither option, nor does "what's
on invoice INV-90417?", so both calls were refused for a missing ``action``. An order's
verb (moving in time is a reschedule: ``intent.order_verb``) picks its option, and a
question picks the one option that reads.
"""

from __future__ import annotations

from typing import Any

import pytest

from gateway.routing.extract import ArgumentExtractor

extractor = ArgumentExtractor()


def schema(key: str, options: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            key: {"type": "string", "description": "Reference, e.g. BK-559120"},
            "action": {"type": "string", "enum": options},
        },
        "required": [key, "action"],
    }


AMEND = schema("booking", ["reschedule", "cancel"])
INVOICE = schema("invoice", ["view", "pay"])


@pytest.mark.parametrize(
    ("query", "tool", "action"),
    [
        ("Can you move BK-588204 to the 3rd of June 2026? Same time is fine.", AMEND, "reschedule"),
        ("push BK-588204 back a week please", AMEND, "reschedule"),
        ("need to cancel BK-588204, something came up", AMEND, "cancel"),
        ("what's on invoice INV-90417? seems high for a service", INVOICE, "view"),
        ("发票 INV-87766 一共多少钱？我想核对一下", INVOICE, "view"),
        ("pay INV-90417 by card", INVOICE, "pay"),
    ],
)
def test_the_act_the_request_asks_for(query: str, tool: dict[str, Any], action: str) -> None:
    assert extractor.extract(query, tool).arguments.get("action") == action


def test_no_act_asked_no_option() -> None:
    """A bare reference asks for no act; an option that is not an act is not guessed."""
    assert "action" not in extractor.extract("INV-90417", INVOICE).arguments
    colours = schema("booking", ["red", "blue"])
    assert "action" not in extractor.extract("what is BK-588204?", colours).arguments
