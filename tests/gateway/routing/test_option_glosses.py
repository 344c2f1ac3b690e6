"""An enum option is also found by what a description says it means, right after its
name: "Harbour Grill (steakhouse)", "pilfered = bag arrived but items were taken"
(``options.gloss_of``). A request that writes a short gloss whole takes its option
("steakhouse dinner for two" is ``harbour_grill``; a Chinese request in its English
reading, 牛排馆 "steakhouse", too), and an option's text compared by meaning carries
its gloss. The tools here are written for this module; the sets in tests/data that
this moved are in docs/architecture.md."""

from __future__ import annotations

import httpx
import pytest

from gateway.routing.options import gloss_of, glosses_of, written_gloss
from tests.gateway.routing.conftest import dry_run, manifest

TIME = {"type": "string", "pattern": "^([01]\\d|2[0-3]):[0-5]\\d$", "description": "HH:MM"}
CATALOGUE = [
    manifest(
        "spa_treatment_book",
        "POST",
        "Books a treatment at the resort spa: Lotus Room (Thai massage), Cedar Suite (hot "
        "stone therapy) or Aqua Deck (hydrotherapy pool). Needs the room, the day, a start "
        "time and how many guests.",
        {
            "room": {"type": "string", "enum": ["lotus_room", "cedar_suite", "aqua_deck"]},
            "day": {"type": "string", "format": "date"},
            "start": TIME,
            "guests": {"type": "integer", "minimum": 1, "maximum": 8},
        },
    ),
    manifest(
        "spa_booking_lookup",
        "GET",
        "Shows an existing spa booking: room, time and guests, by its code (e.g. SPA-4411).",
        {"code": {"type": "string", "description": "e.g. SPA-4411"}},
    ),
    manifest(
        "locker_report",
        "POST",
        "Reports a problem with a gym locker so the front desk can deal with it.",
        {
            "locker": {"type": "string", "description": "Locker number, e.g. L-118"},
            "problem": {
                "type": "string",
                "enum": ["jammed", "lost_key", "damaged"],
                "description": "jammed = the door will not open with the key; lost_key: "
                "the guest no longer has the key; damaged = broken hinge, dented door.",
            },
        },
    ),
]
SPA = CATALOGUE[0]


@pytest.mark.parametrize(
    ("option", "gloss"),
    [
        ("lotus_room", "Thai massage"),
        ("cedar_suite", "hot stone therapy"),
        ("aqua_deck", "hydrotherapy pool"),
    ],
)
def test_a_gloss_in_parentheses_after_the_option_s_name(option: str, gloss: str) -> None:
    assert gloss_of(option, SPA["description"]) == gloss


def test_a_gloss_after_an_equals_sign_or_a_colon_ends_at_its_clause() -> None:
    """At a semicolon, a full stop or a comma: "a = x, b = y" glosses two options."""
    spec = CATALOGUE[2]["input_schema"]["properties"]["problem"]
    assert glosses_of(spec, "") == [
        "the door will not open with the key",
        "the guest no longer has the key",
        "broken hinge",
    ]


@pytest.mark.parametrize(
    "description",
    [
        # a dash sets a list apart, it does not gloss the option before it
        "Collection days - general, recycling and glass - with holiday changes applied.",
        "交付方式：pdf 电子版发到邮箱",  # a Chinese gloss is the extractor's (_paired_words)
        "Only list glass (glass)",  # the option's own name says nothing more
        "glass (2.5)",  # no word in it
    ],
)
def test_no_gloss(description: str) -> None:
    assert gloss_of("glass", description) is None
    assert gloss_of("pdf", description) is None


def test_a_short_gloss_written_whole_names_one_option() -> None:
    glosses = ["Thai massage", "hot stone therapy", "hydrotherapy pool"]
    assert written_gloss("hot stone therapy for two, Friday 3pm", glosses) == 1
    assert written_gloss("a hot stone for the sauna", glosses) is None  # not whole
    assert written_gloss("Thai massage or the hydrotherapy pool?", glosses) is None  # two
    assert written_gloss("hydrotherapy pools", ["hydrotherapy pool", None]) is None


@pytest.mark.parametrize(
    ("query", "room"),
    [
        ("hot stone therapy for 2 tomorrow at 3pm", "cedar_suite"),
        ("can we get the hydrotherapy pool for 4 people on Friday, 10am", "aqua_deck"),
        # a Chinese request in its English reading: 泰式按摩 "Thai-style massage"
        ("明天下午三点，泰式按摩，两位", "lotus_room"),
    ],
)
async def test_the_option_a_request_describes_is_filled(
    gateway: httpx.AsyncClient, query: str, room: str
) -> None:
    response = await dry_run(gateway, query, "spa-guest")
    body = response.json()
    assert body.get("tool_id") == "spa_treatment_book", response.text
    assert body["arguments"]["room"] == room, response.text


async def test_a_glossed_meaning_in_other_words(gateway: httpx.AsyncClient) -> None:
    response = await dry_run(gateway, "report locker L-204, the key won't open the door", "gym")
    body = response.json()
    assert body.get("tool_id") == "locker_report", response.text
    assert body["arguments"] == {"locker": "L-204", "problem": "jammed"}, response.text
