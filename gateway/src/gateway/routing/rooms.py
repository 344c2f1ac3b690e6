"""Rooms and parts of a home or a building a request names, for a parameter that takes one.

A thermostat's ``room``, a light's ``zone``, a lock's ``door``, where a sensor sits
(``location``), the ``rooms`` a robot cleans: people name them as they call them at
home ("the lounge", "dining room lights", "upstairs hallway", "front door", 客厅, 主卧,
书房的灯, 后门). A free-text parameter takes the name as written ("dining room", 主卧);
a ``door`` takes what tells the door apart ("front" of "the front door", since the
parameter already says it is a door); an enum takes its option for the room, in either
language (婴儿房 is ``nursery``, 客厅 ``living_room``).

Which parameters: those named for a room, a zone or a door, and those whose description
says they take one (``target``: "Room or device the action applies to"). A ``location``
or an ``area`` is more often a town or a district: it is read this way only when nothing
else filled it (:func:`fallback`). A parameter whose examples hold digits takes a room
number ("room 1208"), which is not read here.

The patterns read words from a fixed list at each position: linear in the request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from gateway.routing.text import words_of

# Rooms and parts of a home, by their head word, with the words that may come before it.
_HEADS = (
    "bedroom|bathroom|kitchen|lounge|office|study|hallway|hall|corridor|landing|porch|patio"
    "|garden|yard|backyard|driveway|garage|basement|cellar|attic|loft|nursery|playroom|den"
    "|pantry|closet|conservatory|balcony|terrace|deck|entrance|entryway|foyer|stairs"
    "|staircase|stairwell|toilet|washroom|shed|lobby|utility|laundry|door|gate|doorway"
    "|workshop|gym|cloakroom|ensuite|wardrobe"
)
_BEFORE = (
    "upstairs|downstairs|front|back|side|main|master|guest|spare|second|kids'?|children'?s"
    "|baby'?s|boys'?|girls'?|ground[- ]floor|first[- ]floor|top[- ]floor|patio|garage"
    "|kitchen|garden|dining|living|laundry|utility|family|sitting|games|boiler|tv|media"
    "|walk-in|en-suite|hall|bedroom|bathroom|basement|cellar|office|study"
)
# "<word> room" names a room too: "dining room", "living room", "laundry room".
_ROOM_COMPOUND = (
    "living|dining|laundry|utility|family|sitting|games|boiler|tv|media|guest|spare|play"
    "|kids'?|children'?s|baby'?s|drawing|music|sun|mud|powder|box|store|storage|plant"
    "|server|meeting|rest|bath|bed"
)
_EN_ROOM = re.compile(
    rf"(?<![A-Za-z'-])(?:(?:{_BEFORE})\s)?(?:(?:{_ROOM_COMPOUND})\s?room|(?:{_HEADS}))"
    r"(?![A-Za-z'-])",
    re.IGNORECASE,
)
# Chinese rooms, and each one's English name (an enum's options are often English).
_ZH_ROOMS = {
    "客厅": "living room", "起居室": "living room", "卧室": "bedroom", "主卧": "master bedroom",
    "次卧": "second bedroom", "书房": "study", "厨房": "kitchen", "餐厅": "dining room",
    "饭厅": "dining room", "卫生间": "bathroom", "洗手间": "bathroom", "浴室": "bathroom",
    "厕所": "toilet", "阳台": "balcony", "车库": "garage", "地下室": "basement", "阁楼": "attic",
    "儿童房": "kids room", "婴儿房": "nursery", "宝宝房": "nursery", "玄关": "entrance",
    "门厅": "hall", "走廊": "hallway", "过道": "hallway", "楼梯": "stairs", "花园": "garden",
    "院子": "yard", "后院": "backyard", "前院": "front yard", "前门": "front door",
    "后门": "back door", "侧门": "side door", "大门": "front door", "入户门": "front door",
    "洗衣房": "laundry room", "储藏室": "storage room", "杂物间": "utility room",
    "衣帽间": "closet", "客房": "guest room", "老人房": "bedroom", "办公室": "office",
    "工作室": "studio", "影音室": "media room", "健身房": "gym", "门口": "entrance",
    "楼上": "upstairs", "楼下": "downstairs", "一楼": "ground floor", "二楼": "first floor",
    "露台": "terrace", "天台": "roof terrace",
}  # fmt: skip
_ZH_ROOM = re.compile("|".join(sorted(_ZH_ROOMS, key=len, reverse=True)))

_ROOM_NAMES = frozenset(("room", "rooms", "zone", "zones", "door", "doors", "space", "spaces"))
_MAYBE_NAMES = frozenset(("location", "area", "place", "where", "position", "target", "spot"))
# A place in a town: a street, a district, a postcode; never a room.
_TOWN_DESCRIBED = re.compile(
    r"street|address|road|city|town|suburb|neighbou?rhood|postcode|zip|district|country"
    r"|地址|城市|街道|小区|邮编|区县",
    re.IGNORECASE,
)
_ROOM_DESCRIBED = re.compile(r"\b(?:room|rooms|zone|door)\b|房间|区域|位置|门", re.IGNORECASE)
_DOOR_NAMES = frozenset(("door", "doors"))
_MAX_OPTIONS = 64
# (compiled once: ``re``'s own cache of 512 patterns is shared with every manifest's)
_NUMBERED_EXAMPLE = re.compile(r"(?:e\.g\.|eg|like|such as|例如|如)\s*[\"'“]?\s*\S*\d")
_ROOMS_DESCRIBED = re.compile(r"\brooms?\b|房间", re.IGNORECASE)


def _parts(name: str) -> list[str]:
    return words_of(name)


def takes_a_room(name: str, spec: dict[str, Any]) -> bool:
    """Whether a parameter is filled with a room first: named for one (``room``,
    ``zone``, ``door``), or described as one ("Room or device ...") and named as a place
    or a target; not one that takes numbers ("room number, e.g. 1208")."""
    if _numbered(spec):
        return False
    parts = _parts(name)
    if _ROOM_NAMES.intersection(parts):
        return True
    description = str(spec.get("description") or "")[:200]
    return bool(_MAYBE_NAMES.intersection(parts)) and bool(_ROOM_DESCRIBED.search(description))


def fallback(name: str, spec: dict[str, Any]) -> bool:
    """Whether a parameter that no other reader filled may take a room: a ``location``
    or a ``place`` ("the leak sensor in the basement"), not an ``area`` nor one whose
    description says it is in a town (a street, a postcode)."""
    parts = set(_parts(name)) - {"area"}
    described = str(spec.get("description") or "")[:200]
    return (
        not _numbered(spec)
        and bool(_MAYBE_NAMES.intersection(parts))
        and _TOWN_DESCRIBED.search(described) is None
    )


def _numbered(spec: dict[str, Any]) -> bool:
    """Whether the parameter takes a number or an id: a pattern, an enum, a non-string
    type, or digits in the description's examples ("e.g. 1208")."""
    if spec.get("type", "string") != "string" or "pattern" in spec or "enum" in spec:
        return True
    described = str(spec.get("description") or "")[:200]
    return bool(_NUMBERED_EXAMPLE.search(described))


def named(query: str) -> list[tuple[int, str, str]]:
    """Each room ``query`` names: (where, as written, its English name), in order."""
    found = [(m.start(), m.group(0), m.group(0).lower()) for m in _EN_ROOM.finditer(query)]
    found += [(m.start(), m.group(0), _ZH_ROOMS[m.group(0)]) for m in _ZH_ROOM.finditer(query)]
    return sorted(found)


def _as_written(name: str, written: str) -> str:
    """What a free-text parameter takes: the room as written; for a ``door``, the words
    that tell it apart ("front" of "front door")."""
    if _DOOR_NAMES.intersection(_parts(name)):
        words = written.split()
        if len(words) > 1 and words[-1].lower().rstrip("s") == "door":
            return " ".join(words[:-1])
    return written


def room_value(query: str, name: str) -> str | None:
    """The first room ``query`` names, as a free-text ``name`` takes it."""
    rooms = named(query)
    return _as_written(name, rooms[0][1]) if rooms else None


def room_values(query: str) -> list[str]:
    """Every room ``query`` names, as written, for a list of rooms."""
    return list(dict.fromkeys(written for _, written, _ in named(query)))


def takes_rooms(name: str, spec: dict[str, Any]) -> bool:
    """Whether a list parameter holds rooms: named ``rooms`` or ``zones``, or its items
    described as rooms; free text (its items have no pattern or enum)."""
    items = spec.get("items")
    if not isinstance(items, dict) or _numbered(items):
        return False
    described = f"{spec.get('description') or ''} {items.get('description') or ''}"[:300]
    return bool(_ROOM_NAMES.intersection(_parts(name))) or bool(_ROOMS_DESCRIBED.search(described))


def names_a_room(name: str) -> bool:
    """Whether a parameter's name says it is a room or a place (``room``, ``zone``,
    ``location``), for an enum whose options may be rooms."""
    parts = _parts(name)
    return bool(_ROOM_NAMES.intersection(parts) or _MAYBE_NAMES.intersection(parts))


def option_for(query: str, options: Sequence[Any]) -> Any:
    """The enum option for the room ``query`` names ("living_room" of 客厅 or "lounge"
    ... when the options are rooms): the option whose words are the room's English name,
    else its last word ("bedroom" of "master bedroom"). None when no option is."""
    if len(options) > _MAX_OPTIONS:  # rooms are a few; a long enum is read through its index
        return None
    by_words = {" ".join(_parts(str(o))): o for o in options if isinstance(o, str)}
    for _, _, english in named(query):
        words = " ".join(english.replace("'", "").split())
        if words in by_words:
            return by_words[words]
        head = words.split()[-1]
        if head in by_words:
            return by_words[head]
    return None
