"""Migrations run both ways on a real, empty database."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from alembic.script import ScriptDirectory
from sqlalchemy.engine import make_url

from reach_common import migrate
from reach_common.db import libpq_url
from tests.conftest import SCHEMAS, Backends


@pytest.fixture
def empty_database_url(backends: Backends) -> Iterator[str]:
    """A fresh database on the test server, dropped afterwards."""
    name = f"migrations_{uuid.uuid4().hex[:8]}"
    admin = libpq_url(backends.database_url)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = make_url(backends.database_url).set(database=name)
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _schemas_and_version(url: str) -> tuple[set[str], set[str]]:
    with psycopg.connect(libpq_url(url)) as conn:
        schemas = {
            row[0]
            for row in conn.execute(
                "SELECT schema_name FROM information_schema.schemata WHERE schema_name = ANY(%s)",
                (list(SCHEMAS),),
            )
        }
        has_table = conn.execute("SELECT to_regclass('public.alembic_version')").fetchone()
        versions: set[str] = set()
        if has_table and has_table[0]:
            versions = {r[0] for r in conn.execute("SELECT version_num FROM alembic_version")}
    return schemas, versions


def test_upgrade_downgrade_upgrade_runs_clean(empty_database_url: str) -> None:
    migrate.upgrade(empty_database_url)
    schemas, heads = _schemas_and_version(empty_database_url)
    assert schemas == set(SCHEMAS)
    expected = ScriptDirectory.from_config(migrate.alembic_config(empty_database_url)).get_heads()
    assert heads == set(expected)

    migrate.downgrade(empty_database_url, "base")
    assert _schemas_and_version(empty_database_url) == (set(), set())

    migrate.upgrade(empty_database_url)
    assert _schemas_and_version(empty_database_url) == (set(SCHEMAS), heads)
    with psycopg.connect(libpq_url(empty_database_url)) as conn:
        ext = conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
        ).fetchone()
        spans = conn.execute("SELECT to_regclass('telemetry.spans')").fetchone()
    assert ext is not None
    assert spans is not None
    assert spans[0] == "telemetry.spans"
