"""Source errors; each carries the ``reason`` clients branch on."""

from __future__ import annotations

from reach_common.errors import NotFound


class SourceNotFound(NotFound):
    reason = "source_not_found"

    def __init__(self, source: str) -> None:
        super().__init__(
            f"No source named {source!r} has been ingested; GET /sources lists them.",
            source=source,
        )
