"""Languages a request names, and which side of a translation each is on.

A tool that translates, quotes a translation or certifies one takes a pair of languages
coded as options (``source_language`` / ``target_language``, often ISO 639-1: ``en``,
``de``, ``zh``), sometimes a list of targets (``target_languages``). People name them in
words and say the direction with a word between or before them: "from English to
German", "spanish to english", "japanese->english", "into dutch, polish and german from
english", 中文合同翻成英文, 西班牙语到英语, 德语翻中文, 英译日. Each language named is read
with its side: after "from" or 从 it is the source; after "to", "into", an arrow, 成, 到,
译 or 翻 it is the target; one listed after another ("dutch, polish and german") is on
the other's side; one whose side nothing says is the source when a target is named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gateway.routing import enums

# Languages as people name them, each with its ISO 639-1 code.
WORDS = (
    ("english", "en"), ("英文", "en"), ("英语", "en"), ("chinese", "zh"), ("mandarin", "zh"),
    ("中文", "zh"), ("汉语", "zh"), ("普通话", "zh"), ("spanish", "es"), ("西班牙语", "es"),
    ("西班牙文", "es"), ("french", "fr"), ("法语", "fr"), ("法文", "fr"), ("german", "de"),
    ("德语", "de"), ("德文", "de"), ("japanese", "ja"), ("日语", "ja"), ("日文", "ja"),
    ("korean", "ko"), ("韩语", "ko"), ("韩文", "ko"), ("portuguese", "pt"), ("葡萄牙语", "pt"),
    ("russian", "ru"), ("俄语", "ru"), ("俄文", "ru"), ("arabic", "ar"), ("阿拉伯语", "ar"),
    ("italian", "it"), ("意大利语", "it"), ("vietnamese", "vi"), ("越南语", "vi"),
    ("thai", "th"), ("泰语", "th"), ("dutch", "nl"), ("荷兰语", "nl"), ("hindi", "hi"),
    ("turkish", "tr"), ("土耳其语", "tr"), ("indonesian", "id"), ("印尼语", "id"),
    ("polish", "pl"), ("波兰语", "pl"), ("swedish", "sv"), ("瑞典语", "sv"),
    ("greek", "el"), ("希腊语", "el"), ("czech", "cs"), ("捷克语", "cs"),
    ("ukrainian", "uk"), ("乌克兰语", "uk"), ("hebrew", "he"), ("希伯来语", "he"),
)  # fmt: skip
# The one character a compact direction names a language by: 英译日, 中译英, 英翻中.
_SHORT = {
    "英": "en", "中": "zh", "汉": "zh", "日": "ja", "德": "de", "法": "fr", "韩": "ko",
    "俄": "ru", "西": "es", "葡": "pt", "意": "it", "阿": "ar", "荷": "nl",
}  # fmt: skip
_ONE = f"[{''.join(_SHORT)}]"
# (not 英文翻成中文, whose words are read whole)
_COMPACT = re.compile(rf"({_ONE})[译翻]成?({_ONE})(?![语文])")
_LATIN = re.compile(r"\b(" + "|".join(w for w, _ in WORDS if w.isascii()) + r")\b")
_HAN_WORDS = re.compile("|".join(sorted((w for w, _ in WORDS if not w.isascii()), key=len)[::-1]))
_CODES = dict(WORDS)
# What puts a language on one side, written just before it.
_TO_BEFORE = re.compile(
    r"(?:\binto|\bto|->|→|=>|>|翻译成|翻成|译成|译为|翻译为|改成|成|为|到|译|翻)\s*(?:the\s+)?$",
    re.IGNORECASE,
)
_FROM_BEFORE = re.compile(
    r"(?:\bfrom|\bsource|\boriginal|从|由|原文是?)\s*(?:the\s+)?$", re.IGNORECASE
)
# One language listed after another: "dutch, polish and german", 英文、法文和德文.
_LISTED_AFTER = re.compile(r"^\s*(?:,\s*(?:and\s+)?|&|/|\band\b|\bor\b|、|，|和|及|与|跟)\s*$")
_SOURCE_NAME = re.compile(
    r"(?:^|_)(?:source|src|from|original|input)(?:_|$)|^(?:source|src|from)[A-Z]"
)
_TARGET_NAME = re.compile(
    r"(?:^|_)(?:target|dest|destination|to|into|output)(?:_|$)|^(?:target|to)[A-Z]"
)
_MAX_READ = 1000  # characters of a request read for languages


@dataclass(frozen=True)
class Named:
    start: int
    end: int
    code: str
    side: str  # "source", "target" or ""


def named(query: str) -> list[Named]:
    """The languages ``query`` names, in order, each with the side its words give it."""
    text = query[:_MAX_READ]
    lowered = text.lower()
    found: list[tuple[int, int, str]] = []
    sides: dict[int, str] = {}
    for match in _COMPACT.finditer(text):  # 英译日: English into Japanese
        found.append((match.start(1), match.end(1), _SHORT[match[1]]))
        found.append((match.start(2), match.end(2), _SHORT[match[2]]))
        sides[match.start(1)], sides[match.start(2)] = "source", "target"
    taken = {i for start, end, _ in found for i in range(start, end)}
    for pattern in (_LATIN, _HAN_WORDS):
        for match in pattern.finditer(lowered):
            if match.start() not in taken:
                found.append((match.start(), match.end(), _CODES[match[0]]))
    found.sort()
    out: list[Named] = []
    for start, end, code in found:
        before = lowered[max(0, start - 16) : start]
        side = sides.get(start, "")
        if not side and out and _LISTED_AFTER.match(lowered[out[-1].end : start]):
            side = out[-1].side  # "into dutch, polish and german"
        elif not side and _FROM_BEFORE.search(before):
            side = "source"
        elif not side and _TO_BEFORE.search(before):
            side = "target"
        out.append(Named(start, end, code, side))
    if any(n.side == "target" for n in out):  # "spanish to english": the other is the source
        out = [n if n.side else Named(n.start, n.end, n.code, "source") for n in out]
    return out


def role_of(name: str) -> str:
    """ "source" or "target" for a parameter named as one side of a translation, else ""."""
    if _SOURCE_NAME.search(name):
        return "source"
    if _TARGET_NAME.search(name):
        return "target"
    return ""


def _codes_of(spec: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The language options of a parameter (or of its items), and whether it is a list."""
    items = spec.get("items") if spec.get("type") == "array" else None
    enum = (items if isinstance(items, dict) else spec).get("enum")
    if not isinstance(enum, list) or len(enum) > enums.LONG_ENUM:
        return {}, False
    return enums.language_codes(enum), items is not None


def assign(arguments: dict[str, Any], query: str, props: dict[str, dict[str, Any]]) -> None:
    """Set a translation's languages by their sides: the source parameter the source named,
    the target the target (a list: every target named). A side the request names no
    language for is left out, so the session's previous call may give it ("and into
    French?" keeps the source). Only for a tool with both sides coded as options."""
    sides: dict[str, list[tuple[str, dict[str, Any], bool]]] = {"source": [], "target": []}
    for name, spec in props.items():
        role = role_of(name) if isinstance(spec, dict) else ""
        codes, listed = _codes_of(spec) if role else ({}, False)
        if codes:
            sides[role].append((name, codes, listed))
    if not sides["source"] or not sides["target"]:
        return
    mentions = named(query)
    if not any(n.side == "target" for n in mentions):
        return
    for role, parameters in sides.items():
        said = list(dict.fromkeys(n.code for n in mentions if n.side == role))
        for name, codes, listed in parameters:
            values = [codes[c] for c in said if c in codes]
            if not values:
                arguments.pop(name, None)
            else:
                arguments[name] = values if listed else values[0]
