"""End-to-end fixtures: a real hub process on SQLite and on a throwaway PostgreSQL database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.e2e.processes import HubProcess
from tests.support.databases import sync_throwaway_pg_database
from tests.support.people import Person


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
def database_url(request: pytest.FixtureRequest) -> Iterator[str | None]:
    if request.param == "sqlite":
        yield None  # the embedded default under LINEUP_HOME
        return
    with sync_throwaway_pg_database() as url:
        yield url


@pytest.fixture
def hub(database_url: str | None, tmp_path: Path) -> Iterator[HubProcess]:
    process = HubProcess(tmp_path / "hub", database_url)
    process.home.mkdir()
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def sign_up(hub: HubProcess) -> Iterator[Callable[..., Person]]:
    """Sign people up on the hub; their HTTP clients are closed after the test."""
    people: list[Person] = []

    def make(email: str = "ana@example.test") -> Person:
        people.append(Person.at(hub.url, email))
        return people[-1]

    yield make
    for person in people:
        person.close()
