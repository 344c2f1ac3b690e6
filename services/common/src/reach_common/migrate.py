"""Run the Alembic migrations from code (the stack runner, tests, ``make db-upgrade``)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config


def find_alembic_ini(start: Path | None = None) -> Path:
    """``alembic.ini`` at the repository root, found from here or the working directory."""
    candidates = [Path.cwd(), *Path(__file__).resolve().parents]
    if start is not None:
        candidates.insert(0, start)
    for folder in candidates:
        if (folder / "alembic.ini").is_file():
            return folder / "alembic.ini"
    raise FileNotFoundError("alembic.ini not found; run from the Reach repository root")


def alembic_config(database_url: str) -> Config:
    config = Config(str(find_alembic_ini()))
    config.attributes["database_url"] = database_url
    config.attributes["configure_logger"] = False
    return config


def upgrade(database_url: str, revision: str = "heads") -> None:
    """Upgrade to ``revision``; by default every head (one branch per service schema)."""
    command.upgrade(alembic_config(database_url), revision)


def downgrade(database_url: str, revision: str = "base") -> None:
    command.downgrade(alembic_config(database_url), revision)
