"""Ingest errors; each carries the ``reason`` clients branch on."""

from __future__ import annotations

from reach_common.errors import ReachError, Unprocessable


class EmptyText(Unprocessable):
    reason = "empty_text"

    def __init__(self, source: str) -> None:
        super().__init__(
            f"The text of {source!r} is empty; there is nothing to index.", source=source
        )


class TextTooLarge(ReachError):
    status_code = 413
    reason = "text_too_large"

    def __init__(self, length: int, limit: int) -> None:
        super().__init__(
            f"The text has {length} characters; one ingest takes at most {limit} "
            "(INGEST_MAX_CHARS). Split the document into several sources.",
            length=length,
            limit=limit,
        )


class MetadataTooLarge(ReachError):
    status_code = 413
    reason = "metadata_too_large"

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(
            f"The metadata takes {size} bytes as JSON; at most {limit} are accepted.",
            size=size,
            limit=limit,
        )


class InvalidSource(Unprocessable):
    reason = "invalid_source"

    def __init__(self, problem: str) -> None:
        super().__init__(f"The source name is invalid: {problem}.")


class InvalidText(Unprocessable):
    reason = "invalid_text"

    def __init__(self, problem: str) -> None:
        super().__init__(f"The document cannot be stored: {problem}.")
