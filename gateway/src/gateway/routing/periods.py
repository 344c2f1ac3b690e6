"""The unit of time a report is cut by, for an enum of units ("granularity", "interval").

``["hour", "day", "week", "month"]`` (or ``hourly``/``daily``/``weekly``/``monthly``) is
filled from "per month", "by day", "each week", "hourly", "hour by hour", 按天, 每小时,
逐月, 按周汇总. A unit the request names on its own ("last month", 上周) says which time,
not how it is cut, so only these cues count.

Every pattern is a fixed alternation: linear in the request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_UNITS = ("minute", "hour", "day", "week", "month", "quarter", "year")
_ADVERBS = {"hourly": "hour", "daily": "day", "weekly": "week", "monthly": "month"}
_ADVERBS |= {"quarterly": "quarter", "yearly": "year", "annually": "year", "annual": "year"}
_ZH_UNITS = {"分钟": "minute", "小时": "hour", "天": "day", "日": "day", "周": "week"}
_ZH_UNITS |= {"星期": "week", "月": "month", "季度": "quarter", "季": "quarter", "年": "year"}

_EN_CUT = re.compile(
    r"(?<![a-z])(?:(?:per|by|each|every|by\s+the|broken\s+down\s+by|grouped\s+by|split\s+by)"
    r"\s+(minute|hour|day|week|month|quarter|year)s?"
    r"|(minute|hour|day|week|month|quarter|year)\s+by\s+\2"
    r"|(hourly|daily|weekly|monthly|quarterly|yearly|annually))(?![a-z])"
    # a sum's period: "8.5k a month", "$12.75 an hour", "300/mo"
    r"|(?:(?<=[\dkKmM])|(?<=illion))\s?(?:a|an|/)\s?(minute|hour|day|week|month|quarter|year|mo|yr)(?![a-z])",
    re.IGNORECASE,
)
_SHORT = {"mo": "month", "yr": "year"}
_ZH_CUT = re.compile(r"(?:按|每|逐|分)个?(分钟|小时|季度|星期|天|日|周|月|季|年)")


def _unit_of(option: object) -> str | None:
    text = str(option).strip().lower()
    if text in _UNITS:
        return text
    return _ADVERBS.get(text) or _ZH_UNITS.get(str(option).strip())


def option_units(options: Sequence[Any]) -> dict[str, Any] | None:
    """Each unit's option, when at least two options are units of time and no other."""
    units: dict[str, Any] = {}
    for option in options:
        unit = _unit_of(option)
        if unit is None:
            return None
        units[unit] = option
    return units if len(units) >= 2 else None


def option_cut(query: str, options: Sequence[Any]) -> Any:
    """The option for the unit the request cuts its report by; None when it names none or
    the options are not units of time."""
    units = option_units(options)
    if units is None:
        return None
    for match in _EN_CUT.finditer(query):
        word = (match[1] or match[2] or match[3] or match[4]).lower()
        unit = _ADVERBS.get(word) or _SHORT.get(word, word)
        if unit in units:
            return units[unit]
    for match in _ZH_CUT.finditer(query):
        unit = _ZH_UNITS[match[1]]
        if unit in units:
            return units[unit]
    return None
