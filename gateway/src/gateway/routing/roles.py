"""Paired parameters: the start and the end of one thing.

Many tools take a value twice, once for where (or when) something starts and once for
where it ends: ``start_date`` / ``end_date``, ``pickup_branch`` / ``return_branch``,
``check_in`` / ``check_out``, ``origin`` / ``destination``, ``from`` / ``to``. The
extractor fills parameters in schema order, so a request that names one value gives it
to the first of the pair. Two readings put it where the request says:

- :func:`side`: the words beside a value say which end it is ("extend it until
  2025-03-22", "checking out on 2026-08-19", "还车日期改到 2025-05-09", "2025-08-12 还").
  A value the order gave to one end moves to the other when its words name that end.
- :func:`period`: a request naming a month or a year ("last month", "10月份",
  "for 2026") and no day means the whole of it, for a pair of date parameters: the
  first and the last day ("since March" only starts it, "until March" only ends it).

Pairs are found by name (:func:`pairs`): two parameters whose names differ only in a
start word and an end word.
"""

from __future__ import annotations

import calendar
import functools
import re
from collections.abc import Iterable
from datetime import date, timedelta

START, END = "start", "end"

# A start word and its end word as they stand in parameter names (name tokens).
_FAMILIES = (
    (("start",), ("end",)), (("begin",), ("end",)), (("from",), ("to",)),
    (("starts",), ("ends",)), (("begins",), ("ends",)),
    (("since",), ("until",)), (("from",), ("until",)), (("start",), ("until",)),
    (("pickup",), ("return",)), (("pick", "up"), ("return",)), (("pickup",), ("dropoff",)),
    (("pick", "up"), ("drop", "off")), (("pickup",), ("drop", "off")),
    (("check", "in"), ("check", "out")), (("checkin",), ("checkout",)),
    (("departure",), ("return",)), (("depart",), ("return",)), (("outbound",), ("inbound",)),
    (("origin",), ("destination",)), (("source",), ("destination",)),
    (("arrival",), ("departure",)), (("arrive",), ("depart",)), (("arrival",), ("leave",)),
    (("entry",), ("exit",)),
)  # fmt: skip
_NAME_TOKEN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")

# Words that say which end a value is, read beside it. Not "to" (a change is "to" its
# new value whichever end it is), nor 到/至 (改到: changed to) alone.
_END_BEFORE = re.compile(
    r"\b(?:until|till|til|through|thru|check(?:ing)?[- ]?out|leaving|return(?:ing|s)?"
    r"|drop(?:ping)?[- ]?off|back\s+on|end(?:s|ing)?|expir(?:es|ing|y)|into|onto|exit(?:ing)?)\b"
    r"|还车|归还|还回|退房|离店|截止|截至|结束|到期|返程|回程|出场|离场",
    re.IGNORECASE,
)
_START_BEFORE = re.compile(
    r"\b(?:from|out\s+of|since|starting|start(?:s|ing)?|begin(?:s|ning)?|pick(?:ing)?[- ]?up"
    r"|collect(?:ing|ion)?|check(?:ing)?[- ]?in|arriv(?:e|es|ing|al)|depart(?:s|ing|ure)?"
    r"|entry|entering)\b"
    r"|取车|提车|入住|开始|出发|去程|起始|生效|入场|进场",
    re.IGNORECASE,
)
# "to" before a value ends it ("transfer 200 to 61009374", 转到 40128876), unless the
# clause changes something: a change is "to" its new value whichever end it is.
_TO_REACH = 24  # characters before the value: "to my savings account 61009374"
# Lower-case words only: "to NRT on 2025-05-02" is a "to" of NRT, not of the date.
_PLAIN = re.compile(r"[a-z\s'’]*")
# An arrow, and a dash right between a code and the next ("NHV -> SDB", "ARD-KLR"), are
# a "to" as well; so is 去 (从 KLR 去 PSM), not 去年 or 去程.
_TO = re.compile(
    r"\b(?:to|into)\b|->|→|(?<=[A-Za-z])[-–]$|到|至|去(?![年程])|前往|开往|飞往",
    re.IGNORECASE,
)
_CHANGE = re.compile(
    r"\b(?:chang\w*|mov(?:e|ed|ing)|reschedul\w*|postpon\w*|push(?:ed)?|updat\w*|set|"
    r"switch\w*|shift\w*|bring|brought)\b|改|调|换|推迟|提前|延期|挪",
    re.IGNORECASE,
)
# After the value (Chinese puts the verb last: "2025-08-12 还", "5月9日还车", "1月1日起").
_END_AFTER = re.compile(
    r"\s*(?:还车|归还|还回|退房|离店|截止|结束|到期|为止|出场|离场|还(?![有没剩是要在可得需]))"
)
_START_AFTER = re.compile(r"\s*(?:取车|提车|入住|开始|出发|起|生效|入场|进场)")
# A clause ends at punctuation: words beyond it speak of another value.
CLAUSE_END = re.compile(r"[,，。;；!?！？\n]")


def _tokens(name: str) -> tuple[str, ...]:
    return tuple(t.lower() for t in _NAME_TOKEN.findall(name))


def _without(tokens: tuple[str, ...], word: tuple[str, ...]) -> tuple[str, ...] | None:
    """``tokens`` with ``word`` (a run of tokens) removed once; None if it is not there."""
    for i in range(len(tokens) - len(word) + 1):
        if tokens[i : i + len(word)] == word:
            return tokens[:i] + tokens[i + len(word) :]
    return None


def pairs(names: Iterable[str]) -> list[tuple[str, str]]:
    """``(start, end)`` parameter names that differ only in a start word and its end word:
    ``new_pickup_date`` and ``new_return_date``, ``from`` and ``to``. Each name is in one
    pair at most. Read once per set of names (a tool's schema)."""
    return list(_pairs(tuple(names)))


# Words that say "when" in a name, one as good as another for a pair: ``pickup_at`` and
# ``return_date`` are the start and the end of one rental.
_WHEN_WORDS = frozenset(("at", "on", "date", "time", "datetime", "day", "dt"))


def _when_alike(rest: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return None if rest is None else tuple("@when" if t in _WHEN_WORDS else t for t in rest)


@functools.lru_cache(maxsize=4096)
def _pairs(names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    tokens = {name: _tokens(name) for name in names}
    found: list[tuple[str, str]] = []
    paired: set[str] = set()
    for start_word, end_word in _FAMILIES:
        ends: dict[tuple[str, ...], str] = {}
        for name, parts in tokens.items():
            rest = _when_alike(_without(parts, end_word))
            if rest is not None and name not in paired:
                ends.setdefault(rest, name)
        for name, parts in tokens.items():
            rest = _when_alike(_without(parts, start_word))
            end = ends.get(rest) if rest is not None and name not in paired else None
            if end is not None and end not in paired and end != name:
                found.append((name, end))
                paired.update((name, end))
    order = list(tokens)
    return tuple(sorted(found, key=lambda pair: order.index(pair[0])))


# Leaving, which ends a stay (an arrival and a departure) though it starts a journey.
_LEAVES = re.compile(
    r"\b(?:depart(?:s|ing|ure)?|leav(?:e|es|ing)|sail(?:s|ing)?\s+(?:out|away))\b"
    r"|离港|离开|离店|出港",
    re.IGNORECASE,
)
_LEAVES_AFTER = re.compile(r"\s*(?:离港|离开|出港|走(?![廊路道]))")


def departure_ends(start: str, end: str) -> bool:
    """Whether a pair of parameters is a stay's arrival and departure (``new_arrival_date``
    and ``new_departure_date``): then leaving ends it (``side``)."""
    ends = _tokens(end)
    return any(t.startswith(("depart", "leav")) for t in ends) and any(
        t.startswith("arriv") for t in _tokens(start)
    )


def side(text: str, value: str, *, departure_ends: bool = False) -> str | None:
    """Which end ``text`` says ``value`` is: :data:`START`, :data:`END`, or None. The
    nearest role word before the value within its clause, else one right after it. With
    ``departure_ends`` (a stay: ``departure_ends``), leaving ends the range ("leave on
    the 22nd", "new departure date 2027-01-03", "17号走")."""
    at = text.find(value)
    if at < 0 or not value:
        return None
    clause = CLAUSE_END.split(text[:at])[-1]
    found = [(m.end(), END) for m in _END_BEFORE.finditer(clause)]
    found += [
        (m.end(), START)
        for m in _START_BEFORE.finditer(clause)
        if not departure_ends or not _LEAVES.fullmatch(m.group(0))
    ]
    if departure_ends:
        found += [(m.end(), END) for m in _LEAVES.finditer(clause)]
        if _LEAVES_AFTER.match(text, at + len(value)):
            return END
    if not _CHANGE.search(clause):  # a "to" just before the value, plain words between
        near = len(clause) - _TO_REACH
        found += [
            (m.end(), END)
            for m in _TO.finditer(clause)
            if m.start() >= near and _PLAIN.fullmatch(clause[m.end() :])
        ]
    if found:
        return max(found)[1]
    after = text[at + len(value) :]
    if _END_AFTER.match(after):
        return END
    if _START_AFTER.match(after):
        return START
    return None


# A month in ISO form (as ``temporal.resolve`` writes one), not a day.
_MONTH = re.compile(r"(?<![\d-])(\d{4})-(\d{2})(?![\d-])")
_DAY = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
# A year the request names as a period: "in 2023", "for 2026", "2023年" (not 2023年5月).
_YEAR = re.compile(
    r"\b(?:in|for|during|of|throughout)\s+(?:the\s+(?:year|whole\s+of)\s+)?((?:19|20)\d\d)\b(?![-/.:]\d)"
    r"|(?<!\d)((?:19|20)\d\d)\s*年(?![\d一二三四五六七八九十]|\s*\d)(?:全年|整年|度)?",
    re.IGNORECASE,
)
_RELATIVE_YEAR = re.compile(
    r"\b(last|this|previous|current)\s+year\b|(去年|今年|前年)", re.IGNORECASE
)
# A calendar week by its place from this one: "last week", 上周, 这个星期 (not 上周三, a day).
_RELATIVE_WEEK = re.compile(
    r"\b(last|this|next|previous|current)\s+week\b(?!\s*(?:'s\s+)?(?:mon|tue|wed|thu|fri|sat|sun))"
    r"|(上上|上|这|本|下)个?(?:周|星期|礼拜)(?![一二三四五六日天末])",
    re.IGNORECASE,
)
_WEEK_SHIFT = {
    "last": -1, "previous": -1, "this": 0, "current": 0, "next": 1,
    "上上": -2, "上": -1, "这": 0, "本": 0, "下": 1,
}  # fmt: skip
# A quarter: "Q3", "Q3 2025", "2025 Q3", 第三季度, 三季度, "last quarter", 上季度.
_QUARTER = re.compile(
    r"(?<![A-Za-z0-9])[Qq]([1-4])(?:\s*(?:of\s+)?((?:19|20)\d\d))?(?![A-Za-z0-9])"
    r"|(?<!\d)((?:19|20)\d\d)\s*[-\s]?[Qq]([1-4])(?![A-Za-z0-9])"
    r"|第?([一二三四1-4])季度"
    r"|\b(last|this|next|previous|current)\s+quarter\b|(上|这|本|下)个?季度"
)
_CN_QUARTER = {"一": 1, "二": 2, "三": 3, "四": 4, "1": 1, "2": 2, "3": 3, "4": 4}
_QUARTER_SHIFT = {"last": -1, "previous": -1, "this": 0, "current": 0, "next": 1}
_QUARTER_SHIFT |= {"上": -1, "这": 0, "本": 0, "下": 1}


def _quarter(match: re.Match[str], today: date) -> tuple[date, date] | None:
    """A quarter's first and last day: a year written, else the latest such quarter that
    has begun by ``today`` ("Q3" in December is this year's, in February last year's);
    "last quarter" and 上季度 count from today's."""
    current = (today.month - 1) // 3 + 1
    if match[6] or match[7]:
        index = today.year * 4 + current - 1 + _QUARTER_SHIFT[(match[6] or match[7]).lower()]
        year, quarter = divmod(index, 4)
        quarter += 1
    else:
        quarter = int(match[1] or match[4]) if (match[1] or match[4]) else _CN_QUARTER[match[5]]
        written = match[2] or match[3]
        year = int(written) if written else today.year - (quarter > current)
    first = date(year, 3 * quarter - 2, 1)
    last_month = 3 * quarter
    return first, date(year, last_month, calendar.monthrange(year, last_month)[1])


_YEAR_SHIFT = {
    "last": -1, "previous": -1, "this": 0, "current": 0, "去年": -1, "今年": 0, "前年": -2,
}  # fmt: skip
_FROM_CUE = re.compile(
    r"\b(?:since|from|after|starting(?:\s+in)?)\s*$|(?:自|从)\s*$", re.IGNORECASE
)
_FROM_AFTER = re.compile(r"\s*(?:以来|起|开始|之后|以后)")
_UNTIL_CUE = re.compile(r"\b(?:until|till|through|up\s+to)\s*$|(?:截止|截至|到)\s*$", re.IGNORECASE)
_UNTIL_AFTER = re.compile(r"\s*(?:为止|之前)")


_YEAR_DAYS = 366
_RANGE_JOINER = re.compile(r"\s*(?:to|and|through|till|until|-|–|~|到|至)\s*", re.IGNORECASE)


def period(resolved: str, today: date) -> tuple[str | None, str | None] | None:
    """The first and the last day of the one month, year or week ("last week", 上周: Monday
    to Sunday) ``resolved`` (a request with its dates in ISO form) names and no day:
    ``("2026-10-01", "2026-10-31")``, or of two
    months a range joins, within a year ("March to May 2024"). Either is None when the
    words only start ("since March") or only end ("until March") it. None when a day is
    written, or other periods are."""
    if _DAY.search(resolved):
        return None
    found: list[tuple[int, int, date, date]] = []
    for match in _MONTH.finditer(resolved):
        year, month = int(match.group(1)), int(match.group(2))
        if 1 <= month <= 12:
            last = calendar.monthrange(year, month)[1]
            first_day, last_day = date(year, month, 1), date(year, month, last)
            found.append((match.start(), match.end(), first_day, last_day))
    for match in _YEAR.finditer(resolved):
        group = 1 if match.group(1) else 2
        year = int(match.group(group))
        found.append((match.start(group), match.end(group), date(year, 1, 1), date(year, 12, 31)))
    for match in _RELATIVE_YEAR.finditer(resolved):
        word = (match.group(1) or match.group(2)).lower()
        year = today.year + _YEAR_SHIFT[word]
        found.append((match.start(), match.end(), date(year, 1, 1), date(year, 12, 31)))
    for match in _RELATIVE_WEEK.finditer(resolved):
        word = (match.group(1) or match.group(2)).lower()
        monday = today - timedelta(days=today.weekday()) + timedelta(weeks=_WEEK_SHIFT[word])
        found.append((match.start(), match.end(), monday, monday + timedelta(days=6)))
    for match in _QUARTER.finditer(resolved):
        span = _quarter(match, today)
        if span is not None:
            found.append((match.start(), match.end(), *span))
    found.sort(key=lambda f: f[0])
    if len(found) == 2 and _RANGE_JOINER.fullmatch(resolved[found[0][1] : found[1][0]]):
        (_, _, first_day, _), (_, _, _, last_day) = found  # "March to May 2024"
        if first_day < last_day and (last_day - first_day).days < _YEAR_DAYS:
            return first_day.isoformat(), last_day.isoformat()
        return None  # backwards, or a year it did not write ("Dec 2024 to Feb")
    if len(found) != 1:
        return None
    at, to, first_day, last_day = found[0]
    before, after = resolved[:at], resolved[to:]
    if _FROM_CUE.search(before) or _FROM_AFTER.match(after):
        return first_day.isoformat(), None
    if _UNTIL_CUE.search(before) or _UNTIL_AFTER.match(after):
        return None, last_day.isoformat()
    return first_day.isoformat(), last_day.isoformat()
