"""Throwaway databases for tests, empty or already migrated.

Running every Alembic migration for every test was most of a hub test's start-up, so each test
session migrates one template per dialect, once, and a test that needs a migrated database gets
a copy: on PostgreSQL ``CREATE DATABASE … TEMPLATE``, on SQLite a copy of the migrated file. The
app's own ``store.migrate()`` then finds nothing to do. Template names carry the process id, so
two pytest processes (the browser suite beside the others, suites side by side in CI) never
share or drop each other's template.

PostgreSQL is ``LINEUP_TEST_PG_URL`` (default ``postgresql://postgres@127.0.0.1:5432/postgres``).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
from collections.abc import AsyncIterator, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

PG_ADMIN_URL = os.environ.get("LINEUP_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
SQLITE_FILES = ("lineup.db", "lineup.db-wal", "lineup.db-shm")

T = TypeVar("T")


def sqlite_url(directory: Path) -> str:
    return f"sqlite+aiosqlite:///{directory / 'lineup.db'}"


def pg_url(database: str) -> str:
    from sqlalchemy.engine import make_url

    url = make_url(PG_ADMIN_URL).set(drivername="postgresql+asyncpg", database=database)
    return url.render_as_string(hide_password=False)


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to the end from synchronous code, even inside a running event loop."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


async def _admin(sql: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_ADMIN_URL)
    try:
        await conn.execute(sql)
    finally:
        await conn.close()


async def _migrate(url: str) -> None:
    from lineup.store import Store

    store = await Store.open(url)
    try:
        await store.migrate()
    finally:
        await store.close()


def _new_pg_name() -> str:
    return f"lineup_t_{secrets.token_hex(6)}"


def _create_pg_sql(name: str, template: str | None) -> str:
    return f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")


def _drop_pg_sql(name: str) -> str:
    return f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'


class Templates:
    """This process's migrated templates, made on first use and removed by :meth:`close`."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._sqlite: Path | None = None
        self._pg: str | None = None

    def sqlite(self) -> Path:
        """The directory of a migrated SQLite file."""
        if self._sqlite is None:
            directory = self._directory / "sqlite-template"
            directory.mkdir(parents=True, exist_ok=True)
            _run(_migrate(sqlite_url(directory)))
            self._sqlite = directory
        return self._sqlite

    def postgres(self) -> str:
        """The name of a migrated PostgreSQL database to copy."""
        if self._pg is None:
            name = f"lineup_template_{os.getpid()}_{secrets.token_hex(3)}"
            _run(_admin(_create_pg_sql(name, None)))
            try:
                _run(_migrate(pg_url(name)))
            except BaseException:
                _run(_admin(_drop_pg_sql(name)))
                raise
            self._pg = name
        return self._pg

    def close(self) -> None:
        if self._pg is not None:
            _run(_admin(_drop_pg_sql(self._pg)))
            self._pg = None


def copy_sqlite(template: Path, directory: Path) -> str:
    """A migrated SQLite database in ``directory`` (its ``lineup.db``); returns its URL."""
    for name in SQLITE_FILES:
        if (template / name).exists():
            shutil.copyfile(template / name, directory / name)
    return sqlite_url(directory)


@asynccontextmanager
async def throwaway_pg_database(template: str | None = None) -> AsyncIterator[str]:
    """A fresh PostgreSQL database (empty, or a copy of ``template``); yields its SQLAlchemy
    URL and drops it (FORCE) after."""
    name = _new_pg_name()
    await _admin(_create_pg_sql(name, template))
    try:
        yield pg_url(name)
    finally:
        await _admin(_drop_pg_sql(name))


@contextmanager
def sync_throwaway_pg_database(template: str | None = None) -> Iterator[str]:
    """The same throwaway database for synchronous fixtures (in-process apps, processes)."""
    name = _new_pg_name()
    _run(_admin(_create_pg_sql(name, template)))
    try:
        yield pg_url(name)
    finally:
        _run(_admin(_drop_pg_sql(name)))
