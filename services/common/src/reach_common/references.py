"""Words by which a request refers to something it does not name ("this SKU", "my usual
product", "那这个 SKU"). The gateway fills such an argument from the session's previous call
or the caller's remembered facts; the agent recalls memories offline only when a request
has one of them. One list, so the two can never disagree."""

from __future__ import annotations

import re

REFERS_BACK = re.compile(
    r"\b(this|that|it|its|same|previous|above|these|those|my|our|usual)\b"
    r"|这个|那个|该|它|这|那|上面|刚才|我的|我们的|常用|平时",
    re.IGNORECASE,
)


def refers_back(text: str) -> bool:
    """Whether ``text`` refers to something it does not name."""
    return bool(REFERS_BACK.search(text))
