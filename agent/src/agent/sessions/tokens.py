"""A cheap, deterministic token estimate for the history budget.

Exact counts need each vendor's tokenizer (and a network call for Anthropic).
The budget only has to be about right and must not change between requests,
so: one token per CJK character, one per four other characters, plus a small
per-message overhead for the role and framing.
"""

from __future__ import annotations

MESSAGE_OVERHEAD = 4


def _is_wide(char: str) -> bool:
    code = ord(char)
    return (
        0x3040 <= code <= 0x30FF  # kana
        or 0x3400 <= code <= 0x9FFF  # CJK ideographs
        or 0xAC00 <= code <= 0xD7AF  # hangul
        or 0xF900 <= code <= 0xFAFF
        or 0xFF00 <= code <= 0xFFEF  # full-width forms
    )


def estimate_tokens(text: str) -> int:
    wide = sum(1 for char in text if _is_wide(char))
    narrow = len(text) - wide
    return MESSAGE_OVERHEAD + wide + (narrow + 3) // 4
