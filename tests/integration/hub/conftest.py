"""Hub fixtures: the real ASGI app in-process (Starlette's TestClient runs its lifespan and
speaks WebSocket), once on SQLite and once on a throwaway PostgreSQL database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from lineup.hub import Settings, create_app
from tests.integration.hub.notify_endpoints import MailServer, PushService
from tests.support.databases import Templates, copy_sqlite, sync_throwaway_pg_database
from tests.support.hub_client import HubClient


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
def hub_database(
    request: pytest.FixtureRequest, tmp_path: Path, templates: Templates
) -> Iterator[str]:
    """A migrated database, copied from the session's template: the app's start-up finds
    nothing left to migrate."""
    if request.param == "sqlite":
        yield copy_sqlite(templates.sqlite(), tmp_path)
        return
    with sync_throwaway_pg_database(templates.postgres()) as url:
        yield url


def fast_settings(database_url: str, home: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "database_url": database_url,
        "home": home,
        # long enough that a slow, loaded machine never drops a silent test agent;
        # tests about presence build their own app with short timings
        "heartbeat_interval": 30.0,
        "grace_period": 60.0,
        "monitor_interval": 0.05,
        "static_dir": home / "no-web-app",
    }
    values.update(overrides)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture
def settings(hub_database: str, tmp_path: Path) -> Settings:
    return fast_settings(hub_database, tmp_path)


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings), base_url="http://testserver") as test_client:
        yield test_client


@pytest.fixture
def hub(client: TestClient) -> HubClient:
    return HubClient(client)


@pytest.fixture
def push_service() -> Iterator[PushService]:
    """A local Web Push service that records what the hub posts to it."""
    with PushService() as service:
        yield service


@pytest.fixture
def mail_server() -> Iterator[MailServer]:
    """A local SMTP server that keeps the mail the hub sends."""
    with MailServer() as server:
        yield server
