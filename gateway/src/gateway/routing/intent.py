"""A request that asks to read is not sent to a tool that writes.

all-MiniLM-L6-v2 weighs a request's object far more than its verb: "show me
invoice INV-2026-00042" is closer to a tool that pays invoices (whose example
"settle invoice INV-2026-00107" differs from it in one word) than to the one
that shows them, and "where is my parcel SF1234567890?" is closer to booking a
shipment than to tracking one. Routed offline, such a question would pay an
invoice or book a parcel. Two facts the router knows settle it:

- **The request asks to read** (``asks_to_read``): it is a question or begins
  with a reading verb ("what's…", "is … paid", "has … been delivered", "show
  me…", "can you check…"; 多少, 什么, 哪, 是否, 有没有, 查…, 付没付), and asks for
  no write action (``vocabulary.requested_actions``: "can you cancel…" writes).
- **The tool writes** (``writes``): it is not idempotent (or is an HTTP PUT, PATCH
  or DELETE), as HTTP says of a POST, unless its name or its description's first
  word says it reads ("search_notes", "Searches…", "get_weather"): a search behind a
  POST stays a reader.

Such a tool loses ``READ_REQUEST_PENALTY`` (all of it) on its score and its
confidence: it is not chosen, and when no reader is confident enough nothing is.
Misjudged either way, the rule fails safe: a write phrased as a question ("is it
possible to sign CT-…?") reads the contract or is refused, and a question phrased
as an order keeps its writer as before. It applies only when another candidate
only reads: a catalogue whose tools are all POSTs (BFCL and MetaTool in the bench)
is ranked exactly as before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gateway.routing import vocabulary
from gateway.routing.text import split_identifier, stem

READ_REQUEST_PENALTY = 1.0  # a writer is not chosen for a request to read

# Verbs that begin a request to read something, after any greeting or "can you".
_READ_VERBS = frozenset(
    (
        *("show", "list", "check", "find", "look", "tell", "display", "view", "pull"),
        *("fetch", "see", "search", "track", "lookup", "query", "retrieve", "confirm"),
        *("verify", "count", "compare"),
    )
)
# Question words; "have" and "do" only before a pronoun ("do I have…"; "do it" is an order).
_QUESTION_WORDS = frozenset(
    (
        *("what", "what's", "whats", "where", "where's", "when", "when's", "which", "who"),
        *("who's", "whose", "how", "how's", "why", "is", "are", "was", "were", "has"),
        *("hasn't", "did", "does", "doesn't", "isn't", "any"),
    )
)
_PRONOUN_QUESTION = re.compile(r"^(?:do|have)\s+(?:i|we|you|they|he|she)\b")
_LEAD = re.compile(
    r"^(?:(?:hey|hi|hello|ok|okay|so|um|uh|sorry|also|and|quick question|pls|please|kindly)"
    r"\b[\s,!.:;-]*)*",
    re.IGNORECASE,
)
_ASK = re.compile(
    r"^(?:(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|pls\s+|just\s+)?"
    r"|(?:i\s+(?:want|need|would\s+like)|i'd\s+like|help\s+me|let\s+me)\s+(?:to\s+)?)",
    re.IGNORECASE,
)
_FIRST_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
# Chinese: question words, reading verbs, and "A没A" questions ("付没付", "到没到").
_CJK_QUESTION = re.compile(
    r"多少|什么|哪|几[个号点天时]|是否|有没有|怎么样|怎么还|如何|啥|(\w)没\1|了没"
)
_CJK_READ = re.compile(r"^(?:请|麻烦|帮我|帮忙)?(?:查|看|显示|列出|告诉我)")
# A tool whose name, or its description's first word, is one of these reads, however it is
# called (a search behind a POST).
_READING = frozenset(
    stem(w)
    for w in (
        *("get", "search", "query", "list", "lookup", "find", "fetch", "retrieve", "show"),
        *("check", "view", "read", "status", "track", "calculate", "compute", "convert"),
        *("translate", "estimate", "quote", "count", "compare", "summarize", "summarise"),
        *("analyze", "analyse", "describe", "answer", "recommend", "look", "predict", "report"),
    )
)
_WORD = re.compile(r"[A-Za-z]+")


def asks_to_read(text: str) -> bool:
    """Whether ``text`` asks to read (a question, or a reading verb first) and to write
    nothing."""
    if vocabulary.requested_actions(text):
        return False
    head = _ASK.sub("", _LEAD.sub("", text.strip().lower()), count=1)
    first = _FIRST_WORD.match(head)
    if first is not None and (
        first.group(0) in _READ_VERBS
        or first.group(0) in _QUESTION_WORDS
        or _PRONOUN_QUESTION.match(head)
    ):
        return True
    stripped = text.strip()
    return bool(_CJK_QUESTION.search(stripped) or _CJK_READ.match(stripped))


def writes(manifest: Mapping[str, Any], reads_only: bool) -> bool:
    """Whether the tool changes something: not ``reads_only`` (idempotent, and no PUT,
    PATCH or DELETE), and neither its name nor its description's first word says it
    reads ("search_notes", "Searches…", "get_weather")."""
    if reads_only:
        return False
    names = split_identifier(f"{manifest.get('tool_id') or ''} {manifest.get('name') or ''}")
    words = _WORD.findall(names)
    first = _WORD.search(str(manifest.get("description") or ""))
    if first is not None:
        words.append(first.group(0))
    return _READING.isdisjoint(stem(w.lower()) for w in words)
