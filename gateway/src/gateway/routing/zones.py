"""Time zones a request names in words: "2pm Pacific", "10:00 ET", 美西时间, 北京时间.

A date-time the request gives with such a zone is written with that zone's offset on
that day (Pacific is -08:00 in December and -07:00 in July), read from the system's
time-zone database (``zoneinfo``). Where the database is missing, no offset is given,
as for a request that names no zone.

An abbreviation counts only right after a clock ("2pm PT", "10:00 EST"): alone, "PT" is
a personal trainer and "ET" anything. A zone's name counts after a clock or before
"(local) time" ("3pm Eastern", "Pacific time", "Vancouver local time"); a Chinese name
with (当地)时间 anywhere. "CST" is left out: it is China's and America's Central time alike.

A tool's description may set the clock of its date-times the same way ("Times are
Vancouver local time"): ``zone_words`` finds the words, which the router lends to each
date-time parameter that names no zone of its own (``extract.with_tool_zone``).
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_ABBREVIATIONS = {
    "PT": "America/Los_Angeles", "PST": "America/Los_Angeles", "PDT": "America/Los_Angeles",
    "MT": "America/Denver", "MST": "America/Denver", "MDT": "America/Denver",
    "CT": "America/Chicago", "CDT": "America/Chicago",
    "ET": "America/New_York", "EST": "America/New_York", "EDT": "America/New_York",
    "BST": "Europe/London", "CET": "Europe/Paris", "CEST": "Europe/Paris",
    "JST": "Asia/Tokyo", "HKT": "Asia/Hong_Kong", "SGT": "Asia/Singapore",
    "AEST": "Australia/Sydney", "AEDT": "Australia/Sydney",
}  # fmt: skip
_NAMES = {
    "pacific": "America/Los_Angeles", "mountain": "America/Denver",
    "central": "America/Chicago", "eastern": "America/New_York",
    "london": "Europe/London", "uk": "Europe/London", "paris": "Europe/Paris",
    "berlin": "Europe/Berlin", "beijing": "Asia/Shanghai", "china": "Asia/Shanghai",
    "hong kong": "Asia/Hong_Kong", "singapore": "Asia/Singapore", "tokyo": "Asia/Tokyo",
    "japan": "Asia/Tokyo", "sydney": "Australia/Sydney",
    # cities a business sets its clock by ("Times are Vancouver local time")
    "vancouver": "America/Vancouver", "seattle": "America/Los_Angeles",
    "los angeles": "America/Los_Angeles", "san francisco": "America/Los_Angeles",
    "denver": "America/Denver", "chicago": "America/Chicago", "toronto": "America/Toronto",
    "montreal": "America/Toronto", "new york": "America/New_York",
    "shanghai": "Asia/Shanghai", "taipei": "Asia/Taipei", "seoul": "Asia/Seoul",
    "bangkok": "Asia/Bangkok", "dubai": "Asia/Dubai", "madrid": "Europe/Madrid",
    "rome": "Europe/Rome", "amsterdam": "Europe/Amsterdam", "melbourne": "Australia/Melbourne",
}  # fmt: skip
_CHINESE = {
    "美西": "America/Los_Angeles", "太平洋": "America/Los_Angeles", "美东": "America/New_York",
    "美中": "America/Chicago", "北京": "Asia/Shanghai", "东京": "Asia/Tokyo",
    "日本": "Asia/Tokyo", "香港": "Asia/Hong_Kong", "新加坡": "Asia/Singapore",
    "伦敦": "Europe/London", "英国": "Europe/London", "悉尼": "Australia/Sydney",
    "温哥华": "America/Vancouver", "西雅图": "America/Los_Angeles",
    "洛杉矶": "America/Los_Angeles", "旧金山": "America/Los_Angeles",
    "芝加哥": "America/Chicago", "多伦多": "America/Toronto", "纽约": "America/New_York",
    "上海": "Asia/Shanghai", "台北": "Asia/Taipei", "首尔": "Asia/Seoul",
    "曼谷": "Asia/Bangkok", "迪拜": "Asia/Dubai", "巴黎": "Europe/Paris",
    "柏林": "Europe/Berlin", "墨尔本": "Australia/Melbourne",
}  # fmt: skip
_CLOCK = r"(?:\d{1,2}:\d{2}|\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.))"
_AFTER_CLOCK = re.compile(
    rf"{_CLOCK}\s?\(?({'|'.join(sorted(_ABBREVIATIONS, key=len, reverse=True))})\b"
)
_NAMED = re.compile(
    rf"(?:{_CLOCK}\s?({'|'.join(_NAMES)})\b|\b({'|'.join(_NAMES)})\s+(?:local\s+)?time\b)",
    re.IGNORECASE,
)
_CHINESE_NAMED = re.compile(rf"({'|'.join(_CHINESE)})(?:当地)?时间")


def _named(text: str) -> dict[str, str]:
    """Each zone ``text`` names in words (an IANA name) and the words that name it first."""
    found: dict[str, str] = {}
    for m in _AFTER_CLOCK.finditer(text):
        found.setdefault(_ABBREVIATIONS[m[1]], m[0])
    for m in _NAMED.finditer(text):
        found.setdefault(_NAMES[(m[1] or m[2]).lower()], m[0])
    for m in _CHINESE_NAMED.finditer(text):
        found.setdefault(_CHINESE[m[1]], m[0])
    return found


def named_zone(query: str) -> str | None:
    """The one time zone ``query`` names in words (an IANA name), else None."""
    found = _named(query)
    return next(iter(found)) if len(found) == 1 else None


def zone_words(text: str) -> str | None:
    """The words naming the one time zone ``text`` names ("Vancouver local time",
    "温哥华当地时间"), else None: what a tool's description lends its date-times."""
    found = _named(text)
    return next(iter(found.values())) if len(found) == 1 else None


@functools.lru_cache(maxsize=64)
def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def offset_on(zone: str, local: str) -> str | None:
    """The offset ("-08:00") of ``zone`` at the local date-time ``local``
    ("2026-12-16T10:00:00"); None without the time-zone database."""
    found = _zone(zone)
    if found is None:
        return None
    try:
        moment = datetime.fromisoformat(local).replace(tzinfo=found)
    except ValueError:
        return None
    delta = moment.utcoffset()
    if delta is None:
        return None
    minutes = int(delta.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
