"""A long enum, indexed once, so a request costs its own length and not the enum's.

``extract`` reads an enum of a few options option by option: each of its rules (the
option written out, inflected, by its first word, by a later word …) asks of every
option whether the request names it. An enum of thousands (a catalogue's SKUs, an
upstream MCP server's or an imported OpenAPI document's list) would cost every ``/run``
that ranks its tool the whole list, once per rule, and a list parameter once per value
it takes. Past ``LONG_ENUM`` options the enum is indexed instead, once per list (cached
by the list's identity: the registry keeps one schema per tool version), and a request
looks up only:

- the options whose tokens (at most ``MAX_KEY_TOKENS`` of them) the request writes in a
  row, and the Chinese options (at most ``MAX_KEY_HAN`` characters of them) it writes
  anywhere (``written``): every option the request writes out is among them;
- the options that share a word's first three letters or a Chinese character with the
  request (``related``): the ones the word rules can name ("finals" for ``final``,
  "prod" for ``production``, "repair" for ``fault_repair``, 刮 for 刮擦). Each rule still
  asks "the one option that …" of all of them, as every option sharing the word is
  there. When more than ``LONG_ENUM`` share one, the word rules are not read;
- a number the request writes, by its value (``numbers``);
- the currency and language codes the enum has (``currency_codes``, ``language_codes``).

What a long enum loses: the rules that need no shared letter (an English request for a
Chinese option by its English sense, a description's pairing beyond the longest
options) read only the related options.
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

LONG_ENUM = 64  # options an enum may have and still be read option by option
# Indexes kept: at most this many options in all (the least recently used go first; the
# newest stays). An option of text costs its index about 0.45 KB (a number 0.1 KB), so
# about 135 MB at most.
CACHED_OPTIONS = 300_000
# Options with no letter, digit or Chinese character ("+", "-") are looked at for every
# request: at most this many of them.
MAX_UNKEYED = LONG_ENUM

MAX_KEY_TOKENS = 8  # an option's tokens its key holds
MAX_KEY_HAN = 16  # a Chinese option's characters its key holds

_TOKEN = re.compile(r"[a-z0-9_]+|[^\W_a-z0-9]+")  # as ``extract._names`` bounds a word
_WORD_PARTS = re.compile(r"[_\-\s]+")
_LATIN_OR_DIGITS = re.compile(r"[a-z0-9]+")
_HAN = re.compile(r"[\u3400-\u9fff]")
_HAN_RUN = re.compile(r"[\u3400-\u9fff]+")
_LANGUAGE_CODE = re.compile(r"[a-z]{2}(?:[-_][a-z]{2,4})?")


def is_number(option: object) -> bool:
    return isinstance(option, int | float) and not isinstance(option, bool)


def currency_codes(options: Iterable[Any]) -> dict[str, Any]:
    """The options that may be ISO 4217 codes ("usd", "EUR"), by their code."""
    codes: dict[str, Any] = {}
    for option in options:
        if isinstance(option, str) and len(option) == 3:
            codes.setdefault(option.upper(), option)
    return codes


def language_codes(options: Iterable[Any]) -> dict[str, Any]:
    """The options that may be ISO 639-1 codes ("en", "zh-CN"), by their language."""
    codes: dict[str, Any] = {}
    for option in options:
        if isinstance(option, str) and _LANGUAGE_CODE.fullmatch(option.lower()):
            codes.setdefault(option.lower()[:2], option)
    return codes


def han_characters(text: str) -> set[str]:
    return set(_HAN.findall(text))


def words(lowered: str) -> set[str]:
    """The Latin words and numbers of a lower-cased text (an option's, a request's)."""
    return set(_LATIN_OR_DIGITS.findall(lowered))


def word_keys(words: Iterable[str]) -> set[str]:
    """The keys ``related`` looks words up by: their first three letters."""
    return {word[:3] for word in words if word}


@dataclass
class EnumIndex:
    """One enum's options, longest first (as ``extract`` tries them), and where to find
    them. The lists hold positions in ``by_length``, in order."""

    by_length: list[Any]
    by_spelling: dict[tuple[str, ...] | str, list[int]] = field(default_factory=dict)
    token_counts: set[int] = field(default_factory=set)  # of the keys by tokens
    han_lengths: set[int] = field(default_factory=set)  # of the Chinese keys
    by_key: dict[str, list[int]] = field(default_factory=dict)
    unkeyed: list[int] = field(default_factory=list)
    numbers: dict[float, int] = field(default_factory=dict)
    currency_codes: dict[str, Any] = field(default_factory=dict)
    language_codes: dict[str, Any] = field(default_factory=dict)
    facts: dict[Callable[[list[Any]], Any], Any] = field(default_factory=dict)

    def fact(self, compute: Callable[[list[Any]], Any]) -> Any:
        """``compute`` of all the options (``by_length``), computed once."""
        if compute not in self.facts:
            self.facts[compute] = compute(self.by_length)
        return self.facts[compute]

    def written(self, *lowered: str) -> list[Any]:
        """The options the request (``lowered``: its forms, lower-cased) may write out,
        longest first: their key's tokens in a row, or a Chinese key anywhere."""
        found: set[int] = set(self.unkeyed)
        for text in lowered:
            tokens = _TOKEN.findall(text)
            for start in range(len(tokens)):
                for count in self.token_counts:
                    key = tuple(tokens[start : start + count])
                    found.update(self.by_spelling.get(key, ()))
            for run in _HAN_RUN.findall(text) if self.han_lengths else ():
                for start in range(len(run)):
                    for length in self.han_lengths:
                        found.update(self.by_spelling.get(run[start : start + length], ()))
        return [self.by_length[i] for i in sorted(found)]

    def related(self, keys: set[str], limit: int = LONG_ENUM) -> list[Any] | None:
        """The options that share a key with the request, longest first; None when more
        than ``limit`` do."""
        found: set[int] = set()
        for key in keys:
            sharing = self.by_key.get(key, ())
            if len(sharing) > limit:  # before reading them: a common word's may be many
                return None
            found.update(sharing)
            if len(found) > limit:
                return None
        return [self.by_length[i] for i in sorted(found)]


def _build(enum: list[Any]) -> EnumIndex:
    options = [o for o in enum if isinstance(o, str | int | float)]
    index = EnumIndex(by_length=sorted(options, key=lambda o: -len(str(o))))
    for position, option in enumerate(index.by_length):
        if is_number(option):
            value = finite(option)
            if value is not None:
                index.numbers.setdefault(value, position)
            continue
        text = str(option).lower()
        keys = _spellings(text)
        for key in keys:
            index.by_spelling.setdefault(key, []).append(position)
            if isinstance(key, str):
                index.han_lengths.add(len(key))
            else:
                index.token_counts.add(len(key))
        if not keys and len(index.unkeyed) < MAX_UNKEYED:
            index.unkeyed.append(position)
        for key in word_keys(words(text)) | han_characters(text):
            index.by_key.setdefault(key, []).append(position)
    index.currency_codes = currency_codes(options)
    index.language_codes = language_codes(options)
    return index


def _spellings(text: str) -> set[tuple[str, ...] | str]:
    """The keys a request writing the option ``text`` holds: a Chinese option's first
    characters (written anywhere: Chinese needs no spaces), else its first tokens, as
    written and with its underscores and dashes read as spaces."""
    if len(text) >= 2 and _HAN_RUN.fullmatch(text):
        return {text[:MAX_KEY_HAN]}
    keys: set[tuple[str, ...] | str] = set()
    for spelled in (text, _WORD_PARTS.sub(" ", text)):
        tokens = tuple(_TOKEN.findall(spelled)[:MAX_KEY_TOKENS])
        if tokens:
            keys.add(tokens)
    return keys


def finite(number: float) -> float | None:
    """``number`` as a float, or None past a float's range."""
    try:
        value = float(number)
    except OverflowError:  # an integer past a float's range: no request writes it
        return None
    return value if math.isfinite(value) else None


_indexes: OrderedDict[int, tuple[list[Any], EnumIndex]] = OrderedDict()
_cached_options = 0
_lock = threading.Lock()


def index_of(enum: list[Any]) -> EnumIndex:
    """``enum`` indexed: built once per list object and kept while the indexes most
    recently used hold at most ``CACHED_OPTIONS`` options (the entry holds the list, so
    its id names no other list meanwhile)."""
    global _cached_options
    key = id(enum)
    with _lock:
        entry = _indexes.get(key)
        if entry is not None and entry[0] is enum:
            _indexes.move_to_end(key)
            return entry[1]
    index = _build(enum)
    with _lock:
        previous = _indexes.pop(key, None)
        if previous is not None:
            _cached_options -= len(previous[0])
        _indexes[key] = (enum, index)
        _cached_options += len(enum)
        while _cached_options > CACHED_OPTIONS and len(_indexes) > 1:
            _, (evicted, _) = _indexes.popitem(last=False)
            _cached_options -= len(evicted)
    return index


def long_enums(schema: object) -> Iterator[list[Any]]:
    """Every enum of ``schema`` past ``LONG_ENUM`` options."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            enum = node.get("enum")
            if isinstance(enum, list) and len(enum) > LONG_ENUM:
                yield enum
            stack.extend(v for k, v in node.items() if k != "enum")
        elif isinstance(node, list):
            stack.extend(node)
