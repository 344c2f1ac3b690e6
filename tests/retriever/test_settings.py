"""Retriever settings read from the environment: writer roles and the body limit."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from retriever.settings import Settings


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("RETRIEVER_WRITER_ROLES", "MAX_BODY_BYTES", "AUTH_MODE"):
        monkeypatch.delenv(name, raising=False)
    settings = Settings()
    assert settings.retriever_writer_roles == ["admin", "retriever_writer"]
    assert settings.max_body_bytes == 16 * 1024 * 1024
    assert settings.auth_mode == "permissive"


@pytest.mark.parametrize(
    ("value", "roles"),
    [
        ("kb_curator", ["kb_curator"]),
        (" kb_curator , admin ,", ["kb_curator", "admin"]),
        ('["kb_curator", "admin"]', ["kb_curator", "admin"]),
    ],
)
def test_writer_roles_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str, roles: list[str]
) -> None:
    monkeypatch.setenv("RETRIEVER_WRITER_ROLES", value)
    assert Settings().retriever_writer_roles == roles


def test_no_writer_role_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RETRIEVER_WRITER_ROLES", " ")
    with pytest.raises(ValidationError, match="retriever_writer_roles"):
        Settings()


def test_body_limit_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_BODY_BYTES", "4096")
    assert Settings().max_body_bytes == 4096
