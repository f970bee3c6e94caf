"""Shared fixtures.

Database fixtures: ``database_url`` runs a test once on SQLite (a file in ``tmp_path``) and
once on PostgreSQL (a throwaway database, dropped afterwards); ``store`` is a migrated
``lineup.store.Store`` on it. PostgreSQL must be reachable (``LINEUP_TEST_PG_URL``, default
``postgresql://postgres@127.0.0.1:5432/postgres``): if it is not, these tests fail rather
than skip, so a green run always means both databases were tested. Select one side with
``-m postgres`` / ``-m "not postgres"`` or ``-k sqlite``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis' timing checks measure the machine, not the code: on shared CI cores a slow
# moment would fail a property that holds. Properties and example counts stay as written.
settings.register_profile("lineup", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("lineup")

if TYPE_CHECKING:
    from lineup.store import Store

PG_ADMIN_URL = os.environ.get("LINEUP_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def _sqlalchemy_pg_url(admin_url: str, database: str) -> str:
    from sqlalchemy.engine import make_url

    url = make_url(admin_url).set(drivername="postgresql+asyncpg", database=database)
    return url.render_as_string(hide_password=False)


@asynccontextmanager
async def throwaway_pg_database() -> AsyncIterator[str]:
    """A fresh, empty PostgreSQL database; yields its SQLAlchemy URL, drops it (FORCE) after."""
    import asyncpg

    name = f"lineup_t_{secrets.token_hex(6)}"
    admin = await asyncpg.connect(PG_ADMIN_URL)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    try:
        yield _sqlalchemy_pg_url(PG_ADMIN_URL, name)
    finally:
        admin = await asyncpg.connect(PG_ADMIN_URL)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@contextmanager
def sync_throwaway_pg_database() -> Iterator[str]:
    """The same throwaway database for synchronous fixtures (in-process apps, processes)."""
    import asyncio

    import asyncpg

    def admin(sql: str) -> None:
        async def run() -> None:
            conn = await asyncpg.connect(PG_ADMIN_URL)
            try:
                await conn.execute(sql)
            finally:
                await conn.close()

        # a thread of its own: the caller may already be inside a running event loop
        with ThreadPoolExecutor(1) as pool:
            pool.submit(asyncio.run, run()).result()

    name = f"lineup_t_{secrets.token_hex(6)}"
    admin(f'CREATE DATABASE "{name}"')
    try:
        yield _sqlalchemy_pg_url(PG_ADMIN_URL, name)
    finally:
        admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def sqlite_url(directory: Path) -> str:
    return f"sqlite+aiosqlite:///{directory / 'lineup.db'}"


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield sqlite_url(tmp_path)
        return
    async with throwaway_pg_database() as url:
        yield url


@pytest.fixture
async def store(database_url: str) -> AsyncIterator[Store]:
    from lineup.store import Store

    opened = await Store.open(database_url)
    try:
        await opened.migrate()
        yield opened
    finally:
        await opened.close()
