"""One agent's burst does not hold up another workspace: the writer gives each agent's
connection a share of every batch, so a request queued behind 250 frames waits for one
share of them, not all."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import pytest
from starlette.testclient import TestClient

from lineup.hub.state import HubState
from lineup.store import StoredEvent, WriteTx
from lineup.store.writer import DEFAULT_LANE_SHARE
from tests.integration.hub.client import HubClient, wait_until

BURST = 250


def test_a_request_behind_a_flooding_agent_commits_after_one_share_of_its_burst(
    hub: HubClient, client: TestClient
):
    state: HubState = client.app.state.hub  # type: ignore[attr-defined]
    if state.store.dialect != "sqlite":
        # Holding the writer here blocks a thread; on PostgreSQL the job would block the event
        # loop itself. The writer's lanes are checked on both databases in test_store_writer.
        pytest.skip("the writer is held with a thread gate, which only SQLite's writer allows")
    ana, bob = hub.sign_up(), hub.sign_up(name="Bob")
    ana_creds, bob_creds = hub.pair(ana), hub.pair(bob)
    flooder, context = hub.connect_agent(ana_creds)
    task_id = ana.ok(
        ana.post("/tasks", {"title": "Flood", "targetAgentId": ana_creds["agentId"]}), 201
    )["task"]["id"]
    flooder.call("task.accepted", {"taskId": task_id}, taskId=task_id)
    committed: list[StoredEvent] = []

    def listen(events: Sequence[StoredEvent]) -> None:
        committed.extend(events)

    holding, gate = threading.Event(), threading.Event()

    def hold(tx: WriteTx) -> None:
        holding.set()
        gate.wait(30)

    remove = state.store.add_commit_listener(listen)
    try:
        client.portal.start_task_soon(state.store.write, hold)  # type: ignore[union-attr]
        assert holding.wait(30), "the writer should be running the holding job"
        ids = [
            flooder.send(
                "task.status_changed",
                {"status": "running", "progress": i % 100 + 1, "summary": f"step {i}"},
                taskId=task_id,
            )
            for i in range(BURST)
        ]
        wait_until(lambda: state.store.writer_queued >= BURST, "the burst queued")
        outcome: dict[str, int] = {}

        def bob_asks() -> None:
            response = bob.post("/tasks", {"title": "Mine", "targetAgentId": bob_creds["agentId"]})
            outcome["status"] = response.status_code

        asking = threading.Thread(target=bob_asks)
        asking.start()
        wait_until(lambda: state.store.writer_queued >= BURST + 1, "the request queued")
        gate.set()
        asking.join(30)
        assert outcome.get("status") == 201
        answers = [flooder.answer(i) for i in ids]
        assert all(a["type"] == "ack" for a in answers)
    finally:
        gate.set()
        remove()
        context.__exit__(None, None, None)
    order = [(e.workspace_id, e.type) for e in committed]
    bobs = order.index((bob.workspace_id, "task.created"))
    flood_first = sum(
        1 for ws, type_ in order[:bobs] if ws == ana.workspace_id and type_ == "task.status_changed"
    )
    assert flood_first <= DEFAULT_LANE_SHARE, f"{flood_first} of the burst committed first"
