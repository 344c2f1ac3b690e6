"""Shared fixtures of the common-library tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import respx

from tests.fixtures.llm import HTTPCore2Mocker

# The SDKs send through httpcore2: respx must mock that transport.
assert HTTPCore2Mocker.name == "httpcore2"


@pytest.fixture
def api() -> Iterator[respx.MockRouter]:
    """Recorded vendor payloads served to the real SDKs (respx routes)."""
    with respx.mock(using="httpcore2") as router:
        yield router
