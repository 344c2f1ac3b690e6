"""The lines of an order, for a list of objects that each name a thing and a count.

``items: [{"product": str, "quantity": int}]`` is filled from what people write:
"1 litter box and two bags of tofu cat litter", "four cans of Royal Canin Recovery",
"3 x SKU2024001, 2 of SKU2024002", 买三袋皇家幼猫粮, 猫抓板2个，逗猫棒1个. A thing with a
``pattern`` (a SKU) is each match of it, with the count written next to it (1 when none
is); a thing of an ``enum`` of codes is each code written as it is ("25 BOX-M, 6 TAPE"),
else the option a size or the enum's rules read in the free text ("40 small boxes").
Free text is the words after a count (and its measure: "bags of", 袋), up to the next
count, a comma, "and", or a word that starts another clause ("deliver", "for", 送货); in
Chinese also the words before a count and its measure (猫抓板2个).

Only a list whose items are objects with one thing and one count (``_roles``), and no
other required property, is read this way. The patterns take bounded runs of words:
linear in the request.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gateway.registry.patterns import PatternError, compile_pattern
from gateway.registry.patterns import search as pattern_search
from gateway.routing import temporal

_THING_NAMES = frozenset(
    ("product", "item", "name", "sku", "title", "article", "goods", "description", "product_name")
)
_THING_NAMES |= {"item_name", "product_id", "sku_id", "item_id", "code", "part", "part_number"}
# (a kind counted: tickets by type, "2 adults and 1 kid", 两个大人一个小孩)
_KIND_NAMES = frozenset(("type", "ticket_type", "kind", "category", "fare_type", "guest_type"))
_THING_NAMES |= _KIND_NAMES
_COUNT_NAMES = frozenset(("quantity", "qty", "count", "units", "amount", "number", "pieces"))
_MAX_LINES = 20

_WORD_COUNTS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2,
}  # fmt: skip
_MEASURES = (
    r"bags?|cans?|tins?|boxe?s?|packs?|packets?|bottles?|jars?|tubes?|rolls?|sets?|pairs?"
    r"|pieces?|pcs|units?|cartons?|cases?|sacks?|bundles?|dozens?"
)
# Words that end a thing's name: another clause begins.
_ENDS = (
    r"and|or|for|to|please|pls|with|at|on|by|from|in|into|deliver(?:ed|y)?|ship(?:ped)?"
    r"|send|sent|shipping|delivery|pick|picked|collect|i|i'll|we|we'll|asap|today|tomorrow"
    r"|tmrw|tmr|tonight|thanks|thank|each|per|every|as|via|then|plus|w(?=/)"  # "w/ oat milk"
)
# (a count is no clock's minutes or a price's cents: "around 8:15 tmrw" orders no tmrw)
_EN_LINE = re.compile(
    r"(?<![\w:./-])"
    rf"(?P<count>\d{{1,4}}|(?:{'|'.join(sorted(_WORD_COUNTS, key=len, reverse=True))})\b)"
    rf"\s*(?:x\s*)?(?:(?:{_MEASURES})\s+of\s+)?"
    rf"(?P<thing>(?!(?:{_ENDS}|{_MEASURES})\b)[A-Za-z][\w'-]*"
    rf"(?:\s+(?!(?:{_ENDS})\b)[A-Za-z0-9][\w'-]*){{0,4}})",
    re.IGNORECASE,
)
_ZH_MEASURES = r"个|袋|包|罐|盒|箱|瓶|件|支|只|份|条|双|套|桶|听|块|片|卷"
_ZH_NUMBER = r"\d{1,4}|[一二两三四五六七八九十]{1,3}"
_ZH_THING = r"[\u4e00-\u9fffA-Za-z0-9]{2,12}?"
_ZH_STOP = r"(?=$|[，。,.、；;！!？?\s]|和|及|还有|送|寄|到店|自提|配送|快递|谢谢)"
_ZH_LINE_AFTER = re.compile(
    rf"(?P<count>{_ZH_NUMBER})\s*(?:{_ZH_MEASURES})(?P<thing>{_ZH_THING}){_ZH_STOP}"
)
_ZH_LINE_BEFORE = re.compile(
    rf"(?P<thing>[\u4e00-\u9fffA-Za-z]{{2,10}})\s*(?P<count>{_ZH_NUMBER})\s*(?:{_ZH_MEASURES})"
)
_TIME_THINGS = frozenset(temporal.TIME_PLURALS) | {"day", "week", "month", "year", "hour", "minute"}
_TIME_THINGS |= {"time", "times", "more", "of", "other", "another"}


def _is_thing(name: str, spec: object) -> bool:
    return (
        isinstance(spec, dict)
        and spec.get("type", "string") == "string"
        and (name.lower() in _THING_NAMES)
    )


def _is_count(name: str, spec: object) -> bool:
    return (
        isinstance(spec, dict)
        and spec.get("type") in ("integer", "number")
        and (name.lower() in _COUNT_NAMES)
    )


def _roles(items: dict[str, Any]) -> tuple[str, str, dict[str, Any]] | None:
    """(the thing's property, the count's, the thing's schema) of an order line's object."""
    properties = items.get("properties")
    if items.get("type") != "object" or not isinstance(properties, dict):
        return None
    things = [n for n, p in properties.items() if _is_thing(n, p)]
    counts = [n for n, p in properties.items() if _is_count(n, p)]
    if len(things) != 1 or len(counts) != 1:
        return None
    required = items.get("required")
    if isinstance(required, list) and set(required) - {things[0], counts[0]}:
        return None
    return things[0], counts[0], properties[things[0]]


def _count(text: str) -> int | None:
    word = " ".join(text.lower().split())
    if word in _WORD_COUNTS:
        return _WORD_COUNTS[word]
    return temporal.cn_number(text) if text else None


def lines(
    query: str,
    items: dict[str, Any],
    option_of: Callable[[str, dict[str, Any]], Any] | None = None,
) -> list[dict[str, Any]] | None:
    """The order's lines the request writes, as the items' objects; None when it writes
    none or the items are not order lines. ``option_of(text, spec)`` reads the option of
    the thing's enum ``spec`` in a thing's name."""
    roles = _roles(items)
    if roles is None:
        return None
    thing, count, spec = roles
    pattern = spec.get("pattern")
    options = spec.get("enum")
    if isinstance(options, list) and 0 < len(options) <= _MAX_OPTIONS:
        read = (lambda text: option_of(text, spec)) if option_of else None
        found = _optioned(query, [o for o in options if isinstance(o, str)], read)
    elif isinstance(pattern, str):
        found = _patterned(query, pattern)
    else:
        found = _written(query)
    if thing.lower() in _KIND_NAMES:  # a kind is one of its options, or no line at all
        found = [(name, number) for name, number in found if name in (options or ())]
    lines = [{thing: name, count: number} for name, number in found[:_MAX_LINES] if number > 0]
    return lines or None


_MAX_OPTIONS = 64  # a longer list of codes is no catalogue of packing materials


def _optioned(
    query: str, options: list[str], option_of: Callable[[str], Any] | None
) -> list[tuple[str, int]]:
    """For a thing that is one of ``options``: each option written as it is, in its
    case, with its count ("25 BOX-M, 10 BOX-L, 6 TAPE"); else each thing written after its count, as
    the option its size names ("40 small boxes" of BOX-S, 中纸箱 of BOX-M) or that
    ``option_of`` reads in it ("two wardrobe boxes" of WARDROBE). A thing no option is
    read in stays as written, for the call's validation to refuse."""
    if not options:
        return []
    either = "|".join(re.escape(o) for o in sorted(options, key=len, reverse=True))
    literal = _patterned(query, f"^(?:{either})$")  # as written: "bubble wrap" is words
    if literal:
        # unless more of them are read in words: "1 adult and 2 children" (child)
        worded = [line for line in _read_options(query, options, option_of) if line[0] in options]
        return worded if {o for o, _ in literal} <= {o for o, _ in worded} else literal
    return _read_options(query, options, option_of)


def _read_options(
    query: str, options: list[str], option_of: Callable[[str], Any] | None
) -> list[tuple[str, int]]:
    """Each thing written after its count, as the option it reads as, else as written."""
    read = []
    for name, number in _written(query):
        option = (
            _sized_option(name, options)
            or _person_kind(name, options)
            or (option_of(name) if option_of else None)
        )
        read.append((option if isinstance(option, str) else name, number))
    return read


# What people call an adult's and a child's ticket or place, by the option's word.
_PERSON_KINDS = {
    "adult": ("adult", "adults", "grown-up", "grown-ups", "grownup", "grownups", "大人", "成人"),
    "child": ("child", "children", "kid", "kids", "小孩", "孩子", "儿童"),
}


def _person_kind(name: str, options: list[str]) -> str | None:
    """The adult's or child's option ``name`` calls by another word ("kids", 大人)."""
    head = name.lower().split()[0] if name.split() else name
    return next((o for o in options if head in _PERSON_KINDS.get(o.lower(), ())), None)


# A size a thing's name gives, and the letters an option writes it in (BOX-S, tee_XL).
_SIZES = (
    (re.compile(r"\b(?:extra[\s-]?large|xl)\b|特大", re.IGNORECASE), "XL"),
    (re.compile(r"\b(?:small|sm)\b|^小|小号", re.IGNORECASE), "S"),
    (re.compile(r"\b(?:medium|med|mid)\b|^中|中号", re.IGNORECASE), "M"),
    (re.compile(r"\b(?:large|big|lg)\b|^大|大号", re.IGNORECASE), "L"),
)
_SEGMENTS = re.compile(r"[-_\s/]+")


def _sized_option(name: str, options: list[str]) -> str | None:
    """The one option with a segment for the size ``name`` gives ("small boxes": the
    option with an S segment), among options of sizes; None when none or two have it."""
    size = next((letters for words, letters in _SIZES if words.search(name.strip())), None)
    if size is None:
        return None
    fits = [o for o in options if size in _SEGMENTS.split(o.upper())]
    return fits[0] if len(fits) == 1 else None


_TOKEN = re.compile(r"[A-Za-z0-9][\w.-]{0,63}")
_NEAR_COUNT_BEFORE = re.compile(r"(\d{1,4})\s*(?:x|×|of|个|件)?\s*$", re.IGNORECASE)
_NEAR_COUNT_AFTER = re.compile(
    r"\s*(?:x|×|\*)\s*(\d{1,4})|\s*(\d{1,4})\s*(?:个|件|pcs)", re.IGNORECASE
)


def _patterned(query: str, pattern: str) -> list[tuple[str, int]]:
    """Each match of the thing's pattern, with the count written beside it (else 1)."""
    try:
        program = compile_pattern(pattern)
    except PatternError:
        return []
    found: list[tuple[str, int]] = []
    for token in _TOKEN.finditer(query):
        if not pattern_search(program, token.group(0)):
            continue
        before = _NEAR_COUNT_BEFORE.search(query[max(0, token.start() - 12) : token.start()])
        after = _NEAR_COUNT_AFTER.match(query, token.end())
        number = before[1] if before else (after[1] or after[2]) if after else "1"
        found.append((token.group(0), int(number)))
    return found


def _written(query: str) -> list[tuple[str, int]]:
    """Each thing written after (or, in Chinese, before) its count."""
    found: list[tuple[int, str, int]] = []
    taken: list[tuple[int, int]] = []
    for match in _EN_LINE.finditer(query):
        name = match["thing"].strip(" '-")
        number = _count(match["count"])
        if number is None or name.lower().split()[0] in _TIME_THINGS:
            continue
        found.append((match.start(), name, number))
    for match in _ZH_LINE_AFTER.finditer(query):
        number = _count(match["count"])
        if number is not None:
            found.append((match.start(), match["thing"], number))
            taken.append(match.span())
    for match in _ZH_LINE_BEFORE.finditer(query):
        number = _count(match["count"])
        inside = any(start <= match.start("count") < end for start, end in taken)
        if number is not None and not inside:
            found.append((match.start(), match["thing"], number))
    return [(name, number) for _, name, number in sorted(found)]
