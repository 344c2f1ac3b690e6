"""The gateway's declarative base (schema ``gateway``) and the pgvector column type."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import MetaData, Text, cast, type_coerce
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase
from sqlalchemy.types import UserDefinedType


class Base(DeclarativeBase):
    metadata = MetaData(schema="gateway")


class Vector(UserDefinedType[list[float]]):
    """pgvector's ``vector(n)``, exchanged as its text form.

    The gateway only stores and loads whole vectors, so the text format keeps
    it free of a pgvector driver dependency.
    """

    cache_ok = True

    def __init__(self, dimensions: int) -> None:
        self.dimensions = dimensions

    def get_col_spec(self, **_: Any) -> str:
        return f"vector({self.dimensions})"

    def bind_processor(self, dialect: Dialect) -> Callable[[Any], str | None]:
        def process(value: Sequence[float] | None) -> str | None:
            if value is None:
                return None
            return "[" + ",".join(repr(float(v)) for v in value) + "]"

        return process

    def result_processor(self, dialect: Dialect, coltype: object) -> Callable[[Any], Any]:
        def process(value: str | None) -> list[float] | None:
            if value is None:
                return None
            return [float(v) for v in value.strip("[]").split(",") if v]

        return process

    def bind_expression(self, bindvalue: Any) -> Any:
        # Sent as text and cast by the server: asyncpg has no codec for ``vector``.
        return cast(cast(bindvalue, Text), self)

    def column_expression(self, col: Any) -> Any:
        # Read as text, then parsed by result_processor (type_coerce keeps this type).
        return type_coerce(cast(col, Text), self)
