"""An agent that sends faster than its frames commit is slowed, not refused: beyond the
in-flight window its workspace's agents share on a node, the hub stops reading its socket
until frames are answered, and then every frame is answered, in order, none lost."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from lineup.hub.config import Settings
from lineup.hub.in_flight import InFlight
from lineup.hub.state import HubState
from tests.integration.hub.conftest import fast_settings
from tests.integration.hub.test_fair_share import WriterGate
from tests.support.hub_client import HubClient
from tests.support.waiting import until

WINDOW = 4
FRAMES = 30


@pytest.fixture
def settings(hub_database: str, tmp_path: Path) -> Settings:
    """One writer shard, so the gate's held batch is the one every frame queues behind (with
    several, a shard of the flooding workspace's own would start a batch of its frames)."""
    return fast_settings(hub_database, tmp_path, writer_connections=1)


def test_an_agent_over_its_in_flight_window_is_paused_then_every_frame_is_answered(
    hub: HubClient, client: TestClient
):
    state: HubState = client.app.state.hub  # type: ignore[attr-defined]
    state.in_flight = InFlight(WINDOW)
    ana = hub.sign_up()
    creds, other = hub.pair(ana), hub.pair(ana)
    ws = ana.workspace_id
    with hub.agent(creds) as flooder, hub.agent(other) as neighbour:
        task_id = ana.ok(
            ana.post("/tasks", {"title": "Flood", "targetAgentId": creds["agentId"]}), 201
        )["task"]["id"]
        flooder.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        gate = WriterGate(client, state)
        try:
            client.portal.start_task_soon(state.store.write, gate.hold)  # type: ignore[union-attr]
            assert gate.holding.wait(30), "the writer should be running the holding job"
            ids = [
                flooder.send(
                    "task.status_changed",
                    {"status": "running", "progress": i % 100 + 1},
                    taskId=task_id,
                )
                for i in range(FRAMES)
            ]
            # the window is full and one more frame waits for a slot: the socket is not read
            until(lambda: state.in_flight.waiting(ws) == 1, "the connection waits for a slot")
            assert state.in_flight.held(ws) == WINDOW
            assert state.store.writer_queued == WINDOW
            # the workspace's other agent waits its turn too, behind the first
            beat = neighbour.send("agent.heartbeat", {})
            until(lambda: state.in_flight.waiting(ws) == 2, "the neighbour waits its turn")
            assert state.presence.get(creds["agentId"]) is not None  # paused, not disconnected
            gate.release()
            answers = [flooder.answer(i) for i in ids]
            assert neighbour.answer(beat)["type"] == "ack"
        finally:
            gate.release()
    assert [a["type"] for a in answers] == ["ack"] * FRAMES
    sequences = [a["sequence"] for a in answers]
    assert sequences == sorted(sequences) and len(set(sequences)) == FRAMES
    until(lambda: state.in_flight.held(ws) == 0, "every slot returned")
    assert state.in_flight.waiting(ws) == 0
