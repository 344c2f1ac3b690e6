"""Currencies a request names, for parameters that take one: an ISO 4217 code (a
pattern such as ``^[A-Z]{3}$``, an enum of codes, or a description that says so).

People name currencies in words ("500 pounds", "Thai baht", 日元, 港币), in symbols
($, €, £) and in codes of either case ("usd to eur"). Names come from ``pycountry``:
ISO 4217's English names ("Swiss Franc", "Yen", plurals too) and their Chinese names
(its zh_CN translation), with a short table of the everyday ones it does not give
("quid", "bucks", 美金, 港币). A one-word name that is also an English word ("won",
"rand", "gold") counts only after the country's adjective ("Korean won").

Which of two currency parameters a mention fills follows what the request says of it:
a currency converted from ("500 pounds", "with GBP", "USD to", 美元兑) fills the source
(``from_currency``, ``base``, ``sell``), one converted into ("how many yen", "to EUR",
换多少港币) the target (``to_currency``, ``quote``, ``buy``); without such words, the
first named is the source. A single currency parameter takes the first one named.
"""

from __future__ import annotations

import functools
import gettext
import itertools
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

import pycountry

from gateway.routing.countries import code_taken

Role = Literal["from", "to"]

_CURRENCY_WORDS = re.compile(
    r"(?<!con)currenc|(?<![a-z])ccy(?![a-z])|iso[ _-]?4217|币种|货币|币别", re.I
)


# A parameter's role, by its name's words ("from_currency", "baseCurrency", "sell_ccy").
def _name_words(*words: str) -> re.Pattern[str]:
    """Any of ``words`` standing as a word of a parameter's name: snake_case, camelCase
    or spaced ("to_currency", "currencyTo"; not "total_currency")."""
    either = "|".join(f"[{w[0].upper()}{w[0]}]{w[1:]}" for w in words)
    capitalised = "|".join(w.capitalize() for w in words)
    start = rf"(?:^|(?<=[_\W]))(?:{either})|(?<=[a-z])(?:{capitalised})"
    return re.compile(rf"(?:{start})(?=$|[_\WA-Z0-9])")


_SOURCE_NAMES = _name_words("from", "source", "src", "base", "sell", "have", "origin")
_TARGET_NAMES = _name_words("to", "target", "dst", "dest", "destination", "quote", "buy", "want")

# Everyday names pycountry does not give (English, lower case; Chinese).
_ALIASES = {
    "dollar": "USD", "dollars": "USD", "buck": "USD", "bucks": "USD", "us dollars": "USD",
    "american dollars": "USD", "pound": "GBP", "pounds": "GBP", "quid": "GBP",
    "sterling": "GBP", "british pound": "GBP", "british pounds": "GBP", "euros": "EUR",
    "franc": "CHF", "francs": "CHF", "swiss francs": "CHF", "yuan": "CNY", "renminbi": "CNY",
    "rmb": "CNY", "chinese yuan": "CNY", "rupee": "INR", "rupees": "INR", "ruble": "RUB",
    "rubles": "RUB", "rouble": "RUB", "roubles": "RUB", "lira": "TRY", "korean won": "KRW",
    "brazilian reais": "BRL", "south african rand": "ZAR", "aussie dollars": "AUD",
    "aussie dollar": "AUD", "loonie": "CAD", "hk dollars": "HKD", "hk dollar": "HKD",
    "shekel": "ILS", "shekels": "ILS", "dirham": "AED", "dirhams": "AED", "riyal": "SAR",
    "riyals": "SAR", "ringgit": "MYR", "peso": "MXN", "pesos": "MXN", "vietnamese dong": "VND",
}  # fmt: skip
_CHINESE_ALIASES = {
    "美金": "USD", "日币": "JPY", "日圆": "JPY", "人民币": "CNY", "港币": "HKD", "澳元": "AUD",
    "澳币": "AUD", "加元": "CAD", "加币": "CAD", "新币": "SGD", "韩币": "KRW", "瑞郎": "CHF",
    "台币": "TWD", "新台币": "TWD", "卢布": "RUB", "卢比": "INR", "纽币": "NZD", "新西兰元": "NZD",
    "马币": "MYR", "林吉特": "MYR", "越南盾": "VND", "澳门币": "MOP", "迪拉姆": "AED",
}  # fmt: skip
_SYMBOLS = {
    "$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "HK$": "HKD", "A$": "AUD",
    "AU$": "AUD", "CA$": "CAD", "C$": "CAD", "NZ$": "NZD", "S$": "SGD", "SG$": "SGD",
    "NT$": "TWD", "MX$": "MXN", "R$": "BRL", "₹": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY",
    "₪": "ILS", "฿": "THB", "₫": "VND", "₱": "PHP",
}  # fmt: skip
# One-word ISO names that are English words too: only after their adjective.
_ORDINARY_WORDS = frozenset({
    "gold", "silver", "platinum", "palladium", "dong", "kina", "rand", "sol", "som", "won",
    "pula", "tala", "lari", "lek", "leone", "loti", "sucre", "mvdol", "real",
})  # fmt: skip
# Codes written in lower case count only for these (not "try", "all", "top", "cup").
_LOWER_CASE_CODES = frozenset({
    "usd", "eur", "gbp", "jpy", "cny", "hkd", "chf", "cad", "aud", "nzd", "sgd", "krw", "inr",
    "thb", "rub", "brl", "mxn", "sek", "nok", "dkk", "zar", "pln", "czk", "huf", "ils", "aed",
    "sar", "myr", "idr", "php", "vnd", "twd",
})  # fmt: skip
# Capital words that are ISO codes and still English ("ALL accounts", "TOP 5").
_CAPITAL_WORDS = frozenset({"ALL", "TOP", "CUP", "MOP", "SOS", "TRY"})

# What the words around a mention say of it (the request as written; cues in any case).
# An English cue is a whole word: "USD to EUR" names a source, "USD total" does not.
_INTO_AFTER = re.compile(r"\s*(?:(?:to|into|in)\b|->|→|=>|/|兑换|兑|换成|换|对)", re.IGNORECASE)
# A name followed by these is what one converts into ("the EUR equivalent of $50").
_TARGET_AFTER = re.compile(r"\s*(?:equivalents?|等值|等额)", re.IGNORECASE)
# Between the cue and the name: an amount, and one word ("buying Thai baht").
_BETWEEN = r"\s*(?:\d[\d,.]*\s*)?(?:[A-Za-z]+\s+)?$"
_INTO_BEFORE = re.compile(
    r"(?:\bto|\binto|\bin|->|→|=>|/|兑换|兑|换成|换|多少|how many|how much|\bbuy|\bbuying"
    rf"|\bget)\s*(?:\d[\d,.]*\s*)?$|(?:\bto|\binto|\bbuying|\bbuy|how many|how much){_BETWEEN}",
    re.IGNORECASE,
)
_FROM_BEFORE = re.compile(rf"(?:\bwith|\bfrom|\bsell|\bselling|用|拿){_BETWEEN}", re.IGNORECASE)
_AMOUNT_BEFORE = re.compile(r"\d[\d,.]*\s*(?:k\s*)?$", re.IGNORECASE)
_CUE_SPAN = 24  # characters before a mention that may hold its cue


@dataclass(frozen=True)
class Mention:
    start: int
    code: str
    role: Role | None  # what the words around it say: converted from, or into


def takes_a_currency(name: str, spec: dict[str, Any]) -> bool:
    """Whether a string parameter takes a currency: its name or description says so."""
    return spec.get("type", "string") == "string" and bool(
        _CURRENCY_WORDS.search(name) or _CURRENCY_WORDS.search(str(spec.get("description") or ""))
    )


def role_of(name: str) -> Role | None:
    """The source or the target of a conversion, by the parameter's name."""
    if _SOURCE_NAMES.search(name):
        return "from"
    if _TARGET_NAMES.search(name):
        return "to"
    return None


def takes_a_pair(schema: dict[str, Any]) -> bool:
    """Whether a tool converts between two currencies: it requires a currency parameter
    for the source and one for the target (``role_of``: ``from_currency`` and
    ``to_currency``, ``base`` and ``quote``)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return False
    roles = {
        role_of(name)
        for name in schema.get("required") or []
        if isinstance(properties.get(name), dict) and takes_a_currency(name, properties[name])
    }
    return {"from", "to"} <= roles


def own_dollars(query: str, spec: dict[str, Any]) -> bool:
    """Whether the only currency the request writes is a bare "$" and the parameter's
    default is dollars other than the US's: "$375" of a bill in Canadian dollars is
    the default's own, no US dollars."""
    default = spec.get("default")
    if not (isinstance(default, str) and default.upper() in _OTHER_DOLLARS):
        return False
    found = mentioned(query)
    return bool(found) and all(query[m.start] == "$" for m in found)


def currency_value(
    query: str, name: str, spec: dict[str, Any], taken: Collection[object] = ()
) -> str | None:
    """The currency the request gives this parameter, as its schema takes it (``_form``),
    or None. ``taken``: values other parameters hold already."""
    mentions = [m for m in mentioned(query) if _form(m.code, spec) not in taken]
    role = role_of(name)
    if role is not None:
        other: Role = "to" if role == "from" else "from"
        said = [m for m in mentions if m.role == role]
        mentions = said or [m for m in mentions if m.role != other]
    for mention in mentions:
        value = _form(mention.code, spec)
        if value is not None:
            return value
    if not mentions and _YUAN.search(query):  # "收了我 320 元加油费": no other currency named
        return _form("CNY", spec)
    return None


# Dollars other than the US's, which a bare "$" may write.
_OTHER_DOLLARS = frozenset({"CAD", "AUD", "NZD", "SGD", "HKD", "TWD", "MXN"})
# An amount in yuan, the currency's name left out: 320 元, 200元, 50 块钱 (美元, 港元 and the
# like are names, found before this is asked).
_YUAN = re.compile(r"\d\s*(?:元|块钱)")


def _form(code: str, spec: dict[str, Any]) -> str | None:
    """``code`` if the schema takes it (``countries.code_taken``), or as is with neither
    an enum nor a pattern."""
    if isinstance(spec.get("enum"), list) or isinstance(spec.get("pattern"), str):
        return code_taken((code,), spec)
    return code


_TOKEN = re.compile(
    r"(?P<symbol>(?<![A-Za-z])(?:US|HK|AU|CA|NZ|SG|NT|MX|A|C|S|R)\$|[$€£₹₩₽₺₪฿₫₱])"
    r"|(?P<word>[A-Za-z]+)|(?P<cjk>[\u4e00-\u9fff]+)"
)
_LONGEST = 3  # words in the longest English name looked up ("new taiwan dollar")
_CJK_LONGEST = 6


@functools.lru_cache(maxsize=64)  # read once per request, not once per parameter
def mentioned(query: str) -> tuple[Mention, ...]:
    """The currencies ``query`` names, in order, each once, with what the words around
    each say of it. Names are looked up, not searched for: a request costs its length,
    and a word that begins no longer name one lookup."""
    tables = _tables()
    found: list[tuple[int, int, str]] = []  # start, end, code
    tokens = list(_TOKEN.finditer(query))
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.group("symbol"):
            found.append((token.start(), token.end(), _SYMBOLS[token.group("symbol")]))
        elif token.group("cjk"):
            found += _chinese(token.start(), token.group("cjk"), tables.chinese)
        else:
            hit = _english(query, tokens, i, tables)
            if hit is not None:
                found.append(hit[0])
                i += hit[1]
                continue
        i += 1
    mentions: list[Mention] = []
    seen: set[str] = set()
    for start, end, code in found:
        if code not in seen:
            seen.add(code)
            mentions.append(Mention(start, code, _role(query, start, end)))
    return tuple(mentions)


def _english(
    query: str, tokens: list[re.Match[str]], i: int, tables: _Tables
) -> tuple[tuple[int, int, str], int] | None:
    """The longest name (or code) starting at word ``i``: ``((start, end, code), words)``."""
    names = tables.english
    longest = 1 if tokens[i].group(0).lower() not in tables.starts else _LONGEST
    for n in range(min(longest, len(tokens) - i), 0, -1):
        run = tokens[i : i + n]
        if any(not t.group("word") for t in run):
            continue
        if any(not query[a.end() : b.start()].isspace() for a, b in itertools.pairwise(run)):
            continue  # the words of one name stand apart by blanks only
        key = " ".join(t.group("word").lower() for t in run)
        code = names.get(key)
        if code is None and n == 1:
            code = _code(run[0].group("word"), query)
        if code is not None:
            return (run[0].start(), run[-1].end(), code), n
    return None


def _code(word: str, query: str) -> str | None:
    """A code as written: any ISO code in capitals (not an English word in capitals, nor
    a request all in capitals), the common ones in lower case too."""
    upper = word.upper()
    if upper not in _codes():
        return None
    if word.isupper():
        return upper if upper not in _CAPITAL_WORDS and not query.isupper() else None
    return upper if word.islower() and word in _LOWER_CASE_CODES else None


def _chinese(offset: int, run: str, names: dict[str, str]) -> list[tuple[int, int, str]]:
    found = []
    i = 0
    while i < len(run) - 1:
        for n in range(min(_CJK_LONGEST, len(run) - i), 1, -1):  # the longest first
            code = names.get(run[i : i + n])
            if code is not None:
                found.append((offset + i, offset + i + n, code))
                i += n
                break
        else:
            i += 1
    return found


def _role(query: str, start: int, end: int) -> Role | None:
    """What the words next to a mention say: converted into ("to EUR", "how many yen",
    换多少港币, "the EUR equivalent"), or from ("EUR to", "with GBP", "500 pounds",
    美元兑); None if nothing."""
    before = query[max(0, start - _CUE_SPAN) : start]
    if _INTO_BEFORE.search(before) or _TARGET_AFTER.match(query, end):
        return "to"
    if _FROM_BEFORE.search(before) or _INTO_AFTER.match(query, end):
        return "from"
    if _AMOUNT_BEFORE.search(before):
        return "from"  # an amount is what one has to convert
    return None


@functools.cache
def _codes() -> frozenset[str]:
    return frozenset(c.alpha_3 for c in pycountry.currencies)


@dataclass(frozen=True)
class _Tables:
    english: dict[str, str]  # a name's words, lower case, one blank apart
    starts: frozenset[str]  # the first words of the names of more than one word
    chinese: dict[str, str]


@functools.cache
def _tables() -> _Tables:
    """ISO 4217's English names (and plurals) and Chinese names, with the everyday ones;
    built once, on the first request for a tool with a currency parameter."""
    english: dict[str, str] = {}
    chinese: dict[str, str] = {}
    translation = gettext.translation(
        "iso4217", pycountry.LOCALES_DIR, languages=["zh_CN"], fallback=True
    )
    for currency in pycountry.currencies:
        code, name = currency.alpha_3, currency.name
        words = name.lower().split()
        if "(" in name or "," in name or len(words) > _LONGEST or not name.isascii():
            continue
        if len(words) == 1 and words[0] in _ORDINARY_WORDS:
            continue
        english.setdefault(" ".join(words), code)
        english.setdefault(" ".join([*words[:-1], words[-1] + "s"]), code)
        translated = translation.gettext(name)
        if translated != name and len(translated) <= _CJK_LONGEST:
            chinese.setdefault(translated, code)
            if translated.endswith("元") and len(translated) > 2:
                chinese.setdefault(translated[:-1] + "币", code)  # 港元, 港币
    english.update(_ALIASES)
    chinese.update(_CHINESE_ALIASES)
    starts = frozenset(name.split()[0] for name in english if " " in name)
    return _Tables(english=english, chinese=chinese, starts=starts)
