"""Offline rules for what is worth remembering from a turn.

Three kinds of fact, all from the *user's* words, never from tool output or
documents (a tool result can say anything; only what the user typed or asked
for becomes a memory):

- ``explicit``: "remember that …", "记住 …" — the rest of the sentence.
- ``preference``: a statement about the user: "my usual SKU is SKU2024003",
  "I prefer answers in German", "我常用的 SKU 是 SKU2024003".
- ``identifier``: an id-like argument of a successful tool call that the user
  typed in the message (so an id a model lifted from a document never counts).

With a model configured, the model is also asked for facts (``model``) — from
the user's message only, never the tools' output — and its lines pass the same
secret filter.

A fact that looks like a secret (a password, token or key, or a long random
string) is never kept, whatever the user asked.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_FACT_CHARS = 300

_EXPLICIT = re.compile(
    r"(?:^|[.!?。！？,;]\s*|\band\s+)(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?"
    r"[:,]?\s+"
    r"(?P<fact>[^.!?。！？]{3,300})"
    r"|(?:请)?记住[:：,，]?\s*(?P<zh>[^。！？!?]{2,200})",
    re.IGNORECASE,
)
_STATEMENT = re.compile(
    r"(?P<fact>\b(?:my|our)\s+(?:[\w-]+\s+){0,3}?(?:is|are|=)\s+[^\s,;!?。，；]+"
    r"(?:\s+(?-i:[A-Z])[\w-]*)*"
    r"|\bI\s+(?:prefer|always use|usually use|mostly use|work with|am in charge of)\s+"
    r"[^.,;!?。，；]{2,80}"
    r"|我(?:们)?(?:常用|平时用|默认|最常用|一般用|负责)?的?[^\s，。！？,]{1,12}?是\s*[^\s，。！？,]{1,40})",
    re.IGNORECASE,
)
_ID_VALUE = re.compile(r"^(?=.*\d)[A-Za-z0-9][A-Za-z0-9_.:/-]{2,63}$")
_SECRET_WORDS = re.compile(
    r"pass(word|wd|phrase)|secret|token|api[ _-]?key|credential|private key|bearer|"
    r"otp|\bpin\b|密码|口令|密钥|令牌",
    re.IGNORECASE,
)
_SECRET_SHAPES = re.compile(
    r"\b(sk|pk|rk|ghp|gho|xox[abp]|AKIA)[-_A-Za-z0-9]{8,}|[A-Za-z0-9+/=_-]{32,}"
)


@dataclass(frozen=True)
class Fact:
    text: str
    kind: str  # explicit | preference | identifier | model


def looks_secret(text: str) -> bool:
    return bool(_SECRET_WORDS.search(text) or _SECRET_SHAPES.search(text))


def _clean(text: str) -> str:
    text = " ".join(text.split()).strip(" ,;:，；：")
    return text[:MAX_FACT_CHARS]


def from_message(message: str) -> list[Fact]:
    """Facts the user stated or asked to be remembered in ``message``."""
    facts: list[Fact] = []
    for match in _EXPLICIT.finditer(message):
        facts.append(Fact(_clean(match.group("fact") or match.group("zh") or ""), "explicit"))
    for match in _STATEMENT.finditer(message):
        text = _clean(match.group("fact"))
        if not any(text in fact.text for fact in facts):
            facts.append(Fact(text, "preference"))
    return [fact for fact in facts if len(fact.text) >= 3]


def from_calls(message: str, calls: Iterable[tuple[str, Mapping[str, Any]]]) -> list[Fact]:
    """Identifiers the user typed that a successful call ``(tool_id, arguments)`` used."""
    facts: list[Fact] = []
    for tool_id, arguments in calls:
        for name, value in arguments.items():
            if isinstance(value, str) and _ID_VALUE.match(value) and value in message:
                facts.append(Fact(f"Works with {name} {value} (used with {tool_id})", "identifier"))
    return facts


EXTRACTION_SYSTEM = (
    "You decide what an assistant should remember about a user across conversations. "
    "From the user's message below, list lasting facts about the user: preferences, names, "
    "identifiers they work with (SKUs, order ids, accounts), decisions. Not questions, not "
    "one-off requests, never passwords, keys or tokens. One fact per line, each starting "
    "with '- ', in the user's words and language; or the single word NONE."
)
MAX_MODEL_FACTS = 5
# The model is asked only when the user says something about themselves: a first-person
# word or a request to remember. Most turns are plain questions and cost no extra call.
_ABOUT_THE_USER = re.compile(
    r"\b(i|i'm|i'd|i've|me|my|mine|we|our|us|remember|prefer|usually|always|never|call me"
    r"|from now on|going forward|by default)\b"
    r"|我|咱|记住|以后|今后|默认|总是|一般|通常",
    re.IGNORECASE,
)


def worth_asking(message: str) -> bool:
    """Whether ``message`` may hold a fact about the user (so the model is asked)."""
    return bool(_ABOUT_THE_USER.search(message))


def from_model_answer(text: str) -> list[Fact]:
    """The ``- fact`` lines of the model's answer (anything else is ignored)."""
    facts = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(("- ", "* ")):
            fact = _clean(line[2:])
            if len(fact) >= 3:
                facts.append(Fact(fact, "model"))
    return facts[:MAX_MODEL_FACTS]


def facts_of_turn(
    message: str,
    calls: Iterable[tuple[str, Mapping[str, Any]]],
    extra: Iterable[Fact] = (),
) -> list[Fact]:
    """Every fact worth keeping from one turn, secrets left out, each once."""
    seen: set[str] = set()
    kept: list[Fact] = []
    for fact in [*from_message(message), *from_calls(message, calls), *extra]:
        key = fact.text.casefold()
        if key in seen or looks_secret(fact.text):
            continue
        seen.add(key)
        kept.append(fact)
    return kept
