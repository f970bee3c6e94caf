"""The one JSON column type: JSONB on PostgreSQL, TEXT on SQLite (ADR-0007).

SQLAlchemy's own SQLite JSON type declares the column as ``JSON``, which SQLite gives NUMERIC
affinity: a bare number such as ``5`` would come back as an integer that the JSON decoder then
rejects. Declaring TEXT keeps every stored document exactly as written.

This module is imported by migrations, so it must stay backwards compatible.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import JSON, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator, TypeEngine


class JSONText(TypeDecorator[Any]):
    """A JSON document stored as TEXT; Python ``None`` is SQL NULL, never the text ``null``."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> str | None:
        if value is None:
            return None
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        return json.loads(value)


def json_column_type() -> TypeEngine[Any]:
    """The type for every JSON column, in the schema and in migrations alike."""
    return (
        JSON(none_as_null=True)
        .with_variant(JSONText(), "sqlite")
        .with_variant(JSONB(none_as_null=True), "postgresql")
    )
