"""A cheap, deterministic token estimate for the history budget.

Exact counts need each vendor's tokenizer (and a network call for Anthropic).
The budget only has to be about right and must not change between requests,
so: one token per CJK character, one per four other characters, plus a small
per-message overhead for the role and framing.
"""

from __future__ import annotations

import re

MESSAGE_OVERHEAD = 4


_WIDE = re.compile(
    "[\u3040-\u30ff"  # kana
    "\u3400-\u9fff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul
    "\uf900-\ufaff"
    "\uff00-\uffef]"  # full-width forms
)


def estimate_tokens(text: str) -> int:
    # Counted in C: ASCII text has no wide character, other text is searched by one regex.
    wide = 0 if text.isascii() else len(_WIDE.findall(text))
    narrow = len(text) - wide
    return MESSAGE_OVERHEAD + wide + (narrow + 3) // 4


class TokenCounter:
    """:func:`estimate_tokens`, corrected by what the provider reports.

    Neither SDK counts tokens offline (Anthropic's count is an API call,
    OpenAI's tokenizer files are a download), but every answer reports the
    request's real ``input_tokens``. After each model call the counter moves
    its ratio of real to estimated tokens a step towards the observed one, so
    budgets follow the provider's tokenizer within a few calls. The ratio never
    drops below 1.0: an estimate may overcount, never undercount, what was
    measured. One counter per provider and model, per process.
    """

    MAX_RATIO = 3.0
    STEP = 0.3

    def __init__(self, ratio: float = 1.0) -> None:
        self.ratio = ratio

    def scale(self, estimate: int) -> int:
        """``estimate`` (a sum of :func:`estimate_tokens`) in the provider's tokens."""
        return int(estimate * self.ratio + 0.999)

    def unscale(self, tokens: int) -> int:
        """The estimate that ``tokens`` provider tokens allow (the inverse of :meth:`scale`)."""
        return int(tokens / self.ratio)

    def count(self, text: str) -> int:
        return self.scale(estimate_tokens(text))

    def observe(self, estimate: int, reported: int) -> None:
        """One request estimated at ``estimate`` was ``reported`` tokens by the provider."""
        if estimate <= 0 or reported <= 0:
            return
        observed = min(self.MAX_RATIO, reported / estimate)
        self.ratio = max(1.0, self.ratio + self.STEP * (observed - self.ratio))
