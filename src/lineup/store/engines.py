"""Engines for the two roles a Store needs: one writer connection, a pool of readers.

SQLite: the driver's own transaction handling is switched off (it cannot do savepoints
reliably) and we emit BEGIN ourselves — ``BEGIN IMMEDIATE`` for the writer, so it takes the
write lock up front instead of failing on upgrade, and a deferred ``BEGIN`` for readers, which
in WAL mode gives each read transaction a snapshot. PostgreSQL: readers use REPEATABLE READ
read-only transactions, again for one snapshot per read transaction.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from lineup.protocol.errors import InvalidArgument

SQLITE_BUSY_TIMEOUT_MS = 5000
SUPPORTED_DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")


def parse_url(url: str | URL) -> URL:
    parsed = make_url(url)
    if parsed.drivername not in SUPPORTED_DRIVERS:
        raise InvalidArgument(
            f"unsupported database URL scheme {parsed.drivername!r}; "
            f"use one of {', '.join(SUPPORTED_DRIVERS)}"
        )
    if parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:"):
        # The writer and the readers hold separate connections: they must share a file.
        raise InvalidArgument("SQLite needs a database file; in-memory databases are not shared")
    return parsed


def create_engines(url: URL, *, read_pool_size: int = 4) -> tuple[AsyncEngine, AsyncEngine]:
    """(writer, reader)."""
    if url.get_backend_name() == "sqlite":
        assert url.database is not None
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
        writer = create_async_engine(url, pool_size=1, max_overflow=0)
        reader = create_async_engine(url, pool_size=read_pool_size, max_overflow=0)
        _configure_sqlite(writer, begin="BEGIN IMMEDIATE", query_only=False)
        _configure_sqlite(reader, begin="BEGIN", query_only=True)
        return writer, reader
    writer = create_async_engine(url, pool_size=2, max_overflow=0, pool_pre_ping=True)
    reader = create_async_engine(
        url,
        pool_size=read_pool_size,
        max_overflow=read_pool_size,
        pool_pre_ping=True,
        isolation_level="REPEATABLE READ",
        execution_options={"postgresql_readonly": True},
    )
    return writer, reader


def _configure_sqlite(engine: AsyncEngine, *, begin: str, query_only: bool) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute("PRAGMA foreign_keys = ON")
            if query_only:
                cursor.execute("PRAGMA query_only = ON")
        finally:
            cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql(begin)
