"""Alembic environment: uses the caller's connection when given one (``Store.migrate``)."""

from __future__ import annotations

import asyncio
import os

from alembic import context
from sqlalchemy.engine import Connection

from lineup.store.engines import create_backend, parse_url
from lineup.store.schema import metadata

config = context.config


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        compare_type=True,
        # SQLite cannot ALTER most things; batch mode rebuilds tables for later revisions.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def _run_in_transaction(connection: Connection) -> None:
    with connection.begin():
        _run(connection)


async def _run_with_url(url: str) -> None:
    backend = create_backend(parse_url(url), read_pool_size=1)
    try:
        await backend.run_writer(_run_in_transaction)
    finally:
        await backend.dispose()


def _url() -> str:
    return config.get_main_option("sqlalchemy.url") or os.environ["LINEUP_DATABASE_URL"]


if context.is_offline_mode():
    context.configure(url=_url(), target_metadata=metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()
elif (given := config.attributes.get("connection")) is not None:
    _run(given)
else:
    asyncio.run(_run_with_url(_url()))
