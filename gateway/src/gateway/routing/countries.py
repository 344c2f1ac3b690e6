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
    "usa": "US", "america": "US", "the states": "US", "korea": "KR", "south korea": "KR",
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
    codes = (mention.alpha_2, mention.alpha_3)
    enum = spec.get("enum")
    if isinstance(enum, list):
        return next((code for code in codes if code in enum), None)
    pattern = spec.get("pattern")
    if isinstance(pattern, str):
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
    return mention.text


def mentioned(query: str) -> list[Mention]:
    """The countries ``query`` names, in order, each once."""
    english, chinese, codes = _tables()
    found: list[Mention] = []
    for match in english.finditer(query):
        text = match.group(0)
        key = text.lower()
        if key in _CAPITALS_ONLY and not text.isupper():
            continue
        code = codes.english.get(key)
        held = code is None  # a people's name: "Canadians", "Indian"
        if code is None:
            code = codes.demonyms.get(key) or codes.demonyms.get(key[:-1])
        if code is None:
            continue
        held = held or bool(_HELD_AFTER.match(query, match.end()))
        found.append(_mention(match.start(), text, code, held))
    for match in chinese.finditer(query):
        held = bool(_HELD_AFTER.match(query, match.end()))
        code = codes.chinese[match.group(0)]
        found.append(_mention(match.start(), match.group(0), code, held))
    found.sort(key=lambda m: m.start)
    seen: set[tuple[str, bool]] = set()
    unique = []
    for mention in found:
        if (mention.alpha_2, mention.held) not in seen:
            seen.add((mention.alpha_2, mention.held))
            unique.append(mention)
    return unique


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
    english: dict[str, str]
    chinese: dict[str, str]
    demonyms: dict[str, str]


@functools.cache
def _tables() -> tuple[re.Pattern[str], re.Pattern[str], _Codes]:
    """The English and Chinese names' patterns (longest first), and their codes; built
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
                english.setdefault(value.lower(), code)
        translated = translation.gettext(country.name)
        if translated != country.name:
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
    words = sorted({*english, *demonyms, *(d + "s" for d in demonyms)}, key=len, reverse=True)
    english_pattern = re.compile(
        r"(?<![A-Za-z])(?:" + "|".join(map(re.escape, words)) + r")(?![A-Za-z])", re.IGNORECASE
    )
    chinese_pattern = re.compile("|".join(map(re.escape, sorted(chinese, key=len, reverse=True))))
    return english_pattern, chinese_pattern, _Codes(english, chinese, demonyms)
