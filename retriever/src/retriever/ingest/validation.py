"""Checks every document passes before it is chunked, from the API and the CLI alike."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

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
    encoded = json.dumps(metadata)
    if len(encoded.encode()) > settings.metadata_max_bytes:
        raise MetadataTooLarge(len(encoded.encode()), settings.metadata_max_bytes)
    if "\\u0000" in encoded or "\\ud8" in encoded or "\\udc" in encoded:
        raise InvalidText("the metadata contains NUL or unpaired surrogate characters")
    return Document(source, text, metadata)
