"""A length, weight or volume written in another unit than the parameter's own.

A parameter says its unit in its name (``radius_m``, ``weight_kg``, ``distanceMiles``)
or its description ("Radius in metres.", 半径（米）). A request writes what it means in
its own unit: "a 2 km fence", 半径1公里, "500 g". The number is converted into the
parameter's unit; the same unit, or none, is left to the rules that read plain numbers.
"""

from __future__ import annotations

import re
from typing import Any

from gateway.routing import temporal

# Each unit: its dimension and its size in that dimension's base unit.
_UNITS: dict[str, tuple[str, float]] = {
    "mm": ("length", 0.001), "cm": ("length", 0.01), "m": ("length", 1.0),
    "km": ("length", 1000.0), "mi": ("length", 1609.344), "ft": ("length", 0.3048),
    "g": ("mass", 0.001), "kg": ("mass", 1.0), "lbs": ("mass", 0.45359237),
    "t": ("mass", 1000.0),
    "ml": ("volume", 0.001), "l": ("volume", 1.0),
}  # fmt: skip
# The ways a unit is written, each mapped to its name in ``_UNITS``.
_SPELLINGS: dict[str, str] = {
    "millimetre": "mm", "millimeter": "mm", "millimetres": "mm", "millimeters": "mm",
    "centimetre": "cm", "centimeter": "cm", "centimetres": "cm", "centimeters": "cm",
    "metre": "m", "meter": "m", "metres": "m", "meters": "m",
    "kilometre": "km", "kilometer": "km", "kilometres": "km", "kilometers": "km",
    "kms": "km", "mile": "mi", "miles": "mi", "feet": "ft", "foot": "ft",
    "gram": "g", "grams": "g", "gr": "g", "kilo": "kg", "kilos": "kg",
    "kilogram": "kg", "kilograms": "kg", "lb": "lbs", "pound": "lbs", "pounds": "lbs",
    "tonne": "t", "tonnes": "t", "ton": "t", "tons": "t",
    "litre": "l", "liter": "l", "litres": "l", "liters": "l",
    "millilitre": "ml", "milliliter": "ml", "millilitres": "ml", "milliliters": "ml",
    "毫米": "mm", "厘米": "cm", "公分": "cm", "米": "m", "公里": "km", "千米": "km",
    "英里": "mi", "克": "g", "公斤": "kg", "千克": "kg", "斤": "jin", "吨": "t",
    "升": "l", "毫升": "ml",
}  # fmt: skip
_UNITS["jin"] = ("mass", 0.5)  # 斤, half a kilogram

_LATIN_UNIT = "|".join(
    sorted((w for w in (*_SPELLINGS, *_UNITS) if w.isascii()), key=len, reverse=True)
)
_CJK_UNIT = "|".join(sorted((w for w in _SPELLINGS if not w.isascii()), key=len, reverse=True))
# A number and its unit: "2 km", "1.5km", "300 metres", 半径1公里, 五百米, 两公斤.
_WRITTEN = re.compile(
    r"(?<![\w.])(\d{1,7}(?:\.\d{1,4})?)\s?(" + _LATIN_UNIT + r")(?![A-Za-z0-9])"
    r"|(?<![\d.])(\d{1,7}(?:\.\d{1,4})?|[零〇一二两三四五六七八九十百千万]{1,6})\s?("
    + _CJK_UNIT
    + r")",
    re.IGNORECASE,
)
# A parameter's unit in its description: "in metres", "(km)", （米）, 单位：米.
_DESCRIBED = re.compile(
    r"\bin\s+(" + _LATIN_UNIT + r")\b|\((" + _LATIN_UNIT + r")\)"
    r"|[（(](" + _CJK_UNIT + r")[）)]|单位[为是:：]?\s?(" + _CJK_UNIT + r")",
    re.IGNORECASE,
)
_NAME_PART = re.compile(r"[_\W]+|(?<=[a-z])(?=[A-Z])")


def unit_of(name: str, spec: dict[str, Any]) -> str | None:
    """The unit a number parameter is counted in, by its name's last word ("radius_m",
    "weightKg", "distance_miles") or its description ("Radius in metres."); None when
    neither names one of ``_UNITS``."""
    parts = [p.lower() for p in _NAME_PART.split(name) if p]
    if len(parts) > 1:  # "m" alone is no unit, and neither is a name of one word
        unit = _canonical(parts[-1])
        if unit is not None:
            return unit
    described = _DESCRIBED.search(str(spec.get("description") or "")[:300])
    if described is not None:
        return _canonical(next(g for g in described.groups() if g))
    return None


def _canonical(word: str) -> str | None:
    lowered = word.lower()
    unit = _SPELLINGS.get(lowered, lowered)
    return unit if unit in _UNITS else None


def converted(query: str, unit: str, used: set[int]) -> tuple[float, int] | None:
    """The first measure the query writes in another unit of ``unit``'s dimension, in
    ``unit`` (rounded to the thousandth), with where it stands; None when there is none.
    A measure in ``unit`` itself is left to the rules that read plain numbers, unless it
    is written in Chinese numerals (五百米)."""
    dimension, size = _UNITS[unit]
    for match in _WRITTEN.finditer(query):
        number, written = (match[1], match[2]) if match[1] else (match[3], match[4])
        start = match.start(1) if match[1] else match.start(3)
        if start in used:
            continue
        theirs = _canonical(written)
        if theirs is None or _UNITS[theirs][0] != dimension:
            continue
        if theirs == unit and number[0].isdigit():
            continue  # "300m" of ``radius_m``: a plain number
        value = _value(number)
        if value is None:
            continue
        return round(value * _UNITS[theirs][1] / size, 3), start
    return None


def _value(number: str) -> float | None:
    if number[0].isdigit():
        return float(number)
    written = temporal.cn_number(number)
    return float(written) if written is not None else None
