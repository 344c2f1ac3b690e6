"""The gateway's declarative base (schema ``gateway``) and pgvector's column type.

``Vector`` is ``pgvector.sqlalchemy.Vector``. The gateway only stores and loads
whole vectors, so it registers no asyncpg codec: asyncpg exchanges a type it
has no codec for in its text form, which ``Vector`` writes and parses.
"""

from __future__ import annotations

from pgvector.sqlalchemy import Vector
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

__all__ = ["Base", "Vector"]


class Base(DeclarativeBase):
    metadata = MetaData(schema="gateway")
