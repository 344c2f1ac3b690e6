"""Dates, months and lengths of time in a request, read against today's date.

Offline argument filling (``extract``) looks in a request for the value a schema
asks for. People name time the way they speak ("last month", "March", "上个月",
"tomorrow", "the past two weeks", "近三个月", "for 2 hours"), so a ``month``
checked by ``^\\d{4}-\\d{2}$`` or a ``days`` integer finds nothing in the words
themselves. This module reads such expressions:

- :func:`resolve`: the text with calendar expressions rewritten in ISO form (a
  month: ``2026-03``; a day: ``2026-12-02``; a time: ``14:30`` for "下午两点半" or
  "2:30 pm"), for the schema's ``pattern`` or
  ``format`` to find. A month without a year is the latest one not in the future
  ("March" in December 2026 is 2026-03: requests name months to ask about them);
  a day without a year is the nearest such day ("Jan 5" in December is the coming
  one); a bare weekday is the coming one.
- :func:`duration`: the length of time the text names, in a parameter's unit
  (:func:`unit_of`): "past week" is 7 days, "2 hours" 120 minutes, "近三个月" 90 days.

Every pattern here is fixed (no input builds one) and has no nested repetition, so
reading a long request stays linear.
"""

from __future__ import annotations

import calendar
import functools
import itertools
import math
import re
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

# --- numbers in words ----------------------------------------------------------------------

_EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "couple of": 2, "few": 3,
    "another": 1, "one more": 1,  # "stay another year", "one more month"
}  # fmt: skip
_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
_CN_NUMBER = r"[零〇一二两三四五六七八九十百]{1,5}"


_CN_UNITS = {"十": 10, "百": 100, "千": 1000}


def cn_number(text: str) -> int | None:
    """A number written in digits or Chinese numerals ("十二", "三十五", "两", "三十八万",
    "一万二" 12,000, "两千五" 2,500: a digit after a unit counts in the unit below it)."""
    if text.isdigit():
        return int(text)
    total, section, current, unit = 0, 0, 0, 0
    for char in text:
        if char in _CN_DIGITS:
            current = _CN_DIGITS[char]
        elif char in _CN_UNITS:
            unit = _CN_UNITS[char]
            section += (current or 1) * unit
            current = 0
        elif char == "万" and (section or current):
            total += (section + current) * 10_000
            section, current, unit = 0, 0, 10_000
        else:
            return None
    if current and unit >= 100 and text[-2:-1] not in _CN_DIGITS and text[-2:-1] != "零":
        current *= unit // 10  # 两千五 is 2,500, 一万二 12,000, 三百五 350
    return total + section + current


def _amount(text: str | None) -> float | None:
    if not text:
        return 1.0
    text = " ".join(text.lower().split())
    if text in _EN_NUMBERS:
        return float(_EN_NUMBERS[text])
    tens, _, ones = text.replace("-", " ").partition(" ")
    if tens in _EN_NUMBERS and ones in _EN_NUMBERS and _EN_NUMBERS[tens] >= 20:
        return float(_EN_NUMBERS[tens] + _EN_NUMBERS[ones])  # forty-five
    if text == "半":
        return 0.5
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        value = float(text)  # a run of 309 digits or more reads as infinite: no amount
        return value if math.isfinite(value) else None
    number = cn_number(text)
    return None if number is None else float(number)


# --- lengths of time -------------------------------------------------------------------------

_SECONDS = {
    "second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400,
    "fortnight": 14 * 86400, "month": 30 * 86400, "quarter": 90 * 86400, "year": 365 * 86400,
}  # fmt: skip
_EN_UNIT = {
    "sec": "second", "secs": "second", "second": "second", "seconds": "second",
    "min": "minute", "mins": "minute", "minute": "minute", "minutes": "minute",
    "h": "hour", "hr": "hour", "hrs": "hour", "hour": "hour", "hours": "hour",
    "day": "day", "days": "day", "week": "week", "weeks": "week", "wk": "week", "wks": "week",
    "fortnight": "fortnight", "month": "month", "months": "month", "mo": "month",
    "quarter": "quarter", "quarters": "quarter", "year": "year", "years": "year", "yr": "year",
}  # fmt: skip
_ZH_UNIT = {
    "秒": "second", "秒钟": "second", "分钟": "minute", "小时": "hour", "个小时": "hour",
    "钟头": "hour", "个钟头": "hour", "个钟": "hour", "天": "day", "周": "week", "个星期": "week",
    "星期": "week", "个礼拜": "week", "礼拜": "week", "个月": "month", "季度": "quarter",
    "个季度": "quarter", "年": "year",
}  # fmt: skip
_TENS_AND_ONES = (  # "forty-five", "twenty one"
    r"(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[\s-]"
    r"(?:one|two|three|four|five|six|seven|eight|nine)"
)
_EN_COUNT = _TENS_AND_ONES + r"|\d+(?:\.\d+)?|another|one\s+more|an?|one|two|three|four|five"
_EN_COUNT += r"|six|seven|eight"
_EN_COUNT += r"|nine|ten|eleven|twelve"
_EN_COUNT += r"|fifteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|couple of|few"
_EN_SPAN = re.compile(  # (not the rate of "three times a day", "once per week")
    r"(?<![\w.])(?<!times\s)(?<!once\s)(?<!twice\s)(?<!per\s)"
    r"(?:(half\s+an?|" + _EN_COUNT + r")\s*-?\s*|(past|last|previous|recent|this)\s+)"
    r"(" + "|".join(sorted(_EN_UNIT, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)
_ZH_SPAN = re.compile(  # (?<!\d): a run of digits is read from its start only, once
    r"((?<!\d)\d+(?:\.\d+)?|"
    + _CN_NUMBER
    + r"|半)\s*("
    + "|".join(sorted(_ZH_UNIT, key=len, reverse=True))
    # 一天两次 is a rate, no length; 4个月一次 is once in that length
    + r")(?!\s*(?![1一]\s*次)(?:\d|[一二两三四五六七八九十]){1,3}\s*次)"
    + r"|(上|本|这|近|最近|过去)(?:一)?(个月|周|星期|礼拜|季度|年)"
)
_ZH_LAST_YEAR = re.compile(r"去年(?!\s*(?:\d|[一二三四五六七八九十])+\s*月)")
# A length and a half: 一个半小时, 两天半, 1个半月; "an hour and a half", "2 and a half days".
_ZH_AND_HALF = re.compile(
    r"((?<!\d)\d+|" + _CN_NUMBER + r")\s*(?:个\s*半\s*(小时|钟头|月|星期|礼拜)"
    r"|(小时|个小时|钟头|个钟头|天|周|个星期|个月|年)\s*半)"
)
_EN_AND_HALF = re.compile(
    r"(?<![\w.])(?:(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten)\s+and\s+a\s+half\s+"
    r"(hours?|days?|weeks?|months?|years?|minutes?)"
    r"|(an?|one)\s+(hour|day|week|month|year|minute)\s+and\s+a\s+half)\b",
    re.IGNORECASE,
)
# A length in two units, the larger first: "2 hours 12 minutes", 两小时十二分钟, "1h30m".
_SPAN_JOINT = re.compile(r"\s{0,2}(?:and|,|零)?\s{0,2}", re.IGNORECASE)


def _and_half(match: re.Match[str]) -> tuple[float, str] | None:
    if match.re is _ZH_AND_HALF:
        amount, unit = _amount(match[1]), _ZH_UNIT.get(match[2] or match[3])
        unit = unit or ("month" if (match[2] or match[3]) == "月" else None)
    else:
        amount = _amount(match[1] or match[3])
        unit = _EN_UNIT.get((match[2] or match[4]).lower())
    return None if amount is None or unit is None else (amount + 0.5, unit)


def _en_span(match: re.Match[str]) -> tuple[float, str] | None:
    count, relative, unit = match.group(1), match.group(2), _EN_UNIT[match.group(3).lower()]
    if match.group(3).lower() == "h" and not (count or "")[:1].isdigit():
        return None  # "1.5h", "72h"; not "an h"
    if count and count.lower().startswith("half"):
        return 0.5, unit
    if relative is not None:
        return 1.0, unit
    amount = _amount(count)
    return None if amount is None else (amount, unit)


def _zh_span(match: re.Match[str]) -> tuple[float, str] | None:
    if match.group(3):  # 上周, 近一个月, 过去一年
        return 1.0, _ZH_UNIT.get(match.group(4), "month")
    amount, unit = _amount(match.group(1)), _ZH_UNIT[match.group(2)]
    if amount is None or (unit == "year" and amount >= 100):  # 2025年 is a year, not a span
        return None
    return amount, unit


def duration(text: str, unit: str) -> tuple[float, int, int] | None:
    """The first length of time ``text`` names, in ``unit`` (a key of the unit table),
    with where it stands in ``text`` (start, end)."""
    found: list[tuple[int, int, float, str]] = []
    readers = (
        (_EN_SPAN, _en_span), (_ZH_SPAN, _zh_span), (_ZH_AND_HALF, _and_half),
        (_EN_AND_HALF, _and_half),
    )  # fmt: skip
    for pattern, read in readers:
        for match in pattern.finditer(text):
            span = read(match)
            if span is not None:
                found.append((match.start(), match.end(), *span))
    for match in _ZH_LAST_YEAR.finditer(text):
        found.append((match.start(), match.end(), 1.0, "year"))
    if not found:
        return None
    # The first length, the longest reading where two start together (一个半小时, not 半小时)
    start, end, amount, named = min(found, key=lambda f: (f[0], -f[1]))
    seconds = amount * _SECONDS[named]
    for later in sorted(f for f in found if f[0] >= end):  # "2 hours 12 minutes"
        joint = _SPAN_JOINT.match(text, end)
        if joint is None or joint.end() != later[0] or _SECONDS[later[3]] >= _SECONDS[named]:
            break
        seconds += later[2] * _SECONDS[later[3]]
        end, named = later[1], later[3]
    converted = seconds / _SECONDS[unit]
    return (converted, start, end) if math.isfinite(converted) else None


# A count of time is named in the plural ("days", "duration_minutes"); "day" or "month"
# alone is a calendar field (the 5th, March), not a length.
_UNIT_NAMES = {
    "seconds": "second", "secs": "second", "minutes": "minute", "mins": "minute",
    "hours": "hour", "hrs": "hour", "days": "day", "weeks": "week", "months": "month",
    "years": "year", "秒数": "second", "分钟数": "minute", "小时数": "hour", "天数": "day",
}  # fmt: skip
# The English plurals of a unit of time: "two weeks" counts no things.
TIME_PLURALS = frozenset(word for word in _UNIT_NAMES if word.isascii())
# Names of a length whose unit only the description gives ("window": "in days").
_SPAN_NAMES = frozenset(
    [
        "duration",
        "period",
        "window",
        "lookback",
        "span",
        "length",
        "interval",
        "timeout",
        "ttl",
        "delay",
        "wait",
        "age",
    ]
)
_UNIT_WORDS = [
    ("second", r"seconds?|秒"), ("minute", r"minutes?|分钟"), ("hour", r"hours?|小时"),
    ("day", r"days?|天"), ("week", r"weeks?"), ("month", r"months?"), ("year", r"years?"),
]  # fmt: skip


def unit_of(name: str, spec: dict[str, Any]) -> str | None:
    """The unit a number parameter counts time in: from its name ("days",
    "duration_minutes"), or for a length-like name ("window", "timeout") from its
    description ("Look back this many days"); None for anything else."""
    words = [w for w in re.split(r"[_\W]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()) if w]
    for word in words:
        if word in _UNIT_NAMES:
            return _UNIT_NAMES[word]
    if not _SPAN_NAMES.intersection(words):
        return None
    description = str(spec.get("description") or "").lower()
    first: tuple[int, str] | None = None
    for unit, pattern in _UNIT_WORDS:
        match = re.search(r"(?<![a-z])(?:" + pattern + r")(?![a-z])", description)
        if match and (first is None or match.start() < first[0]):
            first = (match.start(), unit)
    return first[1] if first else None


# --- calendar expressions --------------------------------------------------------------------

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_MONTHS["sept"] = 9
# "may" is matched apart: alone it is a verb.
_MONTH_WORD = r"(?:" + "|".join(sorted(set(_MONTHS) - {"may"}, key=len, reverse=True)) + r")"
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}


def _shift_month(today: date, months: int) -> str:
    index = today.year * 12 + today.month - 1 + months
    return f"{index // 12:04d}-{index % 12 + 1:02d}"


def _month(year: int | None, month: int, today: date) -> str | None:
    if not 1 <= month <= 12:
        return None
    if year is None:  # the latest such month not in the future
        year = today.year if month <= today.month else today.year - 1
    return f"{year:04d}-{month:02d}"


# A day written just before another, as a range's start: "2026-04-01 到 4月3日".
_RANGE_START = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})\s{0,4}(?:到|至|-|–|~|to|until|till|through|and)?\s{0,4}$"
)


# A day written with its year, in the forms a request uses before they are rewritten:
# "2026-02-14", "2026年2月14日", "March 3 2025", "3 March 2025".
_DATED = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})|(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*[日号]"
    rf"|({_MONTH_WORD})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})"
    rf"|(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_WORD})\.?,?\s+(\d{{4}})",
    re.IGNORECASE,
)
_DATED_WITHIN = 80  # characters before a day without a year searched for one with


def _after(match: re.Match[str]) -> date | None:
    """The day written just before ``match`` (dates already in ISO form), if any; else
    the last day written with its year a little before it ("2026年2月14日送过来，2月22日接走":
    the 22nd is in 2026 too)."""
    start = _RANGE_START.search(match.string, max(0, match.start() - 24), match.start())
    try:
        if start is not None:
            return date(int(start[1]), int(start[2]), int(start[3]))
        dated = list(
            _DATED.finditer(match.string, max(0, match.start() - _DATED_WITHIN), match.start())
        )
        if not dated:
            return None
        g = dated[-1].groups()
        if g[0]:
            return date(int(g[0]), int(g[1]), int(g[2]))
        if g[3]:
            return date(int(g[3]), int(g[4]), int(g[5]))
        if g[6]:
            return date(int(g[8]), _MONTHS[g[6].lower()], int(g[7]))
        return date(int(g[11]), _MONTHS[g[10].lower()], int(g[9]))
    except (ValueError, KeyError):
        return None


def _day(
    year: int | None, month: int, day: int, today: date, after: date | None = None
) -> str | None:
    """A day; without a year, the first such day on or after ``after`` (a range's start
    written before it), else the nearest one to ``today``."""
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year or 2000, month)[1]:
        return None
    if year is None and after is not None:
        for y in (after.year, after.year + 1):
            if day <= calendar.monthrange(y, month)[1] and date(y, month, day) >= after:
                return date(y, month, day).isoformat()
    if year is None:  # the nearest such day
        options = []
        for y in (today.year - 1, today.year, today.year + 1):
            if day <= calendar.monthrange(y, month)[1]:
                options.append(date(y, month, day))
        return min(options, key=lambda d: abs((d - today).days)).isoformat()
    return date(year, month, day).isoformat()


# A day written beside a weekday ("Saturday 2025-06-14", "2025-06-14, Saturday", "周六
# 6月14日", "Saturday the 19th of December", rewritten by then): the weekday only names
# that day's, and the day is the value.
_DAY_AFTER = re.compile(r"(?:[\s,，(（]|the\b){0,4}\d{4}-\d{2}-\d{2}", re.IGNORECASE)
_DAY_BEFORE = re.compile(r"\d{4}-\d{2}-\d{2}[\s,，(（]{0,4}$")


def _beside_a_day(match: re.Match[str]) -> bool:
    text = match.string
    return bool(
        _DAY_AFTER.match(text, match.end())
        or _DAY_BEFORE.search(text, max(0, match.start() - 16), match.start())
    )


# A verb saying something already happened, just before a weekday: "it landed on
# Friday", "the payment came in Tuesday" (the one gone by, not the coming one; "will be
# received on Friday" is still to come).
_HAPPENED = re.compile(
    r"(?<!be\s)(?<!been\s)\b(?:landed|arrived|came\s+in|came\s+through|cleared|received|happened|occurred"
    r"|went\s+out|was\s+(?:paid|sent|filed|made|received)|were\s+(?:paid|sent|filed))"
    r"(?:\s+\w+){0,2}?\s+(?:on\s+|last\s+)?$",
    re.IGNORECASE,
)


_WEEKDAY_STEMS = {name[:3]: i for name, i in _WEEKDAYS.items()}


def _day_of_month(day: int, today: date, weekday: int | None) -> str | None:
    """The ``day`` of a month that falls on ``weekday``, the nearest to today within a
    month or two ("Fri, 4th" on Monday 7 December is the 4th gone by); else the coming
    one (this month's if it is not past, else the next's)."""
    month = today.year * 12 + today.month - 1
    days = []
    for index in range(month - 1, month + 3):
        year, number = divmod(index, 12)
        if 1 <= day <= calendar.monthrange(year, number + 1)[1]:
            days.append(date(year, number + 1, day))
    named = [d for d in days if d.weekday() == weekday]
    if named:
        return min(named, key=lambda d: abs((d - today).days)).isoformat()
    coming = [d for d in days if d >= today]
    return coming[0].isoformat() if coming else None


def _weekday(
    target: int, today: date, *, weeks_ahead: int | None = None, past: bool = False
) -> str:
    """The coming ``target`` weekday, or with ``past`` the last one before today; with
    ``weeks_ahead``, that weekday in the week ``weeks_ahead`` weeks from this one (0: this
    week, 1: next week, -1: last week)."""
    if past:
        back = (today.weekday() - target) % 7 or 7
        return (today - timedelta(days=back)).isoformat()
    if weeks_ahead is None:
        ahead = (target - today.weekday()) % 7 or 7
        return (today + timedelta(days=ahead)).isoformat()
    monday = today - timedelta(days=today.weekday())
    return (monday + timedelta(weeks=weeks_ahead, days=target)).isoformat()


# A weekend named with the week it is in (a bare "weekend" or 周末 is left alone: "我周末
# 不在家" is no date to book).
_WEEKEND = re.compile(
    r"\b(?:this(?:\s+coming)?|(next))\s+weekend\b|(?:这个?|本|(下)个?)周末", re.IGNORECASE
)


def _weekend(today: date, *, weeks_ahead: int) -> str:
    """The Saturday and Sunday of the week ``weeks_ahead`` from this one, from today on
    ("this weekend" said on a Sunday is that Sunday)."""
    saturday = date.fromisoformat(_weekday(5, today, weeks_ahead=weeks_ahead))
    sunday = saturday + timedelta(days=1)
    start = max(saturday, today)
    return sunday.isoformat() if start == sunday else f"{start.isoformat()} to {sunday}"


def _num(text: str | None) -> int | None:
    return None if text is None else cn_number(text)


# A request for what is still free to book (slots, openings, 名额, 空位): the months it
# names are to come ("theory test availability in january", said in December, is the
# coming January; "sales in January" is the one gone by).
_ASKS_FOR_OPENINGS = re.compile(
    r"\b(?:availability|available\s+(?:slots?|dates?|times?|spots?|places?|rooms?|units?)"
    r"|(?:free|open|empty)\s+(?:slots?|spots?|places?)|slots?|openings?|vacanc(?:y|ies))\b"
    r"|名额|空位|空档|档期|有位置|可预约|能约"
    # and an order to book for it: "Book STU-22871 into the flute exam in march"
    # (not what was done: "what did I book in March?")
    r"|(?<!\bi )(?<!\bwe )(?<!\bhave )(?<!\bhad )(?<!\bi've )"
    r"\b(?:book|reserve|register|enrol|enroll|schedule)\b(?!\s+(?:history|list|records?)\b)"
    r"|\bsign\s+(?:me\s+|us\s+)?up\b|预订|报名",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=8)
def _books_ahead(text: str) -> bool:
    """Whether ``text`` asks for openings (``_ASKS_FOR_OPENINGS``): searched once per text,
    not once per month it names (a string's hash is kept, so a lookup costs no rescan)."""
    return _ASKS_FOR_OPENINGS.search(text) is not None


def _coming_month(month: int, today: date) -> str:
    """The month to come (this one, or next year's) of a request that books ahead."""
    return f"{today.year if month >= today.month else today.year + 1:04d}-{month:02d}"


Rewrite = tuple[re.Pattern[str], Callable[[re.Match[str], date], str | None]]
_EDGE = r"(?<![A-Za-z0-9])"
_END = r"(?![A-Za-z0-9])"
_ZH_N = r"(\d{1,2}|[一二三四五六七八九十]{1,3})"
_RELATIVE_DAYS = {
    "the day after tomorrow": 2, "the day before yesterday": -2, "today": 0, "tonight": 0,
    "day after tomorrow": 2, "day before yesterday": -2,  # ("day after tomorrow, got any…")
    "tomorrow": 1, "yesterday": -1, "后天": 2, "前天": -2, "今天": 0, "今日": 0, "明天": 1,
    "明日": 1, "昨天": -1, "昨日": -1, "last night": -1,
    # as people type them in a hurry (not "tmr", which is also a code's letters: TMR-20391)
    "tommorow": 1, "tomorow": 1, "tommorrow": 1, "tmrw": 1, "2moro": 1,
}  # fmt: skip
# 今晚, 明早: a day and a part of it, read as the day and 晚上 / 早上 ("明晚8点" is 20:00).
_ZH_DAY_PART = re.compile(r"([今明昨])([早晚晨])上?")
_ZH_DAYS = {"今": 0, "明": 1, "昨": -1}
_ZH_YEARS = {"去年": -1, "今年": 0, "明年": 1}
_ZH_PARTS = {"晚": "晚上"}
_RELATIVE_MONTHS = {
    "the month before last": -2, "last month": -1, "previous month": -1, "this month": 0,
    "current month": 0, "next month": 1, "上上个月": -2, "上个月": -1, "上月": -1,
    "本月": 0, "这个月": 0, "当月": 0, "下个月": 1, "下月": 1,
}  # fmt: skip


def _words(table: dict[str, int]) -> str:
    return "|".join(re.escape(k) for k in sorted(table, key=len, reverse=True))


_REWRITES: list[Rewrite] = [
    (  # 2025年1月5日, 2025年十二月
        re.compile(r"(\d{4})\s*年\s*" + _ZH_N + r"\s*月(?:\s*" + _ZH_N + r"\s*[日号])?"),
        lambda m, t: (
            _day(int(m[1]), _num(m[2]) or 0, _num(m[3]) or 0, t)
            if m[3]
            else _month(int(m[1]), _num(m[2]) or 0, t)
        ),
    ),
    (  # 去年3月, 今年十月, 明年1月1日
        re.compile(r"(去年|今年|明年)\s*" + _ZH_N + r"\s*月(?:份)?(?:\s*" + _ZH_N + r"\s*[日号])?"),
        lambda m, t: (
            _day(t.year + _ZH_YEARS[m[1]], _num(m[2]) or 0, _num(m[3]) or 0, t)
            if m[3]
            else _month(t.year + _ZH_YEARS[m[1]], _num(m[2]) or 0, t)
        ),
    ),
    (  # 3月5号, 十二月二十二日
        re.compile(
            r"(?<![\d年])" + _ZH_N + r"\s*月\s*" + r"(\d{1,2}|[一二三四五六七八九十]{1,3})\s*[日号]"
        ),
        lambda m, t: _day(None, _num(m[1]) or 0, _num(m[2]) or 0, t, _after(m)),
    ),
    (  # 3月, 十二月份 (not 3个月: a length)
        # (a month in Chinese numerals may follow an id's digits: "读者2100665544十月份")
        re.compile(
            r"((?<![\d年个])\d{1,2}|(?<![年个一二三四五六七八九十])[一二三四五六七八九十]{1,3})\s*月(?:份)?"
        ),
        lambda m, t: (
            _coming_month(_num(m[1]) or 0, t)
            if _books_ahead(m.string) and 1 <= (_num(m[1]) or 0) <= 12
            else _month(None, _num(m[1]) or 0, t)
        ),
    ),
    (  # 2025/03/15, 2025.3.5
        re.compile(_EDGE + r"(\d{4})[/.](\d{1,2})[/.](\d{1,2})" + _END),
        lambda m, t: _day(int(m[1]), int(m[2]), int(m[3]), t),
    ),
    (  # 4/18/2025 (the month first), 18/4/2025 (the day first); 10/4/2025 is either
        re.compile(r"(?<![\d/.:-])(\d{1,2})/(\d{1,2})/(\d{4})(?![\d/.:-])"),
        lambda m, t: (
            _day(int(m[3]), int(m[1]), int(m[2]), t)
            if int(m[2]) > 12 >= int(m[1]) or m[1] == m[2]
            else _day(int(m[3]), int(m[2]), int(m[1]), t)
            if int(m[1]) > 12 >= int(m[2])
            else None
        ),
    ),
    (  # 3/14 (a month first when the second number cannot be one), 14/3 (the day first)
        re.compile(r"(?<![\d/.:-])(?!24/7)(\d{1,2})/(\d{1,2})(?![\d/.:-])"),  # not 24/7
        lambda m, t: (
            _day(None, int(m[1]), int(m[2]), t, _after(m))
            if int(m[2]) > 12 >= int(m[1])
            else _day(None, int(m[2]), int(m[1]), t, _after(m))
            if int(m[1]) > 12 >= int(m[2])
            else None
        ),
    ),
    (  # 2025/03, 2025-3
        re.compile(_EDGE + r"(\d{4})[/.-](\d{1,2})" + r"(?![\d/.-])"),
        lambda m, t: _month(int(m[1]), int(m[2]), t),
    ),
    (  # 12 May 2025, 3rd March, the 9th of June 2025: the day first ("may" with a year)
        re.compile(
            r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(?:(" + _MONTH_WORD + r")\.?"
            r"(?:,?\s+(\d{4}))?|(may),?\s+(\d{4}))\b(?!\s*(?:am|pm)\b)",
            re.IGNORECASE,
        ),
        lambda m, t: _day(
            int(m[3] or m[5]) if m[3] or m[5] else None,
            _MONTHS[(m[2] or m[4]).lower()],
            int(m[1]),
            t,
            _after(m),
        ),
    ),
    (  # March 5, March 5th 2025, June 20-26, 2025, March 2025, Dec; "may" with a day or year
        re.compile(
            r"\b(?:(" + _MONTH_WORD + r")\.?|(may))(?:\s+(\d{1,2})(?:st|nd|rd|th)?"
            r"(?:\s*[-–]\s*(\d{1,2})(?:st|nd|rd|th)?)?)?"
            r"(?:,?\s+(\d{4}))?\b(?!\s*(?:am|pm)\b)",
            re.IGNORECASE,
        ),
        lambda m, t: _english_month(m, t),
    ),
    (
        re.compile(r"(?<![A-Za-z])(" + _words(_RELATIVE_MONTHS) + r")(?![A-Za-z])", re.IGNORECASE),
        lambda m, t: _shift_month(t, _RELATIVE_MONTHS[m[1].lower()]),
    ),
    (
        _ZH_DAY_PART,
        lambda m, t: (
            f"{(t + timedelta(days=_ZH_DAYS[m[1]])).isoformat()} {_ZH_PARTS.get(m[2], '早上')}"
        ),
    ),
    (
        re.compile(r"(?<![A-Za-z])(" + _words(_RELATIVE_DAYS) + r")(?![A-Za-z])", re.IGNORECASE),
        lambda m, t: (t + timedelta(days=_RELATIVE_DAYS[m[1].lower()])).isoformat(),
    ),
    (  # this weekend, next weekend, 这个周末, 下周末: its Saturday to its Sunday
        _WEEKEND,
        lambda m, t: _weekend(t, weeks_ahead=int(bool(m[1] or m[2]))),
    ),
    (  # Wednesday the 16th, Fri 18th: the coming 16th (the weekday only names it)
        re.compile(
            r"\b(" + "|".join(_WEEKDAYS) + r"|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)\.?,?"
            r"\s+(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\b",
            re.IGNORECASE,
        ),
        lambda m, t: _day_of_month(int(m[2]), t, _WEEKDAY_STEMS.get(m[1][:3].lower())),
    ),
    (  # "friday next week", "Friday of next week", "next week friday", "tuesday this
        # week": that weekday of the week named
        re.compile(
            r"\b(?:(" + "|".join(_WEEKDAYS) + r")(?:\s+of)?\s+(next|this|last)\s+week"
            r"|(next|this|last)\s+week(?:'s|,)?\s+(?:on\s+)?(" + "|".join(_WEEKDAYS) + r"))\b",
            re.IGNORECASE,
        ),
        lambda m, t: _weekday(
            _WEEKDAYS[(m[1] or m[4]).lower()],
            t,
            weeks_ahead={"next": 1, "this": 0, "last": -1}[(m[2] or m[3]).lower()],
        ),
    ),
    (  # next Monday, this friday, monday; last tuesday, since tuesday: the one gone by
        re.compile(
            r"\b(?:(next|this|on|last|since|past|previous)\s+)?(" + "|".join(_WEEKDAYS) + r")\b",
            re.IGNORECASE,
        ),
        lambda m, t: (
            ""
            if _beside_a_day(m)
            else _weekday(
                _WEEKDAYS[m[2].lower()],
                t,
                past=(m[1] or "").lower() in ("last", "since", "past", "previous")
                or bool(_HAPPENED.search(m.string, max(0, m.start() - 40), m.start())),
            )
        ),
    ),
    (  # 下周一, 这周五, 周三, 星期天, 上周二 (not 上周一共: "last week in all")
        re.compile(
            r"(下下|下|这|本|上上|上)?(?:个)?(?:周|星期|礼拜)([一二三四五六日天])(?!(?<=一)[共直切])"
        ),
        lambda m, t: (
            ""
            if _beside_a_day(m)
            else _weekday(
                _ZH_WEEKDAYS[m[2]],
                t,
                weeks_ahead={"下下": 2, "下": 1, "这": 0, "本": 0, "上": -1, "上上": -2}.get(m[1]),
            )
        ),
    ),
    (  # "the 14th of August next year", "June 12 this year" (the day rewritten by now):
        # that day of the year named
        re.compile(
            r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])\s*,?\s+(?:of\s+)?(next|this)\s+year\b",
            re.IGNORECASE,
        ),
        lambda m, t: _day_of(t.year + (m[4].lower() == "next"), int(m[2]), int(m[3])),
    ),
    (  # "from tomorrow to the day after" (tomorrow rewritten by now): the day after it
        re.compile(
            r"(?<![\d-])(\d{4}-\d{2}-\d{2})(\s+(?:to|until|till|or|-)\s+)the\s+day\s+after\b"
            r"(?!\s+(?:tomorrow|next|that|this|the|\d))",
            re.IGNORECASE,
        ),
        lambda m, t: f"{m[1]}{m[2]}{date.fromisoformat(m[1]) + timedelta(days=1)}",
    ),
]


_PM = ("下午", "晚上", "傍晚", "中午", "晚")
_HOURS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip


# A part of the day said a few characters before a bare clock, in the same sentence:
# "今晚的牛排馆，5 位，7点半" is 19:30 (今晚 reads 晚上 by then).
_DAY_PART_BEFORE = re.compile(r".*(上午|早上|凌晨|中午|下午|傍晚|晚上)[^。！？!?]{0,16}$")


def _afternoon(match: re.Match[str]) -> bool:
    """Whether a Chinese clock is after noon: its own 下午 / 晚上, or, written bare, the
    part of the day said just before it; with none said, one to six o'clock is ("同一天3点"
    books 15:00: a night hour says 凌晨)."""
    if match[1]:
        return match[1] in _PM
    before = _DAY_PART_BEFORE.search(match.string, max(0, match.start() - 24), match.start())
    if before is not None:
        return before[1] in _PM
    hour = _num(match[2])
    return hour is not None and 1 <= hour <= 6


# Holidays on a fixed day of the year, named as a day ("christmas eve", "new year's day",
# 平安夜, 元旦) or as a time ("before christmas", "by xmas"), not as a thing ("the
# christmas party", 圣诞派对).
_FIXED_HOLIDAYS = {
    "christmas": (12, 25), "xmas": (12, 25), "christmas eve": (12, 24), "xmas eve": (12, 24),
    "christmas day": (12, 25), "xmas day": (12, 25), "boxing day": (12, 26),
    "new year's eve": (12, 31), "new years eve": (12, 31), "new year eve": (12, 31),
    "new year's day": (1, 1), "new years day": (1, 1), "new year day": (1, 1),
    "valentine's day": (2, 14), "valentines day": (2, 14), "halloween": (10, 31),
    "平安夜": (12, 24), "圣诞节": (12, 25), "圣诞节当天": (12, 25), "元旦": (1, 1),
    "跨年夜": (12, 31), "情人节": (2, 14), "万圣节": (10, 31),
}  # fmt: skip
_HOLIDAY = re.compile(
    r"\b(?:(on|before|after|until|till|by|for|over|at|from|through)\s+)?"
    r"(christmas|xmas|boxing|new\s+years?'?s?|valentine'?s?|halloween)"
    r"(?:\s+(eve|day))?\b"
    r"|(圣诞节当天|平安夜|圣诞节|元旦|跨年夜|情人节|万圣节)",
    re.IGNORECASE,
)


def _holiday(match: re.Match[str], today: date) -> str | None:
    """The coming day of a fixed holiday (this year's if it is not past, else next year's),
    after the word written before it ("before christmas" reads "before 2026-12-25")."""
    if match[4]:
        key, before = match[4], ""
    else:
        name = re.sub(r"\s+", " ", match[2].lower()).replace("’", "'")
        key = f"{name} {match[3].lower()}" if match[3] else name
        if not match[3] and not match[1] and name != "halloween":
            return None  # "the christmas party"
        if name.startswith("new year") and not match[3]:
            return None  # "new year" alone is a year, not its first day
        key = key.replace("new years' ", "new years ").replace("valentine ", "valentine's ")
        before = f"{match[1]} " if match[1] else ""
    month_day = _FIXED_HOLIDAYS.get(key)
    if month_day is None:
        return None
    day = date(today.year, *month_day)
    if day < today:
        day = date(today.year + 1, *month_day)
    return f"{before}{day.isoformat()}"


def _clock(hour: int | None, minute: int, pm: bool) -> str | None:
    if hour is None or not 0 <= hour <= 23 or not 0 <= minute <= 59:
        return None
    if pm and hour < 12:
        hour += 12
    return f"{hour:02d}:{minute:02d}"


_REWRITES[:0] = [(_HOLIDAY, _holiday)]  # before a month's or a weekday's words
_REWRITES += [
    (  # 上午十点, 下午两点半, 晚上8点30分
        re.compile(
            # (?<!\s): a run of spaces is entered once, not again from each of its spaces
            r"(上午|早上|中午|下午|傍晚|晚上|(?<![最提])早|(?<![最])晚)?(?<!\s)\s*(\d{1,2}|[一二两三四五六七八九十]{1,3})\s*[点點]"
            # the minutes end there: "9点 2040店" is nine o'clock at store 2040
            # and a count after it is none: "晚上7点 一小时" is 19:00 for an hour
            r"(?:\s*(半)|\s*(\d{1,2}(?!\d)|[一二三四五六七八九十]{1,3})"
            r"(?!\s*(?:小时|个|刻|天|次|节|人|位|张|晚|周|月|年|号|份|分钟))\s*分?)?"
        ),
        lambda m, t: _clock(_num(m[2]), 30 if m[3] else (_num(m[4]) or 0), _afternoon(m)),
    ),
    (  # 1-3pm, 10:30 to 12 am, 11-1pm: both ends in the half of the day written after them
        re.compile(
            r"(?<![\d-])\b(\d{1,2})(?:[:.](\d{2}))?\s?(?:-|–|to|till|until)\s?(\d{1,2})(?:[:.](\d{2}))?"
            r"\s*([ap])\.?m\b\.?",
            re.IGNORECASE,
        ),
        lambda m, t: _clock_range(m),
    ),
    (  # 3pm, 3:30 pm, 6.30am, 10 am
        re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?m\b\.?", re.IGNORECASE),
        lambda m, t: _clock(
            int(m[1]) % 12 if m[3].lower() == "a" or int(m[1]) != 12 else 12,
            int(m[2] or 0),
            m[3].lower() == "p",
        ),
    ),
    (  # 8 in the morning, 3 in the afternoon, 9 at night, 7 o'clock in the evening
        re.compile(
            r"(?<![\d:./-])\b(\d{1,2})(?:[:.](\d{2}))?(?:\s*o'?clock)?\s+(in\s+the\s+(morning|afternoon|evening)"
            r"|at\s+night|tonight)\b",
            re.IGNORECASE,
        ),
        lambda m, t: (
            _clock(
                int(m[1]) % 12 if (m[4] or "").lower() == "morning" else int(m[1]),
                int(m[2] or 0),
                (m[4] or "").lower() != "morning",
            )
            if 1 <= int(m[1]) <= 12
            else None
        ),
    ),
    (  # eleven pm, seven thirty am
        re.compile(
            rf"\b({'|'.join(_HOURS)})(?:\s+(fifteen|thirty|forty-five|forty\s+five))?"
            r"\s*([ap])\.?m\b\.?",
            re.IGNORECASE,
        ),
        lambda m, t: _clock(
            _HOURS[m[1].lower()] % 12 if m[3].lower() == "a" or m[1].lower() != "twelve" else 12,
            {"fifteen": 15, "thirty": 30}.get((m[2] or "").lower(), 45 if m[2] else 0),
            m[3].lower() == "p",
        ),
    ),
    (  # at noon, at midnight, Saturday noon
        re.compile(
            r"(?:\b(?:at|by|from|until|till)|(?<=day)|(?<=tomorrow)|(?<=\d))\s+"
            r"(noon|midday|midnight)\b",
            re.IGNORECASE,
        ),
        lambda m, t: m[0][: -len(m[1])] + ("00:00" if m[1].lower() == "midnight" else "12:00"),
    ),
    (  # 9:30 (a 24-hour clock written without its leading zero; not "1:24-cv-01234")
        re.compile(r"(?<![\d:.])(\d):([0-5]\d)(?![\d:]|-[A-Za-z])"),
        lambda m, t: f"0{m[1]}:{m[2]}",
    ),
    (  # 10:00-16:00, 22:00~06:00: two clocks, as "from … to …" reads them
        re.compile(r"(?<![\d:])(\d\d:\d\d)\s?[-–~～]\s?(\d\d:\d\d)(?![\d:])"),
        lambda m, t: f"{m[1]} to {m[2]}",
    ),
]


_REWRITES += [
    (  # 上个月底, 11月末, 下个月初, "the end of last month" (months resolved by then)
        re.compile(
            r"(?<![\d-])(\d{4})-(\d{2})(?![\d-])\s{0,3}(底|末|初)"
            r"|\b(?:the\s+)?(end|start|beginning)\s+of\s+(\d{4})-(\d{2})(?![\d-])",
            re.IGNORECASE,
        ),
        lambda m, t: _month_edge(
            int(m[1] or m[5]), int(m[2] or m[6]), (m[3] or m[4]).lower() in ("底", "末", "end")
        ),
    ),
]


_REWRITES += [
    (  # 下个月1号, "2027-01 the 5th" (the month resolved by then): that day of it
        re.compile(
            r"(?<![\d-])(\d{4})-(\d{2})(?![\d-])\s{0,3}(?:the\s+)?(\d{1,2})\s*(?:号|日|st|nd|rd|th)"
        ),
        lambda m, t: _day_of(int(m[1]), int(m[2]), int(m[3])),
    ),
    (  # "the 1st of next month" ("the 1st of 2027-01" by then): that day of it
        re.compile(
            r"\b(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)\s+of\s+(\d{4})-(\d{2})(?![\d-])",
            re.IGNORECASE,
        ),
        lambda m, t: _day_of(int(m[2]), int(m[3]), int(m[1])),
    ),
    (  # 月底, 月末, "the end of the month": this month's last day
        re.compile(
            r"(?<![\d月个本这上下-])(?:月底|月末)|\b(?:the\s+)?end\s+of\s+(?:the|this)\s+month\b",
            re.IGNORECASE,
        ),
        lambda m, t: _month_edge(t.year, t.month, True),
    ),
    (  # "from the 14th to the 18th", "between the 3rd and the 9th": the first day the
        # next such day, the last the next one on or after it
        re.compile(
            r"\b(from|between)\s+the\s+(\d{1,2})(?:st|nd|rd|th)"
            r"(\s+(?:to|until|till|through|thru|and)\s+|\s?[-–]\s?)(?:the\s+)?"
            r"(\d{1,2})(?:st|nd|rd|th)\b",
            re.IGNORECASE,
        ),
        lambda m, t: _days_of_month_range(m, t),
    ),
    (  # "from the 28th", "starting the 28th": this month's, if not gone by (a report's
        # start may be: "from the 3rd" is left as said)
        re.compile(r"\b(from|starting)\s+the\s+(\d{1,2})(?:st|nd|rd|th)\b(?!\s+(?:of|to)\b)", re.I),
        lambda m, t: _from_day(m[1], int(m[2]), t),
    ),
    (  # "on the 22nd", "until the 14th", "move it to the 17th", "should be the 22nd",
        # "make it the 9th": the next such day of a month, today or after
        re.compile(
            r"\b(on|by|until|till|before|through|thru|to|for|after|be|is|it)\s+the\s+"
            r"(\d{1,2})(?:st|nd|rd|th)\b"
            r"(?!\s+(?:of|floor|time|place|row|century|percentile|attempt|option|choice|one"
            r"|item|line|step|page|version|edition|round|level|grade|stage|seat|day|week"
            r"|month|year|quarter|person|position|slot|chapter|module|lesson|session)\b)",
            re.IGNORECASE,
        ),
        lambda m, t: _next_day_of_month(m, t),
    ),
]


def _day_of(year: int, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


def _from_day(word: str, day: int, today: date) -> str | None:
    """ "from the 28th": the 28th of this month, after ``word``, if it is not gone by and
    the month has it; else None (left as said)."""
    found = _day_of(today.year, today.month, day) if day >= today.day else None
    return None if found is None else f"{word} {found}"


def _days_of_month_range(match: re.Match[str], today: date) -> str | None:
    """ "from the 14th to the 18th": the next 14th, and the first 18th on or after it."""
    start = _next_day_of_month(match, today)
    if start is None:
        return None
    first = date.fromisoformat(start.split()[-1])
    day, year, month = int(match[4]), first.year, first.month
    for _ in range(3):
        found = _day_of(year, month, day)
        if found is not None and found >= first.isoformat():
            return f"{start}{match[3]}{found}"
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def _next_day_of_month(match: re.Match[str], today: date) -> str | None:
    """ "on the 22nd": the 22nd of this month if not gone by, else of the next month that
    has it; the preposition stays ("until 2026-12-14")."""
    day = int(match[2])
    year, month = today.year, today.month
    for _ in range(3):
        if day >= (today.day if (year, month) == (today.year, today.month) else 1):
            found = _day_of(year, month, day)
            if found is not None:
                return f"{match[1]} {found}"
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    return None


def _month_edge(year: int, month: int, last: bool) -> str | None:
    """The first or the last day of a month."""
    if not 1 <= month <= 12:
        return None
    return date(year, month, calendar.monthrange(year, month)[1] if last else 1).isoformat()


_MONTH_BEFORE = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s*$", re.IGNORECASE
)


def _clock_range(match: re.Match[str]) -> str | None:
    """Two clocks and the half of the day written after the second: "1-3pm" is 13:00 to
    15:00, "11-1pm" 11:00 to 13:00, "12-2pm" 12:00 to 14:00 (the start is the latest of
    its two readings that is not after the end)."""
    if _MONTH_BEFORE.search(match.string, max(0, match.start() - 12), match.start()):
        return None  # "Dec 3-5pm" is a day and a clock
    first, last = int(match[1]), int(match[3])
    minutes = [int(m) for m in (match[2], match[4]) if m]
    if not (1 <= first <= 12 and 1 <= last <= 12) or any(m > 59 for m in minutes):
        return None
    end = last % 12 + (12 if match[5].lower() == "p" else 0)
    starts = [h for h in (first % 12, first % 12 + 12) if h <= end]
    if not starts:
        return None
    return f"{max(starts):02d}:{match[2] or '00'} to {end:02d}:{match[4] or '00'}"


# Words before a month that make it one to come: "until the end of january", "starting
# in March", "by February" (a month alone is the latest one gone by: "sales for January").
_UNTIL_MONTH = re.compile(
    r"\b(?:until|till|through|thru|by|starting|start|begins?|beginning|effective)"
    r"(?:\s+(?:in|on|at|of|from|the|end|start|beginning|middle|mid))*\s*$",
    re.IGNORECASE,
)


def _english_month(match: re.Match[str], today: date) -> str | None:
    word, may, day, last, year = match.group(1, 2, 3, 4, 5)
    if may and not (day or year):
        return None  # "may" alone is a verb
    month = _MONTHS[(word or may).lower()]
    year_value = int(year) if year else None
    if not day or int(day) > 31:
        before = match.string[max(0, match.start() - 32) : match.start()]
        # "until the end of january", "any slots in january"
        if year_value is None and (_UNTIL_MONTH.search(before) or _books_ahead(match.string)):
            return _coming_month(month, today)
        return _month(year_value, month, today)
    first = _day(year_value, month, int(day), today, _after(match))
    if first is None or last is None:
        return first
    # A range of days in one month, its year written once after it ("June 20-26, 2025").
    end = _day(year_value, month, int(last), today, date.fromisoformat(first))
    return first if end is None or end < first else f"{first} to {end}"


_CALENDAR_VALUE = re.compile(r"\d{4}-\d{2}(?:-\d{2})?|\d{2}:\d{2}")


# Two months a range joins: "March to May 2024", "2024年3月到5月" once resolved.
# The words between a range's two ends, kept as written.
_RANGE_JOIN = r"(\s*(?:to|and|through|till|until|-|–|~|到|至)\s*)"
_MONTH_RANGE = re.compile(
    rf"(?<![\d-])(\d{{4}})-(\d{{2}})(?![\d-]){_RANGE_JOIN}(\d{{4}})-(\d{{2}})(?![\d-])",
    re.IGNORECASE,
)
_WRITTEN_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


def _one_year(original: str, text: str) -> str:
    """A range of months whose year is written once ("March to May 2024") is of that
    year at both ends, when the request writes one year only and the range still runs
    forward ("Dec 2024 to Feb" is left alone)."""
    years = set(_WRITTEN_YEAR.findall(original))
    if len(years) != 1:
        return text
    (year,) = years

    def within(match: re.Match[str]) -> str:
        first, last = match.group(1), match.group(4)
        if first == last or year not in (first, last) or match.group(2) > match.group(5):
            return match.group(0)
        return f"{year}-{match.group(2)}{match.group(3)}{year}-{match.group(5)}"

    return _MONTH_RANGE.sub(within, text)


# Days listed under one month: "21 and 22 December", "Dec 21, 22 and 23",
# "12月28号和29号", "12月1日、2日和3日": each day is written with its month before the days
# are read ("21 December and 22 December"). At most six days a list; a number counting
# something after it ("Jan 5 and 6 people") is no day.
_ORDINAL = r"(?:st|nd|rd|th)?"
_LIST_JOINT = r"\s*(?:,\s*)?(?:and|&)\s+"
_NOT_A_DAY_AFTER = (
    r"(?![\d:.])(?!\s*(?:people|persons|guests|tickets|kids|children|adults|nights|days"
    r"|hours|minutes|units|pcs|pieces|items|times|x)\b)"
)
_DAYS_BEFORE_MONTH = re.compile(
    rf"(?<![\d:.])(\d{{1,2}}){_ORDINAL}((?:\s*,\s*\d{{1,2}}{_ORDINAL}){{0,5}}){_LIST_JOINT}"
    rf"(\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?({_MONTH_WORD})\b",
    re.IGNORECASE,
)
_MONTH_BEFORE_DAYS = re.compile(
    rf"\b({_MONTH_WORD})\.?\s+(\d{{1,2}}){_ORDINAL}((?:\s*,\s*\d{{1,2}}{_ORDINAL}){{0,5}})"
    rf"{_LIST_JOINT}(\d{{1,2}}){_ORDINAL}{_NOT_A_DAY_AFTER}",
    re.IGNORECASE,
)
_CN_DAYS_OF_MONTH = re.compile(
    r"(\d{1,2})\s?月\s?(\d{1,2})\s?([日号])((?:\s?[、，,和及与跟]\s?\d{1,2}\s?[日号]){1,6})"
)
_CN_LISTED_DAY = re.compile(r"(\d{1,2})\s?[日号]")
# A later day of the same month in a later clause, as a day something is done: "12月19号
# 早上8点取，21号还" returns on 12月21号 (not "21号楼", "3号线": a verb must follow).
_CN_LATER_DAY = re.compile(
    r"(\d{1,2})\s?月\s?(\d{1,2})\s?([日号])([^月日号]{0,16}?[，,、；;]\s?)(\d{1,2})\s?([日号])"
    r"(?=\s?(?:还|取|到|走|回|退|离|入|出|送|拿|交|开始|结束|截止|前|之前|以前))"
)
# A range of days in one month: 12月3号到5号, 3月1日至15日.
_CN_DAY_RANGE = re.compile(
    r"(\d{1,2})\s?月\s?(\d{1,2})\s?([日号])\s?(到|至|~|～|-|—)\s?(\d{1,2})\s?([日号])"
)


def _days_of_one_month(text: str) -> str:
    """``text`` with each day of a list under one month written with its month."""

    def days(first: str, middle: str, last: str) -> list[str] | None:
        listed = [first, *re.findall(r"\d{1,2}", middle), last]
        numbers = [int(d) for d in listed]
        ascending = all(a < b for a, b in itertools.pairwise(numbers))
        return listed if ascending and all(1 <= n <= 31 for n in numbers) else None

    def before(match: re.Match[str]) -> str:
        listed = days(match[1], match[2], match[3])
        if listed is None:
            return match.group(0)
        return " and ".join(f"{d} {match[4]}" for d in listed)

    def after(match: re.Match[str]) -> str:
        listed = days(match[2], match[3], match[4])
        if listed is None:
            return match.group(0)
        return " and ".join(f"{match[1]} {d}" for d in listed)

    def chinese(match: re.Match[str]) -> str:
        month, unit = match[1], match[3]
        listed = [match[2], *_CN_LISTED_DAY.findall(match[4])]
        return "和".join(f"{month}月{d}{unit}" for d in listed)

    def chinese_range(match: re.Match[str]) -> str:
        month, first, last = match[1], int(match[2]), int(match[5])
        if not 1 <= first < last <= 31:  # (a range into the next month is left alone)
            return match.group(0)
        return f"{month}月{first}{match[3]}{match[4]}{month}月{last}{match[6]}"

    def chinese_later(match: re.Match[str]) -> str:
        month, first, later = int(match[1]), int(match[2]), int(match[5])
        if not (1 <= month <= 12 and 1 <= first <= 31 and 1 <= later <= 31):
            return match.group(0)
        month_of_later = month if later > first else month % 12 + 1  # "30号取，2号还"
        return (
            f"{match.group(0)[: match.start(5) - match.start()]}{month_of_later}月{later}{match[6]}"
        )

    if any(c.isdigit() for c in text):
        text = _CN_LATER_DAY.sub(chinese_later, text)
        text = _CN_DAY_RANGE.sub(chinese_range, text)
        text = _DAYS_BEFORE_MONTH.sub(before, text)
        text = _MONTH_BEFORE_DAYS.sub(after, text)
        text = _CN_DAYS_OF_MONTH.sub(chinese, text)
    return text


_ORDINAL_WORDS = {
    **{w: n for n, w in enumerate(("first", "second", "third", "fourth", "fifth"), 1)},
    **{"sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11},
    **{"twelfth": 12, "thirteenth": 13, "fourteenth": 14, "fifteenth": 15, "sixteenth": 16},
    **{"seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20},
    "thirtieth": 30,
}
_ORDINAL_WORD = (
    r"(?:(twenty|thirty)[\s-])?(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth"
    r"|tenth|eleventh|twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth"
    r"|eighteenth|nineteenth|twentieth|thirtieth)"
)
# A day of the month written as a word beside its month: "January fifth", "the
# twenty-third of December" (read as "January 5", "23 of December").
_ORDINAL_DAY = re.compile(
    rf"\b(?:({_MONTH_WORD})\.?\s+{_ORDINAL_WORD}\b"
    rf"|{_ORDINAL_WORD}\s+of\s+({_MONTH_WORD})\b)",
    re.IGNORECASE,
)


def _ordinal_days(text: str) -> str:
    """``text`` with each day of a month written as a word in digits (``_ORDINAL_DAY``)."""

    def digits(match: re.Match[str]) -> str:
        tens, word = (match[2], match[3]) if match[1] else (match[4], match[5])
        day = _ORDINAL_WORDS[word.lower()] + {"twenty": 20, "thirty": 30}.get(
            (tens or "").lower(), 0
        )
        if day > 31 or (tens and _ORDINAL_WORDS[word.lower()] > 9):
            return match.group(0)
        # (a day's digits read as its ordinal: ``_ORDINAL``'s suffix is optional)
        return f"{match[1]} {day}" if match[1] else f"{day} of {match[6]}"

    return _ORDINAL_DAY.sub(digits, text)


@functools.lru_cache(maxsize=16)  # read once per request, not once per candidate tool
def resolve(text: str, today: date) -> str:
    """``text`` with its calendar expressions rewritten as ISO months and days, each set
    apart by single spaces (so "明天上午" reads "2026-12-02 上午")."""
    original = text
    text = _days_of_one_month(_ordinal_days(text))
    changed = text != original
    for pattern, rewrite in _REWRITES:
        if not pattern.search(text):
            continue

        def replace(match: re.Match[str], rewrite: Any = rewrite) -> str:
            value = rewrite(match, today)
            return match.group(0) if value is None else f" {value} "

        rewritten = pattern.sub(replace, text)
        changed = changed or rewritten != text
        text = rewritten
    if not changed:
        return text
    return _forward(_one_year(original, re.sub(r" {2,}", " ", text).strip()))


# Two days written as a range: "from 2027-06-01 to 2026-08-31".
_DAY_RANGE = re.compile(
    rf"(?<![\d-])(\d{{4}})-(\d{{2}})-(\d{{2}})(?![\d-]){_RANGE_JOIN}"
    r"(\d{4})-(\d{2})-(\d{2})(?![\d-])",
    re.IGNORECASE,
)


def _forward(text: str) -> str:
    """A range of days runs forward: a start past its end by less than a year is the
    year before ("between 1 Jan and 30 June 2026": the start's nearest 1 January, read
    alone, was 2027's; "from 1 June to 31 August" in December has the June before)."""

    def forward(match: re.Match[str]) -> str:
        try:
            start = date(int(match[1]), int(match[2]), int(match[3]))
            end = date(int(match[5]), int(match[6]), int(match[7]))
            earlier = start.replace(year=start.year - 1)
        except ValueError:  # no such day (a 29 February a year before)
            return match.group(0)
        if start <= end or earlier > end:
            return match.group(0)
        return f"{earlier.isoformat()}{match[4]}{end.isoformat()}"

    return _DAY_RANGE.sub(forward, text)


def is_calendar_value(value: object) -> bool:
    """Whether ``value`` is a month, a day or a time as :func:`resolve` writes them."""
    return isinstance(value, str) and bool(_CALENDAR_VALUE.fullmatch(value))
