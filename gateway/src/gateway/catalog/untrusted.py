"""Untrusted text, marked: simple, documented heuristics for instructions aimed at the model.

Tool descriptions and tool outputs end up in a model's prompt. Anyone who can
write either (a registrant, an upstream API, a document a tool returns) can try
to steer the model: "ignore previous instructions", "call the tool
``transfer_funds``", text hidden in zero-width or tag characters, a base64 blob
that decodes to an instruction. These functions look for such text and return
*flag names*; they never change or refuse anything. A flag is a signal for
operators (span, audit row, registration response) and a reason for the agent
to frame the text as data. No claim of perfect detection: a paraphrase gets
through, and an honest text may, rarely, raise a flag.

Flags (each its own check, see ``_PHRASES`` and the functions below):

- ``ignore_instructions``: "ignore / disregard / forget (all) previous / prior / above
  instructions", "ignore everything above";
- ``role_override``: "you are now ...", "from now on you ...", "pretend to be",
  "jailbreak" / "developer mode" / "DAN";
- ``system_prompt``: "system prompt", "system message", "your (hidden / initial)
  instructions";
- ``chat_template_token``: chat-template markers such as ``<|im_start|>``,
  ``[INST]``, ``<<SYS>>``, ``<system>``;
- ``tool_call_directive``: "call / use / invoke / run / execute the tool X",
  "use the X tool", "you must call ..." (naming a tool the way an API does,
  ``sales_query`` alone, raises nothing);
- ``exfiltration_request``: "send / forward / email / post ... the conversation /
  api key / password / credentials / secrets ... to";
- ``conceal_from_user``: "do not tell / mention / reveal ... (to) the user";
- ``zero_width_chars``: U+200B, U+2060, U+FEFF (not leading), U+180E, or a run of two
  or more U+200C / U+200D (one joiner is ordinary in emoji and some scripts);
- ``bidi_control``: bidirectional embeddings, overrides and isolates
  (U+202A-U+202E, U+2066-U+2069), which make text read differently than it runs;
- ``unicode_tags``: tag characters (U+E0000-U+E007F), invisible ASCII look-alikes; the
  ASCII they spell ("ASCII smuggling") is scanned for the phrases too;
- ``base64_blob``: a run of 64 or more base64 characters mixing upper case, lower
  case and digits; a blob that decodes to text is scanned too, and its flags added;
- ``not_fully_scanned``: the text was longer than :data:`MAX_SCAN_CHARS` (or an
  output nested deeper than :data:`MAX_DEPTH`); only the part before was scanned.

Phrases are matched case-insensitively after NFKC normalisation with the
invisible characters above removed, so ``i\\u200bgnore previous instructions``
still matches. Every regex runs on RE2 (linear time), the text scanned is
capped, and an output is walked without recursion, so a huge or hostile input
costs bounded time.
"""

from __future__ import annotations

import base64
import binascii
import unicodedata
from collections.abc import Iterable
from typing import Any

import re2

#: Characters scanned per call at most (descriptions and outputs alike).
MAX_SCAN_CHARS = 8_000_000
#: Containers deeper than this in an output are not walked.
MAX_DEPTH = 200
#: Base64 blobs decoded and re-scanned per call at most, and the longest decoded.
MAX_DECODED_BLOBS = 8
MAX_DECODED_CHARS = 65_536
_SEPARATOR = "\x00"  # between an output's strings: no phrase pattern crosses it


def _compile(pattern: str) -> Any:
    options = re2.Options()
    options.log_errors = False
    return re2.compile(pattern, options)


_ARTICLE = r"(?:the |a |an |this |that |your |my )?"
_PHRASES: tuple[tuple[str, Any], ...] = tuple(
    (flag, _compile(pattern))
    for flag, pattern in (
        (
            "ignore_instructions",
            r"\b(?:ignore|disregard|forget|override|skip|bypass)\s+(?:all\s+|any\s+|the\s+|"
            r"your\s+|of\s+)*(?:previous|prior|preceding|earlier|above|former|original|"
            r"system|safety)\s+(?:instructions?|prompts?|rules|directions|directives|"
            r"guidelines|messages|context|constraints)"
            r"|\b(?:ignore|disregard|forget)\s+(?:all\s+|everything\s+)+(?:above|before|"
            r"you\s+(?:were|have\s+been)\s+told)",
        ),
        (
            "role_override",
            r"\byou\s+are\s+now\s+(?:a|an|the|in|my|no\s+longer|free|dan|unrestricted)\b"
            r"|\bfrom\s+now\s+on,?\s+(?:you|act|respond|answer|reply)\b"
            r"|\bpretend\s+(?:to\s+be|you\s+are)\b|\bjailbr(?:eak|oken)\b"
            r"|\bdeveloper\s+mode\b|\bdo\s+anything\s+now\b",
        ),
        (
            "system_prompt",
            r"\bsystem\s+(?:prompt|message|instructions?)\b"
            r"|\byour\s+(?:hidden\s+|initial\s+|original\s+|secret\s+)?(?:instructions|"
            r"prompt)\s+(?:are|say|were)\b|\breveal\s+your\s+(?:instructions|prompt|rules)\b",
        ),
        (
            "chat_template_token",
            r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|"
            r"start_header_id)\s*\|>|\[/?inst\]|<</?sys>>|</?\s*system\s*>",
        ),
        (
            "tool_call_directive",
            r"\b(?:call|use|invoke|run|execute|trigger)\s+" + _ARTICLE + r"(?:tool|function)"
            r"\s*[:=]?\s*[`'\"]?[a-z][a-z0-9_.-]*[`'\"]?\s*(?:with|\(|now|to|and|immediately|"
            r"before|first|,|\.|;|$)"
            r"|\b(?:call|use|invoke|run|execute|trigger)\s+" + _ARTICLE + r"[`'\"]?"
            r"[a-z][a-z0-9]*_[a-z0-9_]+[`'\"]?\s+(?:tool|function)\b"
            r"|\byou\s+(?:must|should|need\s+to|have\s+to)\s+(?:now\s+|immediately\s+|first\s+)?"
            r"(?:call|invoke|execute|run|use)\s+(?:the\s+)?(?:[`'\"]?[a-z][a-z0-9]*_[a-z0-9_]+|"
            r"tool\b|function\b)",
        ),
        (
            "exfiltration_request",
            r"\b(?:send|forward|email|e-mail|post|upload|leak|exfiltrate|transmit)\s+"
            r"(?:all\s+|every\s+)?(?:the\s+|your\s+|my\s+|their\s+|this\s+)?(?:entire\s+|"
            r"full\s+|whole\s+)?(?:conversation|chat\s+history|messages|api\s+keys?|"
            r"passwords?|credentials|secrets?|tokens?|private\s+keys?|session\s+cookies?|"
            r"user\s+data|personal\s+data)\b[^\x00]{0,80}?\bto\b",
        ),
        (
            "conceal_from_user",
            r"\b(?:do\s+not|don't|dont|never)\s+(?:tell|mention|inform|reveal|show|disclose)"
            r"\s+(?:this\s+|it\s+|anything\s+)?(?:to\s+)?(?:the\s+)?(?:user|human|customer)\b",
        ),
    )
)
# Every phrase pattern in one: a text none of them matches (nearly every tool output) is
# settled in one RE2 pass instead of one per flag, each with the wrapper's own cost.
_ANY_PHRASE = _compile("|".join(f"(?:{pattern.pattern})" for _, pattern in _PHRASES))
_BASE64_RUN = _compile(r"[A-Za-z0-9+/]{64,}={0,2}|[A-Za-z0-9_-]{64,}={0,2}")

_ZERO_WIDTH_ALWAYS = frozenset("\u200b\u2060\u180e")
_JOINERS = frozenset("\u200c\u200d")
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_TAGS = range(0xE0000, 0xE0080)
# What phrase matching deletes first: every invisible character above.
_INVISIBLE = {
    ord(c): None for c in (*_ZERO_WIDTH_ALWAYS, *_JOINERS, *_BIDI, "\ufeff", "\u00ad")
} | {code: None for code in _TAGS}


def _hidden_unicode(text: str) -> set[str]:
    flags: set[str] = set()
    if not text or max(text) < "\u180e":  # no character the loop below looks at
        return flags
    previous_joiner = False
    for index, char in enumerate(text):
        code = ord(char)
        if code < 0x180E:
            previous_joiner = False
            continue
        if char in _ZERO_WIDTH_ALWAYS or (char == "\ufeff" and index > 0):
            flags.add("zero_width_chars")
        elif char in _JOINERS:
            if previous_joiner:
                flags.add("zero_width_chars")
            previous_joiner = True
            continue
        elif char in _BIDI:
            flags.add("bidi_control")
        elif code in _TAGS:
            flags.add("unicode_tags")
        previous_joiner = False
    return flags


def _phrases(text: str) -> set[str]:
    normal = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).lower()
    if not _ANY_PHRASE.search(normal):
        return set()
    return {flag for flag, pattern in _PHRASES if pattern.search(normal)}


def _smuggled(text: str) -> str:
    """The ASCII that tag characters spell ("ASCII smuggling": U+E0041 reads as "A")."""
    return "".join(chr(ord(c) - 0xE0000) if ord(c) in _TAGS else " " for c in text).strip()


def _mixed(run: str) -> bool:
    return (
        any(c.isupper() for c in run)
        and any(c.islower() for c in run)
        and any(c.isdigit() for c in run)
    )


def _decoded(run: str) -> str | None:
    """The text a base64 run stands for, when it decodes to readable UTF-8."""
    data = run[: MAX_DECODED_CHARS * 4 // 3].rstrip("=")
    data = data[: len(data) - len(data) % 4]
    try:
        raw = (
            base64.urlsafe_b64decode(data)
            if ("-" in data or "_" in data)
            else base64.b64decode(data, validate=True)
        )
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    printable = sum(1 for c in text if c.isprintable() or c.isspace())
    return text if text and printable >= 0.9 * len(text) else None


def _base64(text: str) -> set[str]:
    flags: set[str] = set()
    decoded = 0
    for match in _BASE64_RUN.finditer(text):
        run = match.group(0)
        if not _mixed(run):
            continue
        flags.add("base64_blob")
        if decoded < MAX_DECODED_BLOBS:
            decoded += 1
            inner = _decoded(run)
            if inner is not None:
                flags |= _phrases(inner) | _hidden_unicode(inner)
    return flags


def _scan(text: str) -> set[str]:
    flags: set[str] = set()
    if len(text) > MAX_SCAN_CHARS:
        text = text[:MAX_SCAN_CHARS]
        flags.add("not_fully_scanned")
    flags |= _hidden_unicode(text) | _phrases(text) | _base64(text)
    if "unicode_tags" in flags:
        flags |= _phrases(_smuggled(text))
    return flags


def flags_for_text(text: str) -> list[str]:
    """The flags one piece of text raises (sorted; empty when none)."""
    return sorted(_scan(text))


def flags_for_description(*parts: str | None) -> list[str]:
    """The flags a tool's model-facing text raises: its name, description, aliases, examples."""
    return flags_for_text(_SEPARATOR.join(p for p in parts if p))


def _strings(obj: Any) -> tuple[list[str], bool]:
    """Every string in a JSON-like value (keys too), up to MAX_SCAN_CHARS + 1 in total;
    True as well when something was left unwalked."""
    found: list[str] = []
    total = 0
    partial = False
    stack: list[tuple[Any, int]] = [(obj, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            found.append(value)
            total += len(value) + 1
        elif isinstance(value, dict | list | tuple):
            if depth >= MAX_DEPTH:
                partial = True
                continue
            items: Iterable[Any] = (
                (x for pair in value.items() for x in pair) if isinstance(value, dict) else value
            )
            stack.extend((item, depth + 1) for item in reversed(list(items)))
        if total > MAX_SCAN_CHARS:
            return found, True
    return found, partial


def flags_for_output(obj: Any) -> list[str]:
    """The flags a tool's output raises: every string in it (keys included) is scanned.

    ``obj`` is whatever the tool returned (decoded JSON, text, numbers). Numbers,
    booleans and ``None`` raise nothing. Sorted flag names; empty when none.
    """
    strings, partial = _strings(obj)
    flags = _scan(_SEPARATOR.join(strings))
    if partial:
        flags.add("not_fully_scanned")
    return sorted(flags)
