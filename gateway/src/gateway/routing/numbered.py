"""Numbered things asked for as a list: "module 6", "modules 1 to 3", "pages 2, 5 and 7",
第二和第五模块, 第1到3章.

A list of integers named after what it numbers (``modules``, ``chapter_numbers``,
``pages``) is filled from the numbers written next to that noun: after it in English
("modules 1 to 3", "module #4"), before or after it in Chinese (第二和第五模块, 模块2和5).
A range ("1 to 3", "2-4", 第1到3) is every number in it. The Chinese noun is known by
its dictionary sense (模块 "module", 章 "chapter"), or by a short table of the counters a
dictionary's first sense names otherwise (页 is "head" first, "page" later).
"""

from __future__ import annotations

import re
from typing import Any

from gateway.routing import temporal
from gateway.routing.gloss import dictionary, has_han

# Trailing words of a list's name that say "numbers of", not what is numbered.
_GENERIC = frozenset(("number", "numbers", "num", "nums", "no", "nos", "ids", "id", "list"))
_NAME_PARTS = re.compile(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])")
_EN_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_EN_NUMBER = r"(?:\d{1,4}|" + "|".join(_EN_NUMBERS) + r")(?![\w.:/]|-\d+-)"
_EN_JOIN = r"\s*(?:,\s*(?:and\s+)?|&|/|\band\b|\bto\b|\bthrough\b|\bthru\b|-|–)\s*"
_EN_RANGE = re.compile(r"\s*(?:\bto\b|\bthrough\b|\bthru\b|-|–)\s*", re.IGNORECASE)
_ZH_NUMBER = r"(?:\d{1,4}|[一二两三四五六七八九十]{1,3})"
_ZH_JOIN = r"\s*(?:和|、|,|，|及|与|跟|到|至|-|~|～)\s*"
_ZH_RANGE = re.compile(r"\s*(?:到|至|-|~|～)\s*")
# Counters whose dictionary sense comes late: what each numbers in a request.
_ZH_COUNTERS = {
    "页": "page", "节": "lesson section session", "集": "episode", "层": "floor level",
    "楼": "floor", "课": "lesson", "周": "week", "期": "issue period", "轮": "round",
    "号": "number", "排": "row", "站": "stop station",
}  # fmt: skip
_MAX_SPAN = 100  # a range longer than this is no list of things one asks for


def noun_of(name: str) -> str | None:
    """The thing a list's name numbers, singular: ``modules`` → module,
    ``chapter_numbers`` → chapter, ``pageNums`` → page; None for a name of numbers alone."""
    parts = [p.lower() for p in _NAME_PARTS.split(name) if p]
    while parts and parts[-1] in _GENERIC:
        parts.pop()
    if not parts:
        return None
    word = parts[-1]
    if word.endswith("ies"):
        word = word[:-3] + "y"
    elif word.endswith(("ches", "shes", "xes", "sses")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word if len(word) >= 3 and word.isalpha() else None


def numbers_named(query: str, name: str, items: dict[str, Any]) -> list[int]:
    """The numbers the request writes for the things ``name`` numbers, in the order
    written, ranges spelled out; none when it writes none, or one outside the items'
    bounds (then it numbers something else)."""
    noun = noun_of(name)
    if noun is None:
        return []
    found = _english(query, noun)
    if not found and has_han(query):
        found = _chinese(query, noun)
    unique = list(dict.fromkeys(found))
    low, high = items.get("minimum"), items.get("maximum")
    if any(
        (isinstance(low, int | float) and n < low) or (isinstance(high, int | float) and n > high)
        for n in unique
    ):
        return []
    return unique


def _english(query: str, noun: str) -> list[int]:
    listed = re.compile(
        rf"\b{re.escape(noun)}s?\b\s*(?:#\s*|no\.?\s*|numbers?\s+)?"
        rf"(?P<list>{_EN_NUMBER}(?:{_EN_JOIN}{_EN_NUMBER})*)",
        re.IGNORECASE,
    )
    found: list[int] = []
    for match in listed.finditer(query):
        found.extend(_spelled_out(match["list"], _EN_NUMBER, _EN_RANGE))
    return found


def _chinese(query: str, noun: str) -> list[int]:
    counted = rf"第?{_ZH_NUMBER}(?:{_ZH_JOIN}第?{_ZH_NUMBER})*"
    found: list[int] = []
    # 第二和第五模块, 第1到3章: the numbers, then the noun
    listed = rf"第(?P<list>{_ZH_NUMBER}(?:{_ZH_JOIN}第?{_ZH_NUMBER})*)\s*个?"
    for match in re.finditer(listed, query):
        if _names(query[match.end() : match.end() + 3], noun):
            found.extend(_spelled_out(match["list"], _ZH_NUMBER, _ZH_RANGE))
    if found:
        return found
    # 模块2和5, 模块 3: the noun, then the numbers
    for match in re.finditer(rf"(?P<noun>[\u4e00-\u9fff]{{1,3}})\s*(?P<list>{counted})", query):
        if _names_at_end(match["noun"], noun):
            found.extend(_spelled_out(match["list"].replace("第", ""), _ZH_NUMBER, _ZH_RANGE))
    return found


def _names(text: str, noun: str) -> bool:
    """Whether ``text`` starts with a Chinese word for ``noun``."""
    return any(_means(text[:size], noun) for size in (3, 2, 1) if len(text) >= size)


def _names_at_end(text: str, noun: str) -> bool:
    """Whether ``text`` ends with a Chinese word for ``noun``."""
    return any(_means(text[-size:], noun) for size in (3, 2, 1) if len(text) >= size)


def _means(word: str, noun: str) -> bool:
    senses = f"{dictionary().get(word, '')} {_ZH_COUNTERS.get(word, '')}"
    return re.search(rf"\b{re.escape(noun)}s?\b", senses, re.IGNORECASE) is not None


def _spelled_out(written: str, number: str, ranged: re.Pattern[str]) -> list[int]:
    """The numbers of a written list, a range as every number in it."""
    values: list[int] = []
    position = 0
    pieces = list(re.finditer(number, written, re.IGNORECASE))
    for piece in pieces:
        value = _value(piece.group(0))
        if value is None:
            return []
        between = written[position : piece.start()]
        if values and ranged.fullmatch(between) and 0 < value - values[-1] <= _MAX_SPAN:
            values.extend(range(values[-1] + 1, value + 1))
        else:
            values.append(value)
        position = piece.end()
    return values


def _value(written: str) -> int | None:
    lowered = written.lower()
    if lowered in _EN_NUMBERS:
        return _EN_NUMBERS[lowered]
    return temporal.cn_number(written)
