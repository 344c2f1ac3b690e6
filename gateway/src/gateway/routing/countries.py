"""Countries a request names, for parameters that take one: an ISO 3166 code (a pattern
or an enum of two- or three-letter codes) or a name.

Names come from ``pycountry``: English names (short, common and official), their Chinese
names (its zh_CN translation), and people's names for a country's citizens derived from
its name ("Canadians", "Indian", "Japanese") with a short table for the rest ("British").
A mention is *held* when it says whose passport or nationality it is (a demonym,
"UK passport", 中国籍, 美国护照): a nationality parameter takes only those, a destination
the others first ("Indian passport holder transiting through Germany": IN, then DE).
"""

from __future__ import annotations

import functools
import gettext
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

import pycountry

# Everyday names pycountry does not give, English and Chinese.
_ALIASES = {
    "uk": "GB", "britain": "GB", "great britain": "GB", "england": "GB", "scotland": "GB",
    "usa": "US", "us": "US", "america": "US", "the states": "US", "korea": "KR",
    "south korea": "KR",
    "north korea": "KP", "russia": "RU", "vietnam": "VN", "uae": "AE", "taiwan": "TW",
    "holland": "NL", "czechia": "CZ", "turkey": "TR", "iran": "IR", "syria": "SY",
    "laos": "LA", "bolivia": "BO", "venezuela": "VE", "tanzania": "TZ", "moldova": "MD",
}  # fmt: skip
# Written in capitals only: "us" and "uk" in lower case are other words.
_CAPITALS_ONLY = frozenset({"uk", "usa", "uae", "us"})
_CHINESE_ALIASES = {
    "韩国": "KR", "朝鲜": "KP", "俄罗斯": "RU", "台湾": "TW", "香港": "HK", "澳门": "MO",
    "印尼": "ID", "阿联酋": "AE", "迪拜": "AE", "英格兰": "GB", "荷兰": "NL", "土耳其": "TR",
}  # fmt: skip
_DEMONYMS = {
    "british": "GB", "english": "GB", "scottish": "GB", "welsh": "GB", "american": "US",
    "german": "DE", "french": "FR", "dutch": "NL", "swiss": "CH", "thai": "TH",
    "filipino": "PH", "greek": "GR", "irish": "IE", "spanish": "ES", "swedish": "SE",
    "danish": "DK", "polish": "PL", "turkish": "TR", "finnish": "FI", "norwegian": "NO",
    "peruvian": "PE", "korean": "KR", "kiwi": "NZ", "emirati": "AE", "saudi": "SA",
    "pakistani": "PK", "bangladeshi": "BD", "israeli": "IL", "iraqi": "IQ", "icelandic": "IS",
}  # fmt: skip
# What makes a mention a nationality: the words after it, or (a demonym) the word itself.
_HELD_AFTER = re.compile(
    r"\s*(?:passports?|citizens?|citizenship|nationals?|nationality|passport\s+holders?)\b"
    r"|\s*(?:护照|籍|公民|国籍)",
    re.IGNORECASE,
)
_COUNTRY_NAMES = re.compile(r"country|nationality|citizenship", re.IGNORECASE)
_COUNTRY_WORDS = re.compile(r"\bcountry\b|nationality|passport|国家|国籍|护照", re.IGNORECASE)
_NATIONALITY = re.compile(r"nationality|citizenship|passport|国籍|护照", re.IGNORECASE)


@dataclass(frozen=True)
class Mention:
    start: int
    text: str
    alpha_2: str
    alpha_3: str
    held: bool  # whose passport or nationality: a demonym, "UK passport", 中国籍


def takes_a_country(name: str, spec: dict[str, Any]) -> bool:
    """Whether a parameter takes a country: by its name, or a description that says so."""
    return bool(
        _COUNTRY_NAMES.search(name) or _COUNTRY_WORDS.search(str(spec.get("description") or ""))
    )


def country_value(
    query: str, name: str, spec: dict[str, Any], taken: Collection[object] = ()
) -> str | None:
    """The country value the request gives for this parameter, in the form its schema
    takes (``_form``): a nationality takes a held mention only; any other country a mention
    not held first. None when the request names none, or none the schema can hold."""
    mentions = mentioned(query)
    if not mentions:
        return None
    if _NATIONALITY.search(f"{name} {spec.get('description') or ''}"):
        ordered = [m for m in mentions if m.held]
    else:
        ordered = [m for m in mentions if not m.held] + [m for m in mentions if m.held]
    for mention in ordered:
        value = _form(mention, spec)
        if value is not None and value not in taken:
            return value
    return None


def _form(mention: Mention, spec: dict[str, Any]) -> str | None:
    """The mention as the schema takes it: a code its pattern or enum accepts, or as written."""
    if isinstance(spec.get("enum"), list) or isinstance(spec.get("pattern"), str):
        return code_taken((mention.alpha_2, mention.alpha_3), spec)
    return mention.text


def code_taken(codes: Collection[str], spec: dict[str, Any]) -> str | None:
    """The first of ``codes`` the schema takes: one of its ``enum``, or one its ``pattern``
    matches whole. None when neither takes one (or the schema has neither)."""
    enum = spec.get("enum")
    if isinstance(enum, list):
        return next((code for code in codes if code in enum), None)
    pattern = spec.get("pattern")
    if not isinstance(pattern, str):
        return None
    from gateway.registry.patterns import PatternError, compile_pattern, search

    try:
        program = compile_pattern(pattern)
    except PatternError:
        return None
    for code in codes:
        match = search(program, code)
        if match is not None and match.group(0) == code:
            return code
    return None


def mentioned(query: str) -> list[Mention]:
    """The countries ``query`` names, in order, each once. Names are looked up, not
    searched for: a run of words while it begins a name, and each piece of a Chinese run
    up to 8 characters, is one dictionary lookup (a request costs its length)."""
    codes = _tables()
    found = [*_english_mentions(query, codes), *_chinese_mentions(query, codes)]
    found.sort(key=lambda m: m.start)
    seen: set[tuple[str, bool]] = set()
    unique = []
    for mention in found:
        if (mention.alpha_2, mention.held) not in seen:
            seen.add((mention.alpha_2, mention.held))
            unique.append(mention)
    return unique


_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")
_CJK_LONGEST = 8  # characters of the longest Chinese name looked up


def _english_mentions(query: str, codes: _Codes) -> list[Mention]:
    """Each run of words that is a name, the longest first; a run grows only while it
    begins some name (``_Codes.prefixes``), so a word costs about one lookup."""
    words = list(_LATIN_WORD.finditer(query))
    lowered = [w.group(0).lower() for w in words]
    found: list[Mention] = []
    i = 0
    while i < len(words):
        best: Mention | None = None
        key, n = lowered[i], 1
        while True:
            text = query[words[i].start() : words[i + n - 1].end()]
            best = _english_mention(query, words[i].start(), text, codes) or best
            if i + n >= len(words) or key not in codes.prefixes:
                break
            if not query[words[i + n - 1].end() : words[i + n].start()].isspace():
                break  # words of one name stand apart by blanks only
            key, n = f"{key} {lowered[i + n]}", n + 1
        if best is not None:
            found.append(best)
            i += len(_LATIN_WORD.findall(best.text))
        else:
            i += 1
    return found


def _english_mention(query: str, start: int, text: str, codes: _Codes) -> Mention | None:
    key = " ".join(w.lower() for w in _LATIN_WORD.findall(text))
    if key in _CAPITALS_ONLY and (not text.isupper() or query.isupper()):
        return None  # "us", "uk" in lower case (or all a request in capitals) are other words
    code = codes.english.get(key)
    held = code is None  # a people's name: "Canadians", "Indian"
    if code is None:
        code = codes.demonyms.get(key) or codes.demonyms.get(key[:-1])
    if code is None:
        return None
    held = held or bool(_HELD_AFTER.match(query, start + len(text)))
    return _mention(start, text, code, held)


def _chinese_mentions(query: str, codes: _Codes) -> list[Mention]:
    found: list[Mention] = []
    for run in _CJK_RUN.finditer(query):
        chars, i = run.group(0), 0
        while i < len(chars) - 1:
            for n in range(min(_CJK_LONGEST, len(chars) - i), 1, -1):  # the longest first
                code = codes.chinese.get(chars[i : i + n])
                if code is not None:
                    end = run.start() + i + n
                    held = bool(_HELD_AFTER.match(query, end))
                    found.append(_mention(run.start() + i, chars[i : i + n], code, held))
                    i += n
                    break
            else:
                i += 1
    return found


def _mention(start: int, text: str, alpha_2: str, held: bool) -> Mention:
    country = pycountry.countries.get(alpha_2=alpha_2)
    alpha_3 = country.alpha_3 if country is not None else alpha_2
    return Mention(start, text, alpha_2, alpha_3, held)


_DEMONYM_FORMS: tuple[Callable[[str], str], ...] = (
    lambda base: base + "n",
    lambda base: base[:-1] + "ian",
    lambda base: base + "ian",
    lambda base: base + "ese",
    lambda base: base[:-1] + "ese",
)


@dataclass(frozen=True)
class _Codes:
    english: dict[str, str]  # a name's words, lower case, one blank apart
    chinese: dict[str, str]
    demonyms: dict[str, str]
    prefixes: frozenset[str]  # the first words of every English name longer than them


def _words(name: str) -> str:
    return " ".join(w.lower() for w in _LATIN_WORD.findall(name))


@functools.cache
def _tables() -> _Codes:
    """The countries' English and Chinese names and demonyms, with their codes; built
    once, on the first request with a country parameter."""
    english: dict[str, str] = {}
    chinese: dict[str, str] = {}
    demonyms: dict[str, str] = {}
    translation = gettext.translation(
        "iso3166-1", pycountry.LOCALES_DIR, languages=["zh_CN"], fallback=True
    )
    for country in pycountry.countries:
        code = country.alpha_2
        for attribute in ("name", "common_name", "official_name"):
            value = getattr(country, attribute, None)
            if value and "," not in value and "(" not in value:
                english.setdefault(_words(value), code)
        translated = translation.gettext(country.name)
        if translated != country.name and len(translated) <= _CJK_LONGEST:
            chinese.setdefault(translated, code)
    # "India" → indian, "Canada" → canadian, "Brazil" → brazilian, "Japan" → japanese; the
    # more common form first for every country (Nigeria's "nigerian" before Niger's).
    for derive in _DEMONYM_FORMS:
        for country in pycountry.countries:
            base = (getattr(country, "common_name", None) or country.name).lower()
            if base.isalpha():
                demonyms.setdefault(derive(base), country.alpha_2)
    english.update(_ALIASES)
    chinese.update(_CHINESE_ALIASES)
    demonyms.update(_DEMONYMS)
    prefixes = frozenset(
        " ".join(name.split()[:n]) for name in english for n in range(1, len(name.split()))
    )
    return _Codes(english, chinese, demonyms, prefixes)


@functools.cache
def currency_codes() -> frozenset[str]:
    """ISO 4217 codes ("USD", "EUR"): a currency, never a person's or a payee's name."""
    return frozenset(c.alpha_3 for c in pycountry.currencies)
