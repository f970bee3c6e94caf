"""One agent's burst does not hold up another workspace: the writer gives each agent's
connection a share of every batch, so a request queued behind 250 frames waits for one
share of them, not all. (With one writer shard, as SQLite has: on PostgreSQL workspaces on
different shards do not even share a queue — tests/integration/store/test_store_shards.py.)"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import asyncpg
import pytest
from sqlalchemy import make_url
from starlette.testclient import TestClient

from lineup.hub import accounts
from lineup.hub.config import Settings
from lineup.hub.in_flight import WORKSPACE_IN_FLIGHT
from lineup.hub.state import HubState
from lineup.store import StoredEvent, WriteTx
from lineup.store.writer import DEFAULT_LANE_SHARE
from tests.integration.hub.conftest import fast_settings
from tests.support.hub_client import HubClient
from tests.support.waiting import until

BURST = 250


@pytest.fixture
def settings(hub_database: str, tmp_path: Path) -> Settings:
    """One writer shard: the gate holds the one queue the burst and the request share."""
    return fast_settings(hub_database, tmp_path, writer_connections=1)


class WriterGate:
    """Holds the hub's writer inside a job until released, without blocking its event loop:
    SQLite's writer is a thread that waits on an event; on PostgreSQL the job waits for an
    advisory lock this gate holds on a connection of its own."""

    LOCK = 732_0519

    def __init__(self, client: TestClient, state: HubState) -> None:
        self.client, self.state = client, state
        self.holding = threading.Event()
        self._release = threading.Event()
        self._pg: asyncpg.Connection | None = None
        if state.store.dialect != "sqlite":
            url = make_url(state.settings.database_url).set(drivername="postgresql")
            self._pg = self._call(asyncpg.connect, url.render_as_string(hide_password=False))
            self._call(self._pg.execute, f"SELECT pg_advisory_lock({self.LOCK})")

    def _call(self, fn: Callable[..., object], *args: object) -> object:
        return self.client.portal.call(fn, *args)  # type: ignore[union-attr]

    def hold(self, tx: WriteTx) -> None:
        self.holding.set()
        if self._pg is None:
            self._release.wait(30)
        else:
            tx.connection.exec_driver_sql(f"SELECT pg_advisory_xact_lock({self.LOCK})")

    def release(self) -> None:
        self._release.set()
        if self._pg is not None:
            pg, self._pg = self._pg, None
            self._call(pg.execute, f"SELECT pg_advisory_unlock({self.LOCK})")
            self._call(pg.close)


def test_a_request_behind_a_flooding_agent_commits_after_one_share_of_its_burst(
    hub: HubClient, client: TestClient, monkeypatch: pytest.MonkeyPatch
):
    # A session is touched (a write of its own, before the request's) once a minute of use:
    # on a loaded machine that minute can pass during the test and put a touch between Bob
    # and his request. What is measured here is the request's own job.
    monkeypatch.setattr(accounts, "TOUCH_EVERY_MS", 10**12)
    state: HubState = client.app.state.hub  # type: ignore[attr-defined]
    ana, bob = hub.sign_up(), hub.sign_up(name="Bob")
    ana_creds, bob_creds = hub.pair(ana), hub.pair(bob)
    with hub.agent(ana_creds) as flooder:
        task_id = ana.ok(
            ana.post("/tasks", {"title": "Flood", "targetAgentId": ana_creds["agentId"]}), 201
        )["task"]["id"]
        flooder.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        committed: list[StoredEvent] = []

        def listen(events: Sequence[StoredEvent]) -> None:
            committed.extend(events)

        remove = state.store.add_commit_listener(listen)
        gate = WriterGate(client, state)
        try:
            client.portal.start_task_soon(state.store.write, gate.hold)  # type: ignore[union-attr]
            assert gate.holding.wait(30), "the writer should be running the holding job"
            ids = [
                flooder.send(
                    "task.status_changed",
                    {"status": "running", "progress": i % 100 + 1, "summary": f"step {i}"},
                    taskId=task_id,
                )
                for i in range(BURST)
            ]
            # the workspace's in-flight window bounds what of the burst the writer holds
            queued = min(BURST, WORKSPACE_IN_FLIGHT)
            until(
                lambda: state.store.writer_queued_for(ana.workspace_id) >= queued,
                "the burst queued",
            )
            outcome: dict[str, int] = {}

            def bob_asks() -> None:
                response = bob.post(
                    "/tasks", {"title": "Mine", "targetAgentId": bob_creds["agentId"]}
                )
                outcome["status"] = response.status_code

            asking = threading.Thread(target=bob_asks)
            asking.start()
            until(
                lambda: state.store.writer_queued_for(bob.workspace_id) >= 1, "the request queued"
            )
            gate.release()
            asking.join(30)
            assert outcome.get("status") == 201
            answers = [flooder.answer(i) for i in ids]
            assert all(a["type"] == "ack" for a in answers)
        finally:
            gate.release()
            remove()
    order = [(e.workspace_id, e.type) for e in committed]
    bobs = order.index((bob.workspace_id, "task.created"))
    flood_first = sum(
        1 for ws, type_ in order[:bobs] if ws == ana.workspace_id and type_ == "task.status_changed"
    )
    assert flood_first <= DEFAULT_LANE_SHARE, f"{flood_first} of the burst committed first"
