"""Errors of stored tool outputs (handles); each carries the ``reason`` clients branch on."""

from __future__ import annotations

from reach_common.errors import NotFound, ReachError, Unprocessable
from retriever.search.errors import preview


class HandleNotFound(NotFound):
    """Unknown, expired, or another caller's: the same answer, so a handle's existence is
    never confirmed to someone who may not read it."""

    reason = "handle_not_found"

    def __init__(self, handle: str) -> None:
        super().__init__(
            f"No stored output {preview(handle)!r} for this caller: handles belong to the "
            "caller the tool ran for, and expire (see expires_at when it was stored).",
            handle=preview(handle),
        )


class InvalidHandleInput(Unprocessable):
    reason = "invalid_handle_input"

    def __init__(self, problem: str) -> None:
        super().__init__(f"The output cannot be stored: {problem}.")


class HandleSearchUnsupported(Unprocessable):
    reason = "invalid_handle_search"


class TooManyHandles(ReachError):
    status_code = 429
    reason = "too_many_handles"

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"This caller already has {limit} stored outputs that have not expired "
            "(HANDLE_MAX_PER_OWNER); wait for some to expire or delete them.",
            limit=limit,
        )
