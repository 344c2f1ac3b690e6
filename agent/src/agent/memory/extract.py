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

A fact that looks like a secret (a password, passcode, PIN, one-time or door code,
token or key, or a long random string) is never kept, whatever the user asked.

One turn keeps at most ``MAX_FACTS_PER_TURN`` facts, and the rules look at no more
than ``MAX_CANDIDATES`` candidates of one message (secrets and repeats included), so a
long message of statements costs a bounded amount of work and a bounded number of rows.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

MAX_FACT_CHARS = 300
# A turn keeps this many facts at most: a message of thousands of statements would
# otherwise be thousands of rows (and past ~4,000, one INSERT over the driver's limit
# of bind parameters, losing them all).
MAX_FACTS_PER_TURN = 10
# Candidates the rules look at in one message, kept or not (secrets, repeats): bounds
# the work on a long message; the rules stop reading it there.
MAX_CANDIDATES = 50

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
# Words that mark a secret. Long, unambiguous ones match inside other words too
# ("wifipassword", "db_passcode"); short ones (pw, PIN, OTP, CVV...) match as words
# only, bounded by ASCII-letter lookarounds rather than \b: a CJK character is a word
# character, so "\bpin\b" never matches in "我的PIN是4321".
_CODE_OF = (
    r"door|gate|entry|access|alarm|safe|lock|locker|garage|keypad|security|"
    r"verification|verify|auth|authentication|authori[sz]ation|login|log[ -]?in|"
    r"sign[ -]?in|2fa|mfa|sms|one[ -]?time|otp|confirmation|recovery|backup|reset|"
    r"unlock|activation|pin|wi-?fi"
)
_SECRET_WORDS = re.compile(
    r"pass[ _-]?(?:word|wd|phrase|code|key)|secret(?!ar(?:y|ies|iat))|token|"
    r"api[ _-]?key|access[ _-]?key|private[ _-]?key|signing[ _-]?key|ssh[ _-]?key|"
    r"license[ _-]?key|credential|bearer|seed[ _-]?phrase|recovery[ _-]?phrase|"
    r"(?<![a-z])(?:pw|pwd|pswd|pin|pins|otp|totp|hotp|cvv2?|cvc2?|2fa|mfa|ssn)(?![a-z])|"
    r"(?<![a-z])(?:" + _CODE_OF + r")[ _-]?codes?(?![a-z])|"
    r"(?<![a-z])codes?\s+(?:for|of|to)\s+(?:the\s+|my\s+|our\s+)?"
    r"(?:door|gate|safe|alarm|garage|building|lock|locker|keypad|front door)(?![a-z])|"
    r"(?<![a-z])(?:safe|lock|locker)\s+combination|social security|"
    r"密码|密碼|口令|密钥|密鑰|金鑰|私钥|私鑰|令牌|验证码|驗證碼|校验码|动态码|安全码|"
    r"门禁码|門禁碼|开锁码|解锁码|提取码|授权码|激活码|支付码|"
    r"暗証番号|パスワード|認証コード|秘密鍵|비밀번호|인증번호|암호",
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
    """Facts the user stated or asked to be remembered in ``message``: the first
    ``MAX_CANDIDATES`` (the rest of a long message is not read)."""
    candidates = itertools.islice(_candidates(message), MAX_CANDIDATES)
    return [fact for fact in candidates if len(fact.text) >= 3]


def _candidates(message: str) -> Iterator[Fact]:
    explicit: list[str] = []
    for match in _EXPLICIT.finditer(message):
        fact = Fact(_clean(match.group("fact") or match.group("zh") or ""), "explicit")
        explicit.append(fact.text)
        yield fact
    for match in _STATEMENT.finditer(message):
        text = _clean(match.group("fact"))
        if not any(text in said for said in explicit):
            yield Fact(text, "preference")


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
    """Every fact worth keeping from one turn, secrets left out, each once, at most
    ``MAX_FACTS_PER_TURN`` (the message's first, then the calls', then ``extra``)."""
    seen: set[str] = set()
    kept: list[Fact] = []
    for fact in itertools.chain(from_message(message), from_calls(message, calls), extra):
        key = fact.text.casefold()
        if key in seen or looks_secret(fact.text):
            continue
        seen.add(key)
        kept.append(fact)
        if len(kept) == MAX_FACTS_PER_TURN:
            break
    return kept
