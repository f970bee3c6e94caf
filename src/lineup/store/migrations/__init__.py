"""Alembic migrations for both dialects, run from code rather than an ``alembic.ini``.

``upgrade_head`` takes a synchronous connection (the store's writer connection) that is already
inside a transaction, so the migration commits or rolls back with its caller. To write a new
revision: ``alembic.command.revision(alembic_config(url), message=..., autogenerate=True)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy.engine import Connection

from lineup.store.schema import metadata

SCRIPT_LOCATION = Path(__file__).resolve().parent


def alembic_config(url: str | None = None, connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(SCRIPT_LOCATION))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def upgrade_head(connection: Connection) -> None:
    command.upgrade(alembic_config(connection=connection), "heads")


def schema_diff(connection: Connection) -> list[Any]:
    """Differences between the migrated database and ``schema.metadata``; empty when in sync."""
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, metadata))
