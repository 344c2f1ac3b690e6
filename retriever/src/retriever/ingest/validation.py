"""Checks every document passes before it is chunked, from the API and the CLI alike."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from typing import Any

from reach_common.errors import ReachError
from reach_common.storable import unstorable_at
from retriever.ingest.errors import (
    EmptyText,
    InvalidSource,
    InvalidText,
    MetadataTooLarge,
    TextTooLarge,
)
from retriever.ingest.service import Document
from retriever.settings import Settings

MAX_SOURCE_CHARS = 512


def check_source(source: str) -> None:
    if not source.strip():
        raise InvalidSource("it is empty")
    if len(source) > MAX_SOURCE_CHARS:
        raise InvalidSource(f"it has {len(source)} characters, at most {MAX_SOURCE_CHARS}")
    if source != source.strip():
        raise InvalidSource("it starts or ends with whitespace")
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in source):
        raise InvalidSource("it contains control characters")


def check_document(
    source: str, text: str, metadata: dict[str, Any] | None, settings: Settings
) -> Document:
    """A :class:`Document`, or the :class:`ReachError` that says what is wrong."""
    check_source(source)
    if len(text) > settings.ingest_max_chars:
        raise TextTooLarge(len(text), settings.ingest_max_chars)
    if not text.strip():
        raise EmptyText(source)
    if "\x00" in text:
        raise InvalidText("the text contains NUL characters (is it a binary file?)")
    try:
        text.encode()
    except UnicodeEncodeError:
        raise InvalidText("the text contains unpaired surrogate characters") from None
    metadata = metadata or {}
    check_metadata(metadata, settings, InvalidText)
    return Document(source, text, metadata)


def check_metadata(
    metadata: dict[str, Any], settings: Settings, invalid: Callable[[str], ReachError]
) -> None:
    """Metadata Postgres can store as jsonb, within METADATA_MAX_BYTES; else ``invalid(why)``."""
    size = len(json.dumps(metadata).encode())
    if size > settings.metadata_max_bytes:
        raise MetadataTooLarge(size, settings.metadata_max_bytes)
    where = unstorable_at(metadata)
    if where is not None:
        at = f" (at {where})" if where else ""
        raise invalid(
            f"the metadata contains NUL or unpaired surrogate characters, or a number that "
            f"is not finite{at}"
        )
