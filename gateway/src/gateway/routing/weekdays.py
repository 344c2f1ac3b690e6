"""Days of the week a recurring request names, for a parameter whose options are the days.

A weekly rule's ``days`` (``["mon", ..., "sun"]``, ``["MO", "TU", ...]``, ``["Monday",
...]``, ``["周一", ...]``) is filled from what people write: single days ("on fridays and
saturdays", 周六周日, 周一三五), ranges ("monday to friday", "mon-fri", 周一到周五, 周一至五),
and the words for several days ("weekdays", "weekends", "every night", "daily", 工作日,
周末, 每天), less those set aside ("every day except sunday", 除了周日).

A day's options are recognised only when at least five of them are days and no two the
same day (:func:`option_days`): an enum of moods that holds "sat" is not a week. A
three-letter day the request writes on its own in lower case ("the sun", "I sat") names
no day; written in a list or a range ("sat and sun", "mon-fri") it does.

Every pattern is bounded at each position: linear in the request's length.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "七": 6}
WEEK = tuple(range(7))
WORKING = (0, 1, 2, 3, 4)
WEEKEND = (5, 6)

# A day in English: its name, or a short form ("tue", "tues", "thurs", "weds"), plural too.
_EN_DAY = (
    r"(?:mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday|s)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?"
    r"|sat(?:urday)?|sun(?:day)?)s?"
)
_EN_DAY_WORD = re.compile(rf"(?<![A-Za-z])({_EN_DAY})(?![A-Za-z])", re.IGNORECASE)
_EN_RANGE = re.compile(
    rf"(?<![A-Za-z])(?:from\s+)?({_EN_DAY})\s*(?:-|–|~|to|through|thru|till|until)\s*({_EN_DAY})"
    r"(?![A-Za-z])",
    re.IGNORECASE,
)
_ZH_PREFIX = r"(?:周|星期|礼拜)"
# 周一到周五, 星期一至星期五, 周一到五, 周一~周五
_ZH_RANGE = re.compile(
    rf"{_ZH_PREFIX}([一二三四五六日天])\s*(?:到|至|-|–|~|～)\s*{_ZH_PREFIX}?([一二三四五六日天])"
)
# 周六, 周六日, 周一三五, 星期天 (not 周末, nor 周三 of 一周三次: "three times a week")
_ZH_DAYS = re.compile(
    r"(?<!(?<![周期拜])[一二两三四五六七八九十几])(?:周|星期|礼拜)([一二三四五六日天]{1,7})"
)

_EVERY_DAY = re.compile(
    r"(?<![A-Za-z])(?:every\s*(?:single\s+)?(?:day|night|morning|evening|afternoon)"
    r"|each\s+(?:day|night|morning|evening)|daily|nightly|seven\s+days\s+a\s+week|7\s+days"
    r"\s+a\s+week)(?![A-Za-z])|每天|每日|每晚|天天|每个?晚上|每个?早上|每一天",
    re.IGNORECASE,
)
_WORKING_DAYS = re.compile(
    r"(?<![A-Za-z])(?:week\s?(?:days|nights)|work\s?days|working\s+days|business\s+days"
    r"|(?:every|each)\s+(?:week\s?(?:day|night)|work\s?day|working\s+day|business\s+day))"
    r"(?![A-Za-z])"
    r"|工作日|上班的?日子",
    re.IGNORECASE,
)
_WEEKENDS = re.compile(r"(?<![A-Za-z])week\s?-?ends?(?![A-Za-z])|周末|双休日", re.IGNORECASE)
# What follows these is taken out: "every day except sunday", "除了周日".
_EXCEPT = re.compile(
    r"(?<![A-Za-z])(?:except(?:\s+for|\s+on)?|but\s+not(?:\s+on)?|excluding|apart\s+from"
    r"|other\s+than|not\s+on)(?![A-Za-z])|除了?|不包括|不含",
    re.IGNORECASE,
)
_ZH_OPTION = re.compile(rf"{_ZH_PREFIX}([一二三四五六日天七])")
_JOINED = r"(?:,|&|/|and|or|to|-|–|through|thru)"
_LISTED_BEFORE = re.compile(rf"{_EN_DAY}\s*{_JOINED}\s*$", re.IGNORECASE)
_LISTED_AFTER = re.compile(rf"\s*{_JOINED}\s*{_EN_DAY}(?![A-Za-z])", re.IGNORECASE)
# Short forms that are also words: on their own in lower case they name no day.
_WORDS_TOO = frozenset(("sat", "sats", "sun", "suns", "wed", "weds", "mon", "tue", "thu"))


def _day_of_option(option: object) -> int | None:
    """The day an option names: "monday", "Mon", "MO", "tues", "周一", "星期天"."""
    if not isinstance(option, str):
        return None
    text = option.strip().rstrip(".").lower()
    if len(text) >= 2:
        for day, name in enumerate(_NAMES):
            if name.startswith(text) and (len(text) >= 3 or text == name[:2]):
                return day
    zh = _ZH_OPTION.fullmatch(option.strip())
    return _ZH[zh[1]] if zh else None


def option_days(options: Sequence[Any]) -> dict[int, Any] | None:
    """Each day's option, when the options are days of the week: at least five, no two
    the same day; else None."""
    days: dict[int, Any] = {}
    for option in options:
        day = _day_of_option(option)
        if day is None or day in days:
            return None
        days[day] = option
    return days if len(days) >= 5 else None


def _en_day(word: str) -> int:
    word = word.lower().rstrip("s") if len(word) > 4 else word.lower()
    return next(d for d, name in enumerate(_NAMES) if name.startswith(word[:3]))


def _span(first: int, last: int) -> list[int]:
    """``first`` to ``last`` inclusive, round the end of the week ("fri to mon")."""
    return [(first + step) % 7 for step in range((last - first) % 7 + 1)]


def _listed(query: str, start: int, end: int) -> bool:
    """Whether the day at ``query[start:end]`` stands in a list or a range of days."""
    before = query[max(0, start - 8) : start]
    after = query[end : end + 8]
    return bool(_LISTED_BEFORE.search(before) or _LISTED_AFTER.match(after))


def _days_in(text: str) -> set[int]:
    """The days ``text`` names one by one or in ranges, in English or Chinese."""
    days: set[int] = set()
    for match in _EN_RANGE.finditer(text):
        days.update(_span(_en_day(match[1]), _en_day(match[2])))
    for match in _ZH_RANGE.finditer(text):
        days.update(_span(_ZH[match[1]], _ZH[match[2]]))
    for match in _EN_DAY_WORD.finditer(text):
        word = match[1]
        if word in _WORDS_TOO and not _listed(text, match.start(), match.end()):
            continue  # lower-case "sun", "sat": a word, unless listed with other days
        days.add(_en_day(word))
    for match in _ZH_DAYS.finditer(text):
        days.update(_ZH[char] for char in match[1])
    return days


def named(query: str) -> list[int]:
    """The days of the week ``query`` names, Monday first; [] when it names none."""
    cut = _EXCEPT.search(query)
    kept, set_aside = (query, "") if cut is None else (query[: cut.start()], query[cut.end() :])
    days = _days_in(kept)
    if _EVERY_DAY.search(kept):
        days.update(WEEK)
    if _WORKING_DAYS.search(kept):
        days.update(WORKING)
    if _WEEKENDS.search(kept):
        days.update(WEEKEND)
    if days and set_aside:
        days -= _days_in(set_aside[:40])
        if _WEEKENDS.search(set_aside[:20]):
            days -= set(WEEKEND)
    return sorted(days)


# A weekday that names a date, not a day of every week: "starting next Monday", 下周三.
_DATED_DAY = re.compile(
    rf"(?<![A-Za-z])(?:next|this|last|coming|starting)\s+(?:the\s+)?(?:{_EN_DAY})(?![A-Za-z])"
    r"|(?:下|这|本|上)(?:个)?(?:周|星期|礼拜)[一二三四五六日天](?![一二三四五六日天]|到|至|-|~)",
    re.IGNORECASE,
)


def options_named(query: str, options: Sequence[Any]) -> list[Any]:
    """The options of a list of days that ``query`` names, in the options' order; []
    when the options are not days or the query names none. A day that dates something
    ("from next Monday") is no option."""
    days = option_days(options)
    if days is None:
        return []
    wanted = set(named(_DATED_DAY.sub(" ", query)))
    return [option for option in options if _day_of_option(option) in wanted]
