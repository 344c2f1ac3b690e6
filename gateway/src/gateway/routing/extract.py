"""Offline argument filling: read a tool's arguments out of the query, guided by its schema.

With no LLM, the schema is the only guide, so each parameter is filled by the
strongest evidence its schema allows, in this order:

1. ``pattern``: the pattern itself (unanchored) searched in the query
   (``^SKU\\d{7}$`` finds ``SKU2024001``), by RE2 like every manifest-supplied
   regex (linear time: a crafted pattern cannot stall the router); a pattern loose
   enough to take plain words takes a token with a digit or separator first
   ("scale payments-api to 6" gives ``payments-api``, not "scale");
2. ``enum``: a value of the enum named in the query, or by a short form of it
   ("prod" for ``production``);
3. ``format``: dates, emails, URLs;
4. numbers for ``integer`` / ``number``: the number next to a mention of the
   parameter ("base of 10", "height 5"), else the next unused number in order;
5. strings: for a parameter with no ``pattern``, the shape of an identifier
   inferred from its examples (the description's "e.g. SO20240715001",
   "例如 SKU2024001", "格式如 ...", "like ABC-123", and the schema's ``examples``):
   letters stay literal, digit runs become ``\\d{n}`` (``SKU2024001`` →
   ``SKU\\d{7}``), and a token of that shape is searched in the query (exact
   digit counts first, then roughly the example's length, then any letters of
   the same case in place of the example's); with no example, an identifier-like
   token (letters and digits) introduced by the parameter's name (``sku``,
   ``order_id`` → "order") or, for an id-like name (``sku``, ``*_id``, ``*_code``
   ...) or a machine's thing (``service``, ``host`` ...), the only such token in the
   query that no other parameter's pattern claims; a version example (``v2.14.1``)
   takes any version ("1.8.0", "v5.0.0-rc1") and a commit example any commit hash;
   a required ``title`` is the request itself when it says enough; a search
   ``query`` takes a quoted phrase before the whole request; then a capitalised name for
   name-like parameters (city, company, location ...), else a quoted span,
   else an example value the description gives that appears in the query;
6. booleans: ``name=false`` written out, else a switch thrown in words ("turn on",
   "flip X off", "disable", 打开 / 关掉), else yes/true/with vs no/false/without.

Time is read as people write it (``temporal``): a month or day the words name
("last month", "March", "上个月", "tomorrow", "下周一") is tried in ISO form when
the words alone give the parameter nothing, and a number counting time ("days",
"duration_minutes") takes the length the request names ("the past two weeks" →
14, "2 hours" → 120) before any bare number. A ``pattern`` that finds nothing is
tried again ignoring case, keeping the value only in a case the pattern accepts
("sku2025018" → ``SKU2025018``).

A required parameter still missing may come from the session's previous call
when the query refers back to it ("this SKU", "那这个 SKU", "it") or, for a tool
that only reads, when the query is a short follow-up naming no identifier
("which carrier?", "快递单号呢"; a write needs the explicit reference): under its own
name, or the one identifier of its shape the call gave under another, else from
the facts the caller's agent remembers about the user ("my usual product" +
"My usual SKU is SKU2024003"), read with the same rules. What stays
missing is reported with the parameter's description and format, so the 422
tells the caller exactly what to add.
"""

from __future__ import annotations

import bisect
import calendar
import difflib
import functools
import itertools
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from gateway.registry.patterns import PatternError, compile_pattern, search
from gateway.routing import (
    acts,
    bounds,
    codes,
    countries,
    currencies,
    enums,
    intent,
    languages,
    lineitems,
    measures,
    numbered,
    periods,
    places,
    roles,
    rooms,
    shapes,
    sorting,
    temporal,
    weekdays,
)
from gateway.routing import zones as zones_named
from gateway.routing.bounds import with_properties
from gateway.routing.gloss import dictionary, every_sense, gloss, gloss_ready, has_han, town_named
from gateway.routing.gloss import segment as segment_words
from gateway.routing.text import STOPWORDS, split_identifier, stem
from reach_common.references import names_an_identifier, refers_back

# "6cm" and "数量100" count, "SKU2024001" does not (CJK characters are \w to ``re``).
# Not a piece of a version ("4.0.2") or of a commit ("9be41f0"); "6cm" and "数量100" count.
# Thousands may be grouped with commas ("1,200", "12,500.50"); "1,2,3" is three numbers.
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])-?(?:\d{1,3}(?:,\d{3})++(?![\d,]\d)|\d++)(?:\.\d++)?+"
    r"(?![\d.]*\.\d|[A-Za-z_]+\d)"
)
# A magnitude written right after a number: "10万" is 100000, "$5k" 5000, "1.2M" (a
# capital only, and no space: "5m" may be metres), "2 million", "3bn" ("5 km" is no
# thousand, nor "5千克" a thousand kilograms).
_MAGNITUDE = re.compile(
    r"((?-i:M))(?![A-Za-z])"
    r"|\s?(?:(k|bn|mn|million|billion|thousand)(?![A-Za-z])|(万|亿)|(千)(?![克米瓦]))",
    re.IGNORECASE,
)
# Yuan and its tenths or hundredths after it: 12块5, 8元5角, 3块50.
_YUAN_AND_JIAO = re.compile(r"\s?(?:块|元)(\d{1,2})(?:毛|角|分|(?=[\s，,。!?！？;；、]|$))")
_MAGNITUDES = {"k": 1e3, "万": 1e4, "亿": 1e8, "千": 1e3, "m": 1e6, "million": 1e6, "mn": 1e6}
_MAGNITUDES |= {"bn": 1e9, "billion": 1e9, "thousand": 1e3}
# An apostrophe between letters quotes nothing ("what's new in Bob's account"); a title
# in Chinese is set in 《》.
_QUOTED = re.compile(
    r"\"([^\"]+)\"|(?<![A-Za-z])'([^']+)'(?![A-Za-z])|“([^”]+)”|「([^」]+)」|‘([^’]+)’|《([^》]+)》"
)
# A link ends where the text around it starts: at a space, a Chinese character or full-width
# punctuation ("链接是https://x.cn/a，谢谢"), and not on a sentence's last stop or comma.
# A parameter named for a link without saying so in a ``format``: ``artwork_url``, ``webhookUrl``.
_LINK_NAME = re.compile(r"(?:^|_|[a-z])(?:url|uri|link|href)s?$", re.IGNORECASE)
_NOT_URL = r"\s<>\"\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"
_URL = rf"https?://[^{_NOT_URL}]*[^{_NOT_URL}.,;:!?)\]'}}]"
# ASCII edges, not \b: a Chinese character is a word character ("从2024-11-01到现在",
# "邮箱是anna@example.com", "手机号是18600001234").
_FORMATS = {
    "date": re.compile(r"(?<![A-Za-z0-9])\d{4}-\d{2}-\d{2}(?![A-Za-z0-9])"),
    "date-time": re.compile(
        r"(?<![A-Za-z0-9])\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?"
    ),
    # (?<!…): read from a run's start only (entered at each of 4,000 characters: its square)
    "email": re.compile(r"(?<![A-Za-z0-9_.+-])[A-Za-z0-9_.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"),
    "uri": re.compile(_URL),
    "url": re.compile(_URL),
    # an address of four numbers to 255 ("from 198.51.100.23"), not a version (3.11.4)
    "ipv4": re.compile(
        r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
        r"(?!\w|\.\d)"
    ),
}
# Parameters that hold a person, named as people are ("show Marcus's meetings"); not
# ``user_id``, which an identifier fills.
_PEOPLE_NAMES = frozenset({"user", "username", "assignee", "employee", "member", "rep", "staff"})
# A person's parameter: "assignee", "user", or whoever did something ("reported_by").
_BY_SOMEONE = re.compile(r"^[a-z]+_by$|^(?:booker|requester|applicant|reporter)(?:_name)?$")


def _names_a_person(name: str) -> bool:
    return name in _PEOPLE_NAMES or _BY_SOMEONE.match(name) is not None


_NAME_LIKE = (
    "name", "city", "location", "company", "country", "place", "person", "team", "brand",
    "customer", "recipient", "owner", "author", "contact", "venue", "hotel",
    # an organisation: "losing_operator", "provider", "carrier", "vendor", "supplier"
    "operator", "provider", "carrier", "vendor", "supplier",
)  # fmt: skip
# Free-text parameters: the text after the query's colon ("add this to the KB: <text>",
# "open a ticket: outlook crashes when I attach a file").
_TEXT_NAMES = frozenset(
    {"text", "content", "body", "document_text", "note", "notes", "summary", "description"}
    | {"details", "detail", "message", "comment", "comments", "reason", "problem", "issue"}
    | {"subject", "remark", "remarks"}
)
# A required title of what the request is about: the text after a colon, else the request
# itself if it says more than an order would ("file an incident, user-profile returns 500
# for everyone", not "open an incident"). A summary or a description stays the user's to
# write (``_TEXT_NAMES``: the text after a colon only).
_HEADLINE_NAMES = frozenset(
    {"title", "headline", "summary", "subject", "problem", "issue", "description", "details"}
)
_HEADLINE_WORDS = 6
_QUOTED_TITLES = frozenset({"title", "headline", "subject"})  # what a quoted text is first
# A thing's own name ("new budget called \"Q1 ML experiments\""); not a person's (``payee_name``).
_QUOTED_NAMES = frozenset({"name", "display_name", "displayname"})
_SENTENCE_MARKS = re.compile(r"[,.!?;:，。！？；：]")


def _reads_as_a_name(text: str) -> bool:
    """Whether quoted text may be a name: five words at most, no sentence's punctuation,
    and in Chinese a surname first (“周年快乐” is a card's wish)."""
    if has_han(text):
        return _chinese_names(text) == [text]
    return len(text.split()) <= 5 and _SENTENCE_MARKS.search(text) is None


_CJK_CHAR = re.compile(r"[\u3400-\u9fff]")  # about two to a word
# Search parameters: the text after a colon, else the whole request.
_QUERY_NAMES = frozenset({"query", "question", "q", "search", "keywords", "search_query"})
_FILE_NAMES = ("source", "file", "filename", "file_name", "document", "path", "doc")
# Search terms, not a question: "search logs for OOMKilled on orders-svc" searches "OOMKilled".
_TERMS_NAMES = frozenset({"query", "q", "search", "keywords", "search_query"})
_SEARCH_FOR = re.compile(
    r"\b(?:search|searching|grep|find|look|scan|hunt)\b[^.!?;\n]{0,60}?"
    r"\b(?:for|containing|matching|mentioning)\s+(?:the\s+)?(?P<terms>[^.!?;,\n]{1,80})",
    re.IGNORECASE,
)
# Where the search terms end: a clause that names when to search, or where (another
# parameter's value: "on orders-svc"); "what's new in Bob's account" goes on.
_TERMS_WHEN = re.compile(
    r"(?<!\s)\s+(?:since|during|over|within|between|before|after"
    r"|(?:in|from|for) the (?:last|past))\b",
    re.IGNORECASE,
)
_TERMS_WHERE = r"\s+(?:on|in|from|at|across|of|for)\s+(?:the\s+)?"
# Chinese: the Latin words after 搜 / 查找 / 有没有 … to the end ("日志里搜一下 timeout exceeded").
_SEARCH_FOR_CJK = re.compile(
    r"(?:搜一下|搜索|搜|查找|找一下|找|有没有|包含|含有|关键词|关键字)[:：]?\s*"
    r"(?P<terms>[A-Za-z0-9][\w .:/-]{0,80}?)\s*[。？?！!]?$"
)
_FILE_TOKEN = re.compile(r"(?<![\w/.-])[\w][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w.-])")
# A colon that introduces text; not one inside a time ("3:30 pm") or a ratio ("16:9").
# (not a link's "https://" nor a clock's "9:30")
_COLON = re.compile(r"(?:(?<!\d):(?!//)|:(?!\d|//)|：)\s*(.+)$", re.DOTALL)
# "Bank of China", "Maria de la Cruz": the particles are whole words ("What's due" is no name).
# (an apostrophe inside a name, "O'Brien", not the closing quote of 'Windrose')
_CAPITALISED = re.compile(
    r"\b(?:[A-Z](?:[\w&.-]|'(?=\w))*)(?:\s+(?:[A-Z](?:[\w&.-]|'(?=\w))*|(?:of|de|la|du)\b))*"
)
# (a "true positive" or a "false alarm" is a finding, no answer)
_TRUE = re.compile(
    r"\b(yes|true(?!\s+(?:positive|negative)s?\b)|enable|enabled|include|with)\b", re.IGNORECASE
)
# ("acc no ACC-1184420", "order no. 5521": "no" there is a number's abbreviation)
_FALSE = re.compile(
    r"\b(no(?!\.?\s{0,2}[:#]?\s{0,2}[A-Za-z-]{0,12}\d)|false(?!\s+(?:positive|negative|alarm)s?\b)"
    r"|disable|disabled|exclude|without)\b",
    re.IGNORECASE,
)
# A switch thrown in words: "turn on", "switch X off", "disable", 打开 / 关掉.
_SWITCHED = re.compile(
    r"\b(?:turn|switch|flip|toggle|set|put|flick)(?:ed)?\s+(?P<particle>on|off)\b"
    r"|\b(?:turn|switch|flip|toggle|set|flick)(?:ed)?\s+(?:[\w.-]+\s+){1,3}?(?P<after>on|off)"
    r"(?=\s*(?:$|[,.;!?)]|\b(?:in|for|at|now|please|pls|again|asap|everywhere)\b))"
    r"|\b(?P<on>enable|activate|re-?enable)\b|\b(?P<off>disable|deactivate)\b"
    r"|(?P<zh_on>打开|开启|启用|激活|开一下|开了)|(?P<zh_off>关闭|关掉|关了|关上|禁用|停用)",
    re.IGNORECASE,
)
# Parameters that are a switch: only these are thrown by "turn on" or 关掉 ("关闭工单 T-1
# 并通知客户" closes a ticket; it does not say notify_customer=false).
_SWITCH_NAMES = frozenset(
    {"enabled", "enable", "active", "activated", "on", "switch", "toggle", "disabled", "state"}
)
_NEGATED = re.compile(r"(?:\bdon'?t|\bdo not|\bnever|\bnot|不要|别|勿|不)\s*$", re.IGNORECASE)
_BOOLEAN_WORDS = {"true": True, "yes": True, "on": True, "1": True}
_BOOLEAN_WORDS |= {"false": False, "no": False, "off": False, "0": False}
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)")


@dataclass
class Extraction:
    arguments: dict[str, Any] = field(default_factory=dict)
    from_context: list[str] = field(default_factory=list)
    from_memory: list[str] = field(default_factory=list)
    by_meaning: list[str] = field(default_factory=list)  # enum options (routing/options.py)
    by_default: list[str] = field(default_factory=list)  # required, unsaid, with a default
    missing: list[str] = field(default_factory=list)

    def missing_message(self, schema: dict[str, Any]) -> str:
        props = schema.get("properties") or {}
        parts = [
            describe_parameter(name, props.get(name) or {})
            for name in self.missing[:_MAX_DESCRIBED_MISSING]
        ]
        if len(self.missing) > _MAX_DESCRIBED_MISSING:
            parts.append(f"and {len(self.missing) - _MAX_DESCRIBED_MISSING:,} more")
        return "Missing required argument(s): " + "; ".join(parts) + "."


# What a message on a missing argument quotes of its schema: a parameter's first options
# and the start of its description (a long enum or description would make the message
# as long as the manifest).
_MAX_LISTED_OPTIONS = 20
_MAX_DESCRIBED_MISSING = 10
_MAX_DESCRIBED = 300


def describe_parameter(name: str, schema: dict[str, Any]) -> str:
    """``sku`` (string, format ^SKU\\d{7}$: SKU code, e.g. SKU2024001)."""
    kind = schema.get("type", "value")
    hints = []
    if "pattern" in schema:
        hints.append(f"matching {schema['pattern']}")
    if "enum" in schema:
        options = list(map(str, schema["enum"][: _MAX_LISTED_OPTIONS + 1]))
        if len(schema["enum"]) > _MAX_LISTED_OPTIONS:  # a catalogue is no list to read
            options[_MAX_LISTED_OPTIONS:] = [f"… ({len(schema['enum']):,} options)"]
        hints.append("one of " + ", ".join(options))
    if "format" in schema:
        hints.append(f"format {schema['format']}")
    if "pattern" not in schema and kind == "string":
        # A file name's shape is no rule ("auth-v2.md" does not mean every name is auth-v<n>).
        ids = [e for e in examples_of(schema) if not _FILE_TOKEN.fullmatch(e)]
        shapes = [f"{e} ({shape_of(e)})" for e in ids[:3]]
        if shapes:
            hints.append("looks like " + ", ".join(shapes))
    detail = f"{kind}" + (f", {'; '.join(hints)}" if hints else "")
    description = str(schema.get("description") or "")
    if len(description) > _MAX_DESCRIBED:
        description = description[:_MAX_DESCRIBED].rstrip() + "…"
    return f"'{name}' ({detail})" + (f": {description}" if description else "")


def _unanchored(pattern: str) -> str:
    return pattern.removeprefix("^").removesuffix("$")


def _mentions(name: str, schema: dict[str, Any]) -> list[str]:
    """The words of a parameter's name a request may write it by, a plural's singular too
    ("2 adult full-day tickets" for ``adults``)."""
    words = [w for w in _name_parts(name) if len(w) > 1]
    singular = [w[:-1] for w in words if len(w) > 4 and w.endswith("s") and not w.endswith("ss")]
    return [*words, *singular] or [name.lower()]


_TOKEN_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:")


_LONGEST_TOKEN = 64  # a number inside a longer run of token characters is none
_MAX_MATCHES = 64  # matches of one pattern weighed per query: a long query costs no more


_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_WEEKDAY = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day|nesday|sday|urday)?"
_MONTHS = re.compile(rf"(?<![a-z])(?:{_MONTH}|{_WEEKDAY})(?![a-z])", re.IGNORECASE)
# A date written with its month's name: "June 3rd 2025", "3 June", "the 9th of June",
# "Wednesday the 16th"; and the hour written alone after it ("March 1, 2027 at 9").
_WRITTEN_DATE = re.compile(
    rf"(?:(?<![a-z]){_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?![\d:])(?:,?\s+\d{{4}})?"
    rf"|(?<![\d.])\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?![a-z])\.?(?:,?\s+\d{{4}})?"
    rf"|(?<![a-z]){_WEEKDAY}\.?,?\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th))"
    r"(?:,?\s{1,3}at\s{1,3}\d{1,2}(?![\d:.%]))?",
    re.IGNORECASE,
)


# What makes a number an hour of the clock: "6pm", "6 p.m.", "6 o'clock", 6点.
_CLOCK_AFTER = re.compile(r"\s?(?:[ap]\.?m\b|o'?clock\b|[点點](?!\d))", re.IGNORECASE)


_MINUTES_OF_CLOCK = re.compile(r"\d\s?[点點]\s?$")


def _numbers(query: str) -> Iterator[re.Match[str]]:
    """The numbers of the query that stand as numbers: not the digits of an identifier
    ("INV-2026-00042"), a date ("2026-12-05") or a time ("10:30", "6pm", 6点); "6cm"
    still counts. Found once per request (``_numbers_of``): a dozen rules ask for them,
    for each parameter of each candidate tool."""
    return iter(_numbers_of(query))


@functools.lru_cache(maxsize=8)  # the request being read (and a few before it)
def _numbers_of(query: str) -> tuple[re.Match[str], ...]:
    return tuple(_find_numbers(query))


def _find_numbers(query: str) -> Iterator[re.Match[str]]:
    """``_numbers``' search. Each is checked within ``_LONGEST_TOKEN`` characters of it:
    a run of "1:1:1:…" costs its length, not its square."""
    dates = [m.span() for m in _WRITTEN_DATE.finditer(query)] if _MONTHS.search(query) else []
    if "+" in query:  # and the pieces of "+1 512 555 0147" are no counts either
        dates = sorted(dates + [m.span() for m in _INTERNATIONAL_PHONE.finditer(query)])
    date_starts = [a for a, _ in dates]  # in order, not overlapping: found by bisection
    for match in _NUMBER.finditer(query):
        start, end = match.start(), match.end()
        within = bisect.bisect_right(date_starts, start) - 1
        if within >= 0 and start < dates[within][1]:
            continue  # the day or year of "June 3rd 2025", "12 May"
        left = start
        while left > 0 and start - left < _LONGEST_TOKEN and query[left - 1] in _TOKEN_CHARS:
            left -= 1
        if left > 0 and query[left - 1] in _TOKEN_CHARS:
            continue  # deep inside a long token
        before = query[left:start]
        if any(c.isalpha() for c in before) or re.match(r"[-/:]\d", query[end : end + 2]):
            continue
        if re.search(r"\d[-/:]$", before) or _CLOCK_AFTER.match(query, end):
            continue
        if _MINUTES_OF_CLOCK.search(query, max(0, start - 3), start):
            continue  # the minutes of 7点30分, no count of 30
        if _CODE_IN_HAN.match(query, max(0, start - 1)) and start > 0:
            continue  # (2025)沪0105民初1234号: a court's code, no count of 105
        millions = query[end : end + 1] == "M" and ("." in match[0] or _priced(query, match))
        if _CODE_LETTER.match(query, end) and not millions:
            continue  # room 4B, seat 12A: a place's code, no count ("5K" is 5,000, "$1.2M")
        yield match


# A telephone number written with its country code: "+1 512 555 0147", "+86 138-1234-5678".
_INTERNATIONAL_PHONE = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ -]?\(?\d{1,5}\)?){2,6}(?![\w])")
# One capital letter right after a number, ending a word: "4B", "12A" (not K, a thousand).
_CODE_LETTER = re.compile(r"[A-JL-Z](?![A-Za-z0-9])")
# Digits with a leading zero between two Chinese characters: a piece of a code.
_CODE_IN_HAN = re.compile(r"[\u4e00-\u9fff]0\d+[\u4e00-\u9fff]")


@functools.lru_cache(maxsize=4096)
def _cached(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern built from a manifest's words (a parameter's name, a word of it), compiled
    once. ``re`` caches 512 patterns; a thousand tools' words would evict its static ones
    and be compiled again on every request."""
    return re.compile(pattern, flags)


def _whole_word(word: str) -> re.Pattern[str]:
    """``word`` (lower case) standing alone in a lowered request: "height" of "height 5"."""
    return _cached(rf"(?<![a-z]){re.escape(word)}(?![a-z])")


def _number_near(query: str, words: Sequence[str], used: set[int]) -> re.Match[str] | None:
    """The number a word naming the parameter introduces ("height 5"), or that stands
    right before it as its unit ("12 kg" for ``weight_kg``), nearest first."""
    lowered = query.lower()
    best: tuple[int, re.Match[str]] | None = None
    numbers = [n for n in _numbers(query) if n.start() not in used]
    starts = [n.start() for n in numbers]
    ending = {n.end(): n for n in numbers}
    for word in words:
        for mention in _whole_word(word).finditer(lowered):
            # its unit ("12 kg"): the closest evidence there is
            unit = ending.get(mention.start()) or ending.get(mention.start() - 1)
            if unit is not None and (best is None or best[0] > -1):
                best = (-1, unit)
            # or a number within 25 characters after it (looked up, not scanned: a
            # request of "count 1 " repeated costs its length)
            lo = bisect.bisect_left(starts, mention.end() - 1)
            hi = bisect.bisect_right(starts, mention.end() + 25)
            for number in numbers[lo:hi]:
                gap = number.start() - mention.end()
                if best is None or gap < best[0]:
                    best = (gap, number)
    return best[1] if best else None


def _amount(query: str, number: re.Match[str]) -> float:
    """What ``number`` (a ``_NUMBER`` match in ``query``) stands for: its digits without
    their thousands commas, times the magnitude written right after it ("10万", "5k"), or
    with the tenths of a yuan written after it (12块5)."""
    value = float(number.group(0).replace(",", ""))
    cents = _YUAN_AND_JIAO.match(query, number.end())
    if cents is not None and "." not in number.group(0):  # 12块5 is 12.5, 3元50 3.50
        digits: str = cents[1]
        return value + int(digits) / 10.0 ** len(digits)
    magnitude = _MAGNITUDE.match(query, number.end())
    if magnitude is None:
        return value
    return value * _MAGNITUDES[next(g for g in magnitude.groups() if g).lower()]


def _convert(value: float, kind: str) -> int | float | None:
    if not math.isfinite(value):  # "1" written 400 times: no number JSON can carry
        return None
    if kind == "integer":
        return int(value) if value.is_integer() else None
    return int(value) if value.is_integer() else value


_ABBREVIATIONS = frozenset({"inc", "ltd", "co", "corp", "jr", "sr", "st", "dr", "mr", "ms", "mrs"})
_POSSESSIVE = re.compile(r"['’]s$")


# Words a question or a greeting opens with, no name's first word ("Any Taylor Swift dates
# in London?", "Hi Maria").
_OPENERS = frozenset(
    {"any", "are", "can", "could", "do", "does", "did", "what", "which", "where", "when"}
    | {"who", "how", "why", "would", "should", "hi", "hello", "hey", "dear"}
    | {"has", "have", "had", "is", "was", "were", "will", "shall", "may", "might", "must"}
)
# Capitalised words that name no one: "I", a month or a weekday ("from May 3").
_NOT_NAME_WORDS = frozenset(
    {"i", "is", "on", "the", "and", "for", "please", "pls"}
    | {m.lower() for m in calendar.month_name[1:]}
    | {m.lower() for m in calendar.month_abbr[1:]}  # "visiting Dec 3" names no Dec
    | {"sept"}
    | {d.lower() for d in calendar.day_name}
    # "It's Maria Lopez here", "What's on at the Odeon": a contraction is no one's name.
    | {
        f"{w}{a}{e}"
        for w in ("it", "what", "that", "here", "there", "who", "where", "how", "let")
        for a in "'’"
        for e in ("s",)
    }
    | {f"i{a}{e}" for a in "'’" for e in ("m", "ll", "ve", "d")}
    | {"utc", "gmt", "am", "pm"}  # "8pm UTC": a time zone names no one
    # a holiday names a day ("on Christmas morning")
    | {"christmas", "xmas", "easter", "thanksgiving", "halloween", "hanukkah", "diwali"}
)
_DOLLAR_LETTERS = re.compile(r"\b[A-Z]{1,3}(?=\$)")


def _ordered(word: str) -> bool:
    """Whether a sentence's first word is a verb that orders, not a name (some are both:
    "Mark", "Bill" stay names)."""
    return word in _VERBS_FIRST and word not in _NAMES_AS_VERBS


_VERBS_FIRST = intent.ORDER_VERBS | {
    *("groom", "send", "give", "call", "text", "email", "ping", "help", "get", "put"),
    *("move", "walk", "feed", "wash", "bathe", "pick", "bring", "take", "make", "deliver"),
    *("ask", "let", "sign", "enter", "assign", "invite", "pay", "refund", "ship", "return"),
}
_NAMES_AS_VERBS = frozenset(
    {"mark", "bill", "will", "rob", "sue", "pat", "grant", "chase", "drew", "jack", "frank"}
    | {"bob", "ray", "rose", "dawn", "hope", "joy", "max", "wade", "hunter", "grace", "art"}
    | {"lance", "rich", "pierce", "sterling", "gene", "don", "ted", "penny", "carol", "cliff"}
)


# A title before a name, which is no part of it (a doctor's or a professor's may be).
_SOCIAL_TITLE = re.compile(r"^(?:Mr|Mrs|Ms|Miss|Mx)\.?\s+(?=[A-Z])")


# A parameter that holds a work's title (``film``, ``movie_title``, ``book``; 片名), and
# a title as Chinese writes one: 《疯狂动物城2》.
_TITLE_PARAMETER = re.compile(
    r"title|film|movie|book|song|album|片名|书名|影片|电影名|歌名", re.IGNORECASE
)
_BRACKETED = re.compile(r"《([^》]{1,120})》")


def _bracketed_title(
    query: str, name: str, spec: dict[str, Any], taken: Collection[object]
) -> str | None:
    """The first title the request writes in 《》 that no other parameter holds, for an
    unconstrained parameter whose name or description says it holds a title."""
    if _constrains(spec) or not _TITLE_PARAMETER.search(f"{name} {spec.get('description') or ''}"):
        return None
    held = set(map(str, taken))
    return next(
        (m[1].strip() for m in _BRACKETED.finditer(query) if m[1].strip() not in held), None
    )


# A parameter named for a work (``film``, ``movie``, ``book_title``, ``song``): not an id.
_WORK_NAME = re.compile(r"film|movie|book(?!ing)|song|album", re.IGNORECASE)


def _work_named(
    query: str, name: str, spec: dict[str, Any], taken: Collection[object]
) -> str | None:
    """For an unconstrained parameter named for a work, the first run of capitalised words
    the request writes that it does not place ("… showing on Saturday at Westgate") and no
    other parameter holds: "Dune Messiah", "Spider-Man"."""
    if _constrains(spec) or is_id_name(name) or not _WORK_NAME.search(name):
        return None
    held = {str(value).lower() for value in taken}
    for found in _capitalised_names(query):
        if found.lower() not in held and not _placed(query, found, _IN_PLACE):
            return found
    return None


def _capitalised_names(query: str) -> list[str]:
    """Runs of capitalised words, each cut where a sentence ends ("Kestrel Analytics. She
    came…" names Kestrel Analytics) and without a possessive ("Priya's pipeline"); not a
    sentence's capitalised first word alone, nor anything with a digit."""
    starts = {m.end() for m in _SENTENCE_START.finditer(query)}
    names = []
    # (the letters of a dollar's sign are no name: "S$80", "NZ$40"; blanked, not cut, so
    # each name's place in the request stays where it was)
    query = _DOLLAR_LETTERS.sub(lambda m: " " * len(m[0]), query)
    for match in _CAPITALISED.finditer(query):
        sentence_start = match.start() in starts
        words: list[str] = []
        for word in [*match.group(0).split(), ""]:
            if sentence_start and not words and word.strip(".,").lower() in _OPENERS:
                sentence_start = False  # "Any Taylor Swift dates": a question's first word
                continue
            if sentence_start and not words and _ordered(word.strip(".,").lower()):
                sentence_start = False  # "Groom Rufus please", "Cancel Maria Lopez's booking"
                continue
            # "I" or a month ends a name and is none ("Can I", "Priya May 3")
            breaks = word.strip(".,").lower() in _NOT_NAME_WORDS
            if not breaks:
                words.append(word)
            ends = word.endswith(".") and word[:-1].lower() not in _ABBREVIATIONS
            if not (ends or breaks or not word):
                continue
            name = _POSSESSIVE.sub("", " ".join(words).strip(" .,"))
            alone = sentence_start and " " not in name  # a sentence's first word
            name = _SOCIAL_TITLE.sub("", name) or name  # "Mr Abdi Hassan" is Abdi Hassan
            money = name in countries.currency_codes()  # "1000 USD" names no one
            # nor SKU2024001, a code in capital segments (SHA-HQ) or one a Chinese word
            # is glued to (SHA-HQ门店)
            code = any(c.isdigit() for c in name) or _SEGMENTED.fullmatch(name) or has_han(name)
            if name and not alone and not money and not code:
                names.append(name)
            words, sentence_start = [], not breaks
    return names


# A Chinese person's name: a common surname and one or two more characters, standing
# where a name stands (after 客人, 给, 为, 叫, a colon or a comma, or first) and ending
# where the name does (punctuation, a space, a digit, or the verb or title after it).
_SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶"
    "程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾"
    "毛郝龚邵万钱严覃武戴莫孔向汤"
)
_CJK_NAME = re.compile(
    r"(?:^|(?<=[\s,，:：、;；。!?！？])|(?<=客人|客户|先生|女士|一下|教练|医生|老师|改成|换成|该是)"
    # after who they are to the writer: 我朋友王磊, 我妹妹陈静
    r"|(?<=朋友|同事|家人|哥哥|姐姐|弟弟|妹妹|老婆|老公|太太|丈夫|儿子|女儿|孩子|同学|船员)"
    r"|(?<=收件人|收货人|联系人|收花人)"  # a label right before it: 收件人张伟
    r"|(?<=添加|加上|邀请)|(?<=[把和])"  # who is added: 添加刘芳、赵磊, 把李娜和王强加到…
    r"|(?<=[给为叫帮替让请那]))"
    rf"([{_SURNAMES}][\u4e00-\u9fff]{{1,2}}?)"
    r"(?=$|[\s,，。:：、;；!?！？\d]|的|订|入住|要|想|先生|女士|老师|同学|退房|预订|下单|会员|和|加到|加进|加入"
    r"|教练|医生|大夫|师傅|[上下这本]周|[今明昨后]天|[开办](?:一|个|张)"
    # what is sent or granted to someone: "给王阿姨发一个", "给张伟一个访客码", "给李明开通"
    r"|(?<=[给为帮替].{2})(?:发|开通|生成|分享|寄|送|一个|一张|一份|办|做)"
    r"|(?<=[给为帮替].{3})(?:发|开通|生成|分享|寄|送|一个|一张|一份|办|做))"
    # whom one books or looks for, by name and title: "约陈静教练", "找李明医生"
    rf"|(?<=[约找])([{_SURNAMES}][\u4e00-\u9fff]{{1,2}}?)(?=教练|医生|大夫|师傅|老师)"
)
# A name given as one (a pet's, a nickname): "我家猫咪叫咪咪", "名字是豆包", "它叫旺财".
_CALLED_CJK = re.compile(
    r"(?:名叫|叫做|名字是|名字叫|(?<![别不])叫)([\u4e00-\u9fff]{2,3}?)"
    r"(?=$|[\s,，。:：、;；!?！？]|的|今年|走丢|跑|丢了|不见|[0-9])"
)
# A Chinese value shaped as a person's name: a common surname and one or two characters.
_PERSON_SHAPED = re.compile(rf"[{_SURNAMES}][\u4e00-\u9fff]{{1,2}}")
# Words that begin like a name and are not one ("高铁", "万元", "周六"), and titles ("王医生").
_NOT_NAMES = re.compile(
    r"^.(?:医生|大夫|老师|经理|总|院长|主任|师傅|先生|女士|小姐|教练|元|块|件|个|天|号|点|月|年)"
    r"|^周[一二三四五六日天末]|^高级|^金牌"  # a weekday; a rank before a title ("高级教练")
)


def names_a_party(name: str) -> bool:
    """Whether a parameter called ``name`` takes a person's or an organisation's name
    ("guest_name", "company", "owner")."""
    lowered = name.lower()
    return any(hint in lowered for hint in _PARTY_NAMES)


_PARTY_NAMES = ("name", "customer", "company", "person", "contact", "owner", "recipient")


def _chinese_names(query: str) -> list[str]:
    """Chinese persons' names in ``query`` (``_CJK_NAME``), in order: 王芳 of
    "帮客人王芳订一间…", 赵磊 of "：赵磊 13800138000"."""
    if not has_han(query):
        return []
    found = [(m.start(), m.group(1) or m.group(2)) for m in _CJK_NAME.finditer(query)]
    found += [(m.start(), m.group(1)) for m in _CALLED_CJK.finditer(query)]
    names = [name for _, name in sorted(found) if not _NOT_NAMES.match(name)]
    return list(dict.fromkeys(names))


def person_names(query: str) -> list[str]:
    """The persons ``query`` names: a Chinese name (``_chinese_names``), or capitalised
    words in a run of two or more ("Maria Lopez"; ``_capitalised_names``) that no
    preposition of place comes before ("at Harbor Point" is a place)."""
    english = []
    for name in _capitalised_names(query):
        start = query.find(name)
        if " " in name and not _AT_PLACE.search(query, max(0, start - _AT_PLACE_SPAN), start):
            english.append(name)
    return english + _chinese_names(query)


# Searched in the few characters before a name: a long request costs no more per name.
_AT_PLACE = re.compile(r"\b(?:at|in|on|near|to|from)\s{1,3}(?:the\s{1,3})?$", re.IGNORECASE)
_AT_PLACE_SPAN = 16


def takes_a_name(schema: dict[str, Any]) -> bool:
    """Whether a tool takes a person's or an organisation's name: a parameter named for
    one (``names_a_party``), or one its description says holds a name ("Name, email or
    job title.", 姓名)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return False
    return any(
        names_a_party(name) or _NAME_DESCRIBED.search(str(spec.get("description") or ""))
        for name, spec in properties.items()
        if isinstance(spec, dict)
    )


_NAME_DESCRIBED = re.compile(r"\bname\b|姓名|名字", re.IGNORECASE)


# Chinese labels of name-like parameters: "客户是华强贸易", "收件人：王芳".
_CJK_LABELS = {
    "customer": "客户", "recipient": "收件人", "company": "公司", "contact": "联系人",
    "owner": "负责人", "person": "姓名", "name": "名字", "city": "城市", "brand": "品牌",
}  # fmt: skip
# What follows a label and is no value of it: a question or an act on it ("名字能改吗",
# "名字写错了", "联系人不对").
_ASKS_OR_ACTS = re.compile(
    r"[吗呢吧么了]$|^(?:能|可以|可|要|想|需要|怎么|如何|改|写|填|错|不|没|有|是否)"
)
_LABEL_VALUE = r"\s*(?:是|为|叫|[:：])?\s*([\w·.&'-]{1,40}?)(?=$|[\s,，。;；、!?！？]|的|要|订|下)"
# "the source called draft-handbook-v1", "a document named test-upload", "名为 faq"
_CALLED = re.compile(
    r"(?:\b(?:called|named|titled)\s+|名为\s*|叫做\s*)[\"'“「]?([\w][\w.-]{0,120})"
)
# "save this as faq-shipping: …": a document's name after "as", when it looks like one
# (a dash, dot or underscore in it, or a colon after it), not "as annual leave".
_SAVED_AS = re.compile(
    r"\bas\s+[\"'“「]?([\w]+[-_.][\w.-]*\w|[\w][\w.-]{0,120}(?=\s*[:：]))", re.IGNORECASE
)


# "给张三下单": whom an order, a parcel or a message is for.
_CJK_FOR = re.compile(r"给\s*([\w·]{1,12}?)\s*(?:下单|下个单|下一单|订|买|发|寄)")


# Where something goes or comes from: ``to_postcode``, ``destination``, ``from_city``.
_TO_NAMES = frozenset({"to", "dest", "destination", "ship_to", "deliver_to", "delivery_address"})
_FROM_NAMES = frozenset({"from", "origin", "ship_from"})
_CODE_WORDS = ("postcode", "postal", "zip", "code", "id", "warehouse", "airport", "port")
_PREPOSITIONS = {
    "to": (r"\bto\s+|(?:->|→)\s*", r"(?:寄到|送到|发往|发到|运到|到)\s*"),
    "from": (r"\bfrom\s+", r"(?:从|自)\s*"),
}
# Free text ends at punctuation, a new clause ("on", "with" ...) or a weight ("2 kilos").
_PLACE_END = re.compile(
    r"[,.;!?，。；！？()（）]|\s(?:on|with|by|via|for|at|and|using|before|after|to|from)\s"
    r"|\s\d+(?:\.\d+)?\s*(?:kg|kilos?|g|lbs?|pcs|units?)\b|[出发寄送]"
    r"|\s+(?:(?:ph|phone|tel|fax)\.?\s*)?\+\d",  # "Costco pharmacy ph +1-206-…": its number
    re.IGNORECASE,
)


def _where_to(query: str, parameter: str) -> str | None:
    """For a parameter of where something goes or comes from, what follows the last
    "to" / "from" (寄到 / 从): one token for a code ("to 10115"), else the place up to
    the next clause ("to 88 Orchard Road, Singapore" → "88 Orchard Road")."""
    first = re.split(r"[_\W]+", parameter)[0]
    if parameter in _TO_NAMES or first == "to":
        english, chinese = _PREPOSITIONS["to"]
    elif parameter in _FROM_NAMES or first == "from":
        english, chinese = _PREPOSITIONS["from"]
    else:
        return None
    found = list(re.finditer(english, query, re.IGNORECASE)) or list(re.finditer(chinese, query))
    if not found:
        return None
    rest = query[found[-1].end() :][:120]
    if places.names_a_postcode(parameter):  # "from SW11 2AB to BN1 4GH": both whole
        code = places.leading_postcode(rest)
        if code is not None:
            return code
    if any(word in parameter for word in _CODE_WORDS) or is_id_name(parameter, machine=False):
        # "to 10115", "to postcode 94105"; ``from_rx_number`` is a number, not "the CVS"
        token = re.match(r"(?:[A-Za-z]+\s+){0,2}?([A-Za-z]*\d[\w-]*)", rest)
        return token.group(1) if token else None
    end = _PLACE_END.search(rest)
    place = (rest[: end.start()] if end else rest).strip()
    return place or None


# Labels a request writes before a free-text value: "原因是重复扣费", "备注：已发报价单",
# "标题 pipeline review", "reason: duplicate".
_TEXT_LABELS = {
    "reason": ("原因", "理由"), "note": ("备注",), "notes": ("备注",), "remark": ("备注",),
    "remarks": ("备注",), "comment": ("备注", "评论"), "comments": ("备注", "评论"),
    "title": ("标题",), "subject": ("主题", "标题"), "description": ("描述", "说明"),
}  # fmt: skip
# After a Chinese label: 是, 为, 写 (备注写：Q1缩减), a colon or a space; after an English
# one: a colon or "is".
_TEXT_AFTER_LABEL = (
    r"\s*(?:(?:写成|写上|写|填)?\s*[:：]|是|为|写成|写上|写|填|\s)"
    r"\s*([^，,。;；!?！？\n]{1,200})"
)
_TEXT_AFTER_NAME = r"\s*(?:[:：=]|\s+is\s)\s*([^，,。;；!?！？\n]{1,200})"


# A Chinese label and the text written after it: 抬头写…, 备注：…, 昵称填… (not 改成: "预算改成4万"
# gives the budget a new amount, it does not label one).
_CJK_LABELLED = re.compile(
    r"([\u4e00-\u9fff]{2,4}?)(?:(?:写成|填写|写|填)\s*[:：]?|[:：])\s*"  # 留言写：…
    r"([^，,。;；!?！？\s][^，,。;；!?！？\n]{0,199})"
)


def _after_described_label(query: str, spec: dict[str, Any], taken: Collection[object]) -> Any:
    """In a Chinese request, the text after a label that the parameter's Chinese
    description holds ("抬头写上海某某科技有限公司" for "收据/发票抬头", 备注写老婆的卡 for
    "卡片备注名"); None when no word of its description labels a text."""
    description = str(spec.get("description") or "")
    if not has_han(query) or not has_han(description):
        return None
    for match in _CJK_LABELLED.finditer(query):
        label = match.group(1)
        if not any(label[i:] in description for i in range(len(label) - 1)):
            continue
        quoted = _QUOTED_FROM.match(query, match.start(2))
        if quoted is not None:  # 备注写“疑似挖矿”: the quotes hold it whole
            text = next(g for g in quoted.groups() if g).strip()
        else:  # to the clause's end, not a phone after it
            text = re.split(r"\s+(?=[+\d])", match.group(2).strip())[0]
        if text not in map(str, taken):
            return text
    # a clause that begins with the word the description ends its name with: 抬头个人,
    # 抬头是深圳驰远物流有限公司 for "发票抬头（公司名称或“个人”）"
    head = re.split(r"[（(，,。:：;；\s]", description, maxsplit=1)[0]
    for match in _CJK_CLAUSE_LABEL.finditer(query):
        text = match.group(2).strip()
        if head.endswith(match.group(1)) and text not in map(str, taken):
            return text
    return None


# A clause of a label and its text, no word between: 抬头个人, 抬头为个人.
_CJK_CLAUSE_LABEL = re.compile(
    r"(?:^|(?<=[，,。;；\s]))([\u4e00-\u9fff]{2,4}?)(?:是|为)?([^，,。;；!?！？\s是为][^，,。;；!?！？\n]{0,199})"
)


def _labelled_text(query: str, parameter: str) -> str | None:
    """The text after the parameter's label in the request, to the clause's end: its
    Chinese label ("原因是重复扣费" for ``reason``) or its own name ("reason: duplicate")."""
    labels = [*_TEXT_LABELS.get(parameter, ()), parameter]
    for label in labels:
        pattern = (
            rf"(?<![A-Za-z]){re.escape(label)}\b{_TEXT_AFTER_NAME}"
            if label.isascii()
            else re.escape(label) + _TEXT_AFTER_LABEL
        )
        match = re.search(pattern, query, re.IGNORECASE if label.isascii() else 0)
        if match is not None and match.group(1).strip():
            quoted = _QUOTED_FROM.match(query, match.start(1))
            if quoted is not None:  # notes: "solid system design, weak on testing"
                return next(g for g in quoted.groups() if g).strip()
            return match.group(1).strip()
    return None


# A quoted text where a label's text begins: it runs to its closing quote.
_QUOTED_FROM = re.compile(r"\s*(?:\"([^\"]{1,500})\"|“([^”]{1,500})”|「([^」]{1,500})」)")


# A person's family or given name after its label: "surname Kowalski", "last name: Smith",
# "lastname O'Brien", "姓HUANG", "Name: Lindqvist", "Name's Chen Wei" (a bare "name" only
# before a colon, "is" or "'s": "the name on the booking" labels nothing).
_NAME_LABELS = (
    (("last", "surname", "family"), r"sur\s?name|last\s?name|family\s?name|姓"),
    (("first", "given"), r"first\s?name|given\s?name|名"),
    (("name",), r"(?<![\w\s])\s*name(?=\s*(?:[:：=]|\bis\b)|['’]s\b)"),
)
_NAME_AFTER_LABEL = re.compile(  # blanks bounded: a run of them is not re-split
    r"(?:['’]s\b)?\s{0,3}(?:[:：=]|\bis\b|是|叫)?\s{0,3}"
    r"([A-Za-z][A-Za-z'’-]*(?:\s{1,3}[A-Z][A-Za-z'’-]*)?)"
)


# A Chinese surname after 姓: a compound one, else one character (not 姓名 "full name").
_CJK_SURNAME = re.compile(
    r"\s?(欧阳|司马|诸葛|上官|东方|皇甫|令狐|慕容|尉迟|长孙|宇文|司徒|夏侯|公孙|[\u4e00-\u9fff])"
    r"(?<![名氏])"
)
# A Chinese label of who did something (报修人, 发现人, 申请人) and the name after it.
_PERSON_LABEL = re.compile(
    r"[\u4e00-\u9fff]{1,3}人\s{0,3}(?:是|为|[:：])?\s{0,3}"
    r"([\u4e00-\u9fff]{2,3}(?=$|[\s,，。;；!?！？])|[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
)


def _named_by_label(query: str, parameter: str) -> str | None:
    """A person's name after a label of the parameter's kind (``_NAME_LABELS``)."""
    for hints, label in _NAME_LABELS:
        if not any(hint in parameter for hint in hints):
            continue
        for found in re.finditer(rf"(?:^|(?<![A-Za-z]))(?:{label})", query, re.IGNORECASE):
            if found.group(0) == "姓":  # 驾驶人姓张: 张 (欧阳 of 姓欧阳); not 姓名, a full name
                surname = _CJK_SURNAME.match(query, found.end())
                if surname is not None:
                    return surname.group(1)
            value = _NAME_AFTER_LABEL.match(query, found.end())
            if value is not None and value.group(1).lower() not in _NOT_NAME_WORDS:
                return (
                    _part_of_name(value.group(1), parameter)
                    if hints == ("name",)
                    else value.group(1)
                )
    return None


# A parameter that is a day of birth: ``date_of_birth``, ``dob``, ``birthDate``, ``born_on``.
_BIRTH = re.compile(r"birth|(?:^|_)dob(?:$|_)|born", re.IGNORECASE)


# A whole name in Latin letters: two or three capitalised words.
_WHOLE_NAME = re.compile(r"[A-Z][\w'’-]*(?:\s[A-Z][\w'’-]*){1,2}")


def _born_before(arguments: dict[str, Any], today: date) -> None:
    """A day of birth is gone by: "expiry 2 March 2036" is no ``date_of_birth``."""
    for name, value in list(arguments.items()):
        if _BIRTH.search(name) and isinstance(value, str) and value[:10] >= today.isoformat():
            del arguments[name]


def _name_roles(props: dict[str, Any]) -> tuple[str | None, str | None]:
    """The given-name and the family-name parameters of a schema, when it has both."""
    given = family = None
    for name in props:
        lowered = name.lower()
        if "name" not in lowered:
            continue
        if any(hint in lowered for hint in _NAME_LABELS[0][0]):
            family = family or name
        elif any(hint in lowered for hint in _NAME_LABELS[1][0]):
            given = given or name
    return (given, family) if given and family else (None, None)


def _split_name(arguments: dict[str, Any], props: dict[str, Any]) -> None:
    """A whole Latin name the given-name parameter took ("my daughter Chloe Bennett"),
    split between it and the family-name one, when that one holds no word of it."""
    given, family = _name_roles(props)
    if given is None or family is None:
        _family_alone(arguments, props)
        return
    whole = arguments.get(given)
    if not isinstance(whole, str) or not _WHOLE_NAME.fullmatch(whole):
        return
    words = whole.split()
    if arguments.get(family) not in (None, whole) and arguments.get(family) in words:
        arguments[given] = " ".join(w for w in words if w != arguments[family]) or whole
        return
    arguments[given], arguments[family] = " ".join(words[:-1]), words[-1]


def _family_alone(arguments: dict[str, Any], props: dict[str, Any]) -> None:
    """A family name's parameter with no given one beside it holds the last word of a
    whole Latin name it took ("I'm Tomasz Nowak" for ``last_name``: Nowak)."""
    for name, value in list(arguments.items()):
        lowered = name.lower()
        if not (
            "name" in lowered
            and any(hint in lowered for hint in _NAME_LABELS[0][0])
            and isinstance(value, str)
            and _WHOLE_NAME.fullmatch(value)
        ):
            continue
        spec = props.get(name) or {}
        if spec.get("type", "string") == "string" and "enum" not in spec:
            arguments[name] = value.split()[-1]


def _part_of_name(name: str, parameter: str) -> str:
    """Of a whole name a bare "name" labels ("Name's James Whitfield"), the part a family
    or given name's parameter holds: Whitfield for ``last_name``, James for ``first_name``."""
    words = name.split()
    if len(words) < 2:
        return name
    if any(hint in parameter for hint in _NAME_LABELS[0][0]):
        return words[-1]
    if any(hint in parameter for hint in _NAME_LABELS[1][0]):
        return " ".join(words[:-1])
    return name


def _labelled_name(query: str, parameter: str) -> str | None:
    """The value after a label of the parameter: a person's name after its English label
    ("surname Kowalski") or a Chinese one ("客户是华强贸易" for ``customer``), or for a
    customer or recipient, whom the request is for ("给张三下单")."""
    named = _named_by_label(query, parameter)
    if named is not None:
        return named
    if _BY_SOMEONE.match(parameter):  # "报修人：王建国", "发现人李娜"
        match = _PERSON_LABEL.search(query)
        if match is not None:
            return match.group(1)
    for hint, label in _CJK_LABELS.items():
        if hint in parameter:
            match = re.search(re.escape(label) + _LABEL_VALUE, query)
            if match and match.group(1) and not _ASKS_OR_ACTS.search(match.group(1)):
                return match.group(1)
    if "customer" in parameter or "recipient" in parameter:
        match = _CJK_FOR.search(query)
        if match and match.group(1) not in ("我", "他", "她", "我们", "他们", "客户"):
            return match.group(1)
    return None


# A year as a parameter's name writes it ("tax_year", "fiscalYear", "year"), and a year
# named in words, by how far it is from this one.
_YEAR_NAME = re.compile(r"(?:^|_|(?<=[a-z]))year(?:$|_)", re.IGNORECASE)
_A_YEAR = r"\s+(?:tax\s+|fiscal\s+|financial\s+)?year\b"
_YEAR_WORDS = re.compile(
    rf"\b(?P<this>this|current){_A_YEAR}|\b(?P<last>last|previous|prior){_A_YEAR}"
    rf"|\b(?P<next>next){_A_YEAR}|\b(?P<before>the\s+year\s+before\s+last)\b"
    r"|(?P<zh_this>今年|本年度?)|(?P<zh_last>去年|上一?年)|(?P<zh_before>前年)|(?P<zh_next>明年|下一?年)",
    re.IGNORECASE,
)
_YEAR_SHIFT = {"this": 0, "last": -1, "next": 1, "before": -2}


def _year_named(query: str, spec: dict[str, Any], today: date) -> int | None:
    """The year a request names in words for a year parameter: "this year" is today's,
    去年 the one before, 前年 two before, "next year" the one after; None when it names
    none, or two different ones, or one out of the schema's bounds."""
    years = set()
    for match in _YEAR_WORDS.finditer(query):
        which = next(k for k, v in match.groupdict().items() if v).removeprefix("zh_")
        years.add(today.year + _YEAR_SHIFT[which])
    if len(years) != 1:
        return None
    year = years.pop()
    return year if _within(float(year), spec) else None


# A quarter of the year written in words: "the fourth quarter", "2nd quarter", 第四季度, 四季度.
_QUARTER_WORDS = re.compile(
    r"\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\b|第?([一二三四1-4])\s?季度",
    re.IGNORECASE,
)
_QUARTER_NUMBER = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "一": 1,
    "二": 2,
    "三": 3,
    "四": 4,
}
_QUARTER_OPTION = re.compile(r"Q([1-4])", re.IGNORECASE)


def _quarter_option(query: str, options: list[Any]) -> Any:
    """The option of quarters (Q1 … Q4) a request names in words: "fourth quarter" or
    第四季度 is Q4. None when the options are no quarters, or two are named."""
    named = set()
    for match in _QUARTER_WORDS.finditer(query):
        word = (match[1] or match[2]).lower()
        named.add(_QUARTER_NUMBER.get(word) or int(word[0]))
    if len(named) != 1 or len(options) > enums.LONG_ENUM:
        return None  # (a long enum's options are not read one by one)
    quarters = {}
    for option in options:
        quarter = _QUARTER_OPTION.fullmatch(option) if isinstance(option, str) else None
        if quarter is not None:
            quarters[int(quarter[1])] = option
    return quarters.get(named.pop()) if len(quarters) >= 2 else None


# A file name as a sentence writes it, a full stop or a comma after it ("the file is
# CO_form_E.pdf."), and a list of files by its name or description ("file_names",
# "attachments", 附件).
_FILE_IN_TEXT = re.compile(
    r"(?<![\w/.-])[\w][\w.-]{0,200}?\.[A-Za-z][A-Za-z0-9]{0,7}(?![A-Za-z0-9_-])(?!\.[A-Za-z0-9])"
)
_FILE_LIST = re.compile(r"(?<![a-z])files?(?![a-z])|file_?names?|attachments?|附件|文件", re.I)


def _is_file_parameter(name: str, spec: dict[str, Any]) -> bool:
    """A parameter naming a document or file: by its name, or by file-name examples."""
    if name.lower() in _FILE_NAMES:
        return True
    described = " ".join(str(v) for v in _example_values(spec))
    described += " " + str(spec.get("description", ""))
    return bool(_FILE_TOKEN.search(described)) and "file" in described.lower() + name.lower()


def _file_name(query: str, used: set[int]) -> str | None:
    """The first file name in the query (``returns-policy.md``) no other parameter took."""
    for match in _FILE_TOKEN.finditer(query):
        if match.start() not in used and not match.group(0)[-1].isdigit():
            used.add(match.start())
            return match.group(0)
    return None


def _after_colon(query: str) -> str | None:
    match = _COLON.search(query)
    text = match.group(1).strip() if match else ""
    return text or None


def _headline(query: str) -> str | None:
    """The text after a colon, unless it is a label's short value ("报修人：王建国"), else the
    request itself when it says enough (``_HEADLINE_WORDS``)."""
    body = _after_colon(query)
    if body is not None and _word_count(body) >= 3:
        return body
    return query.strip() if _word_count(query) >= _HEADLINE_WORDS else None


def _word_count(text: str) -> int:
    """Words, a Chinese word being about two characters."""
    return len(re.findall(r"[^\W_]+", text)) + len(_CJK_CHAR.findall(text)) // 2


# What a message says: the words after "that", "saying", "about" ("text all parents in 7A
# that school is closed tomorrow"), after 说 / 内容, or the clause after a Chinese request's
# first comma ("给高一(3)班的家长发短信，下周一开家长会").
_MESSAGE_NAMES = frozenset(
    (
        *("message", "msg", "text", "body", "content", "note", "notes", "comment"),
        *("notice", "remark", "remarks", "memo"),
    )
)
_SAYING = re.compile(
    r"\b(?:that|saying|to\s+say|telling\s+(?:them|him|her|everyone)|about)\s+(.+)$"
    r"|(?:说|内容是|内容为|内容：|告诉(?:他们|她们|他|她|大家))\s*(.+)$",
    re.IGNORECASE | re.DOTALL,
)
_CLAUSE_AFTER = re.compile(r"^[^，,]{2,60}[，,]\s*(.{2,})$", re.DOTALL)


def _is_message_name(name: str) -> bool:
    return name in _MESSAGE_NAMES or name.rsplit("_", 1)[-1] in _MESSAGE_NAMES


def _said(query: str) -> str | None:
    """The text of a required message: after a colon, else what the request says it
    says (``_SAYING``), else a Chinese request's second clause; None when the request
    does not word one."""
    return _worded_after(query, _SAYING, any_language=False)


def _worded_after(query: str, marker: re.Pattern[str], *, any_language: bool) -> str | None:
    """Free text the request words: after a colon, else after ``marker`` (its first or
    second group), else the clause after the order: in any language, or the next
    sentence, with ``any_language``; a Chinese request's second clause otherwise."""
    body = _after_colon(query)
    if body is not None:
        return body
    match = marker.search(query)
    if match is not None:
        return (match.group(1) or match.group(2)).strip().rstrip(".!?。！") or None
    stripped = query.strip()
    if any_language:
        clause = _CLAUSE_AFTER.match(stripped) or _SENTENCE_AFTER.match(stripped)
        return clause.group(1).strip().rstrip(".!?。！") if clause else None
    clause = _CLAUSE_AFTER.match(stripped) if has_han(query) else None
    return clause.group(1).strip().rstrip("。！") if clause else None


# Why something is asked: "because …", "since …", "due to …", 因为 / 由于 …
_REASON_NAMES = frozenset({"reason", "cause", "justification", "rationale"})
_BECAUSE = re.compile(
    r"\b(?:because|since|due\s+to|as\s+the|coz|cuz)\s+(.+)$|(?:因为|由于)\s*(.+)$",
    re.IGNORECASE | re.DOTALL,
)


# A title that is a thing's name (a job's, a product's), by its description: "职位名称",
# "job title", "name of the role".
_NAME_OF_THING = re.compile(r"名称|名字|\bname\b|job title|position|\brole\b", re.IGNORECASE)
# What a request calls it: "a role called Recruiting Coordinator", 职位就叫财务实习生.
_CALLED_TITLE = re.compile(
    r"\b(?:called|named|titled)\s+[\"'“「]?([A-Za-z][^,;:.!?\"”」(]{1,60}?)"
    r"(?=\s+(?:under|in|for|at|with)\b|[,;:.!?\"”」(]|$)"
    r"|(?:就叫|名叫|叫做|名为|叫)\s*[「“\"]?([\u4e00-\u9fffA-Za-z][\u4e00-\u9fff\w ]{1,20}?)"
    r"(?=[，,。；;！!」”\"\s]|$)",
    re.IGNORECASE,
)


# Parameters that hold the name of a thing (not a person's or a place's).
_THING_NAMES = frozenset({"software", "app", "application", "package", "program", "title"})


def _title_named(query: str, name: str, spec: dict[str, Any], held: Iterable[object]) -> str | None:
    """For a title that names a thing (its description says so): what the request calls
    it, else the first run of capitalised words it writes that it does not place ("a
    full-time Senior Backend Engineer in R&D") and no other parameter holds."""
    last = name.lower().rsplit("_", 1)[-1]
    if last not in _HEADLINE_NAMES and name.lower() not in _THING_NAMES:
        return None
    if not _NAME_OF_THING.search(str(spec.get("description") or "")):
        return None
    called = _CALLED_TITLE.search(query)
    if called is not None:
        return (called.group(1) or called.group(2)).strip().rstrip("'’")  # called 'X',
    taken = {str(value).lower() for value in held}
    if has_han(query):  # "装一下 Wireshark", "装个 Python 3.11.4": its Latin words
        for match in _LATIN_TERM.finditer(query):
            term = match.group(0)
            if term.lower() in taken or _REFERENCE_LIKE.search(term):
                continue
            if _ZONE.fullmatch(term) is None:  # "(UTC)" says when, not what
                return term
        return None
    # (an acronym is a team's more often than a thing's: "could IT push 7-Zip …")
    found = sorted(_capitalised_names(query), key=lambda n: bool(_ACRONYM.fullmatch(n)))
    for name_found in found:
        if name_found.lower() not in taken and not _placed(query, name_found, _IN_PLACE):
            return name_found
    return None


def _implied_options(
    arguments: dict[str, Any], props: dict[str, dict[str, Any]], required: Sequence[str]
) -> None:
    """A required option no word of the request named, when a value the request did give
    is described as for that option alone: ``newAddress`` "For update_address" gives
    ``requestType`` update_address, ``new_date`` "reschedule only" gives ``action``
    reschedule, "邮寄地址，交付方式为 mail 时填写" gives ``delivery`` mail. Nothing when the
    values given point to two options, or a switch's description names one ("true =
    bills by email only" says what the switch does, not which channel is asked for)."""
    values = [name for name, value in arguments.items() if not isinstance(value, bool)]
    given = [str(props.get(name, {}).get("description") or "") for name in values]
    for name in required:
        options = (props.get(name) or {}).get("enum")
        if name in arguments or not isinstance(options, list):
            continue
        named = [o for o in options if isinstance(o, str) and len(o) >= 2]
        implied = {o for o in named for d in given if _described_for(o, d)}
        if not implied:
            implied = {o for o in named if _option_of_values(o, values, props)}
        if len(implied) == 1:
            arguments[name] = implied.pop()


# What an option's words name, for the values that belong to it: "update_contact" is the
# option of an email or a phone number, "update_address" of a new address.
_OPTION_VERBS = frozenset(("update", "change", "set", "edit", "new", "add", "modify", "by"))
_CONTACT_NAMES = frozenset(("email", "mail", "phone", "mobile", "tel", "telephone", "cell"))


def _option_of_values(option: str, values: Sequence[str], props: dict[str, Any]) -> bool:
    """Whether ``option`` names what a given value is, all its words but a verb
    ("update_address" of ``newAddress``, "update_contact" of ``email``), and no other
    given value is left out of it: a request giving an address and an email asks for
    neither option alone."""
    words = _option_words(option) - _OPTION_VERBS
    if not words:
        return False
    hits = 0
    for value in values:
        spec = props.get(value) or {}
        kinds = _option_words(value)
        if kinds & _CONTACT_NAMES or spec.get("format") == "email":
            kinds.add("contact")
        if words <= kinds:  # every word of the option ("fixed_amount" is not min_order_amount's)
            hits += 1
        elif spec.get("type") in ("object", "array") or kinds & (_CONTACT_NAMES | {"address"}):
            return False  # a value of another kind of change is given too
    return hits > 0


def _option_words(name: str) -> set[str]:
    return {w for w in split_identifier(name).lower().split() if len(w) > 2} - STOPWORDS


def _described_for(option: str, description: str) -> bool:
    """Whether ``description`` says its parameter is for ``option`` alone: "reschedule
    only", "only for action=pay", "For update_address", "(action=waive)", "required to
    link", "交付方式为 mail 时填写", "仅 decision 为 reduce 时填写"; not "omit for a
    payoff", "not needed for pickup" or "提前结清时可不填" (left empty for it)."""
    o = re.escape(option)
    found = _cached(
        rf"(?<![\w]){o}\s+only\b|\bonly\s+(?:for|when|if)\b[^.;,]{{0,30}}?(?<![\w]){o}(?![\w])"
        rf"|\bfor\s+{o}(?![\w])|=\s*{o}(?![\w])|\brequired\s+to\s+{o}(?![\w])"
        rf"|(?<![\w]){o}\s*时\s*(?:才|需要?|必须)?\s*(?:填写|填|必填|提供)",
        re.IGNORECASE,
    ).search(description)
    if found is None:
        return False
    clause = re.split(r"[.;,，。；]", description[: found.start()])[-1]
    return _NOT_FOR.search(clause) is None


# Words that turn "for X" around: "omit for", "not needed for", "unless".
_NOT_FOR = re.compile(r"\b(?:not|omit|omitted|unless|except|without|never)\b|n't|不|无需|免", re.I)


def _worded(query: str, name: str, description: str = "") -> str | None:
    """A required free-text value the request words itself: a title or description
    (``_headline``; ``problem_description`` is a description), a message (``_said``), a
    reason (``_reason``), or a question the user brings (a ``topic``, or a text
    described as free, that its description says is what they ask: what the request says
    it is about, else the request); None for any other parameter ("Vendor name, free
    text" is a name)."""
    last = name.rsplit("_", 1)[-1]
    if name in _HEADLINE_NAMES or last in _HEADLINE_NAMES:
        return _headline(query)
    if _is_message_name(name):
        return _said(query)
    if name in _REASON_NAMES or last in _REASON_NAMES:
        return _reason(query)
    if (last in _ASKED_NAMES or _FREE_TEXT.search(description)) and _ASKED.search(description):
        return _said(query) or _headline(query)
    return None


# A question the user brings, by the parameter's name or a description that calls it
# free text ("自由填写", "free-form"), and a description that says it is asked: ``topic``
# "想咨询的问题", ``concern`` "what the patient wants to discuss".
_ASKED_NAMES = frozenset({"topic", "concern", "concerns", "inquiry", "enquiry", "question"})
_ASKED = re.compile(r"问题|咨询|question|ask|discuss|concern|enquir|inquir", re.IGNORECASE)
_FREE_TEXT = re.compile(r"free[- ]?(?:text|form)|自由填写|自由输入|随便写", re.IGNORECASE)


def _reason(query: str) -> str | None:
    """Why, as the request says it: after a colon, after "because" (因为), else the clause
    or the sentence after the order ("cancel WO-101872, opened it by mistake")."""
    return _worded_after(query, _BECAUSE, any_language=True)


# The sentences after the first: "Please withdraw WO-100455. The vendor fixed it."
_SENTENCE_AFTER = re.compile(r"^[^!?。！？]{2,80}?(?:[.!?](?=\s)|[。！？])\s*(.{2,})$", re.DOTALL)


_ELLIPTICAL_CHARS = 80  # "ok and how many are in stock", "快递单号呢": a short follow-up


def is_elliptical(query: str) -> bool:
    """A short request naming no identifier of its own: a follow-up to the previous call."""
    return len(query.strip()) <= _ELLIPTICAL_CHARS and not names_an_identifier(query)


# How a follow-up that names its own new value begins or ends: "and SF1000000002?",
# "same for CC-1300", "what about ELM-221?", "and DL-40816 too", "那 ACC-24013 呢",
# "还有 SF2000000002 呢", "再看看 SKU2158801".
_CONTINUING = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|then)\W+)?(?:and|same(?: thing)? for|what about|how about)\b"
    r"|\b(?:too|as well)\W*$|^\W*(?:那|还有|再看看|再查)|呢\W*$",
    re.IGNORECASE,
)


def continues_previous(query: str) -> bool:
    """A short request put as a continuation of the previous one ("same for CC-1300"),
    whether or not it names a value of its own."""
    text = query.strip()
    return len(text) <= _ELLIPTICAL_CHARS and _CONTINUING.search(text) is not None


def _utc_today() -> date:
    return datetime.now(UTC).date()


class ArgumentExtractor:
    """Fills a tool's arguments from a query; see the module docstring for the rules.
    ``today`` dates "last month" and "tomorrow" (the gateway's UTC date by default)."""

    def __init__(self, today: Callable[[], date] = _utc_today) -> None:
        self.today = today

    def extract(
        self,
        query: str,
        schema: dict[str, Any],
        *,
        previous: dict[str, Any] | None = None,
        remembered: Sequence[str] = (),
        elliptical: bool = False,
    ) -> Extraction:
        """``elliptical``: a short request naming no identifier may take a missing required
        value from the session's previous call without referring back to it ("which
        carrier?" after an order lookup): for tools that only read."""
        # What a request is read for (the router passes it already: the same object then);
        # a required parameter it leaves out is missing.
        schema = bounds.routing_schema(schema)
        unread: frozenset[str] = getattr(schema, "unread", frozenset())
        required = list(schema.get("required") or [])
        props = shapes.readable(schema.get("properties"), schema)
        needed = set(required)
        order = [n for n in required if n not in unread] + [p for p in props if p not in needed]
        # Days and times first: a day is theirs, not a loose pattern's ("^[A-Z0-9-]{6,20}$")
        order.sort(key=lambda n: (n not in needed, not _time_parameter(n, props.get(n) or {})))
        result = Extraction()
        used_numbers: set[int] = set()
        used_ids: set[int] = set()  # where the identifiers other parameters took start
        quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(query)]
        all_quoted = tuple(quoted)  # (``quoted`` is used up as parameters take its texts)
        names = _capitalised_names(query) + _chinese_names(query)
        titles = re.findall(r"《([^》]+)》", query)  # a book's title names no author
        names = [n for n in names if not any(n in title for title in titles)]
        # nor a word of a quoted message ("with the message 'Happy Christmas, love Em'")
        said = [text for text in quoted if len(text.split()) >= 3]
        names = [n for n in names if not any(n in text and n != text for text in said)]

        resolved: str | None = None
        prefix_owners: dict[str, frozenset[str]] | None = None

        def owners() -> dict[str, frozenset[str]]:
            """``_prefix_owners`` of the schema, worked out once, when first asked."""
            nonlocal prefix_owners
            if prefix_owners is None:
                prefix_owners = _prefix_owners(props)
            return prefix_owners

        def on_calendar() -> str:
            """The query with its dates in ISO form (``temporal.resolve``), read once."""
            nonlocal resolved
            if resolved is None:
                resolved = temporal.resolve(query, self.today())
            return resolved

        paired = roles.pairs(props)
        around = _around(props)
        self._period(result, query, props, paired, on_calendar, used_numbers)
        self._address(result, query, props, used_numbers)
        _journey(result.arguments, query, props, paired)
        lasting = _how_long(query, props, paired)
        if lasting is not None:  # "for 2 days" is how long, no count of anything
            used_numbers.update(n.start() for n in _NUMBER.finditer(query, lasting[1], lasting[2]))
        claims: dict[str, set[str]] | None = None  # per patterned parameter, its tokens
        for name in order:
            if name in result.arguments:
                continue
            spec = props.get(name) or {}
            taken = set(map(str, result.arguments.values()))
            taken |= {  # and each value of a list ("Java" of skills is no location)
                str(v)
                for value in result.arguments.values()
                if isinstance(value, list)
                for item in value
                for v in (item.values() if isinstance(item, dict) else (item,))
            }  # (of a list's objects, their values: an invitee's email is no message)
            if not _constrains(item_spec(spec)):
                # A guess (no pattern) leaves alone the tokens another parameter's own
                # pattern takes: "dep-104233" is deploy_id's, not the service's. (A list of
                # a pattern is no guess: "unlock EB-1101 and EB-1102" lists EB-1102.)
                claims = _claims(query, props) if claims is None else claims
                taken |= {t for other, tokens in claims.items() if other != name for t in tokens}
            if _time_parameter(name, spec):  # read where "tomorrow" and "下午两点" stand
                taken |= _written_forms(taken) | _started_on(name, paired, result.arguments)
                value = _dated(query, on_calendar(), spec, taken, props, self.today())
            elif _list_of_times(spec):  # "8am and 6pm", 早8点晚8点: each clock of the list
                value = _array(on_calendar(), name, spec, taken)
            else:
                value = self._fill(
                    query, name, spec, used_numbers, quoted, names, used_ids, taken, around
                )
                # "log 5 hours for volunteer V-4420": a required value may take what only
                # an optional parameter's example claims ("e.g. SH-4410")
                optional = (
                    _optionally_claimed(claims, name, needed, props)
                    if value is None and name in needed and claims
                    else set()
                )
                if optional & taken:
                    value = self._fill(
                        query, name, spec, used_numbers, quoted, names, used_ids,
                        taken - optional, around,
                    )  # fmt: skip
            if isinstance(value, str) and _anothers_prefix(value, name, owners()):
                value = None  # "ASG-402266" is the assignment's (ASG-204518), not EXT-58213's
            if value is None and spec.get("type", "string") == "string" and "enum" not in spec:
                value = _calendar_value(on_calendar(), query, name, spec, taken)
            if value is None and _calendar_options(spec):  # "in June" of 2027-03 / 2027-06
                value = _constrained(on_calendar(), spec, taken)
            if name not in required and _guessed_word(value, spec):
                value = None  # an optional filter is better left out than set to "what"
            if spec.get("format") == "date-time" and isinstance(value, str):
                value = _zoned(_date_time(value), query, spec, props)  # "…-08 15:00": …T15:00:00
            if value is not None:
                result.arguments[name] = value
                # The whole request as a search's text holds the others' numbers too.
                if isinstance(value, str) and value.strip() == query.strip():
                    continue
                used_numbers.update(_digits_of(query, value))
                if isinstance(value, str) and (
                    places.takes_a_place(name.lower(), spec) or _CODE.fullmatch(value)
                ):
                    used_numbers.update(_numbers_within(query, value))
                if isinstance(value, dict):  # an address object's numbers are its own,
                    for inner in value.values():  # and a point's latitude and longitude
                        if isinstance(inner, str):
                            used_numbers.update(_numbers_within(query, inner))
                        elif isinstance(inner, int | float) and not isinstance(inner, bool):
                            used_numbers.update(_numbers_worth(query, inner))

        _sides(result.arguments, query, props, paired, on_calendar, required)
        _held_outside(result.arguments, props, all_quoted)  # “周年快乐” is the card's message
        languages.assign(result.arguments, query, props)  # "spanish to english", 英译日
        _lasting(result.arguments, props, paired, lasting)
        for name, value in list(result.arguments.items()):
            if _NEW_VALUE.search(name) and isinstance(value, str):
                held = {str(v) for other, v in result.arguments.items() if other != name}
                # a day is found where the calendar writes it ("can't do wednesday, move
                # it to friday": 2026-12-09 … to 2026-12-11)
                dated = temporal.is_calendar_value(value) and value not in query
                text = on_calendar() if dated else query
                value = _changed_to(text, name, props[name], value, held)
                if temporal.is_calendar_value(value):  # "I won't be home tomorrow … come
                    value = _not_the_day_refused(on_calendar(), value, held)  # Thursday"
                result.arguments[name] = value
        for name, value in result.arguments.items():
            if name.lower() in _TERMS_NAMES and value == query.strip():
                others = [str(v) for other, v in result.arguments.items() if other != name]
                result.arguments[name] = (
                    _search_terms(query, others) or _topic_terms(query, others) or value
                )
                break
        _implied_options(result.arguments, props, required)
        _born_before(result.arguments, self.today())
        _split_name(result.arguments, props)
        self._complete(
            result, query, props, [n for n in required if n not in unread], previous, remembered,
            elliptical,
        )  # fmt: skip
        result.missing += [n for n in required if n in unread]
        return result

    def _period(
        self,
        result: Extraction,
        query: str,
        props: dict[str, dict[str, Any]],
        paired: list[tuple[str, str]],
        on_calendar: Callable[[], str],
        used_numbers: set[int],
    ) -> None:
        """A month or a year the request names, and no day, for a pair of day parameters
        (``start_date`` / ``end_date``): its first and last day ("last month", 10月份,
        "for 2026"). Its year is no number for another parameter."""
        days = [(s, e) for s, e in paired if _takes_day(props[s]) and _takes_day(props[e])]
        if not days:
            return
        span = roles.period(on_calendar(), self.today())
        if span is None:
            recent = _RECENT.search(query)
            since = _since(recent, self.today()) if recent else None
            if recent is not None and since is not None:  # "in the last 30 days", 最近7天
                result.arguments[days[0][0]] = since
                used_numbers.update(n.start() for n in _NUMBER.finditer(query, *recent.span()))
                if recent[3]:  # 三 of 近三个月 counts nothing either
                    used_numbers.add(recent.start(3))
            return
        first, last = span
        start, end = days[0]
        if first is not None:
            result.arguments[start] = first
        if last is not None:
            result.arguments[end] = last
        years = {value[:4] for value in span if value is not None}
        used_numbers.update(n.start() for n in _numbers(query) if n.group(0) in years)

    @staticmethod
    def _address(
        result: Extraction, query: str, props: dict[str, dict[str, Any]], used_numbers: set[int]
    ) -> None:
        """An address asked for in parts (``street``, ``city``, ``postcode``): each takes
        its part of the street address the request writes (``places.address_parts``),
        and the address's numbers are no count."""
        plain = [n for n, spec in props.items() if _plain_string(spec)]
        for name, value in places.address_parts(query, plain).items():
            if _fits_pattern(value, props[name]):
                result.arguments[name] = value
                used_numbers.update(_numbers_within(query, value))

    def _complete(
        self,
        result: Extraction,
        query: str,
        props: dict[str, dict[str, Any]],
        required: list[str],
        previous: dict[str, Any] | None,
        remembered: Sequence[str],
        elliptical: bool,
    ) -> None:
        """Required values the query's words did not give: from the previous call when the
        query refers back (or is elliptical), a title from the request itself, else from
        what the user told the agent before; what is still missing is listed."""
        refers = refers_back(query)
        carries = refers or (elliptical and is_elliptical(query))
        for name in required:
            if name in result.arguments:
                continue
            if previous and carries and name in previous:
                result.arguments[name] = previous[name]
                result.from_context.append(name)
                continue
            other = _under_another_name(previous, props.get(name) or {}, name) if carries else None
            if other is not None:
                result.arguments[name] = other
                result.from_context.append(name)
                continue
            spec = props.get(name) or {}
            day = _single_day_end(query, name, spec, props, result.arguments)
            if day is not None:  # "请一天年假": the leave ends the day it starts
                result.arguments[name] = day
                continue
            plain = spec.get("type", "string") == "string" and not _constrains(spec)
            described = str(spec.get("description") or "")
            headline = _worded(query, name.lower(), described) if plain else None
            if headline is not None:  # "file an incident, checkout returns 500"
                result.arguments[name] = headline
                continue
            value = self._recall(name, spec, remembered) if refers else None
            if value is not None:
                result.arguments[name] = value
                result.from_memory.append(name)
            else:
                result.missing.append(name)

    def _object(
        self, query: str, spec: dict[str, Any], taken: Collection[object] = ()
    ) -> dict[str, Any] | None:
        """An object's properties read from the request like a tool's own ("valid from
        2025-05-01 to 2025-05-05" for ``validity: {start, end}``), one level down: an
        object inside it is not read. A text another parameter holds, or holds a piece
        of, is not read again (a title's "Acme v. Northgate" names no opposing party).
        None unless every property it requires is read."""
        properties = shapes.readable(spec.get("properties"))
        flat = {n: p for n, p in properties.items() if p.get("type") != "object"}
        if not flat:
            return None
        counted = _counts_by_kind(query, flat)
        if counted and all(n in counted for n in spec.get("required") or ()):
            return counted  # tickets {adult, child, senior}: "2 senior tix + 1 adult"
        inner = self.extract(query, {**spec, "properties": flat})
        _numeric_range(inner, query, flat)  # "zones 2-4", 一区到二区
        _measures_by_noun(inner.arguments, query, flat)  # "waist … 82 cm", "100cm length"
        # (not a text that is most of the request: a headline's is the request itself)
        # (in any case: "the Asylum" is the room ``asylum``, no lead booker's name)
        held = [str(value).lower() for value in taken if len(str(value)) * 2 <= len(query)]
        # nor a piece of a sibling's text: the city "Hill Lane" of the street "8 Hill Lane"
        siblings = [v for v in inner.arguments.values() if isinstance(v, str)]
        read = {
            name: value
            for name, value in inner.arguments.items()
            if not (isinstance(value, str) and any(value.lower() in text for text in held))
            and not (isinstance(value, str) and any(value != v and value in v for v in siblings))
        }
        if inner.missing or not read or any(n not in read for n in spec.get("required") or ()):
            return None
        return read

    def _recall(self, name: str, spec: dict[str, Any], remembered: Sequence[str]) -> Any:
        """The first value for ``name`` that one of the remembered facts holds."""
        for text in remembered:
            quoted = [next(g for g in m.groups() if g) for m in _QUOTED.finditer(text)]
            value = self._fill(text, name, spec, set(), quoted, _capitalised_names(text), set())
            if value is not None:
                return value
        return None

    def _fill(
        self,
        query: str,
        name: str,
        spec: dict[str, Any],
        used_numbers: set[int],
        quoted: list[str],
        names: list[str],
        used_ids: set[int],
        taken: Collection[object] = (),
        around: str | None = None,
    ) -> Any:
        """``taken``: values other parameters already hold: a second date or id of the
        same shape is another one ("from 2027-01-10 to 2027-01-14"). ``around``: the
        schema's parameters' words (``_around``: what sets this one's description
        apart), None when there is no schema around it."""
        kind = spec.get("type", "string")
        if kind in ("integer", "number") and _RATE_NAME.search(name):
            rate = _rate(query, name)  # "three times a day" for ``doses_per_day``
            if rate is not None and (rate in spec.get("enum", [rate]) and _within(rate, spec)):
                return rate
        if kind in ("integer", "number") and isinstance(spec.get("enum"), list):
            span = _duration(query, name, spec, kind, used_numbers)  # "半小时" of [30, 60]
            if span is not None and span in spec["enum"]:
                return span
        if kind == "array":
            return _array(query, name, spec, taken)
        if kind == "object":
            return self._object(query, spec, taken)
        if kind == "string" and countries.takes_a_country(name, spec):
            country = countries.country_value(query, name, spec, taken)
            if country is not None:  # "UK passport" → GB for ^[A-Z]{2}$, 去泰国 → TH
                return country
        if currencies.takes_a_currency(name, spec):
            if currencies.own_dollars(query, spec):
                return None  # its default stands: "$375" of a bill in Canadian dollars
            currency = currencies.currency_value(query, name, spec, taken)
            if currency is not None:  # "how many yen for 500 pounds": GBP → JPY
                return currency
        if isinstance(spec.get("enum"), list) and weekdays.option_days(spec["enum"]):
            days = weekdays.options_named(query, spec["enum"])
            if len(days) == 1:  # "every Wednesday", 每周三
                return days[0]
        if isinstance(spec.get("enum"), list) and periods.option_units(spec["enum"]):
            cut = periods.option_cut(query, spec["enum"])
            if cut is not None:  # "per month", 按天, 每小时: how a report is cut
                return cut
        if isinstance(spec.get("enum"), list) and _RATE_NAME.search(name):
            often = _rate_option(query, spec["enum"])
            if often is not None:  # "twice a day" of 每天一次 / 每天两次 / 每周一次
                return often
        if isinstance(spec.get("enum"), list) and sorting.takes_a_sort(name, spec):
            order = sorting.sort_option(query, spec["enum"])
            if order is not None:  # "cheapest first" is 积分从低到高, "newest first" newest
                return order
        if isinstance(spec.get("enum"), list) and acts.takes_acts(spec["enum"]):
            asked = acts.option_asked(query, spec["enum"], _writes(query))
            if asked is not None:  # "let me in" unlocks, 撤防 disarms, 开暖气 is heat_on
                return asked
        if kind == "string" and "enum" not in spec and takes_a_domain(name, spec):
            domain = _domain_name(query, spec, taken)
            if domain is not None:  # "renew NorthPeakLabs.com", "给 lanting-art.cn 设置"
                return domain
        if "pattern" in spec or "enum" in spec or spec.get("format") in _FORMATS:
            # The other parameters' words are the tool's, no option's (号码 of a number).
            value = _constrained(query, spec, taken, around or "")
            if value is None and "pattern" in spec and _is_phone_parameter(name, spec):
                value = _phone_number(query, used_ids, taken, spec)  # "+44 7700 900123"
            if value is None and "pattern" in spec:
                return _prefixed(query, name, spec, taken) or _padded(query, name, spec, taken)
            if value is None and "enum" in spec:
                value = _beside_its_label(query, name, _options_to_read(query, spec["enum"]))
                if value is None and name.lower() in _ACTION_NAMES:
                    value = _action_option(query, spec["enum"])
                if value is None:  # "cut 4 figma seats", "再加20个": remove or add
                    value = _direction_option(query, spec["enum"])
                if value is None and rooms.names_a_room(name):  # 婴儿房 for ``nursery``
                    value = rooms.option_for(query, spec["enum"])
                if value is None:  # "RIs" for ``reserved_instance``
                    value = _initials_option(query, spec["enum"])
                if value is None:  # "the fourth quarter", 第四季度 for Q4
                    value = _quarter_option(query, spec["enum"])
            return value
        if kind in ("integer", "number"):
            # an account's digits another parameter's pattern takes are no amount
            claimed = {n.start() for n in _numbers(query) if len(n[0]) >= 5 and n[0] in taken}
            skip = used_numbers | claimed
            number = _number(query, name, spec, kind, skip)
            used_numbers |= skip - claimed
            if number is None and kind == "integer" and _YEAR_NAME.search(name):
                number = _year_named(query, spec, self.today())  # "this year", 去年
            return number
        if kind == "boolean":
            said = _boolean(query, name, fallback=False)
            if said is None and around is not None:
                said = _described_flag(query, name, spec, around)
            if said is None:
                said = _yes_or_no(query, name)
            return said
        if kind == "string" and _LINK_NAME.search(name) and not _constrains(spec):
            link = _FORMATS["url"].search(query)  # ``artwork_url`` of "file is at https://…"
            if link is not None and link.group(0) not in taken:
                return link.group(0)
        if kind == "string":
            free = not _constrains(spec) and not is_id_name(name)
            labelled = _after_described_label(query, spec, taken) if free else None
            if labelled is not None:  # 抬头写上海某某科技有限公司 for "收据/发票抬头"
                return labelled
            last = name.lower().rsplit("_", 1)[-1]
            # (a name's quotes hold a name: "Happy birthday, love you" is a card's message)
            quotable = last in _QUOTED_TITLES or (
                name.lower() in _QUOTED_NAMES and bool(quoted) and _reads_as_a_name(quoted[0])
            )
            if quotable and quoted and not _constrains(spec):
                return quoted.pop(0)  # title "Acme v. Northgate": the quotes hold it whole
            bracketed = _bracketed_title(query, name, spec, taken)
            if bracketed is not None:  # 《疯狂动物城2》 for ``film``
                return bracketed
            work = _work_named(query, name, spec, taken)
            if work is not None:  # "When is Dune Messiah showing … at Westgate?"
                return work
            named = _title_named(query, name, spec, taken) if not _constrains(spec) else None
            if named is not None:  # "a role called Recruiting Coordinator"
                return named
            if rooms.takes_a_room(name, spec):  # "dim the lounge", 书房的灯, "the front door"
                room = rooms.room_value(query, name)
                if room is not None and room not in taken:
                    return room
            value = _string(query, name, spec, quoted, names, used_ids, taken)
            if value is None and rooms.fallback(name, spec):  # "the leak sensor in the basement"
                value = rooms.room_value(query, name)
            return value
        return None


def _writes(query: str) -> Callable[[str], bool]:
    """Whether ``query`` writes a word, in any inflection ("heating" for ``heat``) or in
    the gloss of its Chinese (灯 for ``lights``)."""
    lowered = query.lower()
    stems = {stem(word) for word in _LATIN_WORD.findall(lowered)}
    if has_han(lowered):
        stems |= {stem(word) for word in _glossed_words(lowered)}
    return lambda word: stem(word) in stems


# A count per day, week or month: ``doses_per_day``, ``times_per_week``, ``frequency``.
_RATE_NAME = re.compile(r"per_?(?:day|week|month)|daily|weekly|frequency|times", re.IGNORECASE)
_RATE_WORDS = {"once": 1, "twice": 2, "thrice": 3}
_EN_RATE = re.compile(
    r"(?<![a-z])(?:(once|twice|thrice)|(\d{1,2}|one|two|three|four|five|six|seven|eight)"
    r"\s+times)\s+(?:a|an|per|each|every)\s+(day|week|month)(?![a-z])"
    r"|(?<![a-z])(once|twice|thrice|(\d{1,2}|one|two|three|four)\s+times)\s+(daily|weekly|monthly)",
    re.IGNORECASE,
)
_ZH_RATE = re.compile(
    r"(每天|一天|每日|每周|一周|每个?月|一个月)\s*(\d{1,2}|[一二两三四五六七八九十]{1,2})\s*次"
)
_ZH_PERIODS = {"天": "day", "日": "day", "周": "week", "月": "month"}


# Once a period, said without a count: "daily", "every morning", 每天, "weekly", 每周.
_EN_ONCE = re.compile(
    r"(?<![a-z])(?:(daily|nightly|weekly|monthly)"
    r"|(?:every|each)\s+(day|morning|evening|night|week|month))(?![a-z])",
    re.IGNORECASE,
)
_ZH_ONCE = re.compile(r"(每天|每日|每晚|每周|每个?月)(?!\s*(?:\d|[一二两三四五六七八九十])\s*次)")
_ONCE_PERIODS = {
    "daily": "day", "nightly": "day", "day": "day", "morning": "day", "evening": "day",
    "night": "day", "weekly": "week", "week": "week", "monthly": "month", "month": "month",
    "天": "day", "日": "day", "晚": "day", "周": "week", "月": "month",
}  # fmt: skip


# A prescription's Latin abbreviations, written alone as an option: "bid" is twice a day.
_LATIN_RATES = {
    "qd": (1, "day"), "od": (1, "day"), "bid": (2, "day"), "tid": (3, "day"),
    "qid": (4, "day"), "qw": (1, "week"),
}  # fmt: skip


# Capitals a request writes for an option of several words: "RI", "RIs", "SP".
_INITIALS = re.compile(r"(?<![A-Za-z0-9&])([A-Z]{2,4}|[A-Z](?:&[A-Z]){1,2})s?(?![A-Za-z0-9&])")
_JOINING_WORDS = frozenset({"and", "of", "or"})  # "P&L" of ``profit_and_loss``


def _initials_option(query: str, options: list[Any]) -> Any:
    """The one option of two words or more whose initials the request writes in capitals
    ("what RIs should we buy" for ``reserved_instance``, "SP" for ``savings_plan``, "P&L"
    for ``profit_and_loss``)."""
    written = {m.group(1).replace("&", "") for m in _INITIALS.finditer(query[:_MAX_LABELLED])}
    if not written:
        return None
    found = []
    for option in options:
        if not isinstance(option, str):
            continue
        words = [w for w in re.split(r"[_\s-]+|(?<=[a-z])(?=[A-Z])", option) if w]
        main = [w for w in words if w.lower() not in _JOINING_WORDS]
        initials = {"".join(w[0] for w in words).upper(), "".join(w[0] for w in main).upper()}
        if len(main) >= 2 and initials & written:
            found.append(option)
    return found[0] if len(found) == 1 else None


def _said_rate(text: str) -> tuple[int, str] | None:
    """How many times in which period ``text`` says: "twice a day" and 一天两次 are (2,
    "day"); "weekly", "every morning" and 每天 alone, once a period. None for none, or two."""
    if text.strip().lower() in _LATIN_RATES:
        return _LATIN_RATES[text.strip().lower()]
    found = set(_rates(text))
    if not found:
        for match in _EN_ONCE.finditer(text):
            found.add((1, _ONCE_PERIODS[(match[1] or match[2]).lower()]))
        for match in _ZH_ONCE.finditer(text):
            found.add((1, _ONCE_PERIODS[match[1][-1]]))
    return found.pop() if len(found) == 1 else None


def _rate_option(query: str, options: list[Any]) -> Any:
    """The option that says as often as the request ("twice a day" and 一天两次 choose
    每天两次; "weekly" 每周一次), when two options or more say how often."""
    rates = {o: _said_rate(o.replace("_", " ")) for o in options if isinstance(o, str)}
    said = {rate: o for o, rate in rates.items() if rate is not None}
    if len(said) < 2:
        return None
    asked = _said_rate(query)
    return said.get(asked) if asked is not None else None


def _rates(text: str) -> Iterator[tuple[int, str]]:
    """Each "N times a period" ``text`` says, in order, English first: (2, "day") for
    "twice a day", 每天两次, "2 times daily"."""
    for match in _EN_RATE.finditer(text):
        said = (match[1] or match[4] or "").lower()
        number = _RATE_WORDS.get(said.split()[0]) if said else None
        digits = match[2] or match[5]
        if number is None and digits:
            number = int(digits) if digits.isdigit() else _COUNT_WORDS.get(digits.lower())
        period = (match[3] or match[6] or "").lower().removesuffix("ly").replace("dai", "day")
        if number is not None:
            yield number, period
    for match in _ZH_RATE.finditer(text):
        number = temporal.cn_number(match[2])
        if number is not None:
            yield number, _ZH_PERIODS[match[1][-1]]


def _rate(query: str, name: str) -> int | None:
    """How many times a day (week, month) the request says, for a parameter counting
    per that period ("once daily", "three times a day", 每天两次); None if it says none,
    or names another period than the parameter's."""
    lowered = name.lower()
    wanted = next((p for p in ("day", "week", "month") if p in lowered), None)
    return next((n for n, period in _rates(query) if wanted in (None, period)), None)


# A parameter that says which of its tool's acts to do: ``action`` of ["view", "pay"].
_ACTION_NAMES = frozenset(("action", "operation", "op", "verb"))
# Options that read: a question takes the one of them an action's options hold.
_READ_OPTIONS = frozenset(
    ("view", "show", "get", "read", "check", "status", "lookup", "list", "query", "查看", "查询")
)


def _action_option(query: str, options: list[Any]) -> str | None:
    """Which act an ``action`` parameter's options the request asks for, when no option's
    own word is in it: its order's verb ("move BK-588204 to the 3rd of June" is a
    reschedule: ``intent.order_verb``), or for a question the one option that reads
    ("what's on invoice INV-90417?" of ["view", "pay"])."""
    words = {str(o).lower(): o for o in options if isinstance(o, str)}
    verb = intent.order_verb(query)
    if verb is not None:
        found = [o for w, o in words.items() if stem(w) == stem(verb)]
        if not found:  # "push EVT-… to jan 20th" reschedules: the option that moves it
            found = [o for w, o in words.items() if w in _SAME_ACT.get(verb, ())]
        return found[0] if len(found) == 1 else None
    if intent.asks_to_read(query):
        reading = [o for w, o in words.items() if w in _READ_OPTIONS]
        return reading[0] if len(reading) == 1 else None
    return None


# Options that add and options that take away, and the words a request says either by.
_MORE_OPTIONS = frozenset(
    ("add", "increase", "plus", "up", "more", "grow", "top_up", "link", "bind", "attach")
)
_LESS_OPTIONS = frozenset(
    (
        *("remove", "decrease", "minus", "down", "less", "reduce", "shrink", "delete"),
        *("unlink", "unbind", "detach"),
    )
)
_MORE_WORDS = re.compile(
    r"\b(?:add|more|extra|additional|another|increase|raise|bump\s+up|top\s+up|grow|link"
    r"|bind|attach)\b|再加|加上|增加|添加|多加|追加|再来|扩容|加\s?\d|加[一二两三四五六七八九十几]"
    r"|绑定|绑个|绑一?张|绑上",
    re.IGNORECASE,
)
_LESS_WORDS = re.compile(
    r"\b(?:remove|fewer|less|cut|drop|reduce|decrease|release|free\s+up|lower|shrink|delete"
    r"|unlink|unbind|detach)\b|\btake\s+(?:[\w'-]+\s+){0,4}?(?:out|off)\b"
    r"|减少|减掉|减去|去掉|砍掉|释放|缩减|少\s?\d|减\s?\d"
    r"|减[一二两三四五六七八九十几]|删掉|删除|删了|解绑|移除",
    re.IGNORECASE,
)


_MAX_DIRECTION_OPTIONS = 8
# A Chinese option says its direction in its first word: 添加商品, 移除商品 (of an enum
# that also holds 修改数量, 跳过一次).
_MORE_LEADS = ("添加", "增加", "加入", "新增", "追加", "绑定")
_LESS_LEADS = ("移除", "删除", "去掉", "去除", "减少", "解绑")


def _adds(option: str, words: frozenset[str], leads: tuple[str, ...]) -> bool:
    return option in words or option.startswith(leads)


def _direction_option(query: str, options: list[Any]) -> Any:
    """Of an enum with one option that adds and one that takes away (``add`` / ``remove``,
    ``increase`` / ``decrease``, 添加商品 / 移除商品), the one the request's words say, when
    they say one only: "cut 4 figma seats", "five more Adobe CC licences", 减掉 3 个席位,
    再加20个."""
    if len(options) > _MAX_DIRECTION_OPTIONS:
        return None
    more = [o for o in options if _adds(str(o).lower(), _MORE_OPTIONS, _MORE_LEADS)]
    less = [o for o in options if _adds(str(o).lower(), _LESS_OPTIONS, _LESS_LEADS)]
    if len(more) != 1 or len(less) != 1:
        return None
    said_more = _MORE_WORDS.search(query) is not None
    said_less = _LESS_WORDS.search(query) is not None
    if said_more == said_less:
        return None
    return more[0] if said_more else less[0]


# An order's verb and the options that name the same act in other words.
_SAME_ACT = {"reschedule": ("move", "postpone", "change", "shift"), "cancel": ("delete", "void")}

_MAX_ITEMS = 16  # values one list takes from a request
# A list of people or of addresses: its plain strings are the request's email addresses.
_ADDRESSED = re.compile(
    r"mail|attendee|participant|invitee|recipient|member|people|person|user|guest|\bcc\b"
    r"|邮箱|邮件|参会|参与|收件|成员|人员",
    re.IGNORECASE,
)


_MAILED = re.compile(r"e-?mail|邮箱|邮件", re.IGNORECASE)  # a value that may be an address
# A parameter naming a person's account, which an email address identifies as well as a
# user id does: "remove mike@acme.com" for ``user``.
_ACCOUNT = re.compile(r"user|member|login|invitee|recipient|assignee|username", re.IGNORECASE)


def _takes_an_address(name: str, spec: dict[str, Any]) -> bool:
    """Whether the parameter takes an email address: its name says so ("member_email"),
    or every example it gives is one ("例如 li.wei@acme.com", whose shape alone would
    read "wang.fang" out of "wang.fang@acme.cn")."""
    if re.search(r"e-?mail|邮箱", name, re.IGNORECASE):
        return True
    examples = examples_of(spec)
    return bool(examples) and all(_FORMATS["email"].fullmatch(e) for e in examples)


def _addressed(
    query: str, name: str, spec: dict[str, Any], taken: Collection[object], *, only: bool
) -> str | None:
    """The request's email address for a parameter that takes ``only`` one (before any
    identifier is looked for: ``_takes_an_address``), or else that may take one: "email
    or name", or a ``user`` with no example of its own, whom an address names."""
    if only:
        wanted = _takes_an_address(name, spec)
    else:
        described = f"{name} {spec.get('description') or ''}"
        wanted = bool(_MAILED.search(described)) or (
            _ACCOUNT.fullmatch(name) is not None and not examples_of(spec)
        )
    return _email(query, taken) if wanted else None


def _email(query: str, taken: Collection[object]) -> str | None:
    """The request's first email address no other parameter took."""
    return next(
        (m.group(0) for m in _FORMATS["email"].finditer(query) if m.group(0) not in taken), None
    )


# A list's name that says it holds identifiers: "item_barcodes", "order_ids", "skus".
_IDENTIFIER_LIST = re.compile(
    r"(?:^|[_\-\s])(?:ids|codes|barcodes|numbers|skus|refs|references|serials)$|(?<=[a-z])Ids$",
)


_RUNS_SHAPE = re.compile(r"[A-Za-z]+|\d+")


def _run_kind(run: re.Match[str]) -> str:
    return "9" if run.group(0)[0].isdigit() else "A"


def _array(query: str, name: str, spec: dict[str, Any], taken: Collection[object]) -> Any:
    """Every value the request gives for a list: each match of its items' pattern or
    format, each option of their enum it names, in the order written; or, for a list of
    people or addresses ("attendees", "cc") with no such constraint, its email addresses.
    None when it gives none, or fewer than ``minItems``."""
    items = spec.get("items")
    if not isinstance(items, dict):
        return None
    max_items = spec.get("maxItems")
    limit = min(max_items, _MAX_ITEMS) if isinstance(max_items, int) else _MAX_ITEMS
    if items.get("type") == "object":
        keyed = _keyed_items(query, items, taken, limit)
        if keyed is not None:  # invitees {email, role}: "add a@x.io and b@y.io as editors"
            minimum = spec.get("minItems")
            return keyed if len(keyed) >= (minimum if isinstance(minimum, int) else 1) else None
        return lineitems.lines(query, items, _enum_option)  # "two wardrobe boxes"
    found: list[Any] = []
    if "description" not in items and isinstance(spec.get("description"), str):
        # the list's description often says what its options mean: "bath=洗澡，haircut=剪毛"
        items = {**items, "description": spec["description"]}
    if "enum" in items and isinstance(items["enum"], list) and weekdays.option_days(items["enum"]):
        found = weekdays.options_named(query, items["enum"])[:limit]  # "weekdays", 周六周日
    elif "enum" in items and isinstance(items["enum"], list):
        while len(found) < limit:
            option = _enum_option(query, items, taken=found)
            if option is None:
                break
            found.append(option)
        # 前保险杠 lists no 后保险杠 by the 保险杠 they share
        found = [o for o in found if not _looks_like_written(query, o, found)]
        described = str(items.get("description") or "")
        found.sort(key=lambda option: _mentioned_at(query, option, described))  # as listed
    elif items.get("type") in ("integer", "number"):
        found = _percentages(query, items)[:limit]  # "alert at 50, 80 and 100%", 到75%和100%
        if not found and items.get("type") == "integer":  # "modules 1 to 3", 第二和第五模块
            found = numbered.numbers_named(query, name, items)[:limit]
    elif items.get("type", "string") == "string" and _MEDICINE_NAME.search(name.replace("_", " ")):
        found = _medicine_list(query, taken)[:limit]  # "interactions: a, b, c", 华法林和阿司匹林
    elif items.get("type", "string") == "string" and _PLATE_WORDS.search(name):
        # "车牌粤B6T2Q8", "plates 7KJM221 and 8ABC123"; "YT70 KLM" as YT70KLM where the
        # items' pattern allows no space (and none it refuses: "ab12" of "ab12 cde")
        plates = (_as_items_want(p, items) for p in _plates(query, taken))
        found = [p for p in plates if p is not None][:limit]
    elif _constrains(items) and items.get("type", "string") == "string" and _loose(items):
        # a pattern every plain word matches ("^[a-z]{2,24}$" of extensions to try) tells
        # no item from the words around it: only values written with a leading dot count
        # (".net and .shop"), none of a domain name
        dotted = (m.group(1) for m in _DOT_LED.finditer(query))
        found = [v for v in dict.fromkeys(dotted) if _fits_pattern(v, items)][:limit]
    elif _constrains(items) and items.get("type", "string") == "string":
        while len(found) < limit:
            value = _constrained(query, items, [*map(str, taken), *found])
            if value is None or value in found:  # a case-folded match ignores ``taken``
                break
            found.append(value)
        shape = _PREFIX_DIGITS.fullmatch(str(items.get("pattern", "")))
        if not found and shape is not None:  # "rx 4471023 and rx 4471031"
            found = [v for v in _prefix_typed(query, shape) if v not in taken][:limit]
            if not found:  # "orders 885001 885002 885007" of ``^SO-[0-9]{6}$``
                found = [v for v in _bare_listed(query, shape) if v not in taken][:limit]
    elif items.get("type", "string") == "string" and _FILE_LIST.search(
        f"{name} {spec.get('description') or ''}"
    ):  # "schwab_1099b.pdf, fidelity_1099b.pdf", "receipt_jan.jpg 和 receipt_feb.jpg"
        named = (m.group(0) for m in _FILE_IN_TEXT.finditer(query) if not m[0][-1].isdigit())
        found = [f for f in dict.fromkeys(named) if f not in taken][:limit]
    elif items.get("type", "string") == "string" and rooms.takes_rooms(name, spec):
        found = rooms.room_values(query)[:limit]  # "clean the kitchen and the hallway"
    elif items.get("type", "string") == "string" and _IDENTIFIER_LIST.search(name):
        # a list of identifiers ("item_barcodes", "order_ids"): those the request has that
        # no other parameter took, of the first one's shape
        tokens = [t for _, t in _id_tokens(query) if _is_identifier(t) and t not in taken]
        shapes = [_RUNS_SHAPE.sub(_run_kind, t) for t in tokens]
        # of the shape the list's own example has ("Image numbers like IMG_0012": no 4x6)
        exemplified = {_RUNS_SHAPE.sub(_run_kind, e) for e in examples_of(items)}
        first = next((s for s in shapes if s in exemplified), shapes[0] if shapes else "")
        alike = (t for t, shape in zip(tokens, shapes, strict=True) if shape == first)
        found = list(dict.fromkeys(alike))[:limit]
    elif items.get("type", "string") == "string" and _TERMS_LIST.search(name):
        found = _named_terms(query, taken)[:limit]  # skills: "Python and Django", "会 PyTorch"
    elif items.get("type", "string") == "string" and _ADDRESSED.search(
        f"{name} {spec.get('description') or ''}"
    ):
        addresses = (m.group(0) for m in _FORMATS["email"].finditer(query))
        found = list(dict.fromkeys(a for a in addresses if a not in taken))[:limit]
        if not found and _NAMES_LIST.search(f"{name} {items.get('description') or ''}"):
            found = _people_named(query, taken)[:limit]  # ``guest_names``: the guests' names
    elif items.get("type", "string") == "string" and _NAMES_LIST.search(
        f"{name} {items.get('description') or spec.get('description') or ''}"
    ):
        found = _people_named(query, taken)[:limit]  # "Kevin Tan、黄思琪", "王磊、刘洋、陈静"
    minimum = spec.get("minItems")
    return found if found and len(found) >= (minimum if isinstance(minimum, int) else 1) else None


def _keyed_items(
    query: str, items: dict[str, Any], taken: Collection[object], limit: int
) -> list[dict[str, Any]] | None:
    """A list of objects each keyed by one value the schema pins down (an email, a
    pattern's id) beside options: one item per such value the request writes, each with
    the options it names for all of them ("invite a@x.io and b@y.io, view only"), or a
    required option's default. None when the items are not of that shape, the request
    writes no such value, or a required option is neither named nor defaulted."""
    props = items.get("properties")
    if not isinstance(props, dict) or not all(isinstance(s, dict) for s in props.values()):
        return None
    required = set(items.get("required") or ())
    keys = [
        name
        for name, s in props.items()
        if s.get("type", "string") == "string"
        and "enum" not in s
        and (s.get("format") == "email" or "pattern" in s)
    ]
    options = [name for name, s in props.items() if isinstance(s.get("enum"), list)]
    if len(keys) != 1 or not options or required - {keys[0], *options}:
        return None
    key = keys[0]
    values: list[Any] = []
    while len(values) < limit:
        value = _constrained(query, props[key], [*map(str, taken), *values])
        if value is None or value in values:
            break
        values.append(value)
    if not values:
        return None
    shared: dict[str, Any] = {}
    for name in options:
        option = _enum_option(query, props[name])
        if option is None and name in required:
            option = props[name].get("default")
            if option not in props[name]["enum"]:
                return None
        if option is not None:
            shared[name] = option
    return [{key: value, **shared} for value in values]


def _looks_like_written(query: str, option: Any, found: Sequence[Any]) -> bool:
    """Whether a Chinese ``option`` the request does not write shares a character with
    one ``found`` that it writes whole, and the request writes no two characters of it
    that those do not hold (后保险杠 beside 前保险杠, 车门 beside 车顶; not 学历验证 of
    "查学历和工作履历")."""
    text = str(option)
    if not has_han(text) or text in query:
        return False
    written = [str(other) for other in found if str(other) in query]
    pairs = (text[i : i + 2] for i in range(len(text) - 1))
    if any(pair in query and not any(pair in other for other in written) for pair in pairs):
        return False  # named by words of its own
    return any(set(text) & set(other) for other in written)


# A run of numbers written as one list, a percent sign after one of them at least: "50, 80
# and 100%", "75%和100%", "50/90/100 %".
_PERCENT_LIST = re.compile(
    r"(?<![\d.])\d{1,3}(?:\.\d+)?\s?[%％]?(?:\s?(?:,|、|/|&|\band\b|和|跟|及)\s?\d{1,3}(?:\.\d+)?\s?[%％]?)+",
    re.IGNORECASE,
)


def _percentages(query: str, items: dict[str, Any]) -> list[int | float]:
    """For a list of numbers: the first run of two numbers or more written as a list of
    percentages (``_PERCENT_LIST``), each within the items' bounds; else none."""
    for match in _PERCENT_LIST.finditer(query):
        if "%" not in match.group(0) and "％" not in match.group(0):
            continue
        numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?", match.group(0))]
        values = [int(n) if items.get("type") == "integer" else n for n in numbers]
        if all(v == n and _within(float(v), items) for v, n in zip(values, numbers, strict=True)):
            return values
    if _PERCENT_WORDS.search(str(items.get("description") or "")):
        alone = re.findall(r"(?<![\d.])(\d{1,3})\s?[%％]", query)
        if len(alone) == 1 and _within(float(alone[0]), items):  # "alert at 90%"
            return [int(alone[0])]
    return []


_PERCENT_WORDS = re.compile(r"percent|%|百分比", re.IGNORECASE)


# A list of people by name: "visitor_names", "attendees" described as 姓名.
_NAMES_LIST = re.compile(r"names?\b|names?_|Names|姓名|名字", re.IGNORECASE)


def _people_named(query: str, taken: Collection[object]) -> list[str]:
    """Every person the request names (``person_names``, and an English name of one
    word standing alone after a comma or "and"), none another parameter holds."""
    held = {str(value).lower() for value in taken}
    if has_han(query):  # "名字是Tom Becker和Anna Schulz": Latin names between Chinese words
        latin = [
            (m.start(), m.group(0))
            for m in _LATIN_PERSON.finditer(query)
            if m.group(0).split()[-1] not in _COMPANY_WORDS
            and not _COMPANY_AFTER.match(query, m.end())
        ]
        cjk = [(query.find(n), n) for n in _chinese_names(query)]
        found = [n for _, n in sorted(latin + cjk)]
    else:
        found = person_names(query)
        if not found:
            found = [n for n in _capitalised_names(query) if not _ACRONYM.fullmatch(n)]
    return list(dict.fromkeys(n for n in found if n.lower() not in held))


# A Latin person's name in a Chinese request: capitalised words ("Kevin Tan"), not a
# company ("Kessler GmbH").
_LATIN_PERSON = re.compile(
    r"(?<![A-Za-z])[A-Z][a-z]+(?:['-][A-Za-z][a-z]+)*(?:\s[A-Z][a-z]+(?:['-][A-Za-z][a-z]+)*){0,2}"
    r"(?![A-Za-z'-])"
)
_COMPANY_AFTER = re.compile(r"\s*(?:GmbH|Ltd|Inc|Corp|LLC|AG|S\.?A\.?|Co\.|公司|集团|科技)")
_COMPANY_WORDS = frozenset(
    {"GmbH", "Ltd", "Inc", "Corp", "Co", "LLC", "AG", "SA", "Group", "Technology", "Tech"}
)


def _plates(query: str, taken: Collection[object]) -> list[str]:
    """Every licence plate the request writes (``_licence_plate``), and each one listed
    after a plate ("plates ab12 cde and ab13 cde"), in order."""
    used: set[int] = set()
    found: list[str] = []
    # (a token in a plate's shape only while none is found: 粤B·D12345 holds no D12345)
    while len(found) < _MAX_ITEMS and (
        plate := _licence_plate(query, used, [*taken, *found], bare=not found)
    ):
        found.append(plate)
    for start in sorted(used):
        end = start
        while len(found) < _MAX_ITEMS and (
            more := _PLATE_LISTED.match(query, _plate_end(query, end))
        ):
            if more.group(1) not in found and more.group(1) not in taken:
                found.append(more.group(1))
            end = more.start(1)
    return sorted(found[:_MAX_ITEMS], key=query.find)


def item_spec(spec: Any) -> Any:
    """A list's item spec (``vehicleIds``: items with a pattern), or the spec itself."""
    items = spec.get("items") if isinstance(spec, dict) and spec.get("type") == "array" else None
    return items if isinstance(items, dict) else spec


_PLAIN_WORDS = ("the", "for", "and", "please")
_DOT_LED = re.compile(r"(?<![\w.])\.([a-z0-9-]{2,24})\b(?!\.)", re.IGNORECASE)


def _loose(items: dict[str, Any]) -> bool:
    """Whether the items' pattern takes plain words as they are ("the", "for")."""
    return "pattern" in items and all(_fits_pattern(w, items) for w in _PLAIN_WORDS)


def _as_items_want(value: str, items: dict[str, Any]) -> str | None:
    """``value`` as written, or without its spaces and dots and in capitals when only that
    form fits the items' pattern ("YT70 KLM", "粤B·D12345" for
    ``^[A-Z0-9\u4e00-\u9fff]{5,10}$``); None when neither fits."""
    if _fits_pattern(value, items):
        return value
    packed = re.sub(r"[\s·.-]", "", value).upper()
    return packed if _fits_pattern(packed, items) else None


# A Latin plate: letters and digits both, a second group after a space in capitals as UK
# plates write it ("KX21ABC", "YT70 KLM").
_LATIN_PLATE = r"(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{2,8}(?:[ -](?-i:[A-Z0-9]{2,4}))?"
# A Chinese licence plate: its province's character, the city's letter, five or six more
# ("粤B12345", "京N5B821", "沪A·7K392").
_PROVINCE_PLATE = (
    r"[京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼]\s?[A-Z][·\s]?[A-Z0-9]{5,6}"
)
# A plate listed after another: ", KX21ABD", "and ab13 cde", "、粤B12345".
_PLATE_LISTED = re.compile(
    rf"\s*(?:,|&|、|和|及|\band\b)\s*({_LATIN_PLATE}|{_PROVINCE_PLATE})(?![A-Za-z0-9])",
    re.IGNORECASE,
)


# A plate as written, to where it ends: "KX21ABC", "YT70 KLM", "粤B·D12345".
_PLATE_WRITTEN = re.compile(r"[^\s,，、]+(?:[ -][A-Z0-9]{2,4}(?![A-Za-z0-9]))?")


def _plate_end(query: str, start: int) -> int:
    """Where the plate written at ``start`` ends."""
    match = _PLATE_WRITTEN.match(query, start)
    return match.end() if match else start


# A list of free words a request names things by: skills, tags, keywords, a tech stack.
_TERMS_LIST = re.compile(
    r"skill|(?:^|_)tags?(?:$|_)|keyword|technolog|stack|topic|competenc|expertise|^tags",
    re.IGNORECASE,
)
# A Latin word or a run of capitalised ones in a Chinese request: "会 PyTorch 的", "Golang 和 K8s".
_LATIN_TERM = re.compile(
    # (three words at most: a run of capitals is read once, not again from each of them)
    r"(?<![A-Za-z0-9@._-])[A-Za-z][A-Za-z0-9+#]{0,40}(?:\.js)?(?:\s[A-Z][A-Za-z0-9+#]{0,40}){0,3}"
    r"(?![A-Za-z0-9@_-])"
)


def _named_terms(query: str, taken: Collection[object]) -> list[str]:
    """The things a request names for a list of free words (skills, tags): the runs of
    capitalised words an English request writes, except where it places them ("in
    Toronto", "based in Berlin"); the Latin words of a Chinese one. None another
    parameter holds, nor an identifier or an address."""
    held = {str(value).lower() for value in taken}
    if has_han(query):
        found = [m.group(0) for m in _LATIN_TERM.finditer(query)]
    else:
        found = [n for n in _capitalised_names(query) if not _placed(query, n, _IN_PLACE)]
    terms = [
        t
        for t in found
        if t.lower() not in held and not _REFERENCE_LIKE.search(t) and t.lower() not in _NOT_TERMS
    ]
    return list(dict.fromkeys(terms))


_REFERENCE_LIKE = re.compile(r"\d{3,}|-")  # CAND-41007, JOB2087: a record, not a skill (K8s is)
# Latin words of a Chinese request that name no skill: offers, jobs and their references.
_NOT_TERMS = frozenset({"offer", "ok", "hr", "jd", "base", "cv", "pls", "hi", "id"})


def _mentioned_at(query: str, option: object, description: str = "") -> int:
    """Where ``query`` first writes a word of ``option`` (any of its words, in any
    inflection: "towels" of ``towel``; or five letters or more that begin one: "deshed"
    of ``deshedding``), or a word the description pairs with it ("bath=洗澡"); after the
    end when it writes none (an option named in other words keeps its place among those)."""
    words = {stem(w) for w in re.split(r"[\s_\-]+", str(option).lower()) if w}
    lowered = query.lower()
    for match in _LATIN_WORD.finditer(lowered):
        word = match.group(0)
        if stem(word) in words or (len(word) >= 5 and any(w.startswith(word) for w in words)):
            return match.start()
    text = str(option)
    at = query.find(text) if has_han(text) else -1
    if at < 0 and has_han(text[:2]) and len(text) > 2:
        at = query.find(text[:2])  # 学历 of 学历验证: "查学历和工作履历"
    if at < 0 and description:
        found = [query.find(w) for w in _paired_words(description, text)]
        at = min((f for f in found if f >= 0), default=-1)
    return at if at >= 0 else len(query)


def _search_terms(query: str, others: Sequence[str]) -> str | None:
    """What a search request searches for ("search logs for OOMKilled on orders-svc":
    "OOMKilled"), when it says so in those words: the words after "for", up to a clause
    of place or time, or in Chinese the Latin words a search word ends with; None when
    that is no more than what another parameter took, or more than six words."""
    # The Chinese form ends the request: only its last characters can hold it.
    found = _SEARCH_FOR.search(query) or _SEARCH_FOR_CJK.search(query.rstrip()[-100:])
    if found is None:
        return None
    terms = found.group("terms")
    ends = [m.start() for m in [_TERMS_WHEN.search(terms)] if m is not None]
    for other in others:
        where = re.search(_TERMS_WHERE + re.escape(other), terms, re.IGNORECASE)
        if where is not None:
            ends.append(where.start())
    terms = terms[: min(ends, default=len(terms))].strip(" \"'“”‘’")
    if not terms or len(terms.split()) > 6 or terms in others:
        return None
    return terms


# What a catalogue search asks for, once the request's frame is left out: the words that
# ask ("looking for", "do you have anything on", "recommend me some"), the things any
# catalogue lists, the words of a filter and the values other parameters took.
_ASKING_WORDS = frozenset((
    "looking", "look", "find", "search", "searching", "show", "list", "give", "get", "want",
    "need", "recommend", "suggest", "browse", "have", "got", "any", "anything", "something",
    "some", "there", "please", "pls", "thanks", "hi", "hey", "me", "only", "just", "really",
    "good", "best", "top", "new", "popular", "cheap", "cheapest", "free", "online",
))  # fmt: skip
_LISTED_THINGS = frozenset((
    "course", "courses", "class", "classes", "lesson", "lessons", "tutorial", "tutorials",
    "program", "programs", "programme", "programmes", "product", "products", "item", "items",
    "thing", "things", "stuff", "option", "options", "one", "ones", "result", "results",
))  # fmt: skip
_FILTER_WORDS = frozenset((
    "under", "below", "over", "above", "less", "more", "than", "longer", "shorter", "cheaper",
    "max", "maximum", "min", "minimum", "up", "to", "at", "most", "least", "nothing", "within",
    "taught", "level", "levels", "language", "priced", "price", "costing", "dollars",
    "dollar", "bucks", "usd", "euros", "eur", "pounds", "gbp", "hours", "hour", "hrs",
    "minutes", "mins", "weeks", "days", "total", "complete", "absolute",
))  # fmt: skip
_TOPIC_WORD = re.compile(r"[A-Za-z][A-Za-z'+#.-]*[A-Za-z+#]|[A-Za-z]|\d[\d,.]*")
_LONGEST_TOPIC = 5  # words: more is a sentence, no search's terms
_WH_QUESTION = re.compile(r"\s*(?:why|how|what|when|where|who|which)\b", re.IGNORECASE)


_FRAME_WORDS = tuple(sorted(w for w in _ASKING_WORDS | _LISTED_THINGS if len(w) >= 5))


@functools.lru_cache(maxsize=1024)
def _misspelt_frame(word: str) -> bool:
    """Whether ``word`` (five letters or more) is an asking word or a listed thing
    misspelt by a letter or two: "recomend", "cours"."""
    if len(word) < 5 or not word.isalpha():
        return False
    near = (w for w in _FRAME_WORDS if abs(len(w) - len(word)) <= 2 and w[0] == word[0])
    return any(difflib.SequenceMatcher(None, word, w).ratio() >= 0.88 for w in near)


def _topic_terms(query: str, others: Sequence[str]) -> str | None:
    """What an English catalogue search asks for when it does not say "search for":
    the first run of the request's words that are none of the asking words, the things
    any catalogue lists, a filter's words, a number, a language, or another parameter's
    value ("looking for python courses for total beginners": python; "any data science
    courses taught in spanish under 40 dollars": data science; "Do you have anything on
    watercolour painting?"). None for Chinese, for a question asked with "why", "how",
    "what" … (searched as asked), or when no such run of one to five words is left."""
    if has_han(query) or len(query) > _MAX_LABELLED or _WH_QUESTION.match(query):
        return None  # "why did mailer-api crash last night?" is searched as asked
    taken = {w for value in others for w in value.lower().split()}
    language_words = {word for word, _ in _LANGUAGE_WORDS if word.isascii()}
    runs: list[list[str]] = [[]]
    after_number = False
    for match in _TOPIC_WORD.finditer(query):
        word = match.group(0)
        lowered = word.lower().strip(".")
        dropped = (
            lowered in STOPWORDS
            or lowered in _ASKING_WORDS
            or lowered in _LISTED_THINGS
            or lowered in _FILTER_WORDS
            or lowered in language_words
            or lowered in _COUNT_WORDS
            or lowered in _SMALL_NUMBER_WORDS
            or word[0].isdigit()
            or after_number
            or any(lowered.startswith(value) for value in taken if len(value) >= 3)
            or _misspelt_frame(lowered)
        )
        after_number = word[0].isdigit()  # "40 dollars": the unit goes with its number
        if dropped:
            if runs[-1]:
                runs.append([])
            continue
        gap = query[match.start() - 1 : match.start()] if match.start() else " "
        if runs[-1] and gap not in (" ", "-"):
            runs.append([])  # a comma or a stop ends a run
        runs[-1].append(word)
    first = next((run for run in runs if run), None)
    if first is None or len(first) > _LONGEST_TOPIC:
        return None
    return " ".join(first)


def _boolean(query: str, name: str, *, fallback: bool = True) -> bool | None:
    """``name=false`` written out ("dry-run=false" for ``dry_run``); else, for a switch
    (``enabled``, ``active``, ``on`` ...), one thrown in words ("turn on", "flip X off",
    "disable", 打开 / 关掉), the first one said and not negated ("don't turn on" says
    nothing); else yes/true/with against no/false/without."""
    parts = [re.escape(p) for p in re.split(r"[_\-\s]+", name) if p][:8]
    if parts:
        written = r"[_\-\s]?".join(parts)
        said = _cached(rf"\b{written}\s*[=:]\s*(\w+)", re.IGNORECASE).search(query)
        if said is not None and said.group(1).lower() in _BOOLEAN_WORDS:
            return _BOOLEAN_WORDS[said.group(1).lower()]
    if any(p.lower() in _SWITCH_NAMES for p in re.split(r"[_\-\s]+", name)):
        switched = _SWITCHED.search(query)
        if switched is not None:
            if _NEGATED.search(query[max(0, switched.start() - 12) : switched.start()]):
                return None
            word = (switched.group("particle") or switched.group("after") or "").lower()
            return word == "on" or bool(switched.group("on") or switched.group("zh_on"))
        thrown = acts.switched(query)  # "porch light on", "关掉儿童房的灯"
        if thrown is not None:
            return thrown
    named = _named_flag(query, name)
    if named is not None or not fallback:
        return named
    return _yes_or_no(query, name)


def _yes_or_no(query: str, name: str = "") -> bool | None:
    """yes/true/include against no/false/exclude; "with" and "without" only before a word
    of the flag's name ("a spot with an EV charger" for ``ev_charging``): "pay with
    alipay" or "not good with computers" says nothing of ``marketing_opt_in``."""
    parts = {p[:4] for p in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name.lower()) if len(p) >= 2}

    def about_the_flag(end: int) -> bool:
        words = _WORDS_AFTER.match(query, end)
        said = words.group(1).lower().split() if words is not None else []
        return any(w[:4] in parts for w in said if len(w) >= 2)

    for match in _TRUE.finditer(query):
        if match.group(1).lower() != "with" or about_the_flag(match.end()):
            return True
    for match in _FALSE.finditer(query):
        if match.group(1).lower() != "without" or about_the_flag(match.end()):
            return False
    return None


_WORDS_AFTER = re.compile(r"\s+((?:[\w'-]+\s+){0,2}[\w'-]+)")


# Pieces of a flag's description that say nothing of what it is about.
_FLAG_GENERIC = frozenset(
    (
        *("also", "return", "returns", "list", "show", "include", "includes", "whether"),
        *("default", "true", "false", "only", "when", "with", "will", "this", "that"),
        *("from", "than", "then", "each", "instead", "otherwise", "set", "flag"),
    )
)
_FUNCTION_HAN = re.compile(
    r"[的了是否不在和与或及也都就把被给对为请吗呢吧啊默认如果可以需要时候]|一[下个点次些]|[个这那][人月]"
)
_HAN_PAIR = re.compile(r"(?=([\u4e00-\u9fff]{2}))")
_FLAG_NEGATED = re.compile(
    r"(?:\bdon'?t|\bdo not|\bnever|\bnot|\bno need to|\bneedn'?t|\bwithout|\bno"
    # switched off: "turn off auto-renew", "stop the reminders", "disable autopay"
    r"|\b(?:turn|switch)(?:ed|ing)?\s+off(?:\s+the)?|\bdisable|\bstop(?:\s+the)?)\s*$"
    # (not the question's 有没有 "is there any", 是不是, 要不要)
    r"|(?<!有)(?<!是)(?<!要)(?:不用|无需|不必|不需要|不要|别|勿|不|还没|没有|没)"
    r"[\u4e00-\u9fff]{0,3}$",
    re.IGNORECASE,
)


def _described_flag(query: str, name: str, spec: dict[str, Any], around: str) -> bool | None:
    """A flag whose description's own words the request says: two of them, in Chinese
    two-character words ("是否把境外漫游用量单独列出" and "漫游的也单独列出来"), in English
    content words ("Join the waitlist if the class is full" and "is full, put me on the
    waitlist"); words another parameter's name or description has say nothing. True, or
    false when negated just before ("不要恢复出厂设置", "no need to join the waitlist")."""
    description = str(spec.get("description") or "")[:_MAX_FLAG_DESCRIPTION]
    sides = _TRUE_FALSE.search(description)
    if sides is not None and not has_han(query):  # "true = bills by email, false = paper …"
        return _side_said(query, sides["yes"], sides["no"])
    if sides is not None and has_han(sides["yes"] + sides["no"]):  # 恢复配送 of "false 表示…"
        chosen = _side_said(query, sides["yes"], sides["no"])
        if chosen is not None:
            return chosen
    # What follows "instead of" is what false means ("… instead of refunding the card").
    description = _INSTEAD.split(description, maxsplit=1)[0]
    if not description or spec.get("default") is True:
        return None
    others = around.replace(_entry(name, spec), " ")
    if has_han(description) and has_han(query):
        pairs = {m.group(1) for m in _HAN_PAIR.finditer(description)}
        pairs -= {m.group(1) for m in _HAN_PAIR.finditer(others)}
        said = [p for p in pairs if not _FUNCTION_HAN.search(p) and p in query]
        if len(said) < 2:  # one word is often the tool's own (值机 for a check-in's flag)
            return None
        first = min(query.find(p) for p in said)
    elif not has_han(query):
        lowered = query.lower()
        other_stems = {stem(w) for w in _LATIN_WORD.findall(others.lower())}
        own = {
            stem(w)
            for w in _LATIN_WORD.findall(description.lower())
            if len(w) >= 4 and w not in STOPWORDS and w not in _FLAG_GENERIC
        } - other_stems
        found = [m for m in _LATIN_WORD.finditer(lowered) if stem(m.group(0)) in own]
        if len({stem(m.group(0)) for m in found}) < 2:
            return None
        first = found[0].start()
    else:
        return None
    return not _FLAG_NEGATED.search(query[max(0, first - 12) : first])


_MAX_FLAG_DESCRIPTION = 300  # characters of a description read for a flag
# A flag's description that says what each value means: "true = bills by email only,
# false = paper bills by post", "true: notify; false: stay silent".
# (and in Chinese: "true 表示暂停配送，false 表示恢复配送")
_TRUE_FALSE = re.compile(
    r"\btrue\s*(?:=|:|：|means|->|→|表示|为|是|即)\s*(?P<yes>[^;；]{2,160}?)[,;.，；。]?\s*"
    r"\bfalse\s*(?:=|:|：|means|->|→|表示|为|是|即)\s*(?P<no>[^;；]{2,160})",
    re.IGNORECASE,
)


def _side_said(query: str, yes: str, no: str) -> bool | None:
    """Which of a flag's two described values the request says, by the content words
    of each side it writes (two at least, and more than of the other side)."""
    words = {stem(w) for w in _LATIN_WORD.findall(query.lower())}
    dictionary_words = dictionary() if has_han(query) else {}

    def said(side: str) -> int:
        own = {stem(w) for w in _LATIN_WORD.findall(side.lower()) if w not in STOPWORDS}
        # a Chinese side's words the query writes: 恢复, 配送 of 恢复配送
        han = {
            piece
            for run in _HAN_RUN.finditer(side)
            for piece in segment_words(run.group(0), dictionary_words)
            if len(piece) >= 2
        }
        return len(own & words) + sum(piece in query for piece in han)

    for_yes, for_no = said(yes), said(no)
    if max(for_yes, for_no) < 2 or for_yes == for_no:
        return None
    return for_yes > for_no


_INSTEAD = re.compile(r"\b(?:instead\s+of|rather\s+than)\b|而不是|而非", re.IGNORECASE)


# Words of a flag's name that say nothing of what it is about ("include_history": history).
_FLAG_FILLER = frozenset(
    (
        *("is", "has", "if", "include", "includes", "only", "with", "should", "do", "flag"),
        *("enabled", "enable", "the", "to", "of", "when", "use", "allow", "want"),
        # a request to see what a flag adds: ``show_invoices`` is "list the invoices too"
        *("show", "list", "display", "return", "get"),
    )
)
_CJK_NEGATED = re.compile(r"不用|无需|不必|不要|别|勿|不需要")


def _named_flag(query: str, name: str) -> bool | None:
    """A flag whose name's own words the request says ("renew all my books" for
    ``renew_all``, "any abnormal labs" for ``abnormal_only``, 只看异常的 read as "abnormal"):
    true, or false when negated ("don't notify the patient", 不用通知病人); None when the
    request does not say them all."""
    parts = [p.lower() for p in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", name) if p]
    content = [p for p in parts if p not in _FLAG_FILLER and len(p) >= 3 and p.isalpha()]
    if not content or len(content) > 3:
        return None
    lowered = query.lower()
    chinese = has_han(query) and gloss_ready()
    words = set(_LATIN_WORD.findall(lowered)) | (_glossed_words(query) if chinese else set())
    stems = {stem(w) for w in words}
    if chinese and not all(stem(p) in stems for p in content):  # 当天: "on that day", "same day"
        stems |= {stem(w) for w in _piece_senses(query)}
    if not all(stem(p) in stems or _flag_word_said(p, stems, query) for p in content):
        # "incl. the past ones" of ``upcoming_only``: what the flag keeps out, asked for
        opposite = _FLAG_OPPOSITES.get(content[0], ()) if "only" in parts else ()
        if len(content) == 1 and any((w in query) if has_han(w) else w in words for w in opposite):
            return False
        return None
    said = [content[0], *(w for w in _FLAG_WORDS.get(content[0], ()) if not has_han(w))]
    found = [m for w in said if (m := _cached(rf"\b{re.escape(w)}").search(lowered))]
    first = min(found, key=lambda m: m.start()) if found else None
    before = lowered[max(0, first.start() - 12) : first.start()] if first is not None else ""
    if _FLAG_NEGATED.search(before):
        return False  # "don't notify", "no need to notify"
    if not chinese:
        return True
    negated = _cjk_negated_at(query, {stem(p) for p in content})
    return not _CJK_NEGATED.search(query) if negated is None else not negated


@functools.lru_cache(maxsize=256)
def _piece_senses(query: str) -> frozenset[str]:
    """The English words of every sense of each word the query's Chinese segments into
    (当天 is "on that day" first, "same day" too), read once per query."""
    words = dictionary()
    return frozenset(
        w
        for run in _HAN_RUN.finditer(query)
        for piece in segment_words(run.group(0), words)
        for w in _LATIN_WORD.findall(every_sense(piece).lower())
    )


def _cjk_negated_at(query: str, stems: set[str]) -> bool | None:
    """Whether the Chinese word of the request read as one of ``stems`` (匿名 "anonymous")
    is negated in its own clause, any of them (报警信息不用, "候选人…，不用发邮件通知"; 不要署名
    is no anonymity's negation: 不要署名，匿名送); None when no single word reads as one."""
    words = dictionary()
    # each clause's span, and whether it is negated: found once, looked up per word
    marks = [m.start() for m in _CLAUSE_MARK.finditer(query)]
    starts, ends = [0, *(m + 1 for m in marks)], [*marks, len(query)]
    negated = [bool(_CJK_NEGATED.search(query, a, b)) for a, b in zip(starts, ends, strict=True)]
    found: list[bool] = []
    for run in _HAN_RUN.finditer(query):
        at = run.start()
        for piece in segment_words(run.group(0), words):
            sense = {stem(w) for w in _LATIN_WORD.findall(words.get(piece, "").lower())}
            if sense & stems:
                # its clause negated, or the word itself (不急, 不是很急, 没那么急)
                not_itself = _NOT_BEFORE.search(query, max(0, at - 5), at) is not None
                found.append(negated[bisect.bisect_right(starts, at) - 1] or not_itself)
            at += len(piece)
    return any(found) if found else None


_CLAUSE_MARK = re.compile(r"[，,。；;！!？?]")
_NOT_BEFORE = re.compile(r"(?:不|没|无|非)(?:是|太|很|那么|怎么|算){0,2}$")


# Words people use for a flag's word: a history is a list of records (缴费记录, 积分明细,
# 历史记录, 流水)
_FLAG_WORDS = {
    "history": ("record", "records", "记录", "历史", "明细", "流水"),
    # and an itemised bill is its breakdown (账单明细)
    "itemised": ("breakdown", "itemized", "明细"),
    "itemized": ("breakdown", "itemised", "明细"),
    # everything there is ("renew everything on LB…", 全部续借), and a loan renewed is one
    # extended ("extend all my loans")
    "all": ("everything", "every", "entire", "全部", "所有", "全都"),
    # hurry: 加急 asks for express handling, 急用 for an urgent order
    "express": ("expedite", "expedited", "rush", "加急", "急件"),
    "urgent": ("urgently", "asap", "rush", "加急", "紧急", "急用"),
    "rush": ("express", "expedite", "expedited", "urgent", "urgently", "asap", "加急", "急件"),
    "renew": ("extend", "续借", "续期"),
    # telling someone notifies them ("don't tell the instructor yet", 告诉教练)
    "notify": ("tell", "inform", "告诉", "通知"),
}


# What an "only" flag's word keeps out: ``upcoming_only`` is false for "my past lessons too".
_FLAG_OPPOSITES = {
    "upcoming": ("past", "previous", "earlier", "old", "以前", "过去", "历史"),
    "future": ("past", "previous", "earlier", "old", "以前", "过去", "历史"),
    "active": ("inactive", "expired", "closed", "cancelled", "canceled", "过期", "失效"),
    "open": ("closed", "resolved", "已关闭", "已解决"),
    "unpaid": ("paid", "已付", "已支付"),
}


def _flag_word_said(part: str, stems: set[str], query: str) -> bool:
    """Whether the request says ``part`` (a word of a flag's name) in other words."""
    return any(
        (w in query) if has_han(w) else (stem(w) in stems) for w in _FLAG_WORDS.get(part, ())
    )


_TIME_SAMPLES = ("2026-01", "2026-01-31", "10:30")
_PLAIN_WORD = "example"  # a pattern that accepts it takes ordinary words too
_MAX_CLAIMS = 16  # patterns whose tokens a guess leaves alone: a long schema costs no more


def _constrains(spec: dict[str, Any]) -> bool:
    return "pattern" in spec or "enum" in spec or spec.get("format") in _FORMATS


def _patterns(props: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {
        name: spec["pattern"]
        for name, spec in props.items()
        if isinstance(spec, dict) and isinstance(spec.get("pattern"), str)
    }


def _guessed_word(value: object, spec: dict[str, Any]) -> bool:
    """Whether ``value`` is a plain word that a pattern loose enough to take any word took
    (``^[a-z][a-z0-9-]+$``) because nothing shaped like a name was there."""
    pattern = spec.get("pattern")
    if not isinstance(value, str) or not isinstance(pattern, str) or not value.isalpha():
        return False
    return not _specific(pattern)


# A journey's two ends, for a pair of free-text places (``from_station`` / ``to_station``,
# ``origin`` / ``destination``): "从观塘到中环", "沙田到机场", "从 Central 去 Harbour Gate",
# "North Point to Airport", "from Central to Harbour Gate".
_JOURNEY_ENDS = re.compile(
    r"station|stop|origin|destination|city|airport|port|place|location|depart|arriv"
    r"|站|城市|地点|出发|目的|到达",
    re.IGNORECASE,
)
_LATIN_PLACE = r"[A-Z][A-Za-z'-]*(?:\s[A-Z][A-Za-z'-]*){0,3}"
_CJK_PLACE = r"(?:(?![从到去至])[\u4e00-\u9fff]){2,8}?"
_CJK_JOURNEY = re.compile(
    rf"(?:从\s?|(?<=[，。,:：；;\s])|^)({_CJK_PLACE}|{_LATIN_PLACE})\s?(?:到|去|至|→)\s?"
    rf"({_CJK_PLACE}|{_LATIN_PLACE})"
    r"(?=$|[\s，。,.!?！？；;、（(]|的|了|晚|延|误|需|要|坐|乘|换|出发|上车|下车|那|这|时|，)"
)
_EN_JOURNEY = re.compile(
    rf"(?<![A-Za-z'-])({_LATIN_PLACE})\s+(?:to|->|→)\s+({_LATIN_PLACE})(?![A-Za-z'-])"
)


def _journey(
    arguments: dict[str, Any],
    query: str,
    props: dict[str, dict[str, Any]],
    paired: list[tuple[str, str]],
) -> None:
    """Both ends of a journey, for a start/end pair of free-text places that the request
    writes as one ("X to Y", 从X到Y); each end stays as written."""
    for start, end in paired:
        specs = (props.get(start) or {}, props.get(end) or {})
        if start in arguments or end in arguments:
            continue
        if not all(_plain_string(spec) and "pattern" not in spec for spec in specs):
            continue
        described = " ".join(str(spec.get("description") or "")[:200] for spec in specs)
        if _JOURNEY_ENDS.search(f"{start} {end} {described}") is None:
            continue
        found = [*(_CJK_JOURNEY.finditer(query) if has_han(query) else ())]
        for match in [*found, *_EN_JOURNEY.finditer(query)]:
            ends = (match.group(1).strip(), match.group(2).strip())
            if not any(e in _NOT_PLACES or _CALENDAR_WORD.search(e) for e in ends):
                arguments[start], arguments[end] = ends  # not "Monday to Friday"
                break


_NOT_PLACES = frozenset(("I", "We", "You", "My", "Our", "The", "Me", "Please"))
_CALENDAR_WORD = re.compile(
    r"\b(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
    r"|[周月日号]|星期|今天|明天|后天|昨天|上午|下午|晚上|早上|点",
    re.IGNORECASE,
)


# A range of two numbers: "zones 2-4", "1 to 3", "2区到5区", 一区到二区; not a clock's
# ("10-12am", 9点到11点), a date's ("12-07") or a part of a longer number.
_NUMERAL = r"(\d{1,6}|[一二两三四五六七八九十]{1,3})"
_NUMBER_RANGE = re.compile(
    rf"(?<![\d.:/-]){_NUMERAL}\s?(?:区|号|级|层)?\s?(?:-|–|—|~|\bto\b|\bthrough\b|\bthru\b|到|至)"
    rf"\s?{_NUMERAL}(?![\d.:/-])(?!\s?(?:am|pm|a\.m|p\.m|点|时|:|h\b|hours?\b|月|日|号|min))",
    re.IGNORECASE,
)


# A measure named for what it measures and its unit: ``waist_cm``, ``sleeve_cm``,
# ``length_mm``, ``weight_kg``.
_MEASURE_NAME = re.compile(r"([a-z][a-z]{2,20})_(cm|mm|m|kg|g|in|ft|lb|lbs|ml)", re.IGNORECASE)


def _measures_by_noun(
    arguments: dict[str, Any], query: str, props: dict[str, dict[str, Any]]
) -> None:
    """For an object of two measures or more in one unit (``length_cm``, ``waist_cm``,
    ``sleeve_cm``), each number written in that unit given to the measure whose noun
    stands right after it ("100cm length") or nearest before it ("take in the waist …
    to 82 cm", "sleeves … shorten them to 60 cm"), when every such number finds its own
    measure; else the values read in order stay."""
    by_unit: dict[str, dict[str, str]] = {}
    for name, spec in props.items():
        named = _MEASURE_NAME.fullmatch(name)
        if named is not None and spec.get("type") in ("number", "integer"):
            by_unit.setdefault(named[2].lower(), {})[name] = named[1].lower()
    for unit, things in by_unit.items():
        if len(things) < 2:
            continue
        written = list(
            itertools.islice(
                re.finditer(rf"(?<![\d.])(\d{{1,4}}(?:\.\d+)?)\s?{unit}\b", query, re.I), 8
            )
        )
        owners: dict[str, float] = {}
        for number in written:
            owner = _noun_beside(query, number.start(), number.end(), things)
            if owner is None or owner in owners:
                return
            owners[owner] = float(number[1])
        for name in things.keys() - owners.keys():  # 60 read for the length, the sleeve's
            if arguments.get(name) in owners.values():
                del arguments[name]
        for name, value in owners.items():
            converted = _convert(value, props[name].get("type", "number"))
            if converted is not None and _within(value, props[name]):
                arguments[name] = converted


# What a count's name says besides its noun: ``num_adults``, ``childCount``.
_COUNTED_NAME_WORDS = frozenset({"num", "number", "count", "qty", "quantity", "of", "no", "n"})


def _counts_by_kind(query: str, props: dict[str, dict[str, Any]]) -> dict[str, int]:
    """For an object of counts by kind (``{adult, child, senior}``: every property an
    integer named by one noun), each count written right before its noun, one word
    between at most two ("2 senior tix + 1 adult", "four students"; in Chinese through the
    gloss: 四张学生票 "four sheet student ticket"); empty unless the request writes one.
    A count outside its bounds, or a noun counted twice, leaves it all unread."""
    nouns: dict[str, str] = {}
    for name, spec in props.items():
        words = [w for w in split_identifier(name).lower().split() if w not in _COUNTED_NAME_WORDS]
        if spec.get("type") != "integer" or len(words) != 1 or len(words[0]) < 3:
            return {}
        nouns[name] = words[0].removesuffix("s") if len(words[0]) > 4 else words[0]
    if len(nouns) < 2:
        return {}
    text = (gloss(query) if has_han(query) and gloss_ready() else query).lower()
    number = rf"(\d{{1,3}}|{'|'.join(sorted(_SMALL_NUMBER_WORDS, key=len, reverse=True))})"
    found: dict[str, int] = {}
    places: set[int] = set()  # where the counts stand: "2 adult child" counts one of them
    for name, noun in nouns.items():
        stem = "child" if noun == "children" else noun
        counted = list(
            re.finditer(
                rf"(?<![\w.-]){number}\s*(?:x\s*)?(?:[a-z]+\s+){{0,2}}{re.escape(stem)}",
                text,
            )
        )
        if len(counted) > 1 or any(m.start() in places for m in counted):
            return {}
        if counted:
            places.add(counted[0].start())
            written = counted[0][1]
            count = int(written) if written.isdigit() else _SMALL_NUMBER_WORDS[written]
            if not _within(count, props[name]):
                return {}
            found[name] = count
    return found


def _noun_beside(query: str, start: int, end: int, things: dict[str, str]) -> str | None:
    """The parameter whose noun (``things``: name → noun) stands right after ``end`` or,
    else, nearest before ``start`` (within 60 characters)."""
    lowered = query.lower()
    after = lowered[end : end + 12]
    for name, thing in things.items():
        if re.match(rf"\s*{thing}s?\b", after):
            return name
    before = lowered[max(0, start - 60) : start]
    found = [
        (match.start(), name)
        for name, thing in things.items()
        for match in re.finditer(rf"\b{thing}s?\b", before)
    ]
    return max(found)[1] if found else None


def _numeric_range(inner: Extraction, query: str, props: dict[str, dict[str, Any]]) -> None:
    """For an object whose properties are a start/end pair of numbers (``zones: {from,
    to}``) that the request did not both give: the first range it writes that their
    bounds allow, low to high."""
    for start, end in roles.pairs(props):
        specs = (props[start], props[end])
        if not all(spec.get("type") in ("integer", "number") for spec in specs):
            continue
        if start in inner.arguments and end in inner.arguments:
            continue
        for match in itertools.islice(_NUMBER_RANGE.finditer(query), _MAX_MATCHES):
            low, high = (_numeral(match[1]), _numeral(match[2]))
            if low is None or high is None or low > high:
                continue
            if _within(float(low), specs[0]) and _within(float(high), specs[1]):
                inner.arguments[start], inner.arguments[end] = low, high
                inner.missing = [n for n in inner.missing if n not in (start, end)]
                break


def _numeral(text: str) -> int | None:
    return int(text) if text.isdigit() else temporal.cn_number(text)


def _plain_string(spec: dict[str, Any]) -> bool:
    """A string parameter with no options and no format (a pattern may check it)."""
    return spec.get("type", "string") == "string" and "enum" not in spec and "format" not in spec


# A domain name's parameter ("domain", "zone", "hostname", "fqdn", 域名) and a domain name
# as written: labels joined by dots, ending in letters; not part of an email address, a
# longer dotted run ("v1.2.3") or a file's name ("faq.md").
_DOMAIN_PARAMETER = re.compile(
    r"(?:^|_|\b)(?:domain|zone|hostname|fqdn)(?:s|_?name)?(?:$|_|\b)|domain\s+name|域名",
    re.IGNORECASE,
)
_DOMAIN_NAME = re.compile(
    r"(?<![\w@.-])((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24})(?![\w@-]|\.[a-z0-9])",
    re.IGNORECASE,
)
_FILE_ENDINGS = frozenset((
    "md", "txt", "pdf", "doc", "docx", "csv", "json", "xml", "jpg", "jpeg", "png", "gif",
    "zip", "xls", "xlsx", "ppt", "pptx", "html", "htm", "py", "js", "yaml", "yml", "log",
))  # fmt: skip


def takes_a_domain(name: str, spec: dict[str, Any]) -> bool:
    """Whether the parameter holds a domain name: by its name, else by its description."""
    about = f"{name} {str(spec.get('description') or '')[:200]}"  # "_" ends a word too
    return _DOMAIN_PARAMETER.search(about) is not None


def _domain_name(query: str, spec: dict[str, Any], taken: Collection[object]) -> str | None:
    """The first domain name the request writes, in lower case (as DNS compares them), that
    no other parameter holds and the parameter's pattern (if any) takes."""
    held = {str(value).lower() for value in taken}
    for match in _DOMAIN_NAME.finditer(query):
        value = match.group(1).lower()
        if value.rsplit(".", 1)[1] in _FILE_ENDINGS or value in held:
            continue
        if _fits_pattern(value, spec):
            return value
    return None


def _fits_pattern(value: str, spec: dict[str, Any]) -> bool:
    """Whether ``value`` is all the parameter's ``pattern`` matches (true with no pattern,
    and false with one that does not compile)."""
    pattern = spec.get("pattern")
    if not isinstance(pattern, str):
        return True
    try:
        match = search(compile_pattern(pattern), value)
    except PatternError:
        return False
    return match is not None and match.group(0) == value


def _specific(pattern: str) -> bool:
    """A pattern that does not take ordinary words (``^dep-[0-9]{6}$``, not ``^[a-z-]+$``)."""
    try:
        return search(compile_pattern(pattern), _PLAIN_WORD) is None
    except PatternError:
        return False


def _claims(query: str, props: dict[str, dict[str, Any]]) -> dict[str, set[str]]:
    """Per parameter with a specific pattern (``_specific``), or an example of letters and
    digits ("like MATH-1102": any capitals, a dash, about four digits), the query's
    identifier-looking tokens it accepts; worked out once per query, for at most
    ``_MAX_CLAIMS`` patterns."""
    specific = itertools.chain(
        ((n, p, True) for n, p in _patterns(props).items() if _specific(p)),
        ((n, p, False) for n, p in _example_shapes(props)),
    )
    patterns = list(itertools.islice(specific, _MAX_CLAIMS))
    if not patterns:
        return {}
    tokens = {text for _, text in _id_tokens(query) if _is_identifier(text)}
    claims: dict[str, set[str]] = {}
    owners: dict[str, frozenset[str]] | None = None
    for name, pattern, declared in patterns:
        program = compile_pattern(pattern)
        claimed = {t for t in tokens if search(program, t)}
        if declared and not claimed:
            # a declared pattern none of whose codes is written as it wants them claims
            # one typed without its separator (tnt30118 for ^[A-Z]{3}-[0-9]{5}$); beside
            # TSH-10422, RMA60331 is a return's number (an example's loose shape would
            # claim too much)
            claimed = {t for t in tokens if _LETTERS_DIGITS.fullmatch(t) and _separated(t, pattern)}
        if not declared:  # ASG-402266 is the one whose example is ASG-204518's, not EXT-58213's
            owners = _prefix_owners(props) if owners is None else owners
            claimed = {t for t in claimed if not _anothers_prefix(t, name, owners)}
            # beside SH-4498, V-9031 is no shift's of "e.g. SH-4410": where the query
            # writes the example's own letters, a code of other letters is not claimed
            claimed = _own_lettered(claimed, props[name]) or claimed
        claims.setdefault(name, set()).update(claimed)
    return claims


# Letters a separator ends, as a code that varies does ("MATH-1102", "CS-Y2-G1"); a fixed
# prefix is glued to its digits ("RSV46573829", "APT0031245") and is matched literally.
_LOOSE_LETTERS = re.compile(r"[A-Za-z][-_ ]")


_LETTER_PREFIX = re.compile(r"([A-Za-z]{2,8})[-_/]?\d")


def _prefix_owners(props: dict[str, dict[str, Any]]) -> dict[str, frozenset[str]]:
    """Per letters an example begins with ("ASG" of ASG-204518), the parameters without a
    pattern whose examples begin so; and under "" every parameter with examples."""
    owners: dict[str, set[str]] = {"": set()}
    for name, spec in props.items():
        if not isinstance(spec, dict) or "pattern" in spec:
            continue
        for example in examples_of(spec):
            owners[""].add(name)
            prefix = _LETTER_PREFIX.match(example)
            if prefix is not None:
                owners.setdefault(prefix[1].upper(), set()).add(name)
    return {letters: frozenset(names) for letters, names in owners.items()}


def _anothers_prefix(value: str, name: str, owners: dict[str, frozenset[str]]) -> bool:
    """Whether ``value``'s letters ("ASG" of ASG-402266) begin another parameter's
    examples and none of this one's, neither having a pattern (``_prefix_owners``): a
    code so written is the other's, however well its shape fits this one's looser
    reading (EXT-58213)."""
    prefix = _LETTER_PREFIX.match(value)
    if prefix is None or name not in owners[""]:
        return False
    theirs = owners.get(prefix[1].upper(), frozenset())
    return bool(theirs) and name not in theirs


def _optionally_claimed(
    claims: dict[str, set[str]], name: str, needed: set[str], props: dict[str, dict[str, Any]]
) -> set[str]:
    """The tokens only optional parameters without a pattern claim (by an example), for
    a parameter other than ``name``."""
    firm = {
        t
        for other, tokens in claims.items()
        if other != name and (other in needed or "pattern" in (props.get(other) or {}))
        for t in tokens
    }
    return {
        t for other, tokens in claims.items() if other not in needed and other != name
        for t in tokens
    } - firm  # fmt: skip


def _own_lettered(tokens: set[str], spec: dict[str, Any]) -> set[str]:
    """The tokens whose letters ("SH" of SH-4498) begin one of the parameter's examples."""
    letters = {m[1].upper() for e in examples_of(spec) if (m := _LETTER_PREFIX.match(e))}
    return {t for t in tokens if (m := _LETTER_PREFIX.match(t)) and m[1].upper() in letters}


def _example_shapes(props: dict[str, dict[str, Any]]) -> Iterator[tuple[str, str]]:
    """``(name, whole-token shape)`` of each example, with letters and digits, of a
    parameter that has no pattern."""
    for name, spec in props.items():
        if "pattern" in spec or "enum" in spec:
            continue
        for example in examples_of(spec):
            if not any(c.isdigit() for c in example) or not any(c.isalpha() for c in example):
                continue
            if _LOOSE_LETTERS.search(example):
                yield name, f"^{shape_of(example, digits='near', letters='loose')}$"
            else:  # "e.g. 10B": a class group's "7A" is no student's number
                yield name, f"^{shape_of(example, digits='near', letters='class')}$"


def _dated(
    query: str,
    resolved: str,
    spec: dict[str, Any],
    taken: Collection[object],
    props: dict[str, dict[str, Any]],
    today: date | None = None,
) -> Any:
    """A time parameter's value, read in the query with its dates resolved; for the one
    time parameter of a tool, a value the query writes out wins over one a relative
    phrase gave ("这个月工资发了没？2025-05" asks about 2025-05, not this month). A
    date-time given by its clock alone is on ``today`` ("express pass at 4pm")."""
    value = _constrained(resolved, spec, taken)
    if value is None and spec.get("format") == "date-time":
        value = _day_at(resolved, taken)  # "on march 14 2025 at 9:30am"
        if value is None and today is not None:
            value = _today_at(resolved, taken, today)
    if value is None or str(value) in query or sum(map(_takes_time, props.values())) > 1:
        return value
    written = _constrained(query, spec, taken)
    return value if written is None else written


# A day and a clock a few words apart, once resolved: "2025-03-14 at 09:30", "09:30 on
# 2025-03-14", "2025-03-14，09:30".
_DAY_AT = re.compile(
    r"(?<![\d-])(\d{4}-\d{2}-\d{2})\s{0,3}(?:at|@|,|，|from|starting|around|by)?\s{0,3}(\d{2}:\d{2})(?![\d:])"
    r"|(?<![\d:])(\d{2}:\d{2})\s{0,3}(?:on|,|，)?\s{0,3}(\d{4}-\d{2}-\d{2})(?![\d-])",
    re.IGNORECASE,
)


# A day and a stretch of its clock, once resolved: "2026-12-08 18:00 to 22:00" (from
# "tomorrow 6pm-10pm"), "2026-12-19 from 14:00 to 20:00".
_DAY_CLOCK_RANGE = re.compile(
    r"(?<![\d-])(\d{4}-\d{2}-\d{2})\s{0,3}(?:at|from|,|，)?\s{0,3}(\d{2}:\d{2})\s{0,3}"
    r"(?:to|until|till|-|–|~|～|到|至)\s{0,3}(\d{2}:\d{2})(?![\d:])",
    re.IGNORECASE,
)


# A day "at" an hour written alone, once resolved: "2027-03-01 at 9" (not "at 9 Elm
# Street", "at 9%" or "at 9 am", which is a clock by then).
_DAY_AT_HOUR = re.compile(
    r"(?<![\d-])(\d{4}-\d{2}-\d{2}),?\s{1,3}at\s{1,3}(\d{1,2})"
    r"(?=\s{0,2}(?:$|[,;!?)(]|\.(?!\d)|(?:in|on|for|with|and|to|sharp|please|pls)\b))",
)


# A stretch back from today: "in the last 30 days", "past 2 weeks", 最近7天, 近三个月.
_RECENT = re.compile(
    r"\b(?:last|past|previous)\s+(\d{1,3}|two|three|four|five|six|seven|eight|nine|ten|twelve)"
    r"\s+(days?|weeks?|months?)\b"
    r"|(?:最近|近|过去)\s?(\d{1,3}|[一二两三四五六七八九十]{1,3})\s?(天|日|周|个星期|个礼拜|个月)",
    re.IGNORECASE,
)
_RECENT_UNITS = {"day": 1, "天": 1, "日": 1, "week": 7, "周": 7, "个星期": 7, "个礼拜": 7}


def _since(match: re.Match[str], today: date) -> str | None:
    """The first day of the stretch back from ``today`` that ``match`` (``_RECENT``) names:
    30 days back from 2026-12-07 is 2026-11-07, three months back 2026-09-07."""
    count_text, unit = (match[1], match[2].lower().rstrip("s")) if match[1] else match.group(3, 4)
    count = (
        int(count_text)
        if count_text.isdigit()
        else (_COUNT_WORDS.get(count_text) or temporal.cn_number(count_text))
    )
    if not count:
        return None
    if unit in ("month", "个月"):
        index = today.year * 12 + today.month - 1 - count
        year, month = divmod(index, 12)
        day = min(today.day, calendar.monthrange(year, month + 1)[1])
        return date(year, month + 1, day).isoformat() if year >= 1 else None
    days = count * _RECENT_UNITS[unit]
    return (today - timedelta(days=days)).isoformat() if days < 36_600 else None


def _day_at(resolved: str, taken: Collection[object]) -> str | None:
    """A date-time assembled from a day and a clock written a few words apart; the end of
    a stretch of a day's clock is on that day (on the next when it is no later: "22:00
    to 02:00"), so a start and an end parameter each take theirs."""
    found: list[tuple[int, str]] = []
    for match in _DAY_CLOCK_RANGE.finditer(resolved):
        day, first, last = match.group(1, 2, 3)
        if last == "12:00" and first >= "18:00":  # 晚上8点到12点: the evening's twelve
            last = "00:00"
        if last <= first:
            day = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
        found.append((match.start(3), f"{day} {last}"))
    for match in _DAY_AT.finditer(resolved):
        day, clock = (match[1], match[2]) if match[1] else (match[4], match[3])
        found.append((match.start(), f"{day} {clock}"))
    for match in _DAY_AT_HOUR.finditer(resolved):
        hour = int(match[2])  # as a working day reads it: 1 to 6 are afternoon hours
        if 1 <= hour <= 12:
            found.append((match.start(), f"{match[1]} {hour + 12 if hour <= 6 else hour:02d}:00"))
    for _, value in sorted(found):
        if value not in taken and _date_time(value) not in taken:
            return value
    # the one day and the one clock of a request, words apart: "明晚的海鲜餐厅，3位，7点半",
    # "friday for the steakhouse, party of 4, 8:30pm"
    days = set(_LONE_ISO_DAY.findall(resolved))
    clocks = set(_LONE_ISO_CLOCK.findall(resolved))
    if not found and len(days) == 1 and len(clocks) == 1:
        value = f"{days.pop()} {clocks.pop()}"
        if value not in taken and _date_time(value) not in taken:
            return value
    return None


_LONE_ISO_DAY = re.compile(r"(?<![\d-])(\d{4}-\d{2}-\d{2})(?![\d-])")
_LONE_ISO_CLOCK = re.compile(r"(?<![\d:])(\d{2}:\d{2})(?![\d:])")


def _started_on(name: str, paired: list[tuple[str, str]], arguments: dict[str, Any]) -> set[str]:
    """The day of the start a pair's end follows, when that start is a date-time: the
    return date of "pick up Dec 10 8am, back Dec 11" is not the pickup's day."""
    start = next((s for s, e in paired if e == name), None)
    value = arguments.get(start) if start is not None else None
    parts = _DATE_TIME.fullmatch(value) if isinstance(value, str) else None
    return {parts[1]} if parts is not None else set()


def _today_at(resolved: str, taken: Collection[object], today: date) -> str | None:
    """The one clock of a request that names no day, on ``today``: "grab us an express
    slot at 4pm" is for this afternoon. None when it names a day (``_day_at`` reads
    those), no clock or several."""
    if _LONE_ISO_DAY.search(resolved):
        return None
    clocks = set(_LONE_ISO_CLOCK.findall(resolved)) - {str(t) for t in taken}
    if len(clocks) != 1:
        return None
    value = f"{today.isoformat()} {clocks.pop()}"
    return None if value in taken or _date_time(value) in taken else value


def _written_forms(taken: Collection[str]) -> set[str]:
    """The date-times of ``taken`` as a request writes them once resolved ("2026-12-08
    18:00" for 2026-12-08T18:00:00), so another time parameter does not take one again."""
    forms: set[str] = set()
    for value in taken:
        parts = _DATE_TIME.fullmatch(value)
        if parts is not None:
            forms.add(f"{parts[1]} {parts[2]}")
    return forms


# A time zone a request writes beside its times: UTC, GMT, "UTC+8", "GMT-05:00".
_ZONE = re.compile(
    r"(?<![A-Za-z])(?:UTC|GMT)(?:\s?([+-])\s?(\d{1,2})(?::?(\d{2}))?)?(?![A-Za-z])", re.IGNORECASE
)


# An offset a parameter's example or description writes: "e.g. 2026-12-12T07:40:00+08:00",
# "球会当地时间（+08:00）", "UTC, e.g. …T00:00:00Z".
_WRITTEN_OFFSET = re.compile(
    r"(?<=\d{2}:\d{2})(Z)(?![A-Za-z])"
    r"|(?:(?<=\d{2}:\d{2})|(?<![\w:+-]))([+-])(\d{2}):(\d{2})(?![\d:])"
)


def _zones(text: str) -> set[tuple[str, int, int]]:
    return {(m[1], int(m[2] or 0), int(m[3] or 0)) for m in _ZONE.finditer(text)}


def _parameter_offset(spec: dict[str, Any]) -> str | None:
    """The offset a date-time parameter's own words give its values, as they write it (its
    examples and description): the club's "+08:00" for a tee time asked "at 7:30" with no
    zone, "+00:00" where an example writes it so, "Z" for "UTC"; None unless exactly one."""
    text = " ".join([str(spec.get("description") or "")[:300], *map(str, _example_values(spec))])
    written = {
        "Z" if not sign or hours == minutes == 0 else f"{sign}{hours:02d}:{minutes:02d}"
        for sign, hours, minutes in _zones(re.sub(r"(?:UTC|GMT)\s+offset", "", text, flags=re.I))
    }
    written |= {"Z" if m[1] else f"{m[2]}{m[3]}:{m[4]}" for m in _WRITTEN_OFFSET.finditer(text)}
    if len(written) == 2 and "Z" in written and "+00:00" in written:
        written = {"+00:00"}  # "UTC, e.g. …+00:00": as the example writes it
    return written.pop() if len(written) == 1 else None


def _described_zone(spec: dict[str, Any]) -> str | None:
    """The one time zone a date-time parameter's description names in words (an IANA
    name): its own ("Vancouver local time") or its tool's, lent (``with_tool_zone``)."""
    return zones_named.named_zone(str(spec.get("description") or "")[:300])


# A parameter that takes a time zone: then a date-time's zone is an argument.
_ZONE_PARAMETER = re.compile(r"zone|(?:^|_)tz(?:$|_)|[a-z]Tz(?:$|[A-Z])|utc_?offset", re.I)
# How much of a tool's description is read for the zone of its date-times.
_TOOL_ZONE_CHARS = 1000


def with_tool_zone(schema: dict[str, Any], description: str) -> dict[str, Any]:
    """``schema`` with its date-time parameters that give no zone (none of them does)
    told the one the tool's ``description`` gives: the words naming it ("Times are
    Vancouver local time", 按温哥华当地时间), else the one offset it writes ("e.g.
    …T16:00:00-08:00", "all times UTC"), added to each one's description; ``schema``
    itself when there is none to lend. A named zone is lent before an offset: the offset
    of the day asked for (Vancouver is -07:00 in July), not of the example's day."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not description:
        return schema
    timed = [
        name
        for name, spec in itertools.islice(properties.items(), 64)
        if isinstance(spec, dict) and spec.get("format") == "date-time"
    ]
    if not timed or any(
        _parameter_offset(properties[n]) or _described_zone(properties[n]) for n in timed
    ):
        return schema
    if any(_ZONE_PARAMETER.search(name) for name in itertools.islice(properties, 64)):
        return schema  # the zone is an argument ("from_tz"): the request says it
    text = description[:_TOOL_ZONE_CHARS]
    words = zones_named.zone_words(text)
    if words is None:
        offset = _parameter_offset({"description": text})
        words = None if offset is None else "UTC" if offset == "Z" else offset
    if words is None:
        return schema
    lent = {
        name: {
            **properties[name],
            "description": f"{properties[name].get('description') or ''} ({words})".lstrip(),
        }
        for name in timed
    }
    return with_properties(schema, lent)


def _sibling_offset(props: dict[str, dict[str, Any]]) -> str | None:
    """The one offset the schema's date-time parameters write between them (an arrival's
    "e.g. …T06:00:00+08:00" beside a departure's "local time with offset"), else None."""
    timed = itertools.islice((s for s in props.values() if s.get("format") == "date-time"), 16)
    written = {_parameter_offset(spec) for spec in timed} - {None}
    return written.pop() if len(written) == 1 else None


def _zoned(
    value: str,
    query: str,
    spec: dict[str, Any] | None = None,
    props: dict[str, dict[str, Any]] | None = None,
) -> str:
    """A date-time in the one time zone the request names ("6pm-10pm utc" is
    …T18:00:00Z, "UTC+8" …+08:00), else in the one its parameter's example or
    description writes ("e.g. 2026-12-12T07:40:00+08:00"), else the one its sibling
    date-time parameters write (``props``); as it was when none names exactly one."""
    parts = _DATE_TIME.fullmatch(value)
    if parts is None or parts[4]:
        return value
    zones = _zones(query)
    if not zones and (named := zones_named.named_zone(query)) is not None:
        offset = zones_named.offset_on(named, value)  # "2pm Pacific", 美西时间
        if offset is not None:
            return f"{value}{offset}"
    if not zones and spec is not None:
        offset = _parameter_offset(spec)
        if offset is None and (named := _described_zone(spec)) is not None:
            offset = zones_named.offset_on(named, value)  # "Vancouver local time"
        if offset is None and props is not None:
            offset = _sibling_offset(props)
        return value if offset is None else f"{value}{offset}"
    if len(zones) != 1:
        return value
    sign, hours, minutes = zones.pop()
    if hours > 14 or minutes > 59:
        return value
    if not sign or hours == minutes == 0:
        return f"{value}Z"
    return f"{value}{sign}{hours:02d}:{minutes:02d}"


# What says a length of time is how long something lasts: "for 48 hours", 持续两小时.
_LASTING = re.compile(r"(?:\bfor|\blasting|\bruns?\s+for|持续|为期|时长|共)\s{0,2}$", re.IGNORECASE)


def _how_long(
    query: str, props: dict[str, dict[str, Any]], paired: list[tuple[str, str]]
) -> tuple[float, int, int] | None:
    """For a tool with a start/end pair of date-times, how long the request says the
    thing lasts, in minutes, and where it writes it ("for 48 hours", 持续两天)."""
    if not any(props[s].get("format") == props[e].get("format") == "date-time" for s, e in paired):
        return None
    found = temporal.duration(query, "minute")
    if found is None or not 0 < found[0] <= _LONGEST_LASTING:
        return None
    return found if _LASTING.search(query[max(0, found[1] - 16) : found[1]]) else None


def _lasting(
    arguments: dict[str, Any],
    props: dict[str, dict[str, Any]],
    paired: list[tuple[str, str]],
    lasting: tuple[float, int, int] | None,
) -> None:
    """The end of a start/end pair of date-times the request gives as a length after the
    start ("Friday 8pm, for 48 hours": the end is 48 hours after the start)."""
    for start, end in paired:
        if lasting is None or end in arguments or not isinstance(arguments.get(start), str):
            continue
        parts = _DATE_TIME.fullmatch(arguments[start])
        if parts is None or props[end].get("format") != "date-time":
            continue
        ends = datetime.fromisoformat(f"{parts[1]}T{parts[2]}") + timedelta(minutes=lasting[0])
        arguments[end] = f"{ends:%Y-%m-%dT%H:%M:%S}{parts[4]}"


_LONGEST_LASTING = 366 * 24 * 60  # minutes: a year


_A_DAY = "2026-01-31"


def _takes_day(spec: dict[str, Any]) -> bool:
    """A parameter whose values are days: ``format: date``, or a pattern taking 2026-01-31."""
    return spec.get("format") == "date" or (
        "pattern" in spec and "enum" not in spec and _constrained(_A_DAY, spec) == _A_DAY
    )


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _whole_range(
    value: str, on_calendar: Callable[[], str], end: dict[str, Any], needed: bool
) -> bool:
    """Whether the one day a request names, no word making it either end, is both ends
    of a range whose end may be left out: "trips yesterday", 昨天的急加速事件, "meetings
    on 2026-04-02". Not a day no word writes (the first of "the last 30 days"), and not
    a required end (a stay's check-out is never its check-in)."""
    if needed or not _ISO_DAY.fullmatch(value) or not _takes_day(end):
        return False
    return on_calendar().count(value) == 1


# The sides a pair's two values are said to be on when the schema's order crossed them.
_CROSSED = frozenset(((roles.END, roles.START), (roles.END, None), (None, roles.START)))


def _sides(
    arguments: dict[str, Any],
    query: str,
    props: dict[str, dict[str, Any]],
    paired: list[tuple[str, str]],
    on_calendar: Callable[[], str],
    required: Collection[str] = (),
) -> None:
    """Values of a start/end pair put at the end the request's words give them
    (``roles.side``): the one value of a pair, filled in schema order, moves to the other
    end when its words say so ("extend RSV-228904 until 2025-03-22" is a new return date,
    "还车门店改成 SHA-HQ" a new return branch); two values the order crossed ("to
    40128876 from 61009374") change places; one value written once holds one end only."""
    for start, end in paired:
        first, second = arguments.get(start), arguments.get(end)
        departs = roles.departure_ends(start, end)  # a stay's arrival, then its departure

        def side_of(
            value: str, departs: bool = departs, spec: dict[str, Any] = props[start]
        ) -> str | None:
            if value not in query and "enum" in spec:  # a code written by its name
                value = (
                    codes.written_name(query, value, str(spec.get("description") or "")) or value
                )
            return _side(query, on_calendar, value, departure_ends=departs)

        if isinstance(first, str) and second in (None, first) and side_of(first) is None:
            last = _day_before_one(on_calendar(), first)
            if last is not None and _fits(last, props[end]):  # "before christmas": the 24th
                del arguments[start]
                arguments[end] = last
                continue
        if isinstance(first, str) and first == second and query.count(first) == 1:
            # One value written once is one end: the one its words say, else the first;
            # but a day no word makes either end, of a range whose end may be left out,
            # is the whole range ("trips yesterday", 昨天的急加速事件). A stay's required
            # check-out is never its check-in.
            side = side_of(first)
            if side is None and _whole_range(first, on_calendar, props[end], end in required):
                continue
            del arguments[start if side == roles.END else end]
            continue
        if (
            isinstance(first, str)
            and second is None
            and side_of(first) is None
            and _whole_range(first, on_calendar, props[end], end in required)
        ):
            arguments[end] = first
            continue
        if isinstance(first, str) and isinstance(second, str) and first != second:
            # crossed when either is said to be the other's end, the other not said to be
            # its own ("SDB to NHV": NHV is the end, so SDB the start)
            said_first, said_second = side_of(first), side_of(second)
            if (said_first, said_second) in _CROSSED:
                arguments[start], arguments[end] = second, first
            continue
        for here, there, wanted in ((start, end, roles.END), (end, start, roles.START)):
            value = arguments.get(here)
            if there in arguments or not isinstance(value, str):
                continue
            if side_of(value) == wanted and _fits(value, props[there]):
                arguments[there] = arguments.pop(here)
            else:
                other = _partner(query, value, props[here], props[there])
                if other is not None and side_of(other) == wanted:
                    arguments[there] = other  # "from LHR-T5 to EDI-WAV": the return branch
            break


# A day a range ends before: "any slots before 2026-12-25", 2026-12-25之前.
_BEFORE_DAY = re.compile(r"\bbefore\s*$", re.IGNORECASE)
_BEFORE_DAY_AFTER = re.compile(r"\s*(?:之前|以前)")


def _day_before_one(resolved: str, value: str) -> str | None:
    """The last day of a range the request ends before the day ``value`` ("before
    2026-12-25" ends on 2026-12-24); None when no "before" is written beside it."""
    at = resolved.find(value)
    if at < 0 or not _ISO_DAY.fullmatch(value):
        return None
    if not (
        _BEFORE_DAY.search(resolved, max(0, at - 12), at)
        or _BEFORE_DAY_AFTER.match(resolved, at + len(value))
    ):
        return None
    return (date.fromisoformat(value) - timedelta(days=1)).isoformat()


def _held_outside(
    arguments: dict[str, Any], props: dict[str, dict[str, Any]], quoted: Collection[str]
) -> None:
    """An object's optional quoted texts that a parameter outside it holds whole are that
    parameter's: the quoted card text is no recipient's city. (A day is not: a walk's
    schedule may end on the day its start was read as.)"""
    for name, value in arguments.items():
        if not isinstance(value, dict):
            continue
        outside = {
            v for other, v in arguments.items() if other != name and isinstance(v, str)
        } & set(quoted)
        required = set((props.get(name) or {}).get("required") or ())
        held = [k for k, v in value.items() if isinstance(v, str) and v in outside]
        for key in (k for k in held if k not in required):
            del value[key]


def _partner(query: str, value: str, spec: dict[str, Any], other: dict[str, Any]) -> str | None:
    """For the empty end of a pair that says nothing of its values' shape, another token
    of the shape its filled partner's examples give (``_identifier``)."""
    if _constrains(other) or examples_of(other) or not examples_of(spec):
        return None
    at = query.find(value)
    if at < 0:
        return None
    found = _identifier(query, "", spec, {at})
    return found if found != value else None


# A parameter that takes what something becomes: new_plan_code, new_role, target_status.
_NEW_VALUE = re.compile(r"(?:^|_)(?:new|target)(?:_|$)|^new[A-Z]", re.IGNORECASE)
# The word a change ends at: "from FBB-100 to FBB-500", 降成访客, 升到. What a change is
# changed to comes after it (_CHANGED_TO); a value right after it is the new one already.
_CHANGE_WORD = r"(?:\bto\b|\binto\b|→|->|=>|(?:改|换|升|降|调|变)?[到成为])"
_CHANGED_TO = re.compile(rf"\s*{_CHANGE_WORD}\s*", re.IGNORECASE)
_CHANGED_BEFORE = re.compile(rf"{_CHANGE_WORD}\s*$", re.IGNORECASE)


# A day the request says does not suit it: "I won't be home tomorrow", "can't make it
# Thursday", "we'll be away on the 14th", 周三没空, 明天不在家.
_REFUSED_BEFORE = re.compile(
    r"(?:\bwon'?t|\bcan'?t|\bcannot|\bcan not|\bnot (?:be )?(?:available|around|home|free|in)"
    r"|\bunable|\bnot going to|\b(?:be|are|am|is) (?:away|busy))\b[^.?!,;。？！，；\d]{0,30}$",
    re.IGNORECASE,
)
_REFUSED_AFTER = re.compile(r"\s*(?:不在家|不在|没空|没时间|不方便|不行|来不了|去不了)")


def _not_the_day_refused(resolved: str, value: str, taken: Collection[str]) -> str:
    """For a new day, not one the request refuses ("I won't be home tomorrow"), when it
    names another after it ("could the driver come Thursday instead?"): that one."""
    at = resolved.find(value)
    if at < 0:
        return value
    end = at + len(value)
    refused = _REFUSED_BEFORE.search(resolved, max(0, at - 40), at) or _REFUSED_AFTER.match(
        resolved, end
    )
    if refused is None:
        return value
    later = (m[0] for m in _ISO_DAY.finditer(resolved, end) if m[0] != value and m[0] not in taken)
    return next(later, value)


def _changed_to(
    query: str, name: str, spec: dict[str, Any], value: str, taken: Collection[str]
) -> str:
    """For a parameter of what something becomes, the value the request changes it to
    when it names the one it has first ("从 FBB-100 升到 FBB-500", "现在是管理员 … 降成
    访客"): a value of the same kind after "to", 到, 成 … that follows this one, and that
    no other parameter holds. A value already after such a word ("推迟到 2025-07-15") is
    the new one."""
    at = query.find(value)
    if at < 0 or _CHANGED_BEFORE.search(query, max(0, at - 8), at):
        return value
    rest = query[at + len(value) :]
    marker = _CHANGED_TO.search(rest)
    if marker is None:
        return value
    after = roles.CLAUSE_END.split(rest[marker.end() :], maxsplit=1)[0]
    if "enum" in spec or "pattern" in spec or spec.get("format") in _FORMATS:
        changed = _constrained(after, spec)
    else:
        changed = _identifier(after, name, spec, set()) if examples_of(spec) else None
    if not isinstance(changed, str) or not changed or changed == value or changed in taken:
        return value
    return changed


def _side(
    query: str, on_calendar: Callable[[], str], value: str, *, departure_ends: bool = False
) -> str | None:
    """Which end of a pair the request's words make ``value`` (a date is read where the
    request has it in ISO form); ``departure_ends``: as ``roles.side``."""
    if value not in query and value.lower() in query.lower():  # "out of c-11-1-a"
        return roles.side(query.lower(), value.lower(), departure_ends=departure_ends)
    text = query if value in query else on_calendar()
    if value not in text and _DATE_TIME.fullmatch(value):  # …T20:00:00+08:00 was "… 20:00"
        written = (f"{value[:10]} {value[11:16]}", value[:10])
        value = next((w for w in written if w in text), value)
    return roles.side(text, value, departure_ends=departure_ends)


def _fits(value: str, spec: dict[str, Any]) -> bool:
    """Whether ``value`` is one ``spec`` takes as it is (its pattern, options or format)."""
    if "enum" in spec:
        return value in spec["enum"]
    if "pattern" in spec or spec.get("format") in _FORMATS:
        return bool(_constrained(value, spec) == value)
    return bool(spec.get("type", "string") == "string")


def _list_of_times(spec: dict[str, Any]) -> bool:
    """A list of days or times (``_takes_time`` items): read once the request's dates and
    clocks are resolved."""
    items = spec.get("items")
    return spec.get("type") == "array" and isinstance(items, dict) and _takes_time(items)


def _takes_time(spec: dict[str, Any]) -> bool:
    """A parameter whose values are dates, months or times: ``format: date``, or a
    ``pattern`` that accepts ``2026-01``, ``2026-01-31`` or ``10:30``."""
    if spec.get("format") in ("date", "date-time"):
        return True
    pattern = spec.get("pattern")
    if not isinstance(pattern, str) or "enum" in spec:
        return False
    try:
        program = compile_pattern(pattern)
    except PatternError:
        return False
    return any(search(program, sample) for sample in _TIME_SAMPLES)


_DATE_TIME = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?(.*)")


def _date_time(value: str) -> str:
    """A date and a time as RFC 3339 writes them: ``T`` between them, seconds always."""
    parts = _DATE_TIME.fullmatch(value)
    if parts is None:
        return value
    day, clock, seconds, offset = parts.groups()
    return f"{day}T{clock}{seconds or ':00'}{offset}"


def _calendar_options(spec: dict[str, Any]) -> bool:
    """Whether an enum's options are all months or days ("2027-03", "2027-06-12"): a
    month the request names in words is read where ``temporal.resolve`` wrote it."""
    options = spec.get("enum")
    return (
        isinstance(options, list)
        and bool(options)
        and all(isinstance(o, str) and temporal.is_calendar_value(o) for o in options)
    )


def _time_parameter(name: str, spec: dict[str, Any]) -> bool:
    """A parameter of days or times (``_takes_time``), not an id whose loose pattern
    happens to take a day ("policy_number" of ``^[A-Z0-9-]{6,20}$``)."""
    return _takes_time(spec) and ("format" in spec or not is_id_name(name, machine=False))


def _calendar_value(
    resolved: str, query: str, name: str, spec: dict[str, Any], taken: Collection[object]
) -> str | None:
    """A month or day the query names in words ("last month"), in the ISO form
    ``temporal.resolve`` gave it, if the parameter's schema takes it."""
    if resolved == query:
        return None
    if is_id_name(name, machine=False):
        return None  # a policy number is no month: "上个月看病的钱" gives no ``policy_number``
    if "pattern" in spec or spec.get("format") in _FORMATS:
        value = _constrained(resolved, spec, taken)
    else:
        value = _identifier(resolved, name, spec, set())
    return value if temporal.is_calendar_value(value) and value not in query else None


_MAX_AROUND = 2_000  # characters of the parameters' words read beside an option or a flag


def _around(props: dict[str, dict[str, Any]]) -> str:
    """The parameters' names and descriptions (``_entry`` each), read once per request and
    bounded: a schema of thousands of parameters costs no more per parameter."""
    text = " ".join(_entry(name, spec) for name, spec in itertools.islice(props.items(), 64))
    return text[:_MAX_AROUND]


def _entry(name: str, spec: dict[str, Any]) -> str:
    return f"{name} {str(spec.get('description') or '')[:_MAX_FLAG_DESCRIPTION]}"


def _constrained(
    query: str, spec: dict[str, Any], taken: Collection[object] = (), around: str = ""
) -> Any:
    """A value the schema pins down: a ``pattern`` match, an ``enum`` option (the longest
    named), or a known ``format`` (date, email ...); not one in ``taken``."""
    if "pattern" in spec:
        pattern = str(spec["pattern"])
        anchored = pattern.startswith("^") and pattern.endswith("$")
        whole = _pattern_value(query, _unanchored(pattern), taken, anchored=anchored)
        if whole is not None and whole.isdigit():
            # the digits of a code written apart from its letters: "SQ 838", "ek 385" for
            # ``^[A-Z0-9]{2}[0-9]{1,4}$`` are SQ838 and EK385, not 838
            joined = _separated(query, pattern, taken)
            if joined is not None and re.sub(r"\W|_", "", joined).endswith(whole):
                return joined
        if whole is not None:
            return whole
        return (
            _assembled(query, pattern, taken)
            or _grouped_digits(query, pattern, taken)
            or _separated(query, pattern, taken)
        )
    if "enum" in spec:  # an option another parameter of the same options holds is its
        # ("NHV to SDB" of an origin and a destination port: the destination is SDB); the
        # few values taken are passed, not the enum searched (it may hold 100,000 options)
        return _enum_option(query, spec, around, taken=frozenset(taken))
    found = (m.group(0) for m in _FORMATS[spec["format"]].finditer(query))
    return next((value for value in found if value not in taken), None)


# What may stand between a Chinese label and its value: 优先级：高, 优先级是低, 级别为中.
_LABEL_JOINT = re.compile(r"\s{0,2}(?:[:：]|是|为|设为|设成|调成|改成)?\s{0,2}")
_JOINT_WORDS = frozenset(("是", "为", "设为", "设成", "调成", "改成", "调", "改", "设"))


def _beside_its_label(query: str, name: str, options: list[Any]) -> Any:
    """In a Chinese request, the option the word next to the parameter's label means:
    the label a Chinese word whose English sense has the parameter's name (优先级
    "priority level" for ``priority``), the word right after it or right before it
    (优先级高, 高优先级: 高 "high"). None when no such word is there."""
    if not has_han(query) or not gloss_ready():
        return None
    named = {stem(w) for w in _name_parts(name) if len(w) > 2}
    stems = {stem(str(o).lower()): o for o in options if isinstance(o, str) and o.isascii()}
    if not named or not stems:
        return None
    words = dictionary()

    def option_of(word: str) -> Any:
        sense = words.get(word, "")
        return next((stems[s] for s in map(stem, _LATIN_WORD.findall(sense)) if s in stems), None)

    text = query[:_MAX_LABELLED]
    for run in _ALL_HAN.finditer(text):
        pieces = segment_words(run.group(0), words)
        for i, piece in enumerate(pieces):
            sense = words.get(piece, "")
            if len(piece) < 2 or not named & {stem(w) for w in _LATIN_WORD.findall(sense)}:
                continue
            rest = pieces[i + 1 :]
            while rest and rest[0] in _JOINT_WORDS:
                rest = rest[1:]
            after = rest[0] if rest else None
            if after is None:  # 优先级：高 (the value in the next run of Chinese)
                joint = _LABEL_JOINT.match(text, run.end())
                following = _ALL_HAN.match(text, joint.end()) if joint else None
                after = segment_words(following.group(0), words)[0] if following else None
            for word in (after, pieces[i - 1] if i else None):
                option = option_of(word) if word else None
                if option is not None:
                    return option
    return None


_MAX_LABELLED = 300  # characters of a request searched for a label


def _enum_option(
    query: str, spec: dict[str, Any], around: str = "", *, taken: Collection[Any] = ()
) -> Any:
    """The enum option the query names, not one ``taken`` already: written as it is (the
    longest first), with spaces for its underscores ("thinkpad x1" for ``thinkpad_x1``),
    by a first word no other option shares ("dell" for ``dell_latitude_7440``), or by the
    word the description pairs with it ("年假 annual", "annual (年假)"). A long enum is
    read through its index (``enums``)."""
    query = _without_accents(query)  # "canapés" names ``canapes``
    if len(spec["enum"]) > enums.LONG_ENUM:
        return _long_enum_option(query, spec, around, taken)
    options = [o for o in spec["enum"] if isinstance(o, str | int | float) and o not in taken]
    return _option_named(query, options, spec, around)


_ACCENTED = re.compile(r"[\u00c0-\u024f]")


def _without_accents(text: str) -> str:
    """``text`` with the accents of its Latin letters left out ("canapés": "canapes");
    nothing else changes (Chinese, full-width forms and their lengths stay as written)."""
    if _ACCENTED.search(text) is None:
        return text
    return _ACCENTED.sub(
        lambda m: (
            "".join(
                c for c in unicodedata.normalize("NFKD", m.group(0)) if not unicodedata.combining(c)
            )
            or m.group(0)
        ),
        text,
    )


def _long_enum_option(query: str, spec: dict[str, Any], around: str, taken: Collection[Any]) -> Any:
    """``_enum_option`` for an enum past ``enums.LONG_ENUM`` options: a number by its
    value, an option written out among those whose tokens the query writes in a row
    (``EnumIndex.written``), the word rules among the options that share a word or a
    Chinese character with it (when few enough do), and the currency and language codes."""
    index = enums.index_of(spec["enum"])
    lowered = query.lower()
    if index.numbers:
        said = sorted(
            index.numbers[value]
            for value in {_amount(query, n) for n in _numbers(query)}
            if value in index.numbers
        )
        named = next((index.by_length[p] for p in said if index.by_length[p] not in taken), None)
        if named is not None:
            return named
    spaced = _JOINED_BY_SEPARATORS.sub(" ", lowered)
    spoken = set(index.fact(_spoken_codes))  # "it" is no Italian
    candidates = [
        option
        for option in index.written(lowered, spaced)
        if not enums.is_number(option) and option not in taken and option not in spoken
    ]
    written = _written_option(query, lowered, candidates, candidates)
    if written is not None:
        return written
    related = _options_to_read(query, spec["enum"])
    named = _option_named(query, [o for o in related if o not in taken], spec, around, index)
    if named is not None:
        return named
    codes = [index.currency_codes, index.language_codes]
    if taken:
        codes = [{c: o for c, o in found.items() if o not in taken} for found in codes]
    return _currency(query, codes[0]) or _language(lowered, codes[1])


def index_enums(schema: object) -> None:
    """Index the long enums of ``schema`` now, with what the rules ask of a whole enum
    (the routing index prepares a tool off the event loop), so no request pays for it."""
    for enum in enums.long_enums(schema):
        index = enums.index_of(enum)
        for fact in _ENUM_FACTS:
            index.fact(fact)


def _options_to_read(query: str, enum: list[Any]) -> list[Any]:
    """The options of ``enum`` the word rules read: all of a short enum; of a long one,
    those sharing a word's first three letters or a Chinese character with the query
    (none when more than ``enums.LONG_ENUM`` do). The words of the query include what a
    rule reads it as: its Chinese words' English senses, the verb of a participle
    ("lose" for ``lost``), a word people use for an option's ("last" for ``previous``)."""
    if len(enum) <= enums.LONG_ENUM:
        return enum
    lowered = query.lower()
    words = enums.words(lowered)
    if has_han(lowered) and gloss_ready():
        words |= _glossed_words(lowered) | _senses(query)
    words |= {_PARTICIPLES[word] for word in words if word in _PARTICIPLES}
    words |= {first for first, said in _OPTION_WORDS.items() if not words.isdisjoint(said)}
    keys = enums.word_keys(words) | enums.han_characters(lowered)
    return enums.index_of(enum).related(keys) or []


def _spoken_codes(options: list[Any]) -> list[Any]:
    """Of an enum of language codes (three or more), the codes that are English words."""
    if len(enums.language_codes(options)) < 3:
        return []
    return [o for o in options if isinstance(o, str) and o.lower() in STOPWORDS]


def _option_named(
    query: str,
    options: list[Any],
    spec: dict[str, Any],
    around: str,
    index: enums.EnumIndex | None = None,
) -> Any:
    """``_enum_option`` read option by option: every rule asks of each of ``options``
    (of a long enum, the ones its ``index`` found for the query: what a rule asks of the
    whole enum, the index answers once)."""

    def of_enum(fact: Callable[[list[Any]], Any]) -> Any:
        return fact(options) if index is None else index.fact(fact)

    by_length = sorted(options, key=lambda o: -len(str(o)))
    lowered = query.lower()
    # of language codes, "it" and "no" are words before they are Italian and Norwegian
    spoken = set(of_enum(_spoken_codes))
    plain = [o for o in by_length if o not in spoken] if spoken else by_length
    written = _written_option(query, lowered, plain, plain)
    if written is not None:
        return written
    coded = codes.coded_option(query, options, str(spec.get("description") or ""))
    if coded is not None:  # "portsmere" of PSM in "Port codes: PSM = Portsmere"
        return coded
    glossed = _listed_gloss_option(lowered, options, str(spec.get("description") or ""))
    if glossed is not None:  # "cinema" of 影院 in "Scene to apply (away / home / cinema)"
        return glossed
    inflected = _inflected_option(lowered, by_length)
    if inflected is not None:
        return inflected
    squashed = _squashed_option(lowered, options)
    if squashed is not None:  # "x-ray" for ``xray``, "check up" for ``checkup``
        return squashed
    joined = _joined_digits_option(lowered, options)
    if joined is not None:  # "24/7" for ``24_7``
        return joined
    counted = _word_and_number_option(query, lowered, options)
    if counted is not None:  # "walk … 30 min" for ``walk_30``, "an hour's walk" for walk_60
        return counted
    if _PERCENT_SIGN.search(query):  # "10% off" names ``percent``
        percent = [o for o in options if re.split(r"[_\-\s]+", str(o).lower())[0] in _PERCENT]
        if len(percent) == 1:
            return percent[0]
    every_word = _every_word_option(lowered, options)
    if every_word is not None:  # "a new credit card" is new_card, not card_on_file
        return every_word
    kind = _made_of_option(lowered, options)
    if kind is not None:  # "an e-gift card" is ``digital``, "plastic ones" ``physical``
        return kind
    firsts: dict[str, list[Any]] = {}
    for option in options:
        first = re.split(r"[_\-\s]+", str(option).lower())[0]
        if len(first) >= 3 and first.isalpha():
            firsts.setdefault(first, []).append(option)
    for first, owners in firsts.items():
        if len(owners) == 1 and _names(lowered, first):
            return owners[0]
    shortened = _shortened_option(lowered, firsts)
    if shortened is not None:
        return shortened
    partial = _partial_option(lowered, options)
    if partial is not None:
        return partial
    derived = _derived_option(lowered, options)
    if derived is not None:  # "the projector lamp died" for ``projection``
        return derived
    description = str(spec.get("description") or "")
    paired = {o: _paired_words(description, str(o)) for o in by_length[:_MAX_PAIRED_OPTIONS]}
    for option, words in paired.items():  # a long enum is not read this way
        if any(word in query for word in words):
            return option
    shared = _sharing_pairs(query, paired)
    if shared is not None:
        return shared
    sensed = _sensed_pairing(lowered, paired)
    if sensed is not None:  # "night shift" for the C of "C 夜班"
        return sensed
    return (
        _currency(query, enums.currency_codes(options))
        or _language(lowered, enums.language_codes(options))
        or _glossed_option(query, firsts, around)
        or _sensed_option(lowered, options, description)
        or _synonym_option(query, options, f"{description} {around}")
        or _window_option(query, of_enum(_windows))
        or _shared_character_option(
            query, options, f"{description} {around}", chinese=len(of_enum(_chinese_options))
        )
    )


# What a thing is made of, as people say it: an option named "digital" or "physical"
# (a gift card's, a ticket's, a statement's kind) by the everyday words for it.
_MADE_OF = {
    "digital": re.compile(
        r"\be-(?=[a-z])|\be(?:card|voucher|ticket|book)s?\b|\b(?:electronic|virtual|emailed)\b"
        r"|电子"
    ),
    "physical": re.compile(
        r"\b(?:plastic|printed|paper|hard\s?copy|in\s+the\s+post)\b|实体|纸质|实物"
    ),
}
_MADE_OF_ALSO = {"electronic": "digital", "e": "digital", "paper": "physical", "print": "physical"}


def _made_of_option(lowered: str, options: Sequence[Any]) -> Any:
    """Of options that say what a thing is made of (``digital`` / ``physical``, and
    ``electronic``, ``paper``, ``print``), the one kind the request's words say ("a £25
    e-gift card", "4 plastic gift cards", 实体礼品卡); None when they say both or none."""
    kinds = {
        _MADE_OF_ALSO.get(str(o).lower(), str(o).lower()): o
        for o in options
        if isinstance(o, str) and _MADE_OF_ALSO.get(o.lower(), o.lower()) in _MADE_OF
    }
    if len(kinds) < 2:
        return None
    said = [kind for kind in kinds if _MADE_OF[kind].search(lowered)]
    return kinds[said[0]] if len(said) == 1 else None


_PERCENT_SIGN = re.compile(r"\d\s?[%％]")
_ALNUM_RUN = re.compile(r"[a-z0-9]+")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def _squashed_option(lowered: str, options: Sequence[Any]) -> Any:
    """The one option of four letters or more the request writes with other separators,
    or none, between its pieces: "x-ray" for ``xray``, "check up" for ``checkup``,
    "e-mail" for ``email`` (two or three words of the request run together)."""
    tokens = _ALNUM_RUN.findall(lowered[: _MAX_LABELLED * 4])
    grams = {a + b for a, b in itertools.pairwise(tokens)}
    grams |= {a + b + c for a, b, c in zip(tokens, tokens[1:], tokens[2:], strict=False)}
    found = [
        option
        for option in options
        if len(squashed := _NOT_ALNUM.sub("", str(option).lower())) >= 4 and squashed in grams
    ]
    return found[0] if len(found) == 1 else None


_PERCENT = frozenset(("percent", "percentage", "pct"))
# An option of numbers joined by a separator ("24_7", "5x10", "16-9"), and the request's
# numbers joined by any of them ("24/7", "5 x 10", "16:9").
_JOINED_DIGITS = re.compile(r"(\d{1,4})\s?[-_/x×:]\s?(\d{1,4})")


# An option of a word and a number: "walk_30", "drop-in-15", "plan_100".
_WORD_NUMBER = re.compile(r"([a-z]{3,})[-_](\d{1,4})")


def _word_and_number_option(query: str, lowered: str, options: Sequence[Any]) -> Any:
    """The one option of a word and a number (``walk_30``) whose word the request writes
    (or its English reading, for Chinese) and whose number it writes, as a number or as
    that many minutes ("30 min", "an hour" for 60, 一小时)."""
    shaped = [
        (option, match[1], int(match[2]))
        for option in options
        if isinstance(option, str) and (match := _WORD_NUMBER.fullmatch(option.lower()))
    ]
    if len(shaped) < 2:
        return None
    words = set(_LATIN_WORD.findall(lowered))
    if has_han(lowered) and gloss_ready():
        words |= _glossed_words(lowered)
    numbers = {_amount(query, n) for n in itertools.islice(_numbers(query), _MAX_MATCHES)}
    minutes = temporal.duration(query, "minute")
    if minutes is not None:
        numbers.add(minutes[0])
    found = [
        option
        for option, word, number in shaped
        if number in numbers and any(w == word or w.startswith(word) for w in words)
    ]
    return found[0] if len(found) == 1 else None


def _joined_digits_option(lowered: str, options: Sequence[Any]) -> Any:
    """The one option of two numbers joined by a separator that the request writes with
    another one ("24/7" for ``24_7``)."""
    pairs = {(m[1], m[2]) for m in itertools.islice(_JOINED_DIGITS.finditer(lowered), _MAX_MATCHES)}
    if not pairs:
        return None
    found = []
    for option in options:
        shape = _JOINED_DIGITS.fullmatch(option.lower()) if isinstance(option, str) else None
        if shape is not None and (shape[1], shape[2]) in pairs:
            found.append(option)
    return found[0] if len(found) == 1 else None


# Characters that say nothing of an option: particles, "other", and words of degree.
_PLAIN_HAN = frozenset("的了是否不在和与或及也都就把被给对为请吗呢吧啊一个其他它们我你这那有无")


def _chinese_options(options: Sequence[Any]) -> list[str]:
    """The Chinese options, but a catch-all (其他)."""
    return [o for o in options if isinstance(o, str) and has_han(o) and "其他" not in o]


def _shared_character_option(
    query: str, options: Sequence[Any], around: str, *, chinese: int
) -> Any:
    """For a Chinese request and Chinese options: the one option that shares characters
    with the request that no other option, nor ``around`` (the parameter's description,
    the other parameters' names and descriptions), has (被刮了
    for 刮擦, 凹进去 for 凹陷, 装错了 for 装配错误, 提前还一部分本金 for 提前部分还款 and not
    提前结清, whose 提前 both have; one character alone only if the option begins with it),
    when no other option shares any; an option one of
    whose parts the request writes whole (轮毂 of 轮胎/轮毂). A catch-all (其他) is never
    chosen."""
    if not has_han(query) or chinese < 2:  # ``chinese``: the enum's Chinese options
        return None
    written = _chinese_options(options)
    # A part of an option written whole: 轮毂 of 轮胎/轮毂.
    whole = [o for o in written if any(len(p) >= 2 and p in query for p in o.split("/"))]
    if len(whole) == 1 and "/" in whole[0]:
        return whole[0]
    counts = Counter(c for option in written for c in set(option))
    plain = _PLAIN_HAN | set(around)

    def shares(option: str) -> bool:
        found = [c for c in set(option) if counts[c] == 1 and c not in plain and c in query]
        # One character alone only as the option's first (刮 of 刮擦): the 行 of 放行 is
        # no 银行卡.
        return len(found) >= 2 or (len(found) == 1 and option.startswith(found[0]))

    sharing = [option for option in written if shares(option)]
    return sharing[0] if len(sharing) == 1 else None


# Words joined by an underscore or a dash: read as the words ("in-process", "in_process").
_JOINED_BY_SEPARATORS = re.compile(r"(?<=[a-z])[_-]+(?=[a-z])")


def _written_option(query: str, lowered: str, options: list[Any], by_length: list[Any]) -> Any:
    """The option the query writes out: a number of the query's, an option that picks all
    of them, or any option as it is spelled (the longest first)."""
    # A number option is a number of the query's: not the "30" of "10:30" or of an id.
    numeric = [o for o in by_length if enums.is_number(o)]
    if numeric:
        written = {_amount(query, n) for n in _numbers(query)}
        named = next((o for o in numeric if enums.finite(o) in written), None)
        if named is not None:
            return named
    spaced = _JOINED_BY_SEPARATORS.sub(" ", lowered)  # "in-process", "in_process"
    for option in options:  # "reboot both the box and the router": both, not router
        if str(option).lower() in _CHOOSES_ALL and _names(lowered, str(option).lower()):
            if str(option).lower() == "all" and _quantifies_another(lowered, "all", options):
                continue  # "list all my paid invoices": the paid ones ("both X and Y" is both)
            return option
    found: list[tuple[Any, str]] = []
    for option in by_length:  # the longest first, however written ("premium economy")
        if enums.is_number(option):
            continue
        for spelled in (str, lambda o: re.sub(r"[_-]+", " ", str(o))):
            text = spelled(option).lower()
            if _written(lowered, text) or (text != str(option) and _names(spaced, text)):
                found.append((option, text))
                break
    if found:
        # of two written, the one the request turns to: "别再打电话提醒了，改成微信" is 微信
        turned = [o for o, text in found if _turned_to(lowered, text)]
        return turned[0] if len(found) > 1 and len(turned) == 1 else found[0][0]
    for option in by_length:  # 没充上电 for 未充上电: the two words of "not yet" swap
        text = str(option)
        if has_han(text) and ("未" in text or "没" in text):
            swapped = {
                text.replace("未", "没"),
                text.replace("未", "没有"),
                text.replace("没", "未"),
            }
            if any(alt != text and alt in query for alt in swapped):
                return option
    return None


# What a request turns to, written just before the new value: "改成微信", "switch to email".
_TURNED_TO = (
    r"(?:改成|换成|改为|换为|改用|换用|改到|换到|调成|"
    r"(?:switch|change|move|convert)(?:e?d|ing|es)?\s+(?:(?:it|that|them|this|me|us)\s+)?"
    r"(?:over\s+)?to|over\s+to|instead\s+use|use)\s*"
)


def _turned_to(lowered: str, text: str) -> bool:
    """Whether ``text`` (an option, lower-cased) stands right after a word of turning to it."""
    return re.search(_TURNED_TO + re.escape(text), lowered) is not None


# An option that is a window of the day ("08:00-12:00", "8-12"), and the query's own.
_WINDOW = re.compile(r"(\d{1,2})(?::([0-5]\d))?\s*(?:-|–|~|to|至|到)\s*(\d{1,2})(?::([0-5]\d))?")
_CLOCK_RANGE = re.compile(
    r"(?<![\d:])(\d\d):(\d\d)\s*(?:-|–|~|to|and|until|till|至|到)\s*(\d\d):(\d\d)(?![\d:])"
    r"|\bbetween\s+(\d{1,2})\s+and\s+(\d{1,2})\b",
    re.IGNORECASE,
)
_CLOCK = re.compile(r"(?<![\d:])(\d\d):(\d\d)(?![\d:])")
# A part of the day, at the hour it stands for.
_DAY_PARTS = (
    (re.compile(r"\bmorning\b|上午|早上", re.IGNORECASE), 9 * 60),
    (re.compile(r"\bnoon\b|\blunch\s?time\b|中午", re.IGNORECASE), 12 * 60),
    (re.compile(r"\bafternoon\b|下午", re.IGNORECASE), 14 * 60),
    (re.compile(r"\bevening\b|\btonight\b|\bafter work\b|晚上|傍晚", re.IGNORECASE), 18 * 60),
)


def _windows(options: Sequence[Any]) -> dict[Any, tuple[int, int]]:
    """For options that are all windows of the day ("08:00-12:00"), each one's start and
    end in minutes; none when one is not."""
    windows = {}
    for option in options:
        match = _WINDOW.fullmatch(str(option).strip())
        if match is None:
            return {}
        start = int(match[1]) * 60 + int(match[2] or 0)
        windows[option] = (start, int(match[3]) * 60 + int(match[4] or 0))
    return windows


# What rules ask of a whole enum, computed once for a long one (``EnumIndex.fact``).
_ENUM_FACTS = (_windows, _chinese_options, _spoken_codes)


def _window_option(query: str, windows: dict[Any, tuple[int, int]]) -> Any:
    """For options that are windows of the day (``_windows``), the one the request's time
    falls in: a range ("4pm-8pm", "between 12 and 4", 8点到12点), a time ("下午两点左右"),
    or a part of the day ("in the morning", 上午)."""
    if len(windows) < 2:
        return None
    times = _times_of_day(temporal.resolve(query, datetime.now(UTC).date()))
    if times is None:
        return None
    begin, end = times
    for option, (start, stop) in windows.items():
        if start <= begin < stop and (end is None or end <= stop):
            return option
    return None


def _times_of_day(resolved: str) -> tuple[int, int | None] | None:
    """The request's time of day in minutes, as a range (start, end) or a moment (start,
    None), from its text with times written as HH:MM (``temporal.resolve``)."""
    ranged = _CLOCK_RANGE.search(resolved)
    if ranged is not None and ranged[1]:
        return int(ranged[1]) * 60 + int(ranged[2]), int(ranged[3]) * 60 + int(ranged[4])
    if ranged is not None:  # "between 12 and 4": working hours, so 4 is 16:00
        first, second = int(ranged[5]), int(ranged[6])
        first += 12 if first < 7 else 0
        second += 12 if second <= first % 12 or second < 7 else 0
        return first * 60, second * 60
    clock = _CLOCK.search(resolved)
    if clock is not None:
        return int(clock[1]) * 60 + int(clock[2]), None
    for part, minutes in _DAY_PARTS:
        if part.search(resolved):
            return minutes, None
    return None


def _written(lowered: str, option: str) -> bool:
    """Whether the query writes ``option``: as a whole word, or for a Chinese option
    (two characters or more) anywhere, as Chinese writes words without spaces (眼科 of
    "眼科下午有大夫吗")."""
    if _names(lowered, option):
        return True
    if len(option) >= 2 and _ALL_HAN.fullmatch(option) is not None:
        return option in lowered
    if not has_han(option):
        return False
    # Latin and Chinese together (T2国内 of "T2国内安检队伍长吗"): a Latin end is a word's
    # end, a Chinese end needs none
    before = r"(?<![a-z0-9])" if option[0].isascii() and option[0].isalnum() else ""
    after = r"(?![a-z0-9])" if option[-1].isascii() and option[-1].isalnum() else ""
    return re.search(before + re.escape(option) + after, lowered) is not None


_ALL_HAN = re.compile(r"[\u3400-\u9fff]+")
_LATIN_WORD = re.compile(r"[a-z]+")
# Weekdays and months as an enum abbreviates them: "friday" names ``fri``, "sept" ``sep``.
_CALENDAR_WORDS = frozenset((
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    "january", "february", "march", "april", "may", "june", "july", "august",
    "september", "october", "november", "december",
))  # fmt: skip


_INFLECTIONS = ("s", "es", "ed", "d", "ing", "ment", "ments")


def _doubled(word: str) -> str:
    """A short word ending in one vowel and a consonant, its last letter doubled as it is
    before "ed" and "ing" ("hem" → hemm: "hemmed", "zip" → "zipped"); else a space,
    which no word of the request holds."""
    if len(word) <= 4 and re.fullmatch(r"[a-z]*[^aeiou][aeiou][b-df-hj-np-tvz]", word):
        return word + word[-1]
    return " "


# Irregular participles of what happens to a thing, which an option names as its state
# ("lost", "stolen", "broken"): a request says the verb ("I lose …", or 丢 read "lose",
# 偷 "steal"). Not "paid", "sold" or "left": an order to pay is no ``paid`` filter.
_PARTICIPLES = {
    "lose": "lost", "steal": "stolen", "break": "broken", "tear": "torn", "freeze": "frozen",
    "burn": "burnt", "bend": "bent", "spill": "spilt", "forget": "forgotten", "hide": "hidden",
    "wear": "worn", "fall": "fallen", "shake": "shaken", "bite": "bitten",
}  # fmt: skip


# British words a dictionary's senses give in American English (汽油 "gasoline").
_SAID_ALSO = {
    "petrol": "gasoline", "lorry": "truck", "flat": "apartment", "lift": "elevator",
    "nappy": "diaper", "biscuit": "cookie", "trainers": "sneakers", "mobile": "cellphone",
    "aubergine": "eggplant", "courgette": "zucchini", "postcode": "zipcode", "sms": "text",
}  # fmt: skip


def _inflected_option(lowered: str, options: Sequence[Any]) -> Any:
    """The one word option the query writes inflected ("finals" for ``final``, "mailed"
    for ``mail``: an ending added to an option of three letters or more; not "product"
    for ``production``, as a stemmer would have it; "lose" or 丢 for ``lost``), or abbreviated as
    calendars do ("friday" for ``fri``, "tues" for ``tue``; "周五" read as Friday), or a
    trade by its work or its worker (``_trade_named``)."""
    written = set(_LATIN_WORD.findall(lowered))
    words = set(written)
    if has_han(lowered) and gloss_ready():
        words |= _glossed_words(lowered)
    calendar = {w for w in words if w in _CALENDAR_WORDS}
    participles = {_PARTICIPLES[w] for w in words if w in _PARTICIPLES}
    found = []
    for option in options:
        text = str(option).lower()
        if not (isinstance(option, str) and text.isascii() and text.isalpha() and len(text) >= 3):
            continue
        if (
            text in participles
            or any(w.startswith(text) for w in calendar)
            or any(text + ending in words for ending in _INFLECTIONS)
            or any(f"{_doubled(text)}{ending}" in words for ending in ("ed", "ing"))  # hemmed
            or _trade_named(text, written)  # (高速 reads "high speed": no speeding)
            or _done_as_verb(text, written, lowered)  # "delivered" of ``delivery``
        ):
            found.append(option)
    return found[0] if len(found) == 1 else None


# Endings that derive a word from its root: a projector, a projection.
_DERIVING = re.compile(r"(?:ation|ion|ment|ing|er|or)$")


def _derived_option(lowered: str, options: Sequence[Any]) -> Any:
    """The one word option the query names by another word derived from the same root,
    both derived ("projector" for ``projection``, "a cleaner" for ``cleaning``): the root
    four letters or more. Not a root alone: "product" is no ``production``."""
    written = {_DERIVING.sub("", w): w for w in _LATIN_WORD.findall(lowered) if len(w) >= 6}
    roots = {root for root, word in written.items() if root != word and len(root) >= 4}
    found = []
    for option in options:
        text = str(option).lower()
        if not (isinstance(option, str) and text.isascii() and text.isalpha()):
            continue
        root = _DERIVING.sub("", text)
        if root != text and root in roots and written[root] != text:
            found.append(option)
    return found[0] if len(found) == 1 else None


# An option that is a verb and its particle run together: ``pickup``, ``dropoff``,
# ``checkout``, ``setup``.
_PHRASAL_OPTION = re.compile(r"([a-z]{3,6})(up|off|out|in|back)")
_VERB_ENDINGS = ("", "s", "ed", "ing")


def _done_as_verb(option: str, words: Collection[str], lowered: str) -> bool:
    """Whether the request writes as a verb what ``option`` names as a noun: "deliver it"
    or "delivered" of ``delivery`` (a verb of seven letters or more and a "y": no
    "battered" of ``battery``), "pick it up" or "picked up" of ``pickup``."""
    if option.endswith("y") and len(option) >= 8 and not option.endswith(("ly", "ay", "ey")):
        root = option[:-1]
        return any(root + ending in words for ending in _VERB_ENDINGS)
    phrasal = _PHRASAL_OPTION.fullmatch(option)
    if phrasal is None:
        return False
    verb, particle = phrasal.groups()
    doubled = _doubled(verb)  # "dropped off"
    endings = [verb + e for e in _VERB_ENDINGS] + [doubled + e for e in ("ed", "ing")]
    forms = "|".join(re.escape(f) for f in endings if " " not in f)
    return bool(
        _cached(rf"\b(?:{forms})\s+(?:(?:it|them|this|that|me|us)\s+)?{particle}\b").search(lowered)
    )


# A trade's option named by its work or its worker: "cleaners" and "a deep clean" of
# ``cleaning``, "repaint" of ``painting``, "plumber" of ``plumbing``, "electrician" of
# ``electrical``.
_WORKERS = ("", "s", "er", "ers", "ed")


def _trade_named(option: str, words: Collection[str]) -> bool:
    if option.endswith("ing") and len(option) >= 8:  # (a root of five letters: no "stag")
        root = option[:-3]
        return any(root + ending in words for ending in _WORKERS) or "re" + root in words
    if option.endswith("ical") and len(option) >= 8:
        root = option[:-2]  # electric(al)
        return root + "ian" in words or root + "ians" in words
    return False


@functools.lru_cache(maxsize=256)
def _glossed_words(query: str) -> frozenset[str]:
    """The English words of the query's reading (``gloss``), read once per query (each
    candidate tool's enums and flags ask again)."""
    return frozenset(_LATIN_WORD.findall(gloss(query).lower()))


@functools.lru_cache(maxsize=4096)
def _sense_stems(option: str) -> frozenset[str]:
    """The stems of a Chinese option's English senses (``every_sense``; for a word the
    dictionary lacks, its reading: 被盗 "steal"), content words."""
    words = _LATIN_WORD.findall((every_sense(option) or gloss(option)).lower())
    # three letters too: 蚂蚁 is "ant", 老鼠 "rat" (a short sense names it only as written)
    return frozenset(stem(w) for w in words if w not in STOPWORDS and len(w) >= 3)


@functools.lru_cache(maxsize=256)
def _word_stems(text: str) -> frozenset[str]:
    """The stems of ``text``'s Latin words: a schema's own words (``_around``), read once
    per schema, not once per enum parameter that asks."""
    return frozenset(stem(w) for w in _LATIN_WORD.findall(text.lower()))


def _synonym_option(query: str, options: Sequence[Any], around: str = "") -> Any:
    """For a Chinese request, the one Chinese option a word of it means in other
    characters: 开挂 for 外挂 (both "cheat", "online"). Senses of five letters or more,
    that no other option shares and the schema's own words do not hold (对局 "match" of
    a ``match_id`` chooses no 消极比赛 "passive match"); the option that two or more of
    them say, when one does more than every other."""
    if not has_han(query) or not gloss_ready():
        return None
    held = _word_stems(around)
    said = {s for s in _senses(query) if len(s) >= 5 and s not in held}
    senses = {o: _sense_stems(o) for o in options if isinstance(o, str) and has_han(o)}
    if not said or len(senses) < 2:
        return None
    written = _bigrams(query)
    if any(_bigrams(option) & written for option in senses):
        return None  # the request writes an option's own words (停机 of 临时停机): not this rule
    shared = Counter(s for found in senses.values() for s in found)
    scores = sorted(
        ((sum(shared[s] == 1 for s in found & said), o) for o, found in senses.items()),
        key=lambda score: -score[0],
    )
    best, second = scores[0][0], scores[1][0]
    # two senses at least: one alone is as often a word's rarer reading (停 "stall")
    return scores[0][1] if best >= 2 and best > second else None


def _sensed_pairing(lowered: str, paired: dict[Any, tuple[str, ...]]) -> Any:
    """For an English request, the option whose paired Chinese words it says in their
    English sense ("night shift" for the C of "班次：A 早班，B 中班，C 夜班")."""
    if not gloss_ready() or has_han(lowered) or not any(paired.values()):
        return None
    by_words = {word: option for option, words in paired.items() for word in words}
    word = _sensed_option(lowered, list(by_words))
    return by_words.get(word) if word is not None else None


def _sensed_option(lowered: str, options: Sequence[Any], described: str = "") -> Any:
    """The one Chinese option whose English sense the query writes (``gloss``): 下午
    "afternoon", 皮肤科 "dermatology" for "dermatologist" (one stem begins the other, five
    letters or more), 夜班 "night shift" for "nights", 被盗 "steal" for "stolen" (a
    participle read as its verb), 汽油 "gasoline" for "petrol" (``_SAID_ALSO``). A sense
    word two options share names neither. A sense word the parameter's own description
    (``described``) holds names an option only when no other word does: "book fuel …
    petrol" is 汽油, not 柴油 "diesel fuel" of 燃油种类 "fuel kind"; "suspend my line" is
    still 临时停机 of 停机原因."""
    if not gloss_ready() or not _LATIN_WORD.search(lowered):
        return None
    named = _sensed_in(lowered, options, described)
    left = _CHANGED_FROM.sub(" ", lowered) if named is None else lowered
    # "from vanilla to chocolate": of two options named, the one it changes to
    return named if left == lowered else _sensed_in(left, options, described)


# What a change is from: "from vanilla to chocolate", "instead of vanilla".
_CHANGED_FROM = re.compile(
    r"\bfrom\s+[a-z'-]+(?:\s+[a-z'-]+){0,2}?(?=\s+(?:to|into)\b)|\b(?:instead\s+of|rather\s+than)"
    r"\s+[a-z'-]+(?:\s+[a-z'-]+)?"
)


def _sensed_in(lowered: str, options: Sequence[Any], described: str) -> Any:
    """``_sensed_option``'s reading of ``lowered``."""
    written = [w for w in _LATIN_WORD.findall(lowered) if w not in STOPWORDS]
    written += [_SAID_ALSO[w] for w in written if w in _SAID_ALSO]
    # a compound written apart: "bed bugs" for 臭虫 "bedbug"
    written += [a + b for a, b in itertools.pairwise(written) if len(a + b) >= 6]
    # An irregular participle is said by its verb too: "stolen" for 被盗 ("steal").
    verbs = {stem(v) for v, participle in _PARTICIPLES.items() if participle in written}
    asked = {stem(w) for w in written if len(w) >= 4} | verbs
    kind = _sense_stems(described) if has_han(described) else _word_stems(described)
    chinese = [o for o in options if isinstance(o, str) and has_han(o)]
    if _NEGATING.search(lowered) is None:  # "remind me every 4 months" is no 不提醒
        chinese = [o for o in chinese if not _NEGATED_OPTION.match(o)]
    return _sense_named(asked, verbs, chinese, kind) or _sense_named(asked, verbs, chinese)


# A Chinese option that is a verb negated (不提醒 "no reminders", 没有到货), and the words
# of a request that asks for none.
_NEGATED_OPTION = re.compile(r"^(?:不|没|别|停止)")
_NEGATING = re.compile(
    r"\b(?:no|not|don'?t|doesn'?t|never|stop|off|without|none|disable|opt\s+out)\b|n't\b"
)


def _sense_named(
    asked: set[str], verbs: set[str], options: list[str], left_out: frozenset[str] = frozenset()
) -> str | None:
    """``_sensed_option``'s reading, the senses ``left_out`` aside."""
    senses = {o: _sense_stems(o) - left_out for o in options}
    shared = Counter(s for found in senses.values() for s in found)

    def said(sense: str) -> bool:  # or the end of a compound: "roaches" of "cockroach"
        return any(
            a == sense
            or (min(len(a), len(sense)) >= 5 and (a.startswith(sense) or sense.startswith(a)))
            or (len(a) >= 5 and sense.endswith(a))
            for a in asked
        )

    named = [o for o, found in senses.items() if any(shared[s] == 1 and said(s) for s in found)]
    if len(named) > 1:  # what happened to the thing says more than the thing ("phone")
        named = [o for o in named if senses[o] & verbs]
    if not named:  # a sense several share, at the head of one's senses only: 小提琴 "fiddle
        # violin …" for "violin", not 大提琴 "cello … instrument of the violin family"
        heads = {o: _head_senses(o) - left_out for o in senses}
        named = [
            o
            for o in senses
            if any(said(s) and shared[s] > 1 for s in heads[o])
            and not any(said(s) for other in senses if other != o for s in heads[other])
        ]
    return named[0] if len(named) == 1 else None


_HEAD_SENSES = 2  # the words that begin a Chinese option's senses, which name it first


@functools.lru_cache(maxsize=4096)  # as _sense_stems: an option read once per process
def _head_senses(option: str) -> frozenset[str]:
    """The stems of the first ``_HEAD_SENSES`` content words of the option's senses."""
    words = _LATIN_WORD.findall((every_sense(option) or gloss(option)).lower())
    content = [w for w in words if w not in STOPWORDS and len(w) >= 3]
    return frozenset(stem(w) for w in content[:_HEAD_SENSES])


# Currencies as people write them, for an enum of ISO codes: "86 元", "650 块", "20 欧元".
_CURRENCY_WORDS = (  # longest first: 美元 is no 元
    ("人民币", "CNY"), ("美元", "USD"), ("美金", "USD"), ("欧元", "EUR"), ("英镑", "GBP"),
    ("日元", "JPY"), ("港币", "HKD"), ("港元", "HKD"), ("元", "CNY"), ("块", "CNY"),
    ("rmb", "CNY"), ("yuan", "CNY"), ("dollars", "USD"), ("bucks", "USD"), ("euros", "EUR"),
    ("pounds", "GBP"), ("yen", "JPY"), ("$", "USD"), ("€", "EUR"), ("£", "GBP"),
)  # fmt: skip


def _currency(query: str, codes: dict[str, Any]) -> Any:
    """The option coding the currency the query names in words or a sign (the first
    named), if the enum has that code (``codes``: ``enums.currency_codes``)."""
    if not codes:
        return None
    code = _first_named(query.lower(), _CURRENCY_WORDS, codes)
    return codes[code] if code is not None else None


def _first_named(
    lowered: str, table: Sequence[tuple[str, str]], known: Collection[str]
) -> str | None:
    """The code, among ``known``, of the ``table`` word that ``lowered`` names first (a
    Latin word as a whole word; words in table order, each blanked once read: 元 of 美元
    is read no more)."""
    named: list[tuple[int, str]] = []
    for word, code in table:
        start = lowered.find(word)
        if start < 0 or (word.isascii() and word.isalpha() and not _names(lowered, word)):
            continue
        if code in known:
            named.append((start, code))
        lowered = lowered.replace(word, " " * len(word))
    return min(named)[1] if named else None


# Languages as people name them, for an enum of ISO 639-1 codes ("en", "zh-CN").
_LANGUAGE_WORDS = languages.WORDS


def _language(lowered: str, codes: dict[str, Any]) -> Any:
    """The option coding the language the query names ("in spanish" for ``es``, 英文 for
    ``en``, "chinese" for ``zh-CN``), the first named, if the enum has a code for it
    (``codes``: ``enums.language_codes``)."""
    if not codes:
        return None
    code = _first_named(lowered, _LANGUAGE_WORDS, codes)
    return codes[code] if code is not None else None


@functools.lru_cache(maxsize=256)
def _senses(query: str) -> frozenset[str]:
    """The stems of the English senses of the query's Chinese words (every sense of every
    word in it, ``gloss.every_sense``: 打车 "take a taxi", 酒店 "hotel"), read once per
    query (each candidate tool's enums ask again)."""
    return frozenset(stem(w) for w in re.findall(r"[a-z]+", every_sense(query).lower()))


@functools.lru_cache(maxsize=256)
def _compound_readings(query: str) -> frozenset[str]:
    """The stems of the readings of the query's Chinese words of two characters or more,
    proper names too (支付宝 "Alipay", which ``every_sense`` leaves out); a lone
    character's reading says too little ("高" is no option ``high``)."""
    words = dictionary()
    found: set[str] = set()
    for run in re.findall(r"[\u4e00-\u9fff]{2,}", query[:_MAX_READ]):
        for word in segment_words(run, words):
            if len(word) > 1 and word in words:
                found.update(stem(w) for w in _LATIN_WORD.findall(words[word].lower()))
    return frozenset(found)


_MAX_READ = 500


def _glossed_option(query: str, firsts: dict[str, list[Any]], around: str = "") -> Any:
    """The one enum option whose first word a Chinese word of the query means, read in
    its English sense (``gloss``): 年假 "annual leave" for ``annual``, 吃饭 "have a meal"
    for ``meals``, 生产 "produce" for ``production`` (a sense of 5 letters or more that
    begins the option). Of several, an option whose first word the other parameters'
    words hold is what the tool acts on, not what the request chooses: 封号 "ban an
    account" says no ``account_sharing`` beside 开挂's ``cheating``. Only once the
    dictionary is loaded (the router loads it off the event loop on the first Chinese
    request)."""
    if not has_han(query) or not gloss_ready():
        return None
    named = _options_meant(firsts, _senses(query))
    if len(named) > 1 and around:
        held = _word_stems(around)
        chosen = [o for o in named if stem(re.split(r"[_\-\s]+", str(o).lower())[0]) not in held]
        named = chosen if len(chosen) == 1 else named
    if not named:  # a proper name's reading, which every_sense leaves out: 支付宝 "Alipay"
        named = _options_meant(firsts, _compound_readings(query))
    if not named:  # a one-character word's reading: 交 "pay", 猫 "cat"; not 高 "high"
        lone = {stem(w) for w in _glossed_words(query.lower()) if len(w) >= 3}
        named = _options_meant(firsts, frozenset(lone - _DEGREE_WORDS))
    return named[0] if len(named) == 1 else None


# A lone character's reading that says how much of something, not which option: 很高 is
# "very high" of a temperature, no ``high`` priority.
_DEGREE_WORDS = frozenset(
    stem(w)
    for w in (
        "high", "low", "big", "small", "large", "good", "bad", "new", "old", "long", "short",
        "fast", "slow", "hot", "cold", "full", "empty", "much", "many", "few", "more", "less",
        "top", "next", "last", "first", "same", "all", "very", "most", "least", "medium",
        "urgent", "early", "late",
    )
)  # fmt: skip


def _options_meant(firsts: dict[str, list[Any]], senses: frozenset[str]) -> list[Any]:
    """The options (by their first word) one of ``senses`` means."""

    def means(first: str) -> bool:  # or a sense begins it: 生产 "produce" for production
        return stem(first) in senses or any(
            len(sense) >= 5 and first.startswith(sense) for sense in senses
        )

    def vouched(option: Any) -> bool:  # "all" alone is no option; 所有客户 names all_customers
        words = re.split(r"[_\-\s]+", str(option).lower())
        return words[0] not in _VAGUE_OPTIONS or any(means(w) for w in words[1:] if len(w) > 2)

    return [
        owners[0]
        for first, owners in firsts.items()
        if len(owners) == 1 and means(first) and vouched(owners[0])
    ]


# Words a Chinese word's many senses name by chance (一下 "all at once" is no ``all``).
_VAGUE_OPTIONS = frozenset({"all", "any", "both", "none", "other", "others", "each", "every"})


# An option that names every other one: written in the request, it is the choice.
_CHOOSES_ALL = frozenset({"both", "all"})
# "all" before another option, a few words on: "all my paid invoices", "all of the open ones".
_ALL_BEFORE = r"\b{}\s+(?:(?:of\s+)?(?:my|the|our|your|those|these)\s+)?(?:\w+\s+)?{}\b"


def _quantifies_another(lowered: str, word: str, options: Sequence[Any]) -> bool:
    """Whether ``word`` ("all") is said of things another option names right after it."""
    return any(
        _cached(_ALL_BEFORE.format(re.escape(word), re.escape(str(o).lower()))).search(lowered)
        for o in options
        if str(o).lower() != word and str(o).isascii()
    )


# Words people use for an option's word: "last month" for ``previous``, "this cycle"
# for ``current``, "lock my card" for ``freeze``, "charged twice" for ``duplicate``.
_OPTION_WORDS = {
    "previous": ("last", "prior"), "current": ("this",), "next": ("following", "upcoming"),
    # what is done to a card, an account or a key, and what happened to a thing or a charge
    "freeze": ("lock", "block"), "unfreeze": ("unlock", "unblock"),
    "duplicate": ("twice", "double", "doubled"),
    "damaged": ("broken", "smashed", "cracked", "shattered", "dented"),
    # fetched by the customer: "can we collect order PO-229981 this saturday"
    "pickup": ("collect", "collecting", "collection"),
    # a message by phone: "text me the new one", 短信
    "sms": ("text", "texted", "texting"),
    # who serves the tables: "4 more waiters", 服务员 ("waiter")
    "server": ("waiter", "waiters", "waitress", "waitresses", "waitstaff"),
}  # fmt: skip


def _every_word_option(lowered: str, options: Sequence[Any]) -> Any:
    """The one option of two words or more every word of which the query writes, in any
    order ("Streetlight … has been out" for ``streetlight_out``, not
    ``streetlight_flickering``)."""
    query_words = set(_LATIN_WORD.findall(lowered))
    found = [
        option
        for option in options
        if len(words := [w for w in re.split(r"[_\-\s]+", str(option).lower()) if w]) > 1
        and all(w in query_words for w in words)
    ]
    return found[0] if len(found) == 1 else None


def _partial_option(lowered: str, options: Sequence[Any]) -> Any:
    """The one option a later word of which, four letters or more and no other option's,
    the query writes ("repair" for ``fault_repair``), or begins with a word of five letters
    or more ("install" for ``new_installation``)."""
    owners: dict[str, list[Any]] = {}
    synonyms: set[str] = set()
    for option in options:
        words = re.split(r"[_\-\s]+", str(option).lower())
        for word in dict.fromkeys(words[1:]):
            if len(word) >= 4 and word.isalpha():
                owners.setdefault(word, []).append(option)
        for said in _OPTION_WORDS.get(words[0], ()):  # "last cycle" for previous_cycle
            owners.setdefault(said, []).append(option)
            synonyms.add(said)
    query_words = set(_LATIN_WORD.findall(lowered))
    if synonyms and has_han(lowered) and gloss_ready():  # 锁住 reads "lock", 解锁 "unlock"
        query_words |= synonyms & _glossed_words(lowered)
    named = {
        found[0]
        for word, found in owners.items()
        if len(found) == 1
        and any(w == word or (len(w) >= 5 and word.startswith(w)) for w in query_words)
    }
    return named.pop() if len(named) == 1 else None


# "prod", "auto"; not "pro" or "in", nor the letters of an identifier ("cand" of CAND-28000)
_SHORT_WORD = re.compile(r"(?<![a-z0-9_-])[a-z]{4,}(?![a-z0-9_]|-\d)")


def _shortened_option(lowered: str, firsts: dict[str, list[Any]]) -> Any:
    """The option whose first word a short word of the query begins ("prod" for
    ``production``, "stag" for ``staging``: at most 60% of it, so "product" is not
    ``production``), when it begins no other option's."""
    for word in dict.fromkeys(_SHORT_WORD.findall(lowered)):  # in the order written
        owners = [
            option
            for first, found in firsts.items()
            if first.startswith(word) and len(word) <= 0.6 * len(first)
            for option in found
        ]
        if len(owners) == 1:
            return owners[0]
    return None


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


# The two ends of a range of days, by their parameters' names, and a request for one day.
_ENDS = re.compile(r"(?:^|_)(?:end|to|until|last|finish)(?:_|$)|结束|截止", re.IGNORECASE)
_STARTS = re.compile(r"(?:^|_)(?:start|from|first|begin)(?:_|$)|开始|起始", re.IGNORECASE)
_ONE_DAY = re.compile(
    r"\b(?:one|1|single)[\s-]day\b|\bhalf[\s-](?:a\s)?day\b|一天|半天|1天|当天", re.IGNORECASE
)


def _single_day_end(
    query: str, name: str, spec: dict[str, Any], props: dict[str, Any], arguments: dict[str, Any]
) -> Any:
    """For the missing end date of a range whose start is filled, the start date again,
    when the request asks for one day ("just the one day", 请一天, half a day)."""
    if spec.get("format") != "date" or not _ENDS.search(name):
        return None
    start = next(
        (
            arguments[other]
            for other, other_spec in props.items()
            if other in arguments and _STARTS.search(other) and other_spec.get("format") == "date"
        ),
        None,
    )
    return start if start is not None and _ONE_DAY.search(query) else None


def _joined(edge: str, neighbour: str) -> bool:
    """Whether ``neighbour`` continues the word ``edge`` ends: both letters, digits or _, of
    one script ("1042-S表格" writes 1042-S: Chinese needs no space after Latin)."""
    return _word_char(edge) and _word_char(neighbour) and edge.isascii() == neighbour.isascii()


def _names(text: str, word: str) -> bool:
    """Whether ``text`` holds ``word`` as a whole word (no letter, digit or _ of its script
    around it), without compiling a pattern per enum option: a long enum costs its
    length, no more."""
    if not word:
        return False
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not _joined(word[0], before) and not _joined(word[-1], after):
            return True
        start = text.find(word, start + 1)
    return False


_CJK_WORD = r"[\u4e00-\u9fff]{1,8}"
_MAX_PAIRED_OPTIONS = 64


@functools.lru_cache(maxsize=4096)
def _paired_words(description: str, option: str) -> tuple[str, ...]:
    """Chinese words the description pairs with an enum option: "年假 annual",
    "annual（年假）", "annual=年假"; not a word a colon ends before the option
    ("交付方式：pdf …" labels the parameter, not the option).

    Read once per description and option: the two patterns are the option's own, and
    compiled per request they evicted other patterns from ``re``'s 512-entry cache in a
    catalogue of a thousand tools (``_cached``)."""
    if not option or len(description) > 2000:
        return ()
    name = re.escape(option)
    if has_han(option):  # only what its brackets hold: 收货（卸货入库）, not the words
        # that say more of it (纸质礼品卡需到店领取或邮寄)
        bracketed = re.findall(rf"{name}\s*[(（]\s*({_CJK_WORD})", description)
        return tuple(w for w in bracketed if len(w) >= 2)
    edge_l, edge_r = r"(?<![A-Za-z0-9_])", r"(?![A-Za-z0-9_])"
    before = re.findall(rf"({_CJK_WORD})\s*=?\s*{edge_l}{name}{edge_r}", description)
    after = re.findall(rf"{edge_l}{name}{edge_r}\s*[:：=(（]?\s*({_CJK_WORD})", description)
    return tuple(w for w in before + after if len(w) >= 2)


# Where a description's list of the options' glosses may begin and end.
_LIST_BREAK = re.compile(r"[()（）\[\]{};；:：。!?！？]|\.\s|\.$")
_LIST_SEPARATORS = ("/", "|", "、", ",", "，")


@functools.lru_cache(maxsize=1024)
def _listed_glosses(description: str, options: tuple[str, ...]) -> dict[str, str]:
    """Each option's gloss when the description lists them in the options' order in the
    other script: "(away / home / sleep / cinema / party)" for ["离家", "回家", "睡眠",
    "影院", "派对"], or "离家、回家" for ["away", "home"]. Empty when it lists none."""
    if len(options) < 2 or len(description) > 2000:
        return {}
    chinese = [has_han(o) for o in options]
    if any(chinese) != all(chinese):
        return {}
    for piece in _LIST_BREAK.split(description):
        for separator in _LIST_SEPARATORS:
            parts = [p.strip().lower() for p in piece.split(separator)]
            if len(parts) != len(options) or not all(parts):
                continue
            if all(
                len(part.split()) <= 3 and has_han(part) != chinese[0] and part != option.lower()
                for part, option in zip(parts, options, strict=True)
            ):
                return dict(zip(options, parts, strict=True))
    return {}


def _listed_gloss_option(lowered: str, options: Sequence[Any], description: str) -> Any:
    """The option whose gloss in the description's list (``_listed_glosses``) the request
    writes first."""
    if not description:
        return None
    texts = tuple(str(o) for o in options)
    glosses = _listed_glosses(description, texts)
    written = [
        (at, option)
        for option, text in zip(options, texts, strict=True)
        if text in glosses and (at := _gloss_at(lowered, glosses[text])) >= 0
    ]
    return min(written, key=lambda pair: pair[0])[1] if written else None


def _gloss_at(lowered: str, gloss_text: str) -> int:
    """Where ``lowered`` writes ``gloss_text``, as whole words (or as Chinese); -1 if not."""
    if has_han(gloss_text):
        return lowered.find(gloss_text)
    found = _cached(rf"(?<![a-z]){re.escape(gloss_text)}(?![a-z])").search(lowered)
    return found.start() if found else -1


_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]{2,}")  # gloss.has_han's, two or more


@functools.lru_cache(maxsize=1024)  # options' words, and the request, are read again and again
def _bigrams(text: str) -> frozenset[str]:
    """The pairs of Chinese characters ``text`` writes side by side."""
    return frozenset(run[i : i + 2] for run in _HAN_RUN.findall(text) for i in range(len(run) - 1))


def _sharing_pairs(query: str, paired: dict[Any, tuple[str, ...]]) -> Any:
    """The one option whose paired Chinese words share the most character pairs with the
    query that no other option's words have: "本人到教务处领取" for "我自己去教务处拿",
    "糖化血红蛋白" for "糖化", "时间冲突" for "时间撞了"."""
    if not has_han(query):
        return None
    pairs = {o: set().union(*map(_bigrams, words)) for o, words in paired.items() if words}
    owners = Counter(pair for own in pairs.values() for pair in own)
    asked = _bigrams(query)
    scores = [
        (sum(owners[pair] == 1 for pair in own & asked), option) for option, own in pairs.items()
    ]
    scores.sort(key=lambda s: -s[0])
    if not scores or scores[0][0] == 0 or (len(scores) > 1 and scores[1][0] == scores[0][0]):
        return None
    return scores[0][1]


_JOINING = _TOKEN_CHARS - {".", "/", ":"}  # what continues an identifier around a match


def _whole(query: str, start: int, end: int) -> bool:
    """Whether ``query[start:end]`` is not a piece of a longer identifier ("INV" of
    "INV-2026-00042" is no currency code)."""
    before = query[start - 1] if start else " "
    after = query[end] if end < len(query) else " "
    return before not in _JOINING and after not in _JOINING


def _glued(query: str, start: int, end: int) -> bool:
    """Whether ``query[start:end]`` continues across a dot, colon or slash into more of a
    token ("v5" of "v5.0.0-rc1", "api" of "api.example.com")."""
    before = start >= 2 and query[start - 1] in ".:/" and query[start - 2].isalnum()
    after = end + 1 < len(query) and query[end] in ".:/" and query[end + 1].isalnum()
    return before or after


def _trimmed(query: str, match: Any, program: Any) -> tuple[int, int, str]:
    """A match without the blanks at its ends that a pattern allowing blanks inside
    (``^\\+?[0-9 ()-]{6,20}$``) took from around it (". 310 555 0187"), if the pattern
    still takes it so; else the match as it is."""
    start, end = match.start(), match.end()
    value = str(match.group(0))
    stripped = value.strip()
    if stripped and stripped != value:
        again = search(program, stripped)
        if again is not None and again.group(0) == stripped:
            start += len(value) - len(value.lstrip())
            return start, start + len(stripped), stripped
    return start, end, value


def _pattern_value(
    query: str, pattern: str, taken: Collection[object] = (), *, anchored: bool = False
) -> str | None:
    """The pattern's first match in the query not in ``taken`` (with ``anchored``, the
    schema's pattern is a whole value: a whole token); else a match ignoring case, in
    the case (upper or lower) the pattern accepts: people type "sku2025018" for
    ``^SKU\\d{7}$``.

    A pattern loose enough to take plain words (``^[a-z][a-z0-9-]{1,62}$`` for a service)
    takes a token with a digit or a separator over them: in "scale payments-api to 6" the
    value is ``payments-api``, not "scale". A plain word is taken only when nothing else is,
    and a piece of a dotted token ("v5" of "v5.0.0") only before a plain word."""
    word: str | None = None
    piece: str | None = None
    grouped = _grouped_spans(query) if anchored else []
    try:
        program = compile_pattern(pattern)
        position = 0
        for _ in range(_MAX_MATCHES):  # each search costs the text's length (RE2's offsets)
            if position > len(query):
                break
            match = program.search(query, position)
            if match is None:
                break
            start, end, value = _trimmed(query, match, program)
            whole = not anchored or (
                _whole(query, start, end)
                and not any(a <= start < b for a, b in grouped)  # "6037" of a card's
            )
            if whole and value not in taken:
                if value.isalpha() or value.lower() in _HYPHENATED_WORDS:  # "follow-up"
                    word = word or value
                elif _glued(query, start, end):
                    piece = piece or value
                else:
                    return value
            position = max(match.end(), position + 1)
        if piece or word:
            return piece or word
        folded = _folded_matches(query, compile_pattern(f"(?i:{pattern})"), anchored)
    except (PatternError, UnicodeEncodeError):  # a lone surrogate: RE2 reads nothing
        return None
    for text in folded:
        if not any(c.isdigit() for c in text):
            return None  # only an identifier's case is corrected: "and" is no currency "AND"
        for value in (text.upper(), text.lower()):
            whole = search(program, value)
            if whole and whole.group(0) == value and value not in taken and text not in taken:
                return value
    return None


def _folded_matches(query: str, program: Any, anchored: bool) -> Iterator[str]:
    """The matches of a case-blind ``program`` in order (with ``anchored``, whole tokens:
    not "FQ8" of "3FQ8ZL"): a list's second id typed in lower case ("rx3390117
    rx3390125") is read after its first."""
    position = 0
    for _ in range(_MAX_MATCHES):
        if position > len(query):
            break
        match = program.search(query, position)
        if match is None:
            break
        if not anchored or _whole(query, match.start(), match.end()):
            yield str(match.group(0))
        position = max(match.end(), position + 1)


_ALTERNATIVES = re.compile(r"\((?:\?:)?([A-Za-z]{2,}(?:\|[A-Za-z]{2,})+)\)")
_LONE_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_JOINS = ("-", "_", " ", "", "/", ".")
# A word glued to digits, as an id's prefix is: "sc-5019", "eb1101".
_GLUED_DIGITS = re.compile(r"(?<![a-z0-9])[a-z]{1,8}[-_]?\d+")


def _assembled(query: str, pattern: str, taken: Collection[object] = ()) -> str | None:
    """A value the query writes in pieces, for a pattern that joins a year and one of its
    own words ("fall 2024" and 2024年秋季 for ``^\\d{4}-(spring|summer|fall)$``): the
    word the query names (in English, or in a Chinese word's sense) and its year, joined
    either way round as the pattern accepts. Only the pattern's words and the query's
    year are used: nothing is made up."""
    words = {w for group in _ALTERNATIVES.findall(pattern) for w in group.split("|")}
    years = _LONE_YEAR.findall(query)
    if not words or len(set(years)) != 1:
        return None
    lowered = query.lower()
    senses = every_sense(query) + " " + gloss(query) if has_han(query) and gloss_ready() else ""
    # (a word written only as an id's prefix is no season: "SC-5019 until 2026-12-09" of
    # ``^(EB|PB|SC)-[0-9]{4}$`` names no SC-2026)
    lone = _GLUED_DIGITS.sub(" ", lowered)
    written = [
        w for w in sorted(words) if _names(lone, w.lower()) or _names(senses.lower(), w.lower())
    ]
    if len(written) != 1:
        return None
    word, year = written[0], years[0]
    joined = (v for join in _JOINS for v in (f"{year}{join}{word}", f"{word}{join}{year}"))
    return _first_whole(joined, pattern, taken)


def _first_whole(values: Iterable[str], pattern: str, taken: Collection[object]) -> str | None:
    """The first of ``values`` the pattern takes whole that is not in ``taken``."""
    spec = {"pattern": pattern}
    return next((v for v in values if v not in taken and _fits_pattern(v, spec)), None)


# Letters and digits typed together in lower case ("tnt30118"), or apart ("TNT 30118",
# "au 8840271"). Together in capitals is a code written as its own system writes it
# (RMA60331 is a return's number, not an SKU RMA-60331).
_LETTERS_DIGITS = re.compile(
    r"(?<![A-Za-z0-9_-])(?:([a-z]{1,8})|([A-Z]{1,8})\s|([a-z]{2,8})\s)(\d{2,12})(?![A-Za-z0-9_-])"
)
_SEPARATORS = ("-", "_", "/", ".", " ", "")


def _separated(query: str, pattern: str, taken: Collection[object] = ()) -> str | None:
    """An identifier typed without the separator its pattern puts between its letters and
    its digits: "tnt30118" or "TNT 30118" for ``^[A-Z]{3}-[0-9]{5}$`` is TNT-30118; or
    with its digits in groups: "TC 1045 8820", "TC-0938-1156" for ``^TC\\d{8}$``."""
    for match in itertools.islice(_LETTERS_DIGITS.finditer(query), _MAX_MATCHES):
        letters, digits = match[1] or match[2] or match[3], match[4]
        if match[3] and match[3] in STOPWORDS:
            continue  # "on 2025" names no ON-2025
        forms = (
            f"{case}{join}{digits}"
            for join in _SEPARATORS
            for case in (letters.upper(), letters.lower())
        )
        found = _first_whole(forms, pattern, taken)
        if found is not None:
            return found
    if _loose({"pattern": pattern}):  # "^[a-z0-9][a-z0-9._-]{1,99}$" takes any word
        return None
    for match in itertools.islice(_LETTERS_GROUPS.finditer(query), _MAX_MATCHES):
        if match[1].lower() in STOPWORDS or _DATE_GROUPS.fullmatch(match[2]):
            continue  # "treatment was on 2025-05-19" names no ON20250519
        written = match.group(0)
        if _first_whole((written, written.upper(), written.lower()), pattern, ()) is not None:
            continue  # it fits as written: its own value, read as such elsewhere
        letters, digits = match[1], re.sub(r"[\s-]", "", match[2])
        if letters.upper() not in pattern.upper():
            continue  # only a code whose letters the pattern spells ("^TC\\d{8}$")
        forms = (
            f"{case}{join}{digits}"
            for join in ("", "-")
            for case in (letters.upper(), letters.lower())
        )
        found = _first_whole(forms, pattern, taken)
        if found is not None:
            return found
    return None


# Letters, then digits in two groups or more: "TC 1045 8820", "TC-0938-1156"; not a day.
_DATE_GROUPS = re.compile(r"\d{4}[\s-]\d{1,2}[\s-]\d{1,2}|\d{1,2}[\s-]\d{1,2}[\s-]\d{2,4}")
_LETTERS_GROUPS = re.compile(
    r"(?<![A-Za-z0-9_-])([A-Za-z]{1,8})[\s-]?(\d{2,8}(?:[\s-]\d{2,8}){1,3})(?![A-Za-z0-9_-])"
)


# A long number written in groups: "6037 9914 2280 5561", "6037-9914-7702-3316" (not a
# date's or a phone's short groups).
_DIGIT_GROUPS = re.compile(r"(?<![\d-])\d{3,6}(?:[ -]\d{3,6}){2,7}(?![\d-])")


def _grouped_spans(query: str) -> list[tuple[int, int]]:
    """Where the query writes a long number in groups (``_DIGIT_GROUPS``)."""
    return [
        m.span()
        for m in _DIGIT_GROUPS.finditer(query)
        if sum(c.isdigit() for c in m.group(0)) >= 12
    ]


def _grouped_digits(query: str, pattern: str, taken: Collection[object] = ()) -> str | None:
    """A card or account number written in groups, its spaces or dashes left out, when the
    pattern takes the digits alone (``^[0-9]{16}$``) and not as written."""
    try:
        program = compile_pattern(pattern)
    except PatternError:
        return None
    for match in _DIGIT_GROUPS.finditer(query):
        value = re.sub(r"[ -]", "", match.group(0))
        if len(value) < 12 or value in taken:
            continue
        found = search(program, value)
        if found is not None and found.group(0) == value:
            return value
    if not _LEADING_DIGIT.match(pattern):
        return None
    # a number the pattern begins with fixed digits of, in groups of any length: a library
    # card "2100 3344 55" (^21[0-9]{8}$), an ISBN "978-7-108-06148-5"
    for match in _LOOSE_GROUPS.finditer(query):
        value = re.sub(r"[ -]", "", match.group(0)).upper()
        if len(value) < _FEWEST_GROUPED or value in taken:
            continue
        found = search(program, value)
        if found is not None and found.group(0) == value:
            return value
    return None


# A pattern that begins with a fixed digit (^21[0-9]{8}$, ^(97[89])?…), and a number
# written in groups of any length, an ISBN's check letter X last.
_LEADING_DIGIT = re.compile(r"\^\(?\d")
_LOOSE_GROUPS = re.compile(r"(?<![\d+-])\d{1,6}(?:[ -]\d{1,6}){1,7}(?:[ -][Xx])?(?![\d-])")
_FEWEST_GROUPED = 8


def _digits_of(query: str, value: object) -> Iterator[int]:
    """Where the query's numbers stand that are an identifier's digits typed alone ("inv
    205230" gave ``INV-205230``), or an identifier of digits only (account 55102938): no
    amount is made of them."""
    if not isinstance(value, str):
        return
    if not value.isdigit() and value.lower() in query.lower():
        return  # written whole ("XMAS15: 15 percent off"): a 15 apart is a number of its own
    dated = _ISO_DATE_VALUE.match(value)
    if dated is not None:  # a date's day, only where the request writes it as one
        yield from _days_written(query, int(dated.group(1)))
        return
    digits = value if value.isdigit() else None
    if digits is None:
        found = re.search(r"(?<=[A-Za-z_/-])\d+$", value)
        digits = found.group(0) if found else None
    if digits is not None:
        yield from (n.start() for n in _numbers(query) if n.group(0) == digits)


# A date or a date-time as the calendar writes it: its day is no identifier's digits ("serves
# 12, pickup this saturday" is twelve servings on Saturday the 12th).
_ISO_DATE_VALUE = re.compile(r"\d{4}-\d{2}-(\d{2})(?:[T ][\d:.+-]*Z?)?$")
_DAY_MARK = re.compile(r"\s?(?:st|nd|rd|th|号|日)(?![A-Za-z])", re.IGNORECASE)


def _days_written(query: str, day: int) -> Iterator[int]:
    """Where the query writes the day of the month ``day`` as a date's: inside a date
    written with its month ("Dec 12", "12 June") or marked as a day ("the 12th", 12号)."""
    written = [(m.start(), m.end()) for m in itertools.islice(_WRITTEN_DATE.finditer(query), 8)]
    for number in itertools.islice(_numbers(query), _MAX_MATCHES):
        if (
            number.group(0).isdigit()
            and int(number.group(0)) == day
            and (
                any(start <= number.start() < end for start, end in written)
                or _DAY_MARK.match(query, number.end())
            )
        ):
            yield number.start()


def _numbers_worth(query: str, value: float) -> Iterator[int]:
    """Where the query writes a number that stands for ``value`` (among its first
    ``_MAX_MATCHES``: a request of thousands of numbers costs no more)."""
    numbers = itertools.islice(_numbers(query), _MAX_MATCHES)
    return (n.start() for n in numbers if _amount(query, n) == value)


# One token of letters and digits: a code ("10045-RED"), whose digits are no count.
_CODE = re.compile(r"(?=\S*[^\W\d_])(?=\S*\d)\S{2,64}")


def _numbers_within(query: str, text: str) -> Iterator[int]:
    """Where the query's numbers stand inside ``text`` (where the query writes it): the
    house number and postcode of an address are no count or weight ("22 Elm Street,
    Manchester M1 2AB" holds neither 22 parcels nor 2 kg), nor is a code's number
    ("SKU 10045-RED" holds no 10045 units)."""
    start = query.find(text)
    if start < 0:
        return
    end = start + len(text)
    yield from (n.start() for n in _NUMBER.finditer(query, start, end))


# A pattern that is a fixed prefix and a count of digits: ^DL-\d{5}$, ^SKU[0-9]{7}$.
# Or one of a few prefixes: ^(EB|PB|SC)-[0-9]{4}$.
_PREFIX_DIGITS = re.compile(
    r"\^?([A-Za-z]{1,8}|\((?:\?:)?[A-Za-z]{1,8}(?:\|[A-Za-z]{1,8}){1,7}\))([-_/]?)"
    r"(?:\\d|\[0-9\])\{(\d{1,2})\}\$?"
)


def _prefixes(shape: re.Match[str]) -> list[str]:
    """The prefix of a ``_PREFIX_DIGITS`` pattern, or each of its alternatives."""
    return shape[1].strip("()").removeprefix("?:").split("|")


_YEAR = re.compile(r"(?:19|20)\d\d")
# A number shorter than the identifier's digits is padded with zeros only when the word
# before it names the identifier, and never a single digit ("truck 7" may be a count).
_SHORTEST_PADDED = 2
# A number this long, the only one of its length, is the identifier without its prefix
# whatever word stands before it ("booking 72819304", "the number is 44190268" of
# ``^RSV\d{8}$``); not a day written as eight digits (20260412).
_LONG_ENOUGH = 6
_A_DAY_WRITTEN = re.compile(r"(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])")
# The word just before a number ("deal 40388", "inv #205230", "invoice no. 205230"), and
# the Chinese word just after one ("40921 这个商机").
_WORD_BEFORE = re.compile(
    r"([A-Za-z]{2,}|[\u4e00-\u9fff]{2,})\s*(?:(?:no\.?|number|id|#)\s*)?[:：#]?\s*$", re.IGNORECASE
)
_CJK_AFTER = re.compile(
    r"\s*(?:这个|那个|这|那|的|号)?\s*([\u4e00-\u9fff]{2,}|[\u4e00-\u9fff](?![\u4e00-\u9fff]))"
)


def _prefixed(query: str, name: str, spec: dict[str, Any], taken: Collection[object]) -> Any:
    """For a prefix-and-digits pattern, a number of that many digits with the prefix put
    back, when the word beside it names what it identifies: people type "deal 40388" for
    ``deal_id`` (``^DL-\\d{5}$``), "inv 205230", "40921 这个商机" (商机编号); or, with six
    digits or more, the one number of that length whatever stands beside it ("my
    confirmation is 30551872"). Not a year for four digits, not a day written as eight
    (20260412), and not when two such numbers are named."""
    shape = _PREFIX_DIGITS.fullmatch(str(spec["pattern"]))
    if shape is None:
        return None
    prefixes, separator, count = _prefixes(shape), shape[2], int(shape[3])
    # "anm005412", "ANM 005412" for ``^ANM-[0-9]{6}$``: the first typed so that no other
    # parameter holds, as the first match of a pattern is
    held = {str(t) for t in taken}
    joined = [v for v in _prefix_typed(query, shape) if v not in held]
    if joined:
        return joined[0]
    if len(prefixes) > 1:
        return None  # a bare number could take any of them
    prefix = prefixes[0]
    named = {w for w in _mentions(name, spec) if w not in _ID_NAMES} | {prefix.lower()}
    description = str(spec.get("description") or "")
    # "truck 815" of ``^TRK-\d{4}$`` is TRK-0815 when the description writes a number
    # padded so ("e.g. TRK-0412", "format TRK-0000"); "deal 4092" of DL-40388 is no DL-04092
    padded = _cached(rf"(?<![A-Za-z]){re.escape(prefix + separator)}0", re.I).search(description)
    found, bare = set(), set()
    for number in _numbers(query):
        digits = number.group(0)
        if not digits.isdigit() or len(digits) > count:
            continue
        if len(digits) < count:
            if (
                padded
                and len(digits) >= _SHORTEST_PADDED
                and _named_before(query, number, named, prefix)
            ):
                found.add(digits.zfill(count))
            continue
        if count == 4 and _YEAR.fullmatch(digits):
            continue
        if count >= _LONG_ENOUGH and not _A_DAY_WRITTEN.fullmatch(digits):
            bare.add(digits)
        after = _CJK_AFTER.match(query, number.end())
        if _named_before(query, number, named, prefix) or (
            after is not None and after.group(1)[:2] in description
        ):
            found.add(digits)
    if not found and len(bare) == 1:
        found = bare  # the one number of its length: "my confirmation is 30551872"
    if len(found) != 1:
        return None
    value = f"{prefix}{separator}{found.pop()}"
    return value if value not in taken else None


def _prefix_typed(query: str, shape: re.Match[str]) -> list[str]:
    """The values of a prefix-and-digits pattern (``_PREFIX_DIGITS``) typed with the
    prefix in any case and any separator ("rx 4471023", "anm005412"), put in the
    pattern's form, in the order written. None for a prefix in mixed case: only a case
    that is all one is typed so."""
    separator, count = shape[2], int(shape[3])
    prefixes = {p.lower(): p for p in _prefixes(shape) if p.isupper() or p.islower()}
    if not prefixes:
        return []
    either = "|".join(map(re.escape, prefixes))
    glued = _cached(
        rf"(?<![A-Za-z0-9])({either})[-_ ]?(\d{{{count}}})(?![A-Za-z0-9])", re.IGNORECASE
    )
    typed = (f"{prefixes[m[1].lower()]}{separator}{m[2]}" for m in glued.finditer(query))
    return list(dict.fromkeys(typed))


def _bare_listed(query: str, shape: re.Match[str]) -> list[str]:
    """For a list of a prefix-and-digits pattern of one prefix and six digits or more:
    the numbers of exactly that many digits the request writes (not days written as
    eight digits), the prefix put back. Shorter numbers are counts and prices as often."""
    prefixes, separator, count = _prefixes(shape), shape[2], int(shape[3])
    if len(prefixes) != 1 or count < _LONG_ENOUGH:
        return []
    numbers = (n.group(0) for n in itertools.islice(_numbers(query), _MAX_MATCHES))
    bare = (d for d in numbers if len(d) == count and d.isdigit())
    listed = (d for d in bare if not _A_DAY_WRITTEN.fullmatch(d))
    return list(dict.fromkeys(f"{prefixes[0]}{separator}{d}" for d in listed))


def _named_before(
    query: str, number: re.Match[str], named: Collection[str], prefix: str = ""
) -> bool:
    """Whether the word just before ``number`` names the parameter ("deal 40388", "store
    #77"): one of ``named`` begins it, or it begins one of them ("inv" of invoice), or
    it is a word the identifier's ``prefix`` abbreviates ("truck 2231" of TRK-,
    "driver 10456" of DR-)."""
    before = _WORD_BEFORE.search(query, max(0, number.start() - 24), number.start())
    word = before.group(1).lower() if before else ""
    if not word:
        return False
    return any(n.startswith(word) or word.startswith(n) for n in named) or _abbreviates(
        prefix.lower(), word
    )


def _abbreviates(prefix: str, word: str) -> bool:
    """Whether ``prefix`` (two letters or more) is ``word``'s first letter and then others
    of it in order: TRK of truck, DR of driver, MA of maintenance, INV of invoice."""
    if len(prefix) < 2 or not prefix.isalpha() or len(word) <= len(prefix) or word[0] != prefix[0]:
        return False
    rest = iter(word[1:])
    return all(letter in rest for letter in prefix[1:])


# A number of a fixed count of digits, and a description that says shorter ones are padded
# with zeros ("4-digit store number, zero-padded (store 77 is 0077)").
_FIXED_DIGITS = re.compile(r"\^(?:\\d|\[0-9\])\{(\d{1,2})\}\$")
_ZERO_PADDED = re.compile(r"zero[- ]?padded|padded with zeros?|leading zeros?|补零|前导零", re.I)


def _padded(query: str, name: str, spec: dict[str, Any], taken: Collection[object]) -> Any:
    """For a fixed count of digits that the description says is zero-padded, a shorter
    number the word before it names as this parameter's ("store 77", "store #412" for
    ``store_id``), padded: 0077, 0412. None for two such numbers."""
    shape = _FIXED_DIGITS.fullmatch(str(spec["pattern"]))
    if shape is None or not _ZERO_PADDED.search(str(spec.get("description") or "")):
        return None
    width = int(shape[1])
    named = {w for w in _mentions(name, spec) if w not in _ID_NAMES}
    found = set()
    for number in _numbers(query):
        digits = number.group(0)
        if not digits.isdigit() or len(digits) >= width:
            continue
        if _named_before(query, number, named):
            found.add(digits.zfill(width))
    if len(found) != 1:
        return None
    value = found.pop()
    return value if value not in taken else None


def _duration(
    query: str, name: str, spec: dict[str, Any], kind: str, used: set[int]
) -> int | float | None:
    """The length of time the query names, in the unit the parameter counts ("days"):
    "the past two weeks" is 14 days, "2 hours" 120 minutes."""
    unit = temporal.unit_of(name, spec)
    found = temporal.duration(query, unit) if unit else None
    if found is None:
        return _clock_span(query, unit, spec, kind) if unit in _CLOCK_UNITS else None
    offset = 0
    for _ in range(_LENGTHS_READ):  # the first the parameter can take: no "30yr" of 90 days
        amount, start, end = found[0], found[1] + offset, found[2] + offset
        value: int | float = round(amount) if kind == "integer" else amount
        options = spec.get("enum")
        if (
            not (kind == "integer" and value < 1 and amount > 0)
            and _within(float(value), spec)
            and (not isinstance(options, list) or value in options)
        ):
            used.update(n.start() for n in _NUMBER.finditer(query) if start <= n.start() < end)
            return value
        offset = end
        found = temporal.duration(query[offset:], unit) if unit else None
        if found is None:
            return None
    return None


_LENGTHS_READ = 3  # lengths of time a request is read for, in order


# Units a stretch between two times of day is counted in.
_CLOCK_UNITS = {"minute": 1, "hour": 60}


def _clock_span(query: str, unit: str, spec: dict[str, Any], kind: str) -> int | float | None:
    """The length between the two times of day a request names ("from 6pm to 9pm" is 180
    minutes, "10:30-12:00" 1.5 hours), in ``unit``; None without such a range."""
    times = _times_of_day(temporal.resolve(query, datetime.now(UTC).date()))
    if times is None or times[1] is None or times[1] <= times[0]:
        return None
    amount = (times[1] - times[0]) / _CLOCK_UNITS[unit]
    value: int | float = round(amount) if kind == "integer" else amount
    if kind == "integer" and value != amount:
        return None  # 90 minutes is no whole number of hours
    return value if _within(float(value), spec) else None


_CJK_DATE = frozenset("年月日号点點")  # a number before one is part of a date or a clock
_CALENDAR_NAME = re.compile(r"year|month|day|date|hour|time|clock", re.IGNORECASE)


# A count written after a multiplication sign: "x50", "×3" (not "x5d", "thinkpad_x1").
_TIMES_COUNT = re.compile(r"(?<![A-Za-z0-9_])[x×]\s?(\d{1,6})(?![\d.,A-Za-z_])")
# A Chinese discount: 九折 pays 90%, 八五折 (85折, 8.5折) 85%.
_CN_DISCOUNT = re.compile(
    r"(?<![\d.零一二两三四五六七八九十])([一二三四五六七八九]{1,2}|[1-9](?:\.?5)?)\s?折"
)
_DISCOUNT_WORDS = re.compile(r"percent|discount|\boff\b|折扣|优惠", re.IGNORECASE)


def _discount_off(query: str, name: str, spec: dict[str, Any], used: set[int]) -> int | None:
    """The percentage off a Chinese discount gives (九折: 10; 八五折: 15), for a number
    the parameter's name or description says is a percentage or a discount."""
    if not _DISCOUNT_WORDS.search(f"{name} {spec.get('description') or ''}"):
        return None
    for match in _CN_DISCOUNT.finditer(query):
        written = match.group(1).replace(".", "")
        digits = "".join(str(temporal.cn_number(c)) if not c.isdigit() else c for c in written)
        paid = int(digits) * (10 if len(digits) == 1 else 1)
        if match.start() not in used and 0 < paid < 100 and _within(100 - paid, spec):
            used.add(match.start())
            return 100 - paid
    return None


# A unit of measure written after a number, and the words of a parameter that may take
# such a number: "10mg" is a dose, never a count of days.
_UNIT_AFTER = re.compile(
    r"\s?(mg|mcg|µg|ug|ml|kg|g|gsm|lbs?|oz|km|cm|mm|m3|m³|m|mi|miles?|kilomet(?:re|er)s?|met(?:re|er)s?"
    r"|%|％|degrees?|°|℃|公斤|千克|克|毫升"
    r"|毫克|公里|米|摄氏度|度|kwh|kw|yo|y/o|years?[- ]old|岁)(?![A-Za-z0-9²³])",
    re.IGNORECASE,
)
# One name for each unit however written, to tell a parameter's unit from another's.
_SAME_UNIT = {
    "mcg": "µg", "ug": "µg", "lb": "lbs", "公斤": "kg", "千克": "kg", "克": "g",
    "毫升": "ml", "毫克": "mg", "公里": "km", "米": "m", "％": "%", "℃": "°", "度": "°",
    "摄氏度": "°", "degree": "°", "degrees": "°", "m³": "m3", "y/o": "yo", "year old": "yo",
    "years old": "yo", "year-old": "yo", "years-old": "yo", "岁": "yo", "mile": "mi",
    "miles": "mi", "kilometre": "km", "kilometres": "km", "kilometer": "km",
    "kilometers": "km", "metre": "m", "metres": "m", "meter": "m", "meters": "m",
}  # fmt: skip
# A parameter's own unit, as its name or description writes it ("radius_km", "(公里)").
_UNIT_WORD = re.compile(
    r"(?<![A-Za-z])(mg|mcg|µg|ml|kg|gsm|lbs?|oz|km|cm|mm|mi|kwh|kw|m3|m³)(?![A-Za-z0-9])"
    r"|(公斤|千克|毫升|毫克|公里)"
    r"|(?<![A-Za-z])(percent(?:age)?)(?![A-Za-z])|([%％]|百分比)"
    r"|(?<![A-Za-z])(age)(?![A-Za-z])|(年龄|岁)",
    re.IGNORECASE,
)
_MEASURE_WORDS = re.compile(
    r"dos|strength|amount|quantity|volume|weight|mass|kg|gram|lb|pound|distance|length|"
    r"height|width|depth|size|radius|percent|rate|discount|temp|celsius|fahrenheit|degree|°"
    r"|brightness|level|reading|kwh|剂量|重量|体积|距离|长度|比例|折扣|温度|亮度|读数",
    re.IGNORECASE,
)


def _measures_another(query: str, end: int, name: str, spec: dict[str, Any]) -> bool:
    """Whether the number ending at ``end`` carries a unit of measure ("10mg", "18.5 kg")
    that the parameter's name and description say nothing of."""
    unit = _UNIT_AFTER.match(query, end)
    if unit is None:
        return False
    about = f"{' '.join(_name_parts(name))} {spec.get('description') or ''}"
    written = unit.group(1).lower()
    written = _SAME_UNIT.get(written, written)
    own = {_SAME_UNIT.get(w.lower(), w.lower()) for w in _unit_words(about)}
    if own:  # "4mg" is no ``radius_km``; "84 yo" no store's number
        electricity = unit.group(1) == "度" and "kwh" in own  # 5620.7 度 of a meter in kWh
        return written not in own and not electricity
    if written in ("yo", "gsm"):  # an age, a paper's weight: no amount of anything else
        return True
    return not (_MEASURE_WORDS.search(about) or unit.group(1).lower() in about.lower())


# The last digits of a card or an account, as people give them: "the visa ending 4417",
# "card ending in 0021", "last four 8812", 尾号 6621. No sum, count or code of anything else.
_LAST_DIGITS = re.compile(
    r"(?:\bending(?:\s+in)?|\bends\s+(?:in|with)|\blast\s+(?:four|4)(?:\s+digits)?(?:\s+(?:are|is))?"
    r"|尾号(?:是|为)?)[\s:：#]*(\d{4})(?!\d)",
    re.IGNORECASE,
)
_LAST_DIGITS_NAME = re.compile(r"last_?4|last_?four|lastfour|last4|suffix|尾号|ending", re.I)


def _measured_otherwise(query: str, name: str, spec: dict[str, Any]) -> set[int]:
    """Where the numbers start whose unit says they measure what the parameter does not
    (``_measures_another``), for a parameter that names its own unit."""
    if not _unit_words(f"{' '.join(_name_parts(name))} {spec.get('description') or ''}"):
        return set()
    return {
        n.start()
        for n in itertools.islice(_numbers(query), _MAX_MATCHES)
        if _measures_another(query, n.end(), name, spec)
    }


def _unit_words(text: str) -> list[str]:
    """The units ``text`` names (``_UNIT_WORD``): an age's as "yo"."""
    found = []
    for match in _UNIT_WORD.finditer(text):
        word = next(g for g in match.groups() if g)
        lowered = word.lower()
        if lowered in ("age", "年龄"):
            found.append("yo")
        elif lowered.startswith("percent") or lowered == "百分比":
            found.append("%")
        else:
            found.append(word)
    return found


_FACTOR_NAME = re.compile(r"multiplier|factor(?!y)|倍数|倍率", re.IGNORECASE)
# A factor as written: "1.5x", "x2", "×3", 三倍, "triple", "double".
_FACTOR = re.compile(
    r"(?<![\w.])(\d{1,3}(?:\.\d{1,2})?)\s?[x×倍](?![A-Za-z0-9])|(?<![A-Za-z0-9])[x×]\s?(\d{1,3}(?:\.\d{1,2})?)\b"
    r"|\b(double|triple|quadruple|twice|thrice)\b|([两二三四五六七八九十])倍",
    re.IGNORECASE,
)
_FACTOR_WORDS = {"double": 2, "twice": 2, "triple": 3, "thrice": 3, "quadruple": 4}


def _factor(query: str, spec: dict[str, Any], kind: str, used: set[int]) -> int | float | None:
    """A boost or scale factor the request writes as one ("1.5x drop rates", "triple xp",
    三倍经验), else the number the parameter's name introduces ("multiplier 2")."""
    for match in _FACTOR.finditer(query):
        digits = match[1] or match[2]
        if digits:
            value: float = float(digits)
        elif match[3]:
            value = float(_FACTOR_WORDS[match[3].lower()])
        else:
            value = float(temporal.cn_number(match[4]) or 0)
        if _within(value, spec):
            return _convert(value, kind)
    near = _number_near(query, ("multiplier", "factor", "倍"), used)
    if near is not None and _within(_amount(query, near), spec):
        used.add(near.start())
        return _convert(_amount(query, near), kind)
    return None


def _number(
    query: str, name: str, spec: dict[str, Any], kind: str, used: set[int]
) -> int | float | None:
    """A length of time in the parameter's unit (``_duration``), else the number next to
    a word naming the parameter, else the first one not yet used that the schema's bounds
    allow: an unnamed number out of range ("ticket 1116" for ``days`` up to 365) is
    about something else."""
    span = _duration(query, name, spec, kind, used)
    if span is not None:
        return span
    own_unit = measures.unit_of(name, spec)
    if own_unit is not None:  # "a 2 km fence" of ``radius_m``: 2000
        measured = measures.converted(query, own_unit, used)
        if measured is not None:  # 0.5 mi is 805 whole metres
            amount = float(round(measured[0])) if kind == "integer" else measured[0]
            value = _convert(amount, kind) if _within(amount, spec) else None
            if value is not None:
                used.add(measured[1])
                return value
    if _FACTOR_NAME.search(name):  # a factor is written as one, or named: no other number
        return _factor(query, spec, kind, used)
    off = _discount_off(query, name, spec, used)
    if off is not None:
        return off
    if _RATING_NAME.search(name):
        rating = _rating(query, spec)
        if rating is not None:  # "a 2/5", "five stars", 四星, "4.5 stars"
            return rating
        # "just show me 3 options" counts options: no rating
        numbers = itertools.islice(_numbers(query), _MAX_MATCHES)
        counted = {n.start() for n in numbers if _counts_things(query, n.end())}
    else:
        counted = set()
    if name.lower() in _ANY_COUNT_NAMES:  # "SKU2024555 x50": fifty of it
        times = _TIMES_COUNT.search(query)
        if times is not None and times.start(1) not in used and _within(int(times[1]), spec):
            used.add(times.start(1))
            return int(times[1])
    # a number its unit gives to another measure: "stop at 30 kWh" is no ``stopAtPercent``
    skip = used | counted | _measured_otherwise(query, name, spec)
    if not _LAST_DIGITS_NAME.search(name):  # "the visa ending 4417" holds no sum or count
        skip = skip | {m.start(1) for m in _LAST_DIGITS.finditer(query)}
    # nor does a group of a card's number ("0045" of "6280 0045 1122 9087")
    skip = skip | {
        m.start() + at.start()
        for m in _CARD_GROUPS.finditer(query)
        for at in re.finditer(r"\d+", m.group(0))
    }
    unit = temporal.unit_of(name, spec)
    length = temporal.duration(query, unit) if unit is not None else None
    if length is not None:  # a length it could not take ("提前3天" of ``interval_months``)
        skip = skip | {n.start() for n in _NUMBER.finditer(query, length[1], length[2])}
    # "5月20日 19:00，8人": 5 and 20 are no party size; 12月10号 no count of 12 months
    if not _CALENDAR_NAME.search(name) or temporal.unit_of(name, spec) is not None:
        skip = skip | {
            n.start()
            for n in _numbers(query)
            if query[n.end() : n.end() + 2].lstrip()[:1] in _CJK_DATE  # "7 月" too
        }
    number = _numbered_thing(query, spec, used) or _number_near(query, _mentions(name, spec), skip)
    words = set(_name_parts(name))  # ``newAmount`` too: new, amount
    # a payment's day ("payment_day") is a day of the month, no sum
    money = _MONEY_NAMES.intersection(words) if not words & _WHEN_WORDS else set()
    # A price's bound ("max_price") takes a sum the request writes as one ("under 30
    # euros", "预算300以内"), not the first number ("tickets for 4", "the 2027 tour").
    bound = bool(_PRICE_NAMES & words) and bool(_BOUND_WORDS & words or "budget" in words)
    timed = temporal.unit_of(name, spec) is not None  # "$10" is no number of minutes
    # a count of people or of things sent: no "6 hours" ("an extra chef … about 6 hours")
    people = not timed and (
        _counts_people(name, spec) or bool(_HEADCOUNT_STEMS & {stem(w) for w in words})
    )
    dated = not _CALENDAR_NAME.search(name)  # "on the 15th" is a day, no sum or length
    if number is None and people:  # "me and 2 mates": three go, not two
        together = _ME_AND.search(query)
        if together is not None and (together[1] or "").isdigit():
            counted_with_me = _people_with_me(
                query, adults=bool({"adult", "adults"} & words), besides=_besides_me(spec)
            )
            if counted_with_me is not None and _within(float(counted_with_me), spec):
                used.add(together.start(1))
                return counted_with_me if kind in ("integer", "number") else None
    if number is None:
        # a sum takes a number written as money over one that is not: "form 4868 … I'll
        # owe around $3,000" holds 3000
        number = _priced_sum(query, spec, skip) if money else None
    if number is None:
        number = next(
            (
                n
                for n in _numbers(query)
                if n.start() not in skip
                and _within(_amount(query, n), spec)
                and not (timed and _priced(query, n))
                and not (timed and _counts_other_things(query, n.end()))  # "3 city bikes"
                and not (people and _A_LENGTH_OF_TIME.match(query, n.end()))  # "6 hours"
                and not (money and _counts_things(query, n.end()))
                and not (money and _STARRED.match(query, n.end()))  # "a 4 star review"
                and not (money and _PERCENT_AFTER.match(query, n.end()))
                and not (dated and _A_DAY_OF_MONTH.match(query, n.end()))  # "by the 20th"
                and not (bound and not _priced(query, n))
                and not _measures_another(query, n.end(), name, spec)
            ),
            None,
        )
    if number is None:
        if bound:  # "两张票" counts tickets, no price's bound; 两百块以内 is one
            written_bound = _chinese_sum(query, spec, used, money_only=True)
            return None if written_bound is None else _convert(float(written_bound), kind)
        if _SUM_NAMES & words:  # 年薪三十八万, 五百块, "twelve hundred and fifty dollars"
            written_sum = _chinese_sum(query, spec, used) or _english_sum(query, spec, used)
            if written_sum is not None:
                return _convert(float(written_sum), kind)
        if money:  # 用一张新的信用卡付: a card counted, no sum
            return _english_count(query, name, spec) or _measure_in_words(query, name, spec, used)
        return (
            _chinese_count(
                query,
                spec,
                kind,
                used,
                _DAY_NAME.search(name) is not None,
                people=people,
                # nights are no people either: 三个大人 is no ``minNights``
                timed=timed or "night" in name.lower(),
                # nor is a length it could not take one of its units: 每六个月 of ``lead_days``
                outside=(length[1], length[2]) if length is not None else None,
            )
            or _english_count(query, name, spec)
            or _measure_in_words(query, name, spec, used)
        )
    value = _convert(_amount(query, number), kind)
    if value is not None:
        used.add(number.start())
    return value


_WHEN_WORDS = frozenset(("day", "date", "month", "year", "hour", "time", "week"))
# A number written as a day of the month ("the 15th", "the 5th of each month"), not as a
# place in a row ("the 5th floor"): no sum, count or length.
_A_DAY_OF_MONTH = re.compile(r"(?:st|nd|rd|th)\b(?!\s+(?!of\b)[a-z])", re.IGNORECASE)


# A thing numbered in Chinese: 2号枪, 3号桌, 5号窗口.
_NUMBERED_THING = re.compile(r"(?<![\d.])(\d{1,3})\s?号\s?([\u4e00-\u9fff])")


def _numbered_thing(query: str, spec: dict[str, Any], used: set[int]) -> re.Match[str] | None:
    """The number of "N号X" when the parameter's description calls it X's number
    (2号枪 for "枪号（1-4）", 3号桌 for "桌号"); None otherwise."""
    description = str(spec.get("description") or "")
    if "号" not in description:
        return None
    for match in _NUMBERED_THING.finditer(query):
        if match.start(1) not in used and f"{match[2]}号" in description:
            return _NUMBER.match(query, match.start(1))
    return None


# Names of a sum of money, which no count of things is ("last 20 transactions", 20笔).
_SUM_NAMES = frozenset(
    ("amount", "price", "cost", "fee", "total", "budget", "salary", "pay", "wage")
)
# A sum in Chinese numerals: with a hundred, thousand or ten thousand in it, or a yuan after.
_CN_SUM = re.compile(
    r"(?<![零〇一二两三四五六七八九十百千万])([零〇一二两三四五六七八九十百千万]{1,8})\s?(块钱|块|元|人民币)?"
)


_CN_DIGIT = re.compile(r"[零〇一二两三四五六七八九十]")


def _chinese_sum(
    query: str, spec: dict[str, Any], used: set[int], *, money_only: bool = False
) -> int | None:
    """The first sum the request writes in Chinese numerals (三十八万, 五百块) that the
    schema's bounds allow; with ``money_only``, one written as money (五百块, 两百以内)."""
    for match in _CN_SUM.finditer(query):
        if not (match[2] or any(unit in match[1] for unit in "百千万")):
            continue
        if money_only and not (match[2] or _PRICED_AFTER.match(query, match.end())):
            continue
        if query.startswith("分之", match.end(1)) or not _CN_DIGIT.search(match[1]):
            continue  # 百分之二十 is a share, and 百 alone no sum
        value = temporal.cn_number(match[1])
        if match.start() in used or value is None or not _within(float(value), spec):
            continue
        used.add(match.start())
        return value
    return None


_RATING_NAME = re.compile(r"rating|score|stars", re.IGNORECASE)
# A rating out of its scale ("2/5", "4 out of 5"), or in stars ("five stars", 四星, 5分).
_OUT_OF = re.compile(r"(?<![\d/.])(\d{1,2})\s?(?:/|out\s+of)\s?(\d{1,3})(?![\d/])", re.IGNORECASE)
_STARS = re.compile(
    r"(?<![a-z\d.-])(\d{1,2}(?:\.\d)?|one|two|three|four|five|six|seven|eight|nine|ten)\s?-?\s?stars?\b"
    r"|([一二两三四五六七八九十\d]{1,2})\s?(?:星|颗星|分)(?![钟])",
    re.IGNORECASE,
)


def _rating(query: str, spec: dict[str, Any]) -> int | float | None:
    """A rating the request gives out of the scale the schema's maximum sets, or in
    stars ("4.5 stars" for a number); None unless the bounds and the type allow it."""
    for match in _OUT_OF.finditer(query):
        if spec.get("maximum") in (None, int(match[2])) and _within(float(match[1]), spec):
            return int(match[1])
    for match in _STARS.finditer(query):
        text = (match[1] or match[2]).lower()
        value: int | float | None
        if "." in text:
            value = float(text) if spec.get("type") == "number" else None
        elif text.isdigit():
            value = int(text)
        else:
            value = _COUNT_WORDS.get(text) or temporal.cn_number(text)
        if value is not None and _within(float(value), spec):
            return value
    return None


_DAY_NAME = re.compile(r"(?:^|_)day(?:$|_)|day_?of_?month", re.IGNORECASE)
_STARRED = re.compile(r"\s?-?\s?stars?\b|\s?颗?星", re.IGNORECASE)
_PERCENT_AFTER = re.compile(r"\s?(?:%|％|percent\b|per\s+cent\b)", re.IGNORECASE)
_MONEY_NAMES = frozenset(
    ("amount", "price", "cost", "fee", "fees", "total", "budget", "balance", "payment")
)
_PRICE_NAMES = frozenset(
    ("price", "cost", "fee", "fees", "budget", "fare", "rate", "usd", "eur", "gbp", "cny", "jpy")
)  # a bound in a currency ("min_impact_usd") is written as money, not "top 10"
_BOUND_WORDS = frozenset(("max", "min", "maximum", "minimum", "limit", "cap", "upto"))
# A number written as a sum of money, or as a bound on one: a currency or a bound before it
# ("under 30", "$30", "预算300", "不超过200"), a currency or 以内 after it ("30 euros", 300元).
_PRICED_BEFORE = re.compile(
    r"(?:\b(?:under|below|less\s+than|cheaper\s+than|at\s+most|up\s+to|no\s+more\s+than|max"
    r"|maximum|budget(?:\s+(?:of|is))?|within|over|above|more\s+than|at\s+least|min|minimum)"
    r"|预算|不超过|不高于|低于|少于|最多|高于|超过|至少)\s{0,3}(?:[$€£¥]|us\$)?\s{0,2}$",
    re.IGNORECASE,
)
_PRICED_AFTER = re.compile(
    r"\s{0,2}(?:[$€£¥元块镑]|欧元|美元|英镑|euros?\b|dollars?\b|pounds?\b|quid\b|bucks\b|以内|以下|之内|以上)",
    re.IGNORECASE,
)


def _priced_sum(query: str, spec: dict[str, Any], skip: Collection[int]) -> re.Match[str] | None:
    """The first number written as money ("$3,000", 300元) that no parameter took and
    the schema's bounds allow, among the request's first ``_MAX_MATCHES`` numbers."""
    for number in itertools.islice(_numbers(query), _MAX_MATCHES):
        if number.start() in skip or not _priced(query, number):
            continue
        if _within(_amount(query, number), spec) and not _counts_things(query, number.end()):
            return number
    return None


def _priced(query: str, number: re.Match[str]) -> bool:
    """Whether ``number`` is written as a sum of money or a bound on one."""
    start = number.start()
    before = query[max(0, start - 16) : start]
    if _PRICED_BEFORE.search(before) or re.search(r"[$€£¥]\s{0,2}$", before):
        return True
    if _PRICED_AFTER.match(query, number.end()):
        return True
    # a currency's code or name just after it ("50 CHF"), or just before it ("CHF 50")
    mentions = currencies.mentioned(query)
    return any(0 <= m.start - number.end() <= 2 or 0 < start - m.start <= 5 for m in mentions)


# A plural after a number says what it counts; a currency's name counts money.
_COUNTED = re.compile(
    r"\s{0,2}(?:([A-Za-z]{2,}s|people|children|men|women)\b|[笔条个件次张份单位名]|人(?!民币))"
)
# Words ending in s that count nothing ("pay 1500 towards my tuition").
_NOT_PLURALS = frozenset(
    (
        *("towards", "afterwards", "backwards", "forwards", "is", "was", "has", "does"),
        *("this", "thus", "plus", "minus", "less", "unless", "as", "us", "its", "his"),
        *("always", "perhaps", "across", "besides", "yes", "ours", "yours", "theirs"),
    )
)
_MONEY_PLURALS = frozenset(
    ("dollars", "bucks", "euros", "pounds", "yens", "cents", "pence", "rupees", "pesos", "francs")
)


# A length of time after a number: no count of people or things ("about 6 hours").
_A_LENGTH_OF_TIME = re.compile(
    r"\s{0,2}(?:(?:hours?|hrs?|h|minutes?|mins?|days?|nights?|weeks?)\b|小时|分钟)",
    re.IGNORECASE,
)
# What a number counts, a word apart at most ("3 city bikes", 两辆): no length of time.
_COUNTS_A_NOUN = re.compile(
    r"\s{0,2}(?:(people|persons?|child(?:ren)?|kids?|adults?|seniors?|infants?|guests?|teens?)\b"
    r"|(?:[A-Za-z]+\s+)?([A-Za-z]{3,}s)\b"
    r"|(辆|个|件|张|台|把|副|位|人|盒|箱|份))",
    re.IGNORECASE,
)
# (and what comes once a period, or is booked by the time it takes: "the next 24
# payments" of ``months_ahead``, "3 lessons", "2 nights")
_TIME_PLURALS = temporal.TIME_PLURALS | {
    *("nights", "weekdays", "weekends", "sessions", "lessons", "classes", "payments"),
    *("instalments", "installments", "repayments", "deliveries", "visits", "cycles"),
    *("bills", "statements", "shifts", "periods"),
}


def _counts_other_things(query: str, end: int) -> bool:
    """Whether the number ending at ``end`` counts things that are no length of time: a
    number of days is not the "3" of "3 city bikes"."""
    counted = _COUNTS_A_NOUN.match(query, end)
    if counted is None:
        return False
    if counted.group(1) is not None:  # "6 people"
        return True
    plural = counted.group(2)
    return plural is None or (
        plural.lower() not in _TIME_PLURALS and plural.lower() not in _NOT_PLURALS
    )


def _counts_things(query: str, end: int) -> bool:
    """Whether the number ending at ``end`` counts things ("20 transactions", "200 uses",
    20笔), not money ("20 dollars", 20元)."""
    counted = _COUNTED.match(query, end)
    if counted is None:
        return False
    plural = counted.group(1)
    if plural is None:
        return True
    if plural.lower() in _MONEY_PLURALS or plural.lower() in _NOT_PLURALS:
        return False
    # a currency's name that begins with such a word: "300 Swiss francs"
    return all(m.start != counted.start(1) for m in currencies.mentioned(query))


_COUNT_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "single": 1, "couple of": 2,
}  # fmt: skip
_COUNT_WORD = re.compile(
    rf"(?<![a-z-])({'|'.join(_COUNT_WORDS)})\s+(?:(?:more|extra|additional|new)\s+)?([a-z]+)",
    re.IGNORECASE,
)  # ("five more seats", "two extra nights")


def _english_count(query: str, name: str, spec: dict[str, Any]) -> int | None:
    """A count written in words before what the parameter counts: "one night" for
    ``nights``, "two adults" for ``adults`` (not "the one I booked"); for a count of
    anything (``quantity``), two or more of a thing ("two extra pillows"), never of a
    length of time ("two weeks")."""
    counted = {stem(w) for w in _name_parts(name) if len(w) > 2}
    if counted & _SEAT_STEMS:  # "four seats" for ``ticketCount``; each is someone's
        counted |= _SEAT_STEMS
    for match in _COUNT_WORD.finditer(query):
        value = _COUNT_WORDS[match.group(1).lower()]
        if stem(match.group(2).lower()) in counted and _within(float(value), spec):
            return value
    for match in _TENS_OF_THINGS.finditer(query):  # "forty litres" for ``litres``
        tens = english_number(re.split(r"[\s-]+", match.group(1).strip()))
        if tens is not None and stem(match.group(2).lower()) in counted and _within(tens, spec):
            return tens
    if counted & (_PEOPLE_STEMS | _SEAT_STEMS):  # "a table for two", "party of four"
        if not counted & _AGED_STEMS:  # "three people" for ``partySize``, not ``adults``
            for match in _COUNT_WORD.finditer(query):
                value = _COUNT_WORDS[match.group(1).lower()]
                if match.group(2).lower() in _ANYONE and _within(float(value), spec):
                    return value
        for match in _FOR_PEOPLE.finditer(query):
            value = _COUNT_WORDS[match.group(1).lower()]
            if _within(float(value), spec):
                return value
        for match in _OF_US.finditer(query):  # "two of us", "just the two of us"
            value = _COUNT_WORDS[match.group(1).lower()]
            if _within(float(value), spec) and not _besides_me(spec):
                return value
        together = _people_with_me(  # "solo", "me and my dad"
            query, adults=stem("adults") in counted, besides=_besides_me(spec)
        )
        if together is not None and _within(float(together), spec):
            return together
    if name.lower() not in _ANY_COUNT_NAMES and not counted & _HEADCOUNT_STEMS:
        return None
    one_more = _ONE_MORE.search(query)
    if one_more is not None and one_more.group(1).lower() not in _TIME_SINGULARS:
        return 1  # "an extra chef", "one more bartender": one of it
    if name.lower() not in _ANY_COUNT_NAMES:
        return None
    for match in _HUNDREDS_OF_THINGS.finditer(query):  # "two hundred tri-fold brochures"
        hundreds = english_number(re.split(r"[\s-]+", match.group(1).strip()))
        if match.group(2).lower() in temporal.TIME_PLURALS or hundreds is None:
            continue
        if _within(float(hundreds), spec):
            return hundreds
    for match in _COUNT_OF_THINGS.finditer(query):
        value = _COUNT_WORDS[match.group(1).lower()]
        things = match.group(2).lower()
        if value >= 2 and things not in temporal.TIME_PLURALS | {"times"} and _within(value, spec):
            return value
    for match in _COUNT_OF_CODE.finditer(query):  # "three of RW-40917", "two SKU2024001"
        value = _COUNT_WORDS[match.group(1).lower()]
        if value >= 2 and _within(value, spec):
            return value
    return None


# A count in words right before a code, or before "of" and the code: "three of RW-40917".
_COUNT_OF_CODE = re.compile(
    rf"(?<![a-z-])({'|'.join(_COUNT_WORDS)})\s+(?:of\s+(?:the\s+)?)?(?=[A-Za-z]{{1,6}}[-_]?\d)",
    re.IGNORECASE,
)


# A count in Chinese: a numeral and what it counts (五口, 两张, 三位).
_CJK_COUNT = re.compile(r"[一二两三四五六七八九十]\s?[个位口张人名只件份本台盒袋瓶间辆次]")
_COUNT_WORD_ALONE = re.compile(rf"(?<![a-z-])(?:{'|'.join(_COUNT_WORDS)})(?![a-z-])", re.I)


def states_a_number(query: str) -> bool:
    """Whether ``query`` writes a number that may count or measure something: digits that
    stand as a number (``_numbers``: no id's, date's or time's), a count in words ("four",
    "a couple of") or a Chinese count (五口, 两张). A default that stands in for an unread
    number would be a wrong one."""
    return (
        next(_numbers(query), None) is not None
        or _COUNT_WORD_ALONE.search(query) is not None
        or _CJK_COUNT.search(query) is not None
    )


# Names of a count of people, and the words that give one with no noun after it: "dinner
# for two", "a party of four" (not "for two nights", "for one of your drivers", "for two
# extra towels").
_PEOPLE_WORDS = "party guests people persons pax covers diners headcount adults travellers"
_PEOPLE_WORDS += " travelers passengers attendees participants players"
_PEOPLE_STEMS = frozenset(stem(w) for w in _PEOPLE_WORDS.split())
# Places taken by people, one each: a count of them is a count of people ("me and three
# mates" takes four tickets) and any one of the words counts them ("four seats").
_SEAT_STEMS = frozenset(stem(w) for w in ("tickets", "seats", "spots", "places"))
# People of any age, and counts kept by age (a count of adults is not "three people").
_ANYONE = frozenset(("people", "persons", "guests", "pax", "ppl", "folks", "visitors"))
_AGED_STEMS = frozenset(stem(w) for w in ("adults", "children", "kids", "seniors", "infants"))
_PEOPLE_DESCRIBED = re.compile(r"人数|几个人|多少人|几位")


def _counts_people(name: str, spec: dict[str, Any]) -> bool:
    """Whether a count parameter counts people (``party_size``, "参加试菜的人数")."""
    words = {stem(w) for w in _name_parts(name) if len(w) > 2}
    return bool(words & _PEOPLE_STEMS) or bool(
        _PEOPLE_DESCRIBED.search(str(spec.get("description") or ""))
    )


# A count of people that includes the one asking: "two of us", "there will be three of us".
_OF_US = re.compile(rf"(?<![a-z-])({'|'.join(_COUNT_WORDS)})\s+of\s+us\b", re.IGNORECASE)
# Who goes, counted from the one asking: "solo", "just me", "me and my dad", "me and 2
# mates", "my wife and I" (not "me and my kids": how many is not said).
_ALONE = re.compile(r"\b(?:solo|alone|by myself|on my own|just me|only me|just myself)\b", re.I)
_ME_AND = re.compile(
    r"(?<![a-z])me\s+(?:and|&|\+|plus)\s+(?:(?:my|a|an|one)\s+)?(?:(\d{1,2}|[a-z]+)\s+)?([a-z]+)\b"
    r"|(?<![a-z])(?:my|a)\s+([a-z]+)\s+and\s+(?:i|me)\b",
    re.IGNORECASE,
)


def _people_with_me(query: str, *, adults: bool = False, besides: bool = False) -> int | None:
    """How many go, the one asking included (not when the parameter counts those
    ``besides`` them: "guests besides the resident"), when the request counts from them
    (for a count of ``adults``, not when the others are children)."""
    me = 0 if besides else 1
    match = _ME_AND.search(query)
    if match is not None:
        count, noun = match.group(1, 2)
        noun = (noun or match.group(3)).lower()
        if adults and (noun in _CHILDREN or (count or "").lower() in _CHILDREN):
            return None
        if count is not None and noun.endswith("s"):
            number = int(count) if count.isdigit() else _COUNT_WORDS.get(count.lower())
            return None if number is None else number + me
        if count is None and not noun.endswith("s") and noun in _COMPANIONS:
            return 1 + me
        if count is not None and count.lower() in _COMPANIONS and noun in _NOT_PEOPLE_AFTER:
            return 1 + me  # "me and my dad sunday"
        return None
    return me if _ALONE.search(query) else None


# A count of others than the one asking: "Number of guests besides the resident", 同行人数.
_BESIDES = re.compile(
    r"\b(?:besides|excluding|other than|not (?:including|counting)|in addition to|apart from"
    r"|accompanying)\b|除.{0,8}外|不含|不包括",
    re.IGNORECASE,
)


def _besides_me(spec: dict[str, Any]) -> bool:
    return _BESIDES.search(str(spec.get("description") or "")[:200]) is not None


# Who one goes with, one of them: "me and my dad", "my wife and I".
_COMPANIONS = frozenset((
    "dad", "father", "mum", "mom", "mother", "wife", "husband", "partner", "son",
    "daughter", "kid", "child", "friend", "mate", "buddy", "pal", "brother", "sister",
    "colleague", "boyfriend", "girlfriend", "fiance", "fiancee", "boss", "cousin", "uncle",
    "aunt", "grandpa", "grandma", "grandmother", "grandfather", "nephew", "niece",
    "spouse", "roommate", "neighbour", "neighbor", "guest"
))  # fmt: skip
_CHILDREN = frozenset((
    "kid", "kids", "child", "children", "son", "sons", "daughter", "daughters", "baby",
    "toddler", "boy", "boys", "girl", "girls"
))  # fmt: skip
# Words after a companion that end the phrase ("me and my dad sunday", "me and my wife on").
_NOT_PEOPLE_AFTER = frozenset((
    "on", "at", "this", "next", "sunday", "monday", "tuesday", "wednesday", "thursday",
    "friday", "saturday", "tomorrow", "today", "tonight", "in", "for", "to", "please",
    "pls"
))  # fmt: skip


_FOR_PEOPLE = re.compile(
    rf"(?<![a-z-])(?:for|(?:party|table|group|team|family|crew|class)\s+of)\s+({'|'.join(_COUNT_WORDS)})\b"
    r"(?!\s*-?\s*(?!(?:people|persons|guests|adults|diners|of us)\b)"
    r"(?:[a-z]+s|night|day|week|month|year|hour|minute|time|of|more|extra)\b)",
    re.IGNORECASE,
)
# Names of a count of whatever the request is about.
_ANY_COUNT_NAMES = frozenset(("quantity", "qty", "count", "units", "pieces"))
# A count of people to send or add: ``headcount``, ``staff_count``.
_HEADCOUNT_STEMS = frozenset(stem(w) for w in ("headcount", "staff", "people", "persons"))
# One more of something: "an extra chef", "one more bartender", "another waiter".
_ONE_MORE = re.compile(
    r"\b(?:an?\s+(?:extra|additional)|one\s+(?:more|extra|additional)|another)\s+([a-z]{3,})\b",
    re.IGNORECASE,
)
_TIME_SINGULARS = frozenset(("day", "night", "week", "month", "year", "hour", "minute", "time"))
# A count of hundreds or thousands in words and the plural it counts, a word apart at
# most: "two hundred tri-fold brochures", "a thousand business cards".
_HUNDREDS_OF_THINGS = re.compile(
    r"(?<![a-z-])((?:(?:a|one|two|three|four|five|six|seven|eight|nine|ten|twelve|fifteen"
    r"|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|and)[\s-]+){0,4}"
    r"(?:hundred|thousand)(?:[\s-]+(?:and[\s-]+)?(?:one|two|three|four|five|six|seven|eight"
    r"|nine|ten|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred)){0,4})"
    r"\s+(?:[a-z-]+\s+)?([a-z]{3,}s)\b",
    re.IGNORECASE,
)
# A count and the plural it counts, a word apart at most ("two extra pillows").
# A count past twelve in words and what it counts: "forty litres", "twenty-five nights",
# "a hundred and fifty guests" (the number read back by ``english_number``).
_TENS_OF_THINGS = re.compile(
    r"(?<![a-z-])((?:(?:a|one|two|three|four|five|six|seven|eight|nine|and)[\s-]+){0,3}"
    r"(?:thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty"
    r"|fifty|sixty|seventy|eighty|ninety|hundred|thousand)"
    r"(?:[\s-]+(?:and[\s-]+)?(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven"
    r"|twelve|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)){0,3})"
    r"\s+(?:(?:more|extra|additional)\s+)?([a-z]+)",
    re.IGNORECASE,
)
_COUNT_OF_THINGS = re.compile(
    rf"(?<![a-z-])({'|'.join(_COUNT_WORDS)})\s+(?:[a-z]+\s+)?([a-z]{{3,}}s)\b", re.IGNORECASE
)


# A count written in Chinese numerals before its measure word: "三个人", "两位", "五件",
# "两千词", "一万字". Not a weekday's number (周五晚上, 星期三), nor 晚上 ("evening") as
# nights, nor 十字路口 ("crossroads") as ten characters.
_CN_COUNT = re.compile(
    r"(?<![零一二两三四五六七八九十百千万周拜])(?<!星期)"
    r"([零一二两三四五六七八九十][零一二两三四五六七八九十百千万]{0,5})\s?"
    r"(?:个|位|人|件|张|台|间|晚(?!上)|份|瓶|双|条|次|本|只|盒|箱|名|套|杯|桌|期|笔|辆|袋|节|堂|块|元"
    r"|页|词|字(?![路架])|单词"
    r"|口(?<=家[一二两三四五六七八九十]口))"  # a family's members: 一家五口
)
# A day of the month: 每个月二十五号, 改到八号.
_CN_DAY_OF_MONTH = re.compile(
    r"(?<![零一二两三四五六七八九十])([一二三四五六七八九十]{1,3})\s?[号日](?![楼线])"
)


def _chinese_count(
    query: str,
    spec: dict[str, Any],
    kind: str,
    used: set[int],
    day: bool = False,
    *,
    people: bool = False,
    timed: bool = False,
    outside: tuple[int, int] | None = None,
) -> int | None:
    """The first count the request writes in Chinese numerals that the schema's bounds
    allow, when it writes none in digits (the measure word keeps 五月 and 三点 out); for a
    ``day`` parameter, a day of the month (二十五号); for a ``timed`` one (``days``), no
    count of people (两位客人)."""
    if not has_han(query):
        return None
    found = list(itertools.islice((_CN_DAY_OF_MONTH if day else _CN_COUNT).finditer(query), 32))
    if outside is not None:
        found = [m for m in found if not outside[0] <= m.start() < outside[1]]
    if people:  # 一次品鉴，三个人: a count of people is the one 人 or 位 measures, if any is
        counted = [m for m in found if _CN_PEOPLE.match(query, m.end(1))]
        found = counted or found
    elif timed:  # nor how many times (4个月一次 is once)
        found = [m for m in found if not _CN_PEOPLE.match(query, m.end(1))]
        found = [m for m in found if not _CN_TIMES.match(query, m.end(1))]
    for match in found:
        value = temporal.cn_number(match.group(1))
        if match.start() in used or value is None or not _within(float(value), spec):
            continue
        used.add(match.start())
        return value if kind in ("integer", "number") else None
    return None


_CN_TIMES = re.compile(r"\s?(?:次|回|遍)")
_CN_PEOPLE = re.compile(
    r"\s?(?:个人|位|人|名|口"  # and who they are: 三个大人, 两个小孩, 四个同事
    r"|个?(?:大人|成人|小孩|孩子|儿童|老人|客人|朋友|同事|学生|乘客|游客|宾客|员工))"
)


_UNITS = [
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
    *("eighteen", "nineteen"),
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_UNIT_VALUES = {word: value for value, word in enumerate(_UNITS)}
_TEN_VALUES = {word: 10 * (value + 2) for value, word in enumerate(_TENS)}


# A sum of money in English words and its currency: "twelve hundred and fifty dollars",
# "a hundred bucks", "twenty-five euros", "nine hundred and eighty dollars fifty".
_SMALL_NUMBER_WORDS = {**_UNIT_VALUES, **_TEN_VALUES}
_NUMBER_WORDS = {**_SMALL_NUMBER_WORDS, "hundred": 100, "thousand": 1000}
# The currency word, and cents in words after it; the number is read back from it
# (``_english_sum``), a few words at most, so the reading is linear in the request.
_CURRENCY_IN_WORDS = re.compile(
    r"(?<![a-z-])(?:dollars?|bucks|euros?|pounds?|quid|yuan|rmb|hkd|usd|aud|cad|sgd)\b"
    rf"(?:\s+(?:and\s+)?(?P<cents>{'|'.join(sorted(_SMALL_NUMBER_WORDS, key=len, reverse=True))})"
    r"(?:[\s-]+(?P<cents_unit>one|two|three|four|five|six|seven|eight|nine))?(?:\s+cents?)?\b)?",
    re.IGNORECASE,
)
_WORDS_BEFORE = 120  # characters read back from a currency word for its number
# Whose dollars, between a sum in words and its currency word.
_DOLLARS_OF = re.compile(
    r"\s(?:us|u\.s\.|american|canadian|australian|aussie|singapore|hong\s+kong|hk"
    r"|new\s+zealand|nz)\s+$",
    re.IGNORECASE,
)
_WORD_OR_MARK = re.compile(r"[A-Za-z]+|[^A-Za-z\s-]")


def english_number(words: Sequence[str]) -> int | None:
    """The number English words write ("twelve hundred and fifty", "a hundred",
    "two thousand five hundred"), or None when they hold no number word."""
    total = current = 0
    counted = False
    for word in (w.lower() for w in words):
        if word == "and":
            continue
        if word == "a":
            current = max(current, 1)
            continue
        value = _NUMBER_WORDS.get(word)
        if value is None:
            return None
        counted = True
        if value == 100:
            current = max(current, 1) * 100
        elif value == 1000:
            total += max(current, 1) * 1000
            current = 0
        else:
            current += value
    return total + current if counted else None


def _english_sum(query: str, spec: dict[str, Any], used: set[int]) -> int | float | None:
    """The first sum of money the request writes in English words before a currency word
    ("twelve hundred and fifty dollars", "a hundred bucks", "nine hundred and eighty
    dollars fifty") that the schema's bounds allow."""
    for match in _CURRENCY_IN_WORDS.finditer(query):
        before = query[max(0, match.start() - _WORDS_BEFORE) : match.start()]
        before = _DOLLARS_OF.sub(" ", before)  # "two hundred and forty US dollars"
        if not before[-1:].isspace():
            continue
        words: list[str] = []
        for token in reversed(_WORD_OR_MARK.findall(before)):
            if token.lower() not in _NUMBER_WORDS and token.lower() not in ("a", "and"):
                break
            words.append(token)
        words.reverse()
        while len(words) > 1 and words[0].lower() in ("a", "and"):
            if words[0].lower() == "a" and words[1].lower() in ("hundred", "thousand"):
                break
            words = words[1:]  # "pay a twenty dollar bill" is not 1 + 20
        value: float | None = english_number(words)
        if value is None or match.start() in used:
            continue
        if match["cents"]:
            cents = _SMALL_NUMBER_WORDS[match["cents"].lower()]
            cents += _UNIT_VALUES.get((match["cents_unit"] or "zero").lower(), 0)
            value += cents / 100 if cents < 100 else 0
        if _within(float(value), spec):
            used.add(match.start())
            return value
    return None


# A number in English words and the measure after it: "twenty-two degrees", "fifty percent".
_MEASURE_IN_WORDS = re.compile(
    rf"(?<![a-z-])(?:(?P<tens>{'|'.join(_TENS)})(?:[\s-](?P<unit>{'|'.join(_UNITS[1:10])}))?"
    rf"|(?P<alone>{'|'.join(_UNITS)})|(?P<hundred>a|one)\s+hundred)"
    rf"(?:\s+point\s+(?P<tenths>{'|'.join(_UNITS[:10])}))?"
    r"(?:\s+and\s+a\s+half)?\s*(?:degrees?|°|percent|per\s+cent|%|kilos?|kilograms?|kgs?)"
    r"(?![a-z])",
    re.IGNORECASE,
)
# In Chinese: 二十二度, 百分之五十, 二十三摄氏度, 十八公斤.
_CN_MEASURE = re.compile(
    r"百分之([零一二两三四五六七八九十百]{1,4})|(?<![零一二两三四五六七八九十百])"
    r"([零一二两三四五六七八九十]{1,4})(?:(?:摄氏)?度(?!假)|公斤|千克)"
)


_TAKES_DEGREES = re.compile(
    r"temp|°|celsius|fahrenheit|degree|setpoint|weight|kg|kilo|温度|度数|体重|公斤", re.IGNORECASE
)
_TAKES_PERCENT = re.compile(r"percent|%|brightness|level|volume|百分|亮度|音量", re.IGNORECASE)


def _measure_in_words(
    query: str, name: str, spec: dict[str, Any], used: set[int]
) -> int | float | None:
    """A degree, a percentage or a weight written in words, when the request writes none
    in digits: "twenty-two degrees", "fifty percent", "twenty-two point five kilos",
    二十二度, 百分之五十, 十八公斤; for a parameter whose name or description takes such a
    measure, within its bounds."""
    about = f"{name} {str(spec.get('description') or '')[:200]}"
    if _TAKES_DEGREES.search(about) is None and _TAKES_PERCENT.search(about) is None:
        return None
    for match in _MEASURE_IN_WORDS.finditer(query):
        value: float
        if match["hundred"]:
            value = 100
        elif match["tens"]:
            value = _TEN_VALUES[match["tens"].lower()] + _UNIT_VALUES.get(
                (match["unit"] or "zero").lower(), 0
            )
        else:
            value = _UNIT_VALUES[match["alone"].lower()]
        if match["tenths"]:
            value += _UNIT_VALUES[match["tenths"].lower()] / 10
        if match.start() not in used and _within(float(value), spec):
            used.add(match.start())
            return _convert(float(value), str(spec.get("type")))
    if has_han(query):
        for chinese in _CN_MEASURE.finditer(query):
            written = temporal.cn_number(chinese[1] or chinese[2])
            if chinese.start() not in used and written is not None and _within(written, spec):
                used.add(chinese.start())
                return written
    return None


def _within(value: float, spec: dict[str, Any]) -> bool:
    """Whether ``value`` is inside the parameter's declared bounds (ignoring malformed ones);
    never an infinite one (a long enough run of digits reads as one)."""
    if isinstance(value, float) and not math.isfinite(value):
        return False

    def bound(key: str) -> float | None:
        b = spec.get(key)
        return float(b) if isinstance(b, int | float) and not isinstance(b, bool) else None

    low, high = bound("minimum"), bound("maximum")
    above, below = bound("exclusiveMinimum"), bound("exclusiveMaximum")
    return (
        (low is None or value >= low)
        and (high is None or value <= high)
        and (above is None or value > above)
        and (below is None or value < below)
    )


def _spelled(value: object) -> str:
    """``value`` lower-cased with underscores and dashes as spaces: "jade_garden"."""
    return re.sub(r"[\s_-]+", " ", str(value).lower()).strip()


# A parameter naming a medicine, and its name in a request: the word after its dose and
# "of" ("250 mg of amoxicillin"), else just before it ("on losartan 50mg", 阿莫西林 500mg).
_MEDICINE_NAME = re.compile(r"\b(?:drugs?|medications?|medicines?|meds?)\b|药品|药名|药物", re.I)
# (?<![\d.]): a dose's number is read from its first digit only (entered at each digit of a
# run of 4,000, the search cost the run's square: 1 s a /run)
_DOSE = r"(?<![\d.])\d+(?:\.\d+)?\s?(?:mg|mcg|µg|ug|g|ml|iu|units?)(?![A-Za-z])"
_BEFORE_DOSE = re.compile(
    rf"(?:(?<![\w-])([A-Za-z][A-Za-z-]{{3,40}})|(?<![\u4e00-\u9fff])([\u4e00-\u9fff]{{2,10}}))"
    rf"\s*{_DOSE}",
    re.IGNORECASE,
)
_DOSE_OF = re.compile(rf"{_DOSE}\s+of\s+([A-Za-z][A-Za-z-]{{3,40}})", re.IGNORECASE)
_NO_MEDICINE = frozenset((
    "take", "takes", "taking", "give", "gives", "need", "needs", "prescribe", "start",
    "increase", "reduce", "dose", "then", "also", "plus", "with", "daily", "once", "twice",
))  # fmt: skip
_VERBS_BEFORE_MEDICINE = "开用吃服加换改上给"  # 开阿莫西林: 开 prescribes


# The endings international nonproprietary names share by drug class (the WHO's and USAN's
# stems): atorvastatin, lisinopril, losartan, metoprolol, amlodipine, omeprazole, ...
_GENERIC_NAME = re.compile(
    r"(?<![\w-])[A-Za-z]{2,20}(?:statin|pril|sartan|olol|dipine|formin|gliptin|gliflozin|prazole"
    r"|tidine|oxetine|opram|azepam|azolam|cillin|mycin|cycline|floxacin|conazole|ciclovir"
    r"|mab|tinib|parin|xaban|gatran|profen|coxib|triptan|setron|lukast|terol|tadine|semide"
    r"|thiazide|dronate|pidem|tropium|lamide|glutide|oxacin|ipramine|triptyline|peridol"
    r"|apine|idone|cortisone|nisone|olone|asone|traline|adol|trexate)(?![\w-])",
    re.IGNORECASE,
)
# The same stems as Chinese writes them (阿托伐他汀, 二甲双胍, 氯吡格雷, 舍曲林, 布洛芬,
# 对乙酰氨基酚, 克拉霉素), and the characters before one that begin no drug's name.
_GENERIC_HAN = re.compile(
    r"他汀|普利|沙坦|洛尔|地平|西林|霉素|沙星|拉唑|替丁|洛芬|双胍|格列[齐吡]特"
    r"|格雷|曲林|法林|匹林|氨基酚|西泮|唑仑|米松|尼松|胰岛素|头孢[\u4e00-\u9fff]{1,3}"
)
_BEFORE_HAN_DRUG = frozenset(
    "我你他她在吃服用开的和跟与及查下新这那个些了过是把给要想还能有张盒瓶片粒支"
)
_HAN_DRUG_HEAD = 4  # characters of a name before its stem, at most (对乙酰 of 对乙酰氨基酚)


# A parameter that holds what a shop sells, by its name: ``product``, ``item_name``.
_GOODS_NAME = re.compile(
    r"^(?:product|item|goods|merchandise|article)(?:_?name)?$|^(?:product|item)Name$", re.I
)
# What a request asks a shop to have: "do you have Claritin in stock", "any Flonase left",
# "got melatonin at 1188?", "is there any aspirin"; 有没有儿童退烧药, 想买个电子体温计,
# 还有布洛芬吗, 查一下泰诺.
_GOODS_WORD = r"[A-Za-z][A-Za-z'-]{1,30}"
_GOODS_ASKED = re.compile(
    r"\b(?:do\s+(?:you|u|they|we)\s+(?:have|carry|stock|sell)|have\s+you\s+got|got|any"
    r"|is\s+there(?:\s+any)?|are\s+there(?:\s+any)?|looking\s+for|want\s+to\s+buy)"
    rf"\s+(?:some\s+|any\s+)?({_GOODS_WORD}(?:\s+{_GOODS_WORD}){{0,2}}?)"
    r"(?=\s+(?:in\s+stock|left|available|on\s+hand|at|in)\b|\s*[?？,，]|$)",
    re.IGNORECASE,
)
_GOODS_IN_STOCK = re.compile(
    rf"\b({_GOODS_WORD}(?:\s+{_GOODS_WORD}){{0,3}}?)\s+(?:in\s+stock|on\s+hand|left\s+at)\b",
    re.IGNORECASE,
)
_CJK_GOODS = r"([\u4e00-\u9fffA-Za-z][\u4e00-\u9fffA-Za-z0-9]{1,11}?)"
_CJK_GOODS_ASKED = re.compile(
    rf"(?:有没有|还有没有|有无|想买个?|要买个?|买个|查一下|查下|还有){_CJK_GOODS}"
    r"(?=吗|么|没|不|的话|[，,。？?！!\s]|$|有货|在|还有|库存)"
    rf"|{_CJK_GOODS}(?:还有货|有货|有没有货|还有多少|的库存|库存)"
)
# What a question about a menu's or a shop's item is about: "is there gluten in the
# chocolate chip cookies?" (the cookies, not the gluten), "does the carrot cake have nuts",
# "is the almond croissant safe …", "ingredients in the sesame bagel?", "what allergens are
# in your brownies"; 提拉米苏里面有鸡蛋吗, 你们的芒果慕斯含不含乳制品, 抹茶蛋糕有哪些过敏原.
_THE = r"(?:the|your|ur|this|that|these|those)\s+"
_GOODS_THERE_IN = re.compile(
    rf"\b(?:is|are)\s+there\b[^?.!,;]{{1,60}}?\s(?:in|inside)\s+{_THE}"
    rf"({_GOODS_WORD}(?:\s+{_GOODS_WORD}){{0,3}}?)(?=\s*[?？.!,;]|$)",
    re.IGNORECASE,
)
_GOODS_ABOUT = re.compile(
    rf"\b(?:does|do|is|are|can|will)\s+{_THE}({_GOODS_WORD}(?:\s+{_GOODS_WORD}){{0,3}}?)"
    r"\s+(?:have|has|contain|contains|include|includes|come|comes|use|uses|got|safe"
    r"|suitable|made)\b"
    rf"|\b(?:in|inside)\s+{_THE}({_GOODS_WORD}(?:\s+{_GOODS_WORD}){{0,3}}?)(?=\s*[?？.!,;]|$)",
    re.IGNORECASE,
)
_CJK_GOODS_ABOUT = re.compile(
    r"(?:^|[，,。？?！!\s])(?:请问|问一?下)?(?:你们的?|贵店的?|这款|这个|这种|那款|那个)?"
    r"([\u4e00-\u9fffA-Za-z]{2,8}?)"
    r"(?:(?:里面|里头|里)(?:有|含)|(?:有没有|含不含|有哪些|有什么|含有|含|的(?:成分|配料|过敏原)))"
)
# What a guest lost: "I lost my black gloves on the gondola", "left my iphone on the
# chairlift", "lost a blue beanie somewhere near …"; 我的手套丢在缆车上了, 钱包不见了, 丢了一根雪杖.
_GOODS_LOST = re.compile(
    r"\b(?:lost|left|dropped|forgot|misplaced)\s+(?:my|a|an|the|our|his|her|their)\s+"
    rf"(?:(?:kid|son|daughter|wife|husband|friend)'s\s+)?({_GOODS_WORD}(?:\s+{_GOODS_WORD}){{0,2}}?)"
    r"(?=\s+(?:on|in|at|near|somewhere|around|by|while|this|yesterday|today|last|during"
    r"|when|behind|inside|up|under)\b|\s*[,.;!?，。]|$)",
    re.IGNORECASE,
)
# (what follows 丢了 is read first: 在冰川站丢了一根雪杖 lost 雪杖, not 在冰川站)
_CJK_LOST_AFTER = re.compile(
    r"(?:丢了|掉了|落了|丢失了?)(?:[一两][个根只副件条把部台])?([\u4e00-\u9fffA-Za-z]{2,8}?)"
    r"(?=[，,。！!？?\s]|$)"
)
_CJK_LOST_BEFORE = re.compile(
    r"(?:我的|我们的|孩子的|把)?([\u4e00-\u9fffA-Za-z]{1,8}?)(?:丢在|落在|忘在|掉在|丢了|不见了|找不到了)"
)
# Words that are no goods: what is asked around them ("any left", "got it").
_NOT_GOODS = frozenset((
    "it", "them", "one", "ones", "stock", "left", "more", "some", "idea", "news", "way",
    "chance", "update", "problem", "issue", "questions", "time", "store", "shop", "店",
    "货", "库存", "多少", "一下", "the", "a", "an", "me", "my", "order", "orders", "cart",
    "basket", "account", "app", "menu", "box", "bag", "anything", "something", "nothing",
    "订单", "购物车", "菜单",
))  # fmt: skip


def _goods(query: str, taken: Collection[object]) -> str | None:
    """What a request asks a shop for (``_GOODS_ASKED``), a quantity's words left out;
    None when it names nothing or only what another parameter holds."""
    held = {str(t) for t in taken}
    chinese = [_CJK_GOODS_ASKED, _CJK_GOODS_ABOUT, _CJK_LOST_AFTER, _CJK_LOST_BEFORE]
    finders = chinese if has_han(query) else []
    english = [_GOODS_THERE_IN, _GOODS_ASKED, _GOODS_IN_STOCK, _GOODS_ABOUT, _GOODS_LOST]
    for finder in [*finders, *english]:
        for match in finder.finditer(query):
            word = next((g for g in match.groups() if g), "")
            word = re.sub(r"^(?:些|点|个|盒|瓶|支|包)", "", word).strip()
            if len(word) >= 2 and word.lower() not in _NOT_GOODS and word not in held:
                return word
    return None


def _medicine(query: str, taken: Collection[object]) -> str | None:
    """The medicine a request names, for a parameter named for one: the word beside its
    dose ("sertraline 50mg"), else the one word in the form of a generic drug's name
    ("my atorvastatin", ``_GENERIC_NAME``)."""
    for match in itertools.chain(_DOSE_OF.finditer(query), _BEFORE_DOSE.finditer(query)):
        word = next(w for w in match.groups() if w)
        while has_han(word) and len(word) > 2 and word[0] in _VERBS_BEFORE_MEDICINE:
            word = word[1:]
        taking = max(word.rfind(verb) for verb in _VERBS_BEFORE_MEDICINE) if has_han(word) else -1
        if 0 <= taking < len(word) - 2:
            word = word[taking + 1 :]  # 每天早上8点吃二甲双胍: what is taken
        if word.lower() not in _NO_MEDICINE and word not in taken:
            return word
    generic = set(_medicines(query)) - {str(t) for t in taken}
    return generic.pop() if len(generic) == 1 else None


def _medicines(query: str) -> list[str]:
    """The words of ``query`` in the form of a generic drug's name, in order: English
    (``_GENERIC_NAME``) and Chinese (``_GENERIC_HAN``, without the words before it)."""
    found = [(m.start(), m.group(0)) for m in _GENERIC_NAME.finditer(query)]
    for match in _GENERIC_HAN.finditer(query):
        start = match.start()
        while (
            start > 0
            and match.start() - start < _HAN_DRUG_HEAD
            and "\u4e00" <= query[start - 1] <= "\u9fff"
            and query[start - 1] not in _BEFORE_HAN_DRUG
        ):
            start -= 1  # back over the name's head, to a word before it (吃, 的, 和)
        found.append((start, query[start : match.end()]))
    return list(dict.fromkeys(word for _, word in sorted(found)))


# A list written after a colon: "check interactions: sertraline, tramadol, sumatriptan".
_LISTED_AFTER_COLON = re.compile(
    r"[:：]\s*([A-Za-z][\w-]{1,40}(?:\s*(?:,|、|\+|&|\band\b)\s*[A-Za-z][\w-]{1,40})+)"
)


def _medicine_list(query: str, taken: Collection[object]) -> list[str]:
    """For a list of medicines: the words of a list after a colon, else every word beside
    a dose and every word in a generic drug's form (``_medicines``), in order."""
    held = {str(t) for t in taken}
    listed = _LISTED_AFTER_COLON.search(query)
    if listed is not None:
        words = re.split(r"\s*(?:,|、|\+|&|\band\b)\s*", listed.group(1))
        return [w for w in words if w and w not in held]
    dosed = [
        (m.start(), next(w for w in m.groups() if w))
        for m in itertools.chain(_DOSE_OF.finditer(query), _BEFORE_DOSE.finditer(query))
    ]
    named = [(query.find(w), w) for w in _medicines(query)]
    ordered = [w for _, w in sorted(dosed + named) if w.lower() not in _NO_MEDICINE]
    return [w for w in dict.fromkeys(ordered) if w not in held]


def _string(
    query: str,
    name: str,
    spec: dict[str, Any],
    quoted: list[str],
    names: list[str],
    used_ids: set[int],
    taken: Collection[object] = (),
) -> str | None:
    """An identifier, an email address for a parameter that says it takes one, a file
    name, the text after a colon (or the whole query) for a text or query parameter, a
    capitalised name, a quoted string, or an example the description gives that the
    query repeats: the first that applies."""
    if _is_phone_parameter(name, spec):  # a number or nothing: never a name or an id
        return _phone_number(query, used_ids, taken, spec)
    if _PLATE_WORDS.search(f"{name} {spec.get('description') or ''}"):
        plate = _licence_plate(query, used_ids, taken)
        if plate is not None:
            return plate
    if _MEDICINE_NAME.search(name.replace("_", " ")):
        medicine = _medicine(query, taken)
        if medicine is not None:
            return medicine
    identifier = _addressed(query, name, spec, taken, only=True) or _identifier(
        query, name, spec, used_ids, taken
    )
    if identifier is not None:
        return _whole_card(query, identifier)
    address = _addressed(query, name, spec, taken, only=False)
    if address is not None:
        return address
    code = places.postcode(query, name)
    if code is not None and code not in taken:  # "deliver to 60614", "E14 附近"
        return code
    if _AS_NAME.search(name):  # ``sign_as``: "sign the card as Uncle Bob"
        written_as = _WRITTEN_AS.search(query)
        if written_as is not None and written_as.group(1) not in taken:
            return written_as.group(1)
    mentioned = _mentioned_example(query, spec, taken)
    if mentioned is not None:
        return mentioned
    if _GOODS_NAME.search(name) and not _constrains(spec):
        goods = _goods(query, taken)
        if goods is not None:  # "do you have Claritin in stock", 有没有儿童退烧药
            return goods
    if _takes_a_town(name, spec) and has_han(query):
        town = town_named(query)  # 深圳的婚礼乐队有哪些, 帮我找找杭州的花艺
        if town is not None and town not in taken:
            return town
    if _is_file_parameter(name, spec):
        file_name = _file_name(query, used_ids)
        if file_name is not None:
            return file_name
    elif any(not _FILE_TOKEN.fullmatch(e) for e in examples_of(spec)):
        return None  # its examples show an identifier's shape, and nothing here has it
    lowered = name.lower()
    where = _where_to(query, lowered)
    if where is not None:
        return where
    if places.takes_a_place(lowered, spec):
        found = places.place(query, lowered, spec)
        titled = any(found in m[1] for m in _BRACKETED.finditer(query)) if found else False
        if found is not None and found not in taken and not titled:  # no 《疯狂动物城2》
            return found
    last = _name_parts(name)[-1] if _name_parts(name) else lowered
    if lowered in _TEXT_NAMES or lowered in _TEXT_LABELS or last in _TEXT_LABELS:
        # ``changeNote`` is labelled as ``note`` is: 备注
        labelled = _labelled_text(query, lowered if lowered in _TEXT_LABELS else last)
        if labelled is not None:
            return labelled
    if lowered in _TEXT_NAMES or lowered in _QUERY_NAMES:
        body = _after_colon(query)
        if body is not None:
            return body
        if lowered in _QUERY_NAMES:  # "grep the logs for 'connection reset'": the quoted text
            return quoted.pop(0) if quoted else query.strip()
    if any(hint in lowered for hint in _NAME_LIKE) or _names_a_person(lowered):
        kind = (
            "place"
            if places.takes_a_place(lowered, spec) or _TOWN_NAMES.search(lowered)
            else "person"
            if _names_a_person(lowered) or _PERSON_HINT.search(lowered)
            else None
        )
        person = _person(query, lowered, names, taken, kind)
        if person is not None:
            return person
        if kind == "person" and quoted and _SENTENCE_MARKS.search(quoted[0]):
            return None  # a quoted message is no one's name ("'Happy Christmas, love Em'")
        if kind == "person" and quoted and f"《{quoted[0]}》" in query:
            return None  # nor a title: 《棋王》 is a book's
    bracketed = {m[1] for m in _BRACKETED.finditer(query)}
    holds_titles = "name" in lowered or bool(
        _TITLE_PARAMETER.search(f"{lowered} {spec.get('description') or ''}")
    )
    if quoted and quoted[0] in bracketed and not holds_titles:
        return None  # 《疯狂动物城2》 is a film's, no cinema's
    return _called_or_quoted(query, lowered, spec, quoted)


def _person(
    query: str, name: str, names: list[str], taken: Collection[object], kind: str | None = None
) -> str | None:
    """For a name parameter: the value after its label, else the request's next name
    that no other parameter holds ("Jade Garden" is the outlet's, no guest's). A place's
    parameter takes a name the request places ("at Kowloon Bay", "Kowloon Bay branch")
    before a person's ("my mother Wang Lan"); a person's never takes a placed name."""
    labelled = _labelled_name(query, name)
    if labelled is not None and not (kind == "place" and _PERSON_SHAPED.fullmatch(labelled)):
        return labelled  # (a place's "name" is not a person's: 名字刘强 names no branch)
    chosen = {_spelled(value) for value in taken}
    while names and _spelled(names[0]) in chosen:
        names.pop(0)
    # (nor a piece of a text another parameter holds: "Baker Street" of the address's
    # "5 Baker Street"; not of one that is most of the request, a search's words)
    texts = [v for v in taken if isinstance(v, str) and " " in v and len(v) * 2 <= len(query)]
    free = [n for n in names if _spelled(n) not in chosen and not any(n in t for t in texts)]
    introduced = [n for n in free if _introduced(query, n)]
    if kind != "place" and introduced:
        names.remove(introduced[0])  # "under Priya Nair", whatever else is capitalised
        return introduced[0]
    if kind == "place":
        placed = [n for n in free if _placed(query, n)]
        if placed:
            names.remove(placed[0])
            return placed[0]
        # a Chinese name read by its surname is a person's unless something places it
        # ("名字刘强" is no branch)
        names[:] = [n for n in names if not has_han(n)]
    elif kind == "person":
        people = [n for n in free if not _placed(query, n, _IN_PLACE)]
        # an acronym ("install my new NBN") is a person's name only when nothing else is
        people.sort(key=lambda n: bool(_ACRONYM.fullmatch(n)))
        if people:
            names.remove(people[0])
        return people[0] if people else None
    rest = [n for n in free if n in names]  # (a place's has lost the Chinese ones)
    if rest:
        names.remove(rest[0])
    return rest[0] if rest else None


# Words that introduce a person's name: "under Priya Nair", "for Mr Patel", "name's Dan",
# "I'm Sam", "lead booker is Ms Ong". Searched in the few characters before the name.
_INTRODUCES = re.compile(
    r"(?:\b(?:under|for|name\s*is|i\s*am|this\s*is|call\s*me|booker\s*is)|\bname['’]s|\bi['’]m)"
    r"\s{1,3}(?:(?:mr|mrs|ms|miss|mx|dr)\.?\s{1,3})?$"
    # (in Chinese, a label right before it: 联系人李娜, 我叫陈浩, 名字写周婷)
    r"|(?:联系人|收件人|收货人|我叫|名字[是叫写]?|姓名)[\s:：]{0,2}$",
    re.IGNORECASE,
)
_INTRODUCES_SPAN = 24


def _introduced(query: str, name: str) -> bool:
    """Whether ``query`` introduces ``name`` as a person's (``_INTRODUCES``)."""
    start = query.find(name)
    return start > 0 and bool(_INTRODUCES.search(query, max(0, start - _INTRODUCES_SPAN), start))


# A person's parameter by its name: whoever books, drives, stays, is treated ...
_PERSON_HINT = re.compile(
    r"customer|contact|driver|guest|passenger|patient|recipient|employee|staff|booker"
    r"|holder|applicant|requester|travell?er|student|teacher|doctor|trainer|instructor"
    r"|person|people|member_name|full_name|first_name|last_name"
)
# A name a place word follows: "Kowloon Bay branch", "SHA-HQ门店".
_PLACE_AFTER = re.compile(
    r"\s{0,2}(?:branch|store|shop|office|station|airport|terminal|campus|site|depot|"
    r"warehouse|clinic|hospital|hotel|mall|centre|center|支行|分行|门店|网点|店)\b",
    re.IGNORECASE,
)


_ACRONYM = re.compile(r"[A-Z]{2,4}")
# A parameter that holds a town or a country: it takes the name the request places ("dates
# in London") before another ("Taylor Swift"), as an address's does.
_TOWN_NAMES = re.compile(r"city|town|country|region|province|destination")
# A parameter that holds a city or a town, by its name or its description: ``city``,
# "所在城市", "Town or city".
_TOWN_WORDS = re.compile(r"(?<![a-z])(?:city|town)(?![a-z])|城市", re.IGNORECASE)


def _takes_a_town(name: str, spec: dict[str, Any]) -> bool:
    return not _constrains(spec) and bool(
        _TOWN_WORDS.search(f"{name.replace('_', ' ')} {spec.get('description') or ''}")
    )


# Only a place comes after these ("Jenny from Northwind" is from a company).
_IN_PLACE = re.compile(r"\b(?:at|in|near)\s{1,3}(?:the\s{1,3})?$", re.IGNORECASE)


def _placed(query: str, name: str, before: re.Pattern[str] = _AT_PLACE) -> bool:
    """Whether ``query`` writes ``name`` as a place: after one of the words ``before``
    ("at", "in", "near" …) or before a place word."""
    start = query.find(name)
    if start < 0:
        return False
    if before.search(query, max(0, start - _AT_PLACE_SPAN), start):
        return True
    return _PLACE_AFTER.match(query, start + len(name)) is not None


@functools.lru_cache(maxsize=8)  # the request being read: asked for each parameter
def _calendar_tokens(query: str) -> tuple[str, ...]:
    return tuple(m.group(0) for m in _CALENDAR_TOKEN.finditer(query))


@functools.lru_cache(maxsize=8)
def _called(query: str) -> re.Match[str] | None:
    return _CALLED.search(query)


def _called_or_quoted(query: str, name: str, spec: dict[str, Any], quoted: list[str]) -> str | None:
    """What the request calls a file or a name ("called draft-v1", "save this as faq-x:"),
    else a quoted string, else an example of the description the request repeats."""
    called = _called(query)
    if called is not None and (_is_file_parameter(name, spec) or "name" in name):
        return called.group(1).strip(" .,，。")
    saved_as = _SAVED_AS.search(query) if _is_file_parameter(name, spec) else None
    if saved_as is not None:
        return saved_as.group(1)
    if quoted:
        return quoted.pop(0)
    for example in re.findall(r"e\.g\.\s*([^,.;)]+)", str(spec.get("description", ""))):
        text = str(example).strip()
        if text and text.lower() in query.lower():
            return text
    return None


# A telephone number's parameter, by its name or its description, and a number: 8 to 15
# digits, a "+" before them, spaces or dashes between ("0412 345 678", "+61 412-345-678"),
# kept as the request writes it unless the parameter's pattern wants the digits alone.
_PHONE_WORDS = re.compile(
    r"phone|mobile|\btel\b|telephone|cell|msisdn|手机|电话|号码", re.IGNORECASE
)
_A_DATE = re.compile(r"\d{4}[ -]\d{1,2}[ -]\d{1,2}|\d{1,2}[ -]\d{1,2}[ -]\d{4}")
_PHONE = re.compile(
    r"(?<![A-Za-z0-9_+-])(?:\+?\d(?:[ -]?\d){7,14}|\d{3}-\d{4})(?![A-Za-z0-9_-])"
)  # (or a local number of seven, written 555-0192)


_PLATE_WORDS = re.compile(r"plate|车牌|号牌", re.IGNORECASE)
# A Chinese licence plate: its province's character, the city's letter, five or six more
# ("粤B12345", "京N5B821", "沪A·7K392"); read as an id, the province was lost ("B12345").
_CHINESE_PLATE = re.compile(rf"{_PROVINCE_PLATE}(?![A-Za-z0-9])")


# A plate the request labels as one: "plate 7GHT512", "reg KX19 TRW", "车牌号 4AB77" (its
# letters and digits, a second group after a space as UK plates write it; not a driver's
# "license C5521-…").
_LABELLED_PLATE = re.compile(
    r"(?:\bplates?|\bregistration|\breg|\brego|车牌|号牌)(?:\s*(?:number|no\.?|#|is|号|:|：))*\s*"
    r"((?=[A-Z]*\d)[A-Z0-9]{2,8}(?:[ -](?-i:[A-Z0-9]{2,4}))?)(?![A-Za-z0-9])",
    re.IGNORECASE,
)


# A plate after the vehicle it is on: "cap vehicle KX21ABC", "van YT70 KLM" (letters and
# digits both: "vehicle 12" is no plate).
_VEHICLE_PLATE = re.compile(
    r"\b(?:vehicles?|vans?|trucks?|lorry|lorries|cars?|motorbike|bus)\s+(?:plates?\s+)?"
    rf"({_LATIN_PLATE})(?![A-Za-z0-9])",
    re.IGNORECASE,
)


def _licence_plate(
    query: str, used: set[int], taken: Collection[object], *, bare: bool = True
) -> str | None:
    """The request's first Chinese licence plate no other parameter took, as written
    without spaces; else the first plate labelled as one, or written after the vehicle
    it is on, as written; else (``bare``) the one token in a plate's shape
    (``_BARE_PLATE``)."""
    for match in _CHINESE_PLATE.finditer(query):
        plate = re.sub(r"\s", "", match.group(0))
        if match.start() not in used and plate not in taken:
            used.add(match.start())
            return plate
    for match in itertools.chain(_LABELLED_PLATE.finditer(query), _VEHICLE_PLATE.finditer(query)):
        plate = match.group(1)
        if match.start(1) not in used and plate not in taken:
            used.add(match.start(1))
            return plate
    if not bare:
        return None
    # else the one token in a plate's shape, unlabelled: "washes for LMN4471", "ABC-1234"
    shaped = [
        m
        for m in itertools.islice(_BARE_PLATE.finditer(query), _MAX_MATCHES)
        if m.start() not in used and m.group(0) not in taken and 5 <= len(m.group(0)) <= 9
    ]
    if len(shaped) == 1:
        used.add(shaped[0].start())
        return shaped[0].group(0)
    return None


# A plate in capitals, letters and digits, with a dash at most: LMN4471, 9PQR114, ABC-1234.
_BARE_PLATE = re.compile(
    r"(?<![\w-])(?=[A-Z0-9-]*[A-Z])(?=[A-Z0-9-]*\d)[A-Z0-9]{1,5}-?[A-Z0-9]{1,5}(?![\w-])"
)


def _is_phone_parameter(name: str, spec: dict[str, Any]) -> bool:
    if _PHONE_WORDS.search(name):
        return True
    words = _name_parts(name)
    described = str(spec.get("description") or "")
    return "number" in words and _PHONE_WORDS.search(described) is not None


def _phone_number(
    query: str, used: set[int], taken: Collection[object], spec: dict[str, Any]
) -> str | None:
    """The request's first telephone number no other parameter took, as written ("+44
    7700 900123"), or without its spaces and dashes when the parameter's pattern takes
    only that."""
    for match in _PHONE.finditer(query):
        number = match.group(0)
        if _A_DATE.fullmatch(number):
            continue  # 2025-04-02
        if not _fits_pattern(number, spec):
            number = re.sub(r"[ -]", "", number)
            if "pattern" in spec and not _fits_pattern(number, spec):
                continue  # "rx # 0781123-05" is no phone of ``^\+[1-9][0-9]{7,14}$``
        if (
            match.start() not in used
            and number not in taken
            and re.sub(r"[ -]", "", number) not in taken
        ):
            used.add(match.start())
            return number
    return None


# --- identifiers without a pattern -------------------------------------------------------------

# An example value introduced in a description: "e.g. X", "例如 X", "格式如 X", "like X" ...
_EXAMPLE_MARKER = re.compile(
    r"(?:(?:\be\.?g\.?|\bfor example|\bfor instance|\bsuch as|\blike|\bsamples?|"
    r"\bexamples?)(?![A-Za-z])|例如|比如|譬如|格式如|格式为|格式是|形如|示例|样例|例|如)"
    r"\s*[:：,，]?\s*[\"'“‘「`]?([A-Za-z0-9][A-Za-z0-9_\-./#]*[A-Za-z0-9])",
    re.IGNORECASE,
)
# An identifier-looking token: letters and digits (and - _ . / #), with at least one digit.
_ID_TOKEN = re.compile(
    r"(?<![A-Za-z0-9_\-])[A-Za-z0-9][A-Za-z0-9_\-./#]*[A-Za-z0-9](?![A-Za-z0-9_])"
)
_MAX_EXAMPLES = 8  # shapes tried per parameter: a long list of examples cannot slow routing
_ID_NAMES = ("id", "sku", "code", "number", "no", "num", "ref", "reference", "key", "serial")
# Names of the things systems name with identifiers: "payments-api", "pg-orders-prod".
_MACHINE_NAMES = (
    "service", "host", "hostname", "server", "cluster", "namespace", "repo", "repository",
    "project", "app", "application", "bucket", "queue", "topic", "instance", "database",
    "db", "pod", "node", "branch", "image", "container", "deployment", "domain", "vm",
)  # fmt: skip
# Records a system keys by an identifier, named without "id": a route's ``{order}``, a
# form's "booking" ("The booking the tickets come from").
_RECORD_NAMES = (
    "order", "booking", "reservation", "ticket", "invoice", "shipment", "parcel", "claim",
    "policy", "case", "incident", "transaction", "payment", "contract", "subscription",
    "refund", "appointment", "account",
    "member",  # a club's ``member``: "the handicap for M55310"
)  # fmt: skip
_RUNS = re.compile(r"[A-Za-z]+|\d+|.", re.DOTALL)
# Word characters around a match that would make it part of a longer token.
_LEFT = r"(?:^|[^A-Za-z0-9_])"
_RIGHT = r"(?:$|[^A-Za-z0-9_])"


def examples_of(spec: dict[str, Any]) -> list[str]:
    """Identifier-like example values of a string parameter: the schema's ``examples`` /
    ``example`` / ``default``, then those its description introduces ("e.g. X", "例如 X")."""
    unique: dict[str, None] = {}
    for value in _example_values(spec):
        if isinstance(value, str) and _is_identifier(value):
            unique.setdefault(value)
            if len(unique) == _MAX_EXAMPLES:
                break
    return list(unique)


def _mentioned_example(query: str, spec: dict[str, Any], taken: Collection[object]) -> str | None:
    """An example value of the parameter, plain word or identifier, that the query names
    as a whole token, as the schema writes it: "sre" for a team "e.g. sre, payments"
    (an open list of values, read the way an enum's options are)."""
    lowered = query.lower()
    seen = 0
    for value in itertools.chain(_example_values(spec, defaults=False), _chinese_examples(spec)):
        if not isinstance(value, str) or value in taken or not 1 < len(value) <= 64:
            continue
        if value.isdigit():  # a number the request names is its own ("e.g. 14 Alder Road")
            continue
        seen += 1
        if seen > _MAX_EXAMPLES:
            break
        for written in (*_named_on(spec, value), value):
            text = written.lower()
            start = lowered.find(text)
            while start >= 0:
                if _whole(query, start, start + len(text)):
                    return written
                start = lowered.find(text, start + 1)
    return None


# A parameter named for what something is written or shown as (``sign_as``, ``save_as``,
# ``displayAs``), and a capitalised name of up to three words after "as" ("as Uncle Bob").
_AS_NAME = re.compile(r"(?:_as|[a-z]As)$")
_WRITTEN_AS = re.compile(
    r"\bas\s+((?:[A-Z](?:[\w-]|'(?=\w)){0,30})(?:\s+[A-Z](?:[\w-]|'(?=\w)){0,30}){0,2})"
)


def _named_on(spec: dict[str, Any], value: str) -> list[str]:
    """A capitalised example's name as the description writes it on, in two or three
    words ("e.g. Wood Green" is read as "Wood"): that whole name first."""
    description = spec.get("description")
    if not value[:1].isupper() or not isinstance(description, str):
        return []
    found = _cached(rf"\b{re.escape(value)}(?:\s[A-Z][a-z'-]{{1,30}}){{1,2}}\b").search(description)
    return [found.group(0)] if found is not None else []


# Chinese example values a description lists: "班组名称，例如 维修班、装配一组、质检组".
_CJK_EXAMPLES = re.compile(
    r"(?:例如|比如|譬如|如)\s{0,3}[:：]?\s{0,3}"
    r"([\u4e00-\u9fff]{2,8}(?:\s{0,3}[、,，/或和]\s{0,3}[\u4e00-\u9fff]{2,8}){0,16})"
)


def _chinese_examples(spec: dict[str, Any]) -> Iterator[str]:
    description = spec.get("description")
    if not isinstance(description, str) or not has_han(description):
        return
    for match in _CJK_EXAMPLES.finditer(description):
        yield from re.split(r"\s*[、,，/或和]\s*", match.group(1))


def _example_values(spec: dict[str, Any], *, defaults: bool = True) -> Iterator[object]:
    raw = spec.get("examples")
    if isinstance(raw, list):
        yield from raw
    for key in ("example", "default") if defaults else ("example",):
        if key in spec:
            yield spec[key]
    description = spec.get("description")
    if isinstance(description, str):
        for match in _EXAMPLE_MARKER.finditer(description):  # lazily: stop at enough
            if match.group(1).isdigit() and _NAMED_AFTER_NUMBER.match(description, match.end()):
                continue  # a street's number, no identifier ("e.g. 4521 Fraser St")
            yield match.group(1)
            # and the ones listed after it: "e.g. v2.14.1 or 3f9c2ab", "例如 sre、payments"
            listed = _LISTED.match(description, match.end())
            for _ in range(_MAX_EXAMPLES):  # a list of any length costs at most this
                if listed is None:
                    break
                yield listed.group(1)
                listed = _LISTED.match(description, listed.end())


# A capitalised word right after an example's number: the number begins a name or an
# address ("e.g. 4521 Fraser St, Vancouver"), it is not the value.
_NAMED_AFTER_NUMBER = re.compile(r" (?:[NSEW] )?[A-Z][a-z]")
_LISTED = re.compile(
    r"\s*(?:,|，|、|/|\bor\b|\band\b|或|和)\s*[\"'“‘「`]?([A-Za-z0-9][A-Za-z0-9_\-./#]*[A-Za-z0-9])"
)
# Words joined by a separator: what user names look like ("zhang.wei", "li_na").
_JOINED_WORDS = re.compile(r"[A-Za-z]+(?:[._-][A-Za-z]+)+")
_HYPHENED = re.compile(r"[a-z]{2,}(?:-[a-z]{2,})+")  # "auto-renew", "follow-up"


# A time of day or a quantity with its unit is no identifier: "6am", "10pm", "2hrs", "30min".
_NOT_AN_ID = re.compile(
    r"\d{1,2}(?::\d\d)?(?:am|pm)|\d+(?:\.\d+)?(?:hrs?|hours?|mins?|secs?|days?|kg|gb|mb|tb|ms)"
    r"|\d{1,2}(?:st|nd|rd|th)",  # "the 16th" is a day
    re.IGNORECASE,
)


# English words written with a hyphen, no system's name: "a follow-up incident to INC-…"
# names no service "follow-up".
_HYPHENATED_WORDS = frozenset((
    "follow-up", "check-in", "check-out", "sign-in", "sign-up", "log-in", "set-up",
    "roll-out", "opt-in", "opt-out", "add-on", "built-in", "walk-in", "drop-off", "pick-up",
    "one-off", "long-term", "short-term", "e-mail", "re-run", "co-worker", "part-time",
    "full-time", "on-call", "non-urgent", "up-to-date", "in-person", "real-time",
))  # fmt: skip
# Digits in three groups or more, joined by dashes: a code ("0452-118-20"), not a number.
_GROUPED_CODE = re.compile(r"\d{2,6}(?:-\d{1,6}){2,5}")


def _grouped_code(token: str) -> bool:
    """A code of dash-joined digit groups that is not a date ("2025-04-01")."""
    return bool(_GROUPED_CODE.fullmatch(token)) and not _A_DATE.fullmatch(token)


@functools.lru_cache(maxsize=4096)  # a request's tokens, asked about for each parameter
def _is_identifier(value: str) -> bool:
    if not 2 < len(value) <= 64 or _ID_TOKEN.fullmatch(value) is None:
        return False
    if _NOT_AN_ID.fullmatch(value) or value.lower() in _HYPHENATED_WORDS:
        return False
    return any(c.isdigit() for c in value) or _JOINED_WORDS.fullmatch(value) is not None


def _words_shape(example: str) -> str:
    r"""The shape of a digit-less identifier: each word any length, in its case
    ("zhang.wei" → ``[a-z]{1,32}\.[a-z]{1,32}``), the separators as they are."""
    out: list[str] = []
    for run in _RUNS.findall(example):
        if run.isalpha() and run.isascii():
            chars = "A-Z" if run.isupper() else "a-z" if run.islower() else "A-Za-z"
            out.append(f"[{chars}]{{1,32}}")
        else:
            out.append(re.escape(run))
    return "".join(out)


def _under_another_name(
    previous: dict[str, Any] | None, spec: dict[str, Any], name: str = ""
) -> Any:
    """The one identifier the previous call gave under another name that has this
    parameter's shape (``confirmation_code`` RSV-118204 for a ``reservation_code`` "e.g.
    RSV-204518"): letters and digits, taken whole by its ``pattern`` or of exactly the
    shape of one of its examples. A parameter of no shape named for a record (``order``)
    takes the identifier the previous call gave the same record under an id's name
    (``order_id``), and the reverse. None when there is none, or more than one."""
    pattern = spec.get("pattern")
    if not isinstance(pattern, str) and not examples_of(spec):
        return _same_record(previous, name)
    found = set()
    for value in (previous or {}).values():
        if not isinstance(value, str) or not _LETTERS_AND_DIGITS.match(value):
            continue
        if isinstance(pattern, str):
            try:
                match = search(compile_pattern(pattern), value)
            except PatternError:
                return None
            if match is not None and match.group(0) == value:
                found.add(value)
        elif any(re.fullmatch(shape_of(example), value) for example in examples_of(spec)):
            found.add(value)
    return found.pop() if len(found) == 1 else None


_LETTERS_AND_DIGITS = re.compile(r"^(?=[^\s]*[A-Za-z])(?=[^\s]*\d)[\w-]{3,64}$", re.ASCII)


def _same_record(previous: dict[str, Any] | None, name: str) -> Any:
    """The identifier the previous call gave under a name for the same record as ``name``
    (``order_id`` and ``order``, ``bookingRef`` and ``booking``): the names' words but the
    id words ("id", "no", "ref") agree, and a record's name is among them."""
    if not _names_a_record(name):
        return None
    record = _record_words(name)
    found = {
        value
        for other, value in (previous or {}).items()
        if other != name
        and isinstance(value, str)
        and _LETTERS_AND_DIGITS.match(value)
        and _record_words(other) == record
    }
    return found.pop() if len(found) == 1 else None


def shape_of(example: str, *, digits: str = "exact", letters: str = "literal") -> str:
    """The RE2 shape of an example identifier: ``SKU2024001`` → ``SKU\\d{7}``.

    ``digits``: ``exact`` (``\\d{n}``) or ``near`` (about the example's length);
    ``letters``: ``literal``, ``class`` (``[A-Z]{n}`` / ``[a-z]{n}`` / ``[A-Za-z]{n}``) or
    ``loose`` (the class, one letter to twice as many: "CS-2041" for "MATH-1102"), used
    only for examples whose letters a separator ends (``_LOOSE_LETTERS``).
    """
    out: list[str] = []
    for run in _RUNS.findall(example):
        if run.isdigit():
            n = len(run)
            out.append(rf"\d{{{n}}}" if digits == "exact" else rf"\d{{{max(1, n // 2)},{n * 2}}}")
        elif run.isalpha() and run.isascii():
            if letters == "literal":
                out.append(re.escape(run))
            else:
                chars = "A-Z" if run.isupper() else "a-z" if run.islower() else "A-Za-z"
                count = f"1,{2 * len(run)}" if letters == "loose" else str(len(run))
                out.append(f"[{chars}]{{{count}}}")
        else:
            out.append(re.escape(run))
    return "".join(out)


# A piece of a date, a time or a version: glued to digits before it (searched up to its
# end) or after it, or a Chinese date's ("2026年5月20日").
_GLUED_BEFORE = re.compile(r"(?:\d[-/:.]|[年月])$")
_GLUED_AFTER = re.compile(r"[-/:.]\d|[年月日号点點]|-[A-Za-z]")
# A code led by a letter is no piece of a longer one either ("BASIC-20" of "PLN-BASIC-20"
# for "e.g. FBB-500")
_CODE_BEFORE = re.compile(r"[A-Za-z0-9]-$")


def _find_shape(query: str, shape: str, used: set[int]) -> str | None:
    """The first token of ``shape`` (RE2) in ``query`` that no other parameter took."""
    try:
        program = compile_pattern(f"{_LEFT}({shape}){_RIGHT}")
    except PatternError:
        return None
    position = 0
    for _ in range(_MAX_MATCHES):  # each search costs the text's length (RE2's offsets)
        if position > len(query):
            break
        try:
            match = program.search(query, position)
        except UnicodeEncodeError:  # text RE2 cannot read (a lone surrogate)
            return None
        if match is None:
            return None
        start, end = match.start(1), match.end(1)
        # not a piece of a date, a time or a version ("2026" of 2026-12-23 for "e.g. 1208")
        piece = (
            _GLUED_BEFORE.search(query, max(0, start - 2), start)
            or _GLUED_AFTER.match(query, end)
            or (query[start].isalpha() and _CODE_BEFORE.search(query, max(0, start - 2), start))
        )
        if start not in used and not piece:
            used.add(start)
            return str(match.group(1))
        position = end
    return None


# A release ("v2.14.1", "1.8.0", "v5.0.0-rc1") and a commit ("3f9c2ab"): written with
# other digit counts than the example's, and a version with or without its "v".
_VERSION = re.compile(r"[vV]?\d+(?:\.\d+){1,3}")
_HASH = re.compile(r"[0-9a-f]{7,40}")


def _version_or_hash(query: str, example: str, used: set[int]) -> str | None:
    """For a version or commit-hash example, the query's first version (with as many
    dotted parts as the example, a "v" or not, a pre-release suffix kept) or hash."""
    if _VERSION.fullmatch(example):
        parts = example.count(".") + 1
        shape = (
            rf"[vV]?\d{{1,6}}(?:\.\d{{1,6}}){{{parts - 1}}}(?:-[0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?"
        )
        return _find_shape(query, shape, used)
    if _HASH.fullmatch(example) and not example.isdigit() and not example.isalpha():
        for match in re.finditer(r"(?<![A-Za-z0-9_.-])[0-9a-f]{7,40}(?![A-Za-z0-9_-])", query):
            token = match.group(0)
            if match.start() not in used and not token.isdigit() and not token.isalpha():
                used.add(match.start())
                return token
    return None


_RUN = re.compile(r"[A-Za-z0-9_\-./#]+")
_MAX_RUN = 128  # an identifier is at most 64 characters (``_is_identifier``)


def _id_tokens(query: str) -> Iterator[tuple[int, str]]:
    """``_ID_TOKEN``'s matches with their starts, found once per request (the rules
    that look for identifiers ask for them for each parameter of each candidate)."""
    return iter(_id_tokens_of(query))


@functools.lru_cache(maxsize=8)  # the request being read (and a few before it)
def _id_tokens_of(query: str) -> tuple[tuple[int, str], ...]:
    return tuple(_find_id_tokens(query))


def _find_id_tokens(query: str) -> Iterator[tuple[int, str]]:
    """``_ID_TOKEN``'s matches, found within each run of token characters (backtracking
    inside a run of any length, "a_.a_.a_." ..., would cost its square), but not in an
    email address's name or domain."""
    for run in _RUN.finditer(query):
        if (
            run.end() - run.start() > _MAX_RUN
            or "@" in query[max(run.start() - 1, 0) : run.end() + 1]
        ):
            continue  # too long, or a piece of an email address
        for match in _ID_TOKEN.finditer(run.group(0)):
            yield run.start() + match.start(), match.group(0)


# A string this long is written, not named: no machine's name or identifier is.
_PROSE_LENGTH = 100


def _prose(spec: dict[str, Any]) -> bool:
    longest = spec.get("maxLength")
    return isinstance(longest, int) and longest >= _PROSE_LENGTH


def _name_parts(name: str) -> list[str]:
    """A parameter name's words, lower-cased: ``order_id``, ``orderId`` -> order, id."""
    return [part.lower() for part in re.split(r"[_\W]+|(?<=[a-z])(?=[A-Z])", name) if part]


def is_id_name(name: str, *, machine: bool = True) -> bool:
    names = _ID_NAMES + _MACHINE_NAMES if machine else _ID_NAMES
    return any(part in names for part in _name_parts(name))


def _identifier(
    query: str, name: str, spec: dict[str, Any], used: set[int], taken: Collection[object] = ()
) -> str | None:
    """An identifier for a string parameter without a ``pattern``, or None.

    Only text of the query is ever returned: the shapes decide which token, never what it
    says, except its case when it is typed in the other case from every example.
    """
    if "pattern" in spec or "enum" in spec or "format" in spec:
        return None
    examples = examples_of(spec)
    if not any(map(temporal.is_calendar_value, examples)):  # a day is no policy number
        taken = {*taken, *_calendar_tokens(query)}
    if not examples:  # a branch that is a place ("网点名称或所在街道") is no git branch,
        # nor a topic of up to 300 characters ("客户想咨询的内容") a message queue's
        place = places.takes_a_place(name.lower(), spec)
        machine = not place and not _prose(spec)
        # (a street's "house number" numbers no record: 朝阳路88号, not the order's BQ-1042)
        numbered = not place and _NUMBERED.search(str(spec.get("description") or "")[:120])
        return _identifier_by_name(
            query, name, used, taken, machine=machine, numbered=bool(numbered)
        ) or _code_word(query, name, _capital_examples(spec), used, taken)  # CBC of "e.g. LIPID"
    # Each example's best find (the strictest reading that finds a token), then the
    # strictest of those, the query's first on a tie: "from LHR-T5 to EDI-WAV" starts at
    # LHR-T5, shaped like PVG-T2 of "e.g. LAX-AP, PVG-T2".
    best: tuple[int, int, str] | None = None
    for example in examples:  # a reading looser than the best find so far is not tried
        rank, value = _example_find(query, example, used, _LAST_RANK if best is None else best[0])
        # another parameter's value is this one's only in the example's own shape: the
        # pod ledger-api-5c8b7-q9x2m of "e.g. payments-api-7d9f8-x2k4q", not the student's
        # ST-73314 of "e.g. INS-207"
        if value is not None and (
            value not in taken or re.fullmatch(shape_of(example, letters="loose"), value)
        ):
            found = (rank, _position(query, value), value)
            best = found if best is None else min(best, found)
    if best is None:  # "truck 2231" for "e.g. TRK-0412": the prefix put back, as a pattern's
        shaped = _prefix_digits_of(examples)
        if shaped:
            prefixed: str | None = _prefixed(query, name, {**spec, "pattern": shaped}, taken)
            return prefixed
        return _code_word(query, name, examples, used, taken)  # SPRINGRUN of "e.g. WINTER26"
    return best[2]


# A code written in capitals, a word rather than a prefix and a number: a campaign's
# WINTER26, a test panel's LIPID or PB-W, a promotion's SPRING20.
# (letters first, then digits: K7QX2M is a scrambled code, whose shape its readings know)
_CODE_WORD = re.compile(r"[A-Z]{2,24}[0-9]{0,4}(?:-[A-Z0-9]{1,12})?")
# (a word's letters first, a few digits at most: RSV-641209 is a record's number)
_CAPITALS_TOKEN = re.compile(
    r"(?<![\w-])[A-Z]{2,24}(?:[0-9]{1,4}[A-Z]{0,4})?(?:-[A-Z]{1,12}[0-9]{0,4})?(?![\w-])"
)
# Capitals that are a way of writing, not a code.
_SHOUTED = frozenset(
    (
        *("ASAP", "PLS", "PLZ", "FYI", "OK", "OKAY", "HI", "HELLO", "THANKS", "PLEASE"),
        *("URGENT", "NOW", "NOT", "NO", "YES", "ID", "AM", "PM", "TODAY", "ETA", "BTW"),
        # a file's kind and money's currency, the values of other parameters
        *("PDF", "CSV", "JSON", "XML", "HTML", "TXT", "DOC", "DOCX", "XLS", "XLSX", "PNG"),
        *("JPG", "JPEG", "ZIP", "USD", "EUR", "GBP", "CNY", "RMB", "JPY"),
    )
)


def _capital_examples(spec: dict[str, Any]) -> list[str]:
    """The examples in capitals that are no identifier for lack of a digit ("e.g. LIPID")."""
    values = itertools.islice(_example_values(spec), _MAX_EXAMPLES)
    return [v for v in values if isinstance(v, str) and _CODE_WORD.fullmatch(v)]


def _code_word(
    query: str, name: str, examples: list[str], used: set[int], taken: Collection[object]
) -> str | None:
    """For a parameter whose examples are codes in capitals of two letters or more
    (``_CODE_WORD``: WINTER26, LIPID, PB-W), one the query writes in capitals, in two
    parts where they are (SEA-AP; PB-W's one-letter variant may be left off), that no
    other parameter took: the only one, else the one a word of the name stands beside
    ("the SPRINGRUN campaign"). Codes of other shapes than the examples' (SPRINGRUN,
    BACKPACK27 for "e.g. WINTER26") are what the examples' literal reading misses."""
    if not examples or not all(_CODE_WORD.fullmatch(e) for e in examples):
        return None
    # LAX is no branch of "e.g. SEA-AP"; a one-letter variant (PB-W) may be left off (CBC)
    hyphened = {"-" in e and len(e.rsplit("-", 1)[1]) > 1 for e in examples} | {True}
    found = [
        m
        for m in _CAPITALS_TOKEN.finditer(query)
        if ("-" in m[0]) in hyphened
        and m.start() not in used
        and m[0] not in taken
        and m[0] not in _SHOUTED
        and sum(c.isalpha() for c in m[0]) >= 2
        and not temporal.is_calendar_value(m[0])
    ]
    if len(found) > 1:
        words = [w for w in _name_parts(name) if len(w) > 2 and w != "code"]
        beside = [
            m
            for m in found
            if any(
                re.search(rf"\b{re.escape(w)}\w*\s+$", query[max(0, m.start() - 24) : m.start()])
                or re.match(rf"\s+{re.escape(w)}", query[m.end() :])
                for w in words
            )
        ]
        found = beside if len(beside) == 1 else []
    if len(found) != 1:
        return None
    used.add(found[0].start())
    return found[0][0]


# (two letters or more and three digits or more: "21号" is no line L21 of "e.g. L03")
_PREFIX_EXAMPLE = re.compile(r"([A-Za-z]{2,8})([-_/]?)(\d{3,12})")


def _prefix_digits_of(examples: list[str]) -> str | None:
    """The prefix-and-digits pattern (``_PREFIX_DIGITS``) every example has, if one does:
    ``^TRK-\\d{4}$`` of TRK-0412 and TRK-2231; None for examples of other shapes."""
    shapes = set()
    for example in examples:
        match = _PREFIX_EXAMPLE.fullmatch(example)
        if match is None:
            return None
        shapes.add((match[1], match[2], len(match[3])))
    if len(shapes) != 1:
        return None
    prefix, separator, count = shapes.pop()
    return f"^{prefix}{separator}\\d{{{count}}}$"


_CALENDAR_TOKEN = re.compile(r"(?<![\w-])\d{4}-\d{2}(?:-\d{2})?(?![\w-])")

# How strictly an example's shape is read, strictest first: (digits, letters).
_READINGS = (("exact", "literal"), ("near", "literal"), ("exact", "class"))
_LOOSER_READINGS = (("near", "class"), ("near", "loose"))
_WORDS_RANK = len(_READINGS) + 1  # a code of words ("payments-api" for "e.g. billing-svc")
_LAST_RANK = _WORDS_RANK + len(_LOOSER_READINGS) + 1


def _example_find(query: str, example: str, used: set[int], limit: int) -> tuple[int, str | None]:
    """The token the query has in ``example``'s shape, by the strictest reading that finds
    one, and that reading's rank: a version or commit, the shape with its letters as
    written then of their class (``shape_of``), a code of words, the looser shapes, and
    last the scrambled, case-folded and segmented forms. Readings ranked over ``limit``
    are not tried."""
    found = _version_or_hash(query, example, used)
    if found is not None:
        return 0, found
    has_letters = any(c.isalpha() for c in example)
    for rank, (digits, letters) in enumerate(_READINGS, start=1):
        if rank > limit:
            return rank, None
        if letters != "literal" and not has_letters:
            continue
        if digits == "near" and not has_letters:
            continue  # a bare number of another length is not this identifier
        found = _find_shape(query, shape_of(example, digits=digits, letters=letters), used)
        if found is not None:
            return rank, found
    rank = _WORDS_RANK
    if rank <= limit and not any(c.isdigit() for c in example):
        found = _find_shape(query, _words_shape(example), used)
        if found is not None:
            return rank, found
    for rank, (digits, letters) in enumerate(_LOOSER_READINGS, start=_WORDS_RANK + 1):
        if rank > limit:
            return rank, None
        if not has_letters or (letters == "loose" and not _LOOSE_LETTERS.search(example)):
            continue
        found = _find_shape(query, shape_of(example, digits=digits, letters=letters), used)
        if found is not None:
            return rank, found
    if limit < _LAST_RANK:
        return _LAST_RANK, None
    found = (
        _scrambled(query, example, used)
        or _folded_example(query, example, used)
        or _segmented(query, example, used)
    )
    return _LAST_RANK, found


def _position(query: str, value: str) -> int:
    at = query.find(value)
    return at if at >= 0 else query.lower().find(value.lower()) % (len(query) + 1)


# A code of capitals in segments a hyphen joins ("PVG-T2", "LOT-24051807"): a branch, an
# airport, a batch. A segment of letters and digits stands for any of capitals and digits
# ("SHA-HQ", "MUC-CTR" for "e.g. PVG-T2"); one of letters or of digits keeps its kind.
_SEGMENTED = re.compile(r"[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+")


def _segmented(query: str, example: str, used: set[int]) -> str | None:
    """For an example code of capital segments (``_SEGMENTED``), the query's first token
    of as many segments, each of its kind (``_segment_shape``), the first led by a letter."""
    if len(example) > 32 or not _SEGMENTED.fullmatch(example):
        return None
    first, *rest = example.split("-")
    shapes = [_segment_shape(first)] + [_segment_shape(segment) for segment in rest]
    if not first.isalpha():
        shapes[0] = f"[A-Z][A-Z0-9]{{0,{2 * len(first) - 1}}}"
    return _find_shape(query, "-".join(shapes), used)


def _segment_shape(segment: str) -> str:
    """A segment's shape, up to twice its length: letters, digits (at least half as many:
    "02" is no batch number's "24051807"), or capitals and digits for a mixed one."""
    n = len(segment)
    if segment.isalpha():
        return f"[A-Z]{{1,{2 * n}}}"
    if segment.isdigit():
        return rf"\d{{{max(1, n // 2)},{2 * n}}}"
    return f"[A-Z0-9]{{1,{2 * n}}}"


def _folded_example(query: str, example: str, used: set[int]) -> str | None:
    """An identifier typed in the other case from its example ("ls-0049955" for "例如
    LS-0048213"), in the example's case, as a pattern's is: only for an example of letters
    and digits whose letters are all one case."""
    if not (example.isascii() and any(c.isdigit() for c in example)):
        return None
    if not (example.isupper() or example.islower()):
        return None
    found = _find_shape(query, f"(?i:{shape_of(example)})", used)
    if found is None:
        return None
    return found.upper() if example.isupper() else found.lower()


# A code whose letters and digits alternate in four runs or more ("K7QX2M", "3FQ8ZL"):
# a random code, where only its length and its letters' case say what another looks like.
_SCRAMBLED = re.compile(r"(?:[A-Za-z]+\d+|\d+[A-Za-z]+){2,}[A-Za-z0-9]*")


# A scrambled code may follow a short word and a separator: an instance's "i-0abc123def4567890".
_PREFIXED = re.compile(r"([A-Za-z]{1,8}[-_])(.+)")


def _scrambled(query: str, example: str, used: set[int]) -> str | None:
    """For a scrambled example, the query's first token of its length and case, of
    letters and digits both ("BN5T2X" for "e.g. K7QX2M"), that no other parameter took.
    A word before a separator is kept as written ("i-0deadbeef0000abcd" for "e.g.
    i-0abc123def4567890")."""
    prefixed = _PREFIXED.fullmatch(example)
    prefix, body = prefixed.groups() if prefixed else ("", example)
    if len(example) > 64 or not _SCRAMBLED.fullmatch(body):
        return None
    letters = "A-Z" if body.isupper() else "a-z" if body.islower() else "A-Za-z"
    shape = re.compile(
        rf"(?<![A-Za-z0-9_-])({re.escape(prefix)})([{letters}0-9]{{{len(body)}}})(?![A-Za-z0-9_-])",
        re.IGNORECASE if prefix else 0,
    )
    for match in shape.finditer(query):
        token = match.group(2)
        if match.start() in used or token.isdigit() or token.isalpha():
            continue
        if prefix and not re.fullmatch(f"[{letters}0-9]+", token):
            continue  # the prefix matched in any case, the body in the example's
        used.add(match.start())
        return prefix + token if prefix else token
    return None


def _names_a_record(name: str) -> bool:
    """Whether ``name`` names a record (``order``, ``parent_booking``, ``order_id``): one of
    :data:`_RECORD_NAMES` as its last word but the id words, which holds its identifier."""
    words = _record_words(name)
    return bool(words) and words[-1] in _RECORD_NAMES


def _record_words(name: str) -> tuple[str, ...]:
    """A name's words but the id words ("id", "no", "ref"): ``order_id`` -> order."""
    return tuple(part for part in _name_parts(name) if part not in _ID_NAMES)


@functools.lru_cache(maxsize=1024)  # asked for each parameter of each candidate
def _begins_a_token(query: str, name: str) -> bool:
    """Whether an identifier of the query (with a digit) starts with ``name``, a word of
    three letters or more."""
    if not (name.isascii() and name.isalpha() and len(name) >= 3):
        return False
    lowered = name.lower()
    return any(
        text.lower().startswith(lowered) and any(c.isdigit() for c in text[len(name) :])
        for _, text in _id_tokens(query)
    )


# What may stand between a parameter's word and its value: "order SO…", "employee id 20417",
# "member no. 5521", "ticket #4471".
# and what says it is: "card number is 3019940075", 卡号是5512330098.
_ID_LABEL_GAP = re.compile(
    r"[\s:#：]{0,3}(?:(?:id|no|num|number|code|ref)\.?[\s:#：]{1,3})?"
    r"(?:(?<![a-z])(?:is|was)\s{1,3}|(?:是|为)[\s:#：]{0,3})?"
)


# The words that label any identifier: "id 2299", "ID: 2299", "#2299", "no. 2299".
_ID_WORD = re.compile(r"(?<![a-z])(?:id|no\.?|#)(?![a-z])")


# Records whose name is a verb too: "refund 1200 to my card", "order 2000 labels".
_RECORD_VERBS = frozenset(("order", "refund", "payment", "booking", "transaction"))


def _looks_like_a_year(digits: str) -> bool:
    return len(digits) == 4 and digits[:2] in ("19", "20")


def _first_introduced(
    lowered: str, mentions: Iterable[re.Match[str]], tokens: list[tuple[int, str]]
) -> tuple[int, str] | None:
    """The first token one of ``mentions`` (of a label word) introduces as its value: one
    starting at most 16 characters after it (``tokens`` are in order of their
    start, so those are looked up, not scanned: "no.1 " repeated costs its length)."""
    starts = [start for start, _ in tokens]
    for mention in mentions:
        end = mention.end()
        near = tokens[bisect.bisect_left(starts, end) : bisect.bisect_right(starts, end + 16)]
        chosen = next((t for t in near if _ID_LABEL_GAP.fullmatch(lowered, end, t[0])), None)
        if chosen is not None:
            return chosen
    return None


def _label_mentions(lowered: str, label: str) -> Iterator[re.Match[str]]:
    """Where ``label`` is written: as a whole word, or anywhere for a Chinese one."""
    return (_whole_word(label) if label.isascii() else re.compile(re.escape(label))).finditer(
        lowered
    )


# A dose or a length, no record's identifier: "2.5mg", "50mg", "5km".
_MEASURE = re.compile(r"\d+(?:\.\d+)?(?:mg|mcg|ml|km|cm|mm|lbs?|oz)", re.IGNORECASE)


# A description that says the parameter is a thing's number: "Family account number.",
# "Membership ID", 会员编号, 账号.
_NUMBERED = re.compile(
    r"\b(?:number|no\.|id|identifier)\b\W*$|^\W*(?:the\s+)?(?:\w+\s+){0,3}(?:number|id)\b"
    r"|编号|号码|账号|卡号|户号"
    # a thing's number in Chinese, first: "舱房号，4 或 5 位数字", 预订号, 会员号
    r"|^\W*[\u4e00-\u9fff]{1,6}号(?![\u4e00-\u9fff])",
    re.IGNORECASE,
)
# Other ways a request names what a parameter's name words name: "acct 31188", 账户 41876.
_LABEL_ALIASES = {
    "account": ("acct", "acc", "a/c", "账户", "账号", "户号"),
    "member": ("会员", "membership"),
    "customer": ("客户",),
    "invoice": ("inv", "发票"),
    "card": ("卡号", "卡"),  # 礼品卡 990011223344, 卡号 55601239
    # a ship's or a hotel's room: "room 8412", 舱房 7415, 房间号 9214
    "cabin": ("room", "stateroom", "舱房号", "房间号", "房号", "舱房", "房间"),
    "room": ("cabin", "房间号", "房号", "房间"),
}
# The last word of a name that says its value is a number (``card_number``): the
# labels of its other words introduce it as a description that says so would.
_NUMBERING_WORDS = frozenset(("number", "no", "num", "nr"))


def _identifier_by_name(
    query: str,
    name: str,
    used: set[int],
    taken: Collection[object] = (),
    *,
    machine: bool = True,
    numbered: bool = False,
) -> str | None:
    """With no example: for an id-like name (``sku``, ``order_id``) or the name of a
    machine's thing (``service``, ``host``), an identifier-looking token (letters and
    digits, or words joined like ``payments-api``) that starts with the name ("sku" →
    SKU2024001), else one the name introduces ("order SO20240715001"), else the only
    such token in the query that no other parameter took. Any other name counts as id-like
    when a token of the query starts with it whole ("mrn" → MRN-066241), and so does a
    record's name alone (``order``, ``booking``: :func:`_names_a_record`), which takes no
    bare number. Not ``machine``: a machine's thing is no id-like name."""
    # A record's name alone ("refund 120 to my card") takes no bare number: an amount;
    # one its description calls a number ("Family account number.") is an id's name.
    record = not (is_id_name(name, machine=machine) or _begins_a_token(query, name) or numbered)
    if record and not _names_a_record(name):
        return None
    tokens = [
        (start, text)
        for start, text in _id_tokens(query)
        if _is_identifier(text)
        and start not in used
        and text not in taken
        and not _MEASURE.fullmatch(text)
    ]
    words = [w for w in _name_parts(name) if len(w) > 1 and w not in ("id", "no")]
    lowered = query.lower()
    if record:  # "ticket 77120": a number of four digits or more the record's name introduces
        numbers = [t for t in tokens if t[1].isdigit() and len(t[1]) >= 4]
        named_number = None
        for word in (w for w in words if w not in _RECORD_VERBS):  # not "refund 1200 to…"
            named_number = _first_introduced(lowered, _whole_word(word).finditer(lowered), numbers)
            if named_number is not None:
                break
        if named_number is not None and not _looks_like_a_year(named_number[1]):
            used.add(named_number[0])
            return named_number[1]
        tokens = [t for t in tokens if not t[1].isdigit()]
    if not tokens:
        return None
    chosen = next((t for t in tokens if any(t[1].lower().startswith(w) for w in words)), None)
    for word in words if chosen is None else ():
        chosen = _first_introduced(lowered, _whole_word(word).finditer(lowered), tokens)
        if chosen is not None:
            break
    parts = _name_parts(name)
    numbered = numbered or (bool(parts) and parts[-1].lower() in _NUMBERING_WORDS)
    aliases = [a for w in words for a in _LABEL_ALIASES.get(w, ())] if numbered else []
    for alias in aliases if chosen is None else ():  # "acct 31188", 家庭账户 20533
        chosen = _first_introduced(lowered, _label_mentions(lowered, alias), tokens)
        if chosen is not None:
            break
    mixed = [t for t in tokens if any(c.isalpha() for c in t[1]) or _grouped_code(t[1])]
    if machine and not any(part in _MACHINE_NAMES for part in _name_parts(name)):
        # an account's or a record's id is no hyphenated words ("battle pass auto-renew")
        mixed = [t for t in mixed if not _HYPHENED.fullmatch(t[1])]
    if chosen is None and len(mixed) == 1:
        chosen = mixed[0]
    if chosen is None and is_id_name(name, machine=False):  # "campaign results, id 2299"
        chosen = _first_introduced(lowered, _ID_WORD.finditer(lowered), tokens)
    if chosen is None and numbered:  # "money left on my giftcard? its 3019940075"
        chosen = _lone_long_number(lowered, tokens)
    if chosen is None:
        return None
    used.add(chosen[0])
    return chosen[1]


# A card's number in groups of four ("6280 0011 2233 4455"): its first group, then two to
# four more.
_CARD_GROUPS = re.compile(r"(?<![\d-])(\d{4})((?:[ -]\d{4}){2,4})(?![\d-])")


def _whole_card(query: str, identifier: str) -> str:
    """``identifier``, or the whole card number it is the first group of, as written: an
    id read as "6280" of "number 6280 0011 2233 4455"."""
    if len(identifier) != 4 or not identifier.isdigit():
        return identifier
    grouped = next((m for m in _CARD_GROUPS.finditer(query) if m[1] == identifier), None)
    return grouped.group(0) if grouped is not None else identifier


# A number's neighbours that make it part of another: a phone's groups ("07911 123456"),
# "+44 …", or a phone's word before it.
_GROUPED_BEFORE = re.compile(r"(?:\d[\s-]|\+)$")
_GROUPED_AFTER = re.compile(r"^[\s-]\d")
_PHONE_BEFORE = re.compile(r"(?:phone|tel|mobile|cell|call|text|whatsapp|电话|手机|联系)\W{0,12}$")


# What may stand before a number no other word labels: "its 3019940075", "card? 30199…",
# 是 5512330098 (not "barcode 3100776540", nor 续借一下3100234598).
_BARE_BEFORE = re.compile(
    r"(?:^|[,.;:!?，。；：！？()（）]|(?<![a-z])(?:its|it's|is|was|my|the|number|no\.?|#|on|for)"
    r"|[是为号])\s*$"
)


def _lone_long_number(lowered: str, tokens: list[tuple[int, str]]) -> tuple[int, str] | None:
    """For a parameter that is a thing's number, the request's one number of six digits
    or more that is no phone's and no part of a longer grouped one; None when it has
    none, or several."""
    found = [
        (start, text)
        for start, text in tokens
        if text.isdigit()
        and len(text) >= 6
        and not _GROUPED_BEFORE.search(lowered, max(0, start - 2), start)
        and not _GROUPED_AFTER.match(lowered[start + len(text) : start + len(text) + 2])
        and not _PHONE_BEFORE.search(lowered[max(0, start - 24) : start])
        and _BARE_BEFORE.search(lowered[max(0, start - 12) : start])
    ]
    return found[0] if len(found) == 1 else None
