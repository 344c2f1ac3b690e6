"""The order a list is sorted in, for an enum of sort orders ("sort", "order_by").

A search tool's ``sort`` is ``["price_asc", "price_desc", "newest", "rating"]`` or
``["积分从低到高", "积分从高到低", "最新上架"]``; people say "cheapest first", "most expensive
first", "newest first", "top rated", 按价格从低到高排, 最新的. Each option is read for the
order it names (``_ORDERS``: cost up or down, newest, oldest, best rated, most popular,
nearest, most relevant), each request for the order it asks, and the one option of that
order is taken. An option of no order the rules know, or two options of the one asked
for, leave the parameter to the other rules.

Prices, fees and points are one key here: what a thing costs. "Cheapest first" of a
catalogue priced in points is 积分从低到高.

Every pattern is a fixed alternation: linear in the request.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

# What an option names, read from its own text (English, or Chinese).
_OPTION_ORDERS = {
    "cost_up": re.compile(
        r"(?:price|cost|fee|point|amount)s?[_\s-]*(?:asc|low|up)|cheap|(?:low|lowest)[_\s-]*"
        r"(?:to[_\s-]*high|first|price)|^asc(?:ending)?$|从低到高|由低到高|升序|价格最低",
        re.IGNORECASE,
    ),
    "cost_down": re.compile(
        r"(?:price|cost|fee|point|amount)s?[_\s-]*(?:desc|high|down)|expensive|(?:high|highest)"
        r"[_\s-]*(?:to[_\s-]*low|first|price)|^desc(?:ending)?$|从高到低|由高到低|降序|价格最高",
        re.IGNORECASE,
    ),
    "newest": re.compile(r"new|latest|recent|date[_\s-]*desc|最新|新品|上新", re.IGNORECASE),
    "oldest": re.compile(r"old|earliest|date[_\s-]*asc|最早|最旧", re.IGNORECASE),
    "rating": re.compile(r"rat(?:ing|ed)|review|score|评分|好评|口碑", re.IGNORECASE),
    "popular": re.compile(r"popular|best[_\s-]*sell|sales|trending|销量|热门|人气", re.IGNORECASE),
    "nearest": re.compile(r"distance|nearest|closest|距离|最近的", re.IGNORECASE),
    "relevance": re.compile(r"relevan|best[_\s-]*match|相关", re.IGNORECASE),
}

# What a request asks: the order, as people write it.
_ASKED = {
    "cost_up": re.compile(
        r"\b(?:cheapest|least\s+expensive|lowest\s+(?:price|cost|points?)|(?:price|cost|points?)"
        r"\s+low\s+to\s+high|low(?:est)?\s+to\s+high(?:est)?|cheap(?:est)?\s+(?:ones?\s+)?first"
        r"|sort(?:ed)?\s+by\s+price(?![,\s]+(?:high|descending|from\s+high)))\b"
        r"|从低到高|由低到高|最便宜|便宜的(?:在前|排前|先)|价格升序",
        re.IGNORECASE,
    ),
    "cost_down": re.compile(
        r"\b(?:most\s+expensive|priciest|highest\s+(?:price|cost|points?)|(?:price|cost|points?)"
        r"\s+high\s+to\s+low|high(?:est)?\s+to\s+low(?:est)?|(?:expensive|pricey)\s+(?:ones?\s+)?"
        r"first)\b|从高到低|由高到低|最贵|贵的(?:在前|排前|先)|价格降序",
        re.IGNORECASE,
    ),
    "newest": re.compile(
        r"\b(?:newest|latest\s+(?:first|ones|arrivals|releases|additions)|most\s+recent\s+first"
        r"|new\s+(?:ones?\s+)?first|recently\s+added"
        r"|just\s+(?:came|come)\s+in|what(?:'s|\s+is)\s+new)\b|最新|新上|上新",
        re.IGNORECASE,
    ),
    "oldest": re.compile(r"\b(?:oldest|earliest)\s+(?:first|ones?)\b|最早的|最旧", re.IGNORECASE),
    "rating": re.compile(
        r"\b(?:top|best|highest)[\s-]+rated\b|\bby\s+rating\b|\b(?:best|highest)\s+reviewed\b"
        r"|评分最高|好评最多|口碑最好",
        re.IGNORECASE,
    ),
    "popular": re.compile(
        r"\b(?:most\s+popular|best[\s-]*sell(?:ing|ers?)|top\s+sellers?|trending)\b"
        r"|卖得最好|销量最高|最热门|最受欢迎",
        re.IGNORECASE,
    ),
    "nearest": re.compile(
        r"\b(?:nearest|closest)\s+(?:first|ones?)\b|\bby\s+distance\b|离我最近|距离最近",
        re.IGNORECASE,
    ),
}

# A sort's own name: ``sort``, ``sortBy``, ``order_by``, ``ordering``, ``rank_by``, 排序;
# not a record's (``order_status`` keeps an order's state, whose "new" is no newest).
_SORT_NAMES = re.compile(
    r"sort|order[_\s-]?by|^order(?:ing)?$|rank[_\s-]?by|^rank(?:ing)?$|排序", re.IGNORECASE
)


def takes_a_sort(name: str, spec: dict[str, Any]) -> bool:
    """Whether an enum parameter is a list's sort order: named for one (``sort``,
    ``sortBy``, ``order_by``) or described as one (排序方式), with two options or more
    that name orders."""
    options = spec.get("enum")
    if not isinstance(options, list) or len(options) < 2:
        return False
    described = str(spec.get("description") or "")[:200]
    if not (_SORT_NAMES.search(name) or _SORT_NAMES.search(described)):
        return False
    return sum(_order_of(option) is not None for option in options) >= 2


def _order_of(option: object) -> str | None:
    """The one order an option names, or None (none, or more than one)."""
    if not isinstance(option, str):
        return None
    named = [order for order, pattern in _OPTION_ORDERS.items() if pattern.search(option)]
    if len(named) > 1 and {"cost_up", "cost_down"} & set(named):
        named = [o for o in named if o in ("cost_up", "cost_down")]  # "lowest_price_new"
    return named[0] if len(named) == 1 else None


def sort_option(query: str, options: Sequence[Any]) -> Any:
    """The option of the order ``query`` asks ("cheapest first": the cost going up), when
    it asks one order and one option names it; None otherwise."""
    asked = [order for order, pattern in _ASKED.items() if pattern.search(query)]
    if len(asked) != 1:
        return None
    matching = [option for option in options if _order_of(option) == asked[0]]
    return matching[0] if len(matching) == 1 else None
