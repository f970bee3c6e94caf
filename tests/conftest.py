"""Shared fixtures.

Database fixtures: ``database_url`` runs a test once on SQLite (a file in ``tmp_path``) and
once on PostgreSQL (a throwaway database, dropped afterwards); ``store`` is a migrated
``lineup.store.Store`` on it, a copy of the session's migrated template
(``tests.support.databases``). PostgreSQL must be reachable (``LINEUP_TEST_PG_URL``, default
``postgresql://postgres@127.0.0.1:5432/postgres``): if it is not, these tests fail rather
than skip, so a green run always means both databases were tested. Select one side with
``-m postgres`` / ``-m "not postgres"`` or ``-k sqlite``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import HealthCheck, settings

from tests.support.databases import (
    Templates,
    copy_sqlite,
    sqlite_url,
    throwaway_pg_database,
)

# Hypothesis' timing checks measure the machine, not the code: on shared CI cores a slow
# moment would fail a property that holds. Properties and example counts stay as written.
settings.register_profile("lineup", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("lineup")

if TYPE_CHECKING:
    from lineup.store import Store


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Templates]:
    """This session's migrated databases, made when a test first needs one."""
    made = Templates(tmp_path_factory.mktemp("templates"))
    try:
        yield made
    finally:
        made.close()


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
async def database_url(
    request: pytest.FixtureRequest, tmp_path: Path, templates: Templates
) -> AsyncIterator[str]:
    # a test that uses the ``store`` gets its database migrated already (a copy of the
    # session's template); one that asks only for the URL gets an empty database
    migrated = "store" in request.fixturenames
    if request.param == "sqlite":
        yield copy_sqlite(templates.sqlite(), tmp_path) if migrated else sqlite_url(tmp_path)
        return
    async with throwaway_pg_database(templates.postgres() if migrated else None) as url:
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
