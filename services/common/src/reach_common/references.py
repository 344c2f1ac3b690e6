"""Words by which a request refers to something it does not name ("this SKU", "my usual
product", "那这个 SKU"). The gateway fills such an argument from the session's previous call
or the caller's remembered facts; the agent recalls memories offline only when a request
has one of them. One list, so the two can never disagree.

``names_an_identifier`` is a cheaper hint the agent takes offline: a request that
names an id-like value ("SKU2024003", "SO-20240715001") probably does not need one
from memory, so its recall waits until a routed call proves it does."""

from __future__ import annotations

import re

REFERS_BACK = re.compile(
    r"\b(this|that|it|its|same|previous|above|these|those|them|they|my|our|usual)\b"
    r"|这个|那个|该|它|这|那|上面|刚才|我的|我们的|常用|平时|其中|顺便",
    re.IGNORECASE,
)


def refers_back(text: str) -> bool:
    """Whether ``text`` refers to something it does not name."""
    return bool(REFERS_BACK.search(text))


# Letters then at least three digits, with at most one joining '-' or '_'; or a long
# number. What ids, order numbers and SKUs look like across the shipped manifests.
IDENTIFIER = re.compile(r"\b(?:[^\W\d_]+[-_]?\d{3,}[\w-]*|\d{6,})\b")


def names_an_identifier(text: str) -> bool:
    """Whether ``text`` names an id-like value itself."""
    return bool(IDENTIFIER.search(text))
