"""When an agent counts as offline, what follows, and from when the grace period counts
(seed 001 §7.4; README "LINEUP_GRACE_PERIOD"), with the hub's clock in the test's hands."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from lineup.hub import commands, create_app
from lineup.hub.monitor import Monitor
from lineup.hub.state import HubState
from tests.integration.hub.conftest import fast_settings
from tests.support.clock import FakeClock
from tests.support.hub_client import HubClient
from tests.support.people import Person


def _task(ana: Person, agent_id: str) -> str:
    body = ana.ok(ana.post("/tasks", {"title": "Tidy deps", "targetAgentId": agent_id}), 201)
    return str(body["task"]["id"])


def _task_status(ana: Person, task_id: str) -> str:
    return str(ana.ok(ana.get(f"/tasks/{task_id}"))["task"]["status"])


def _record_offline(client: TestClient, creds: dict[str, Any], last_beat_ms: int) -> None:
    """What a node that found the agent's node dead records (the agent's socket is open)."""
    hub: HubState = client.app.state.hub  # type: ignore[attr-defined]
    job = partial(
        commands.agent_went_offline,
        workspace_id=creds["workspaceId"],
        agent_id=creds["agentId"],
        last_beat_ms=last_beat_ms,
    )
    assert client.portal is not None
    client.portal.call(hub.recorder.run, job)


def test_an_offline_agents_tasks_fail_a_grace_period_after_it_was_recorded_offline(
    hub_database: str, tmp_path: Path
) -> None:
    clock = FakeClock()
    settings = fast_settings(hub_database, tmp_path, grace_period=10.0)
    with TestClient(create_app(settings, clock=clock)) as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        creds = hub.pair(ana)
        with hub.agent(creds) as agent:
            task_id = _task(ana, creds["agentId"])
            assert agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)["type"] == "ack"
            last_beat = clock()
            clock.advance(7)  # recorded offline 7 s after its last beat
            _record_offline(client, creds, last_beat)
            recorded = clock()
        monitor = Monitor(client.app.state.hub)  # type: ignore[attr-defined]
        assert client.portal is not None

        clock.now = recorded + 10_000 - 1
        client.portal.call(monitor.fail_unreachable_tasks, clock())
        assert _task_status(ana, task_id) == "running"  # 17 s after the last beat

        clock.now = recorded + 10_000
        client.portal.call(monitor.fail_unreachable_tasks, clock())
        task = ana.ok(ana.get(f"/tasks/{task_id}"))["task"]
        assert task["status"] == "failed" and task["error"] == "agent_unreachable"


def test_an_agent_recorded_offline_elsewhere_has_its_socket_closed_and_comes_back_online(
    hub: HubClient,
) -> None:
    ana = hub.sign_up()
    creds = hub.pair(ana)
    state: HubState = hub.client.app.state.hub  # type: ignore[attr-defined]
    with hub.agent(creds) as agent:
        _record_offline(hub.client, creds, state.clock())
        _task(ana, creds["agentId"])  # comes after the offline record, in the log and downlink
        # the connection closes itself, so the agent reconnects instead of talking into a void
        with pytest.raises(WebSocketDisconnect) as closed:
            while True:
                frame = agent.receive()
                assert frame.get("type") != "task.assigned", "the socket stayed open"
        assert closed.value.code == 4408
    with hub.agent(creds) as again:
        assert again.call("agent.heartbeat", {})["type"] == "ack"
        assert ana.ok(ana.get(f"/agents/{creds['agentId']}"))["status"] == "online"


def test_a_monitor_pass_that_woke_up_late_gives_the_links_that_much_longer(
    hub_database: str, tmp_path: Path
) -> None:
    clock = FakeClock()
    # offline after 2 s; the app's own monitor passes once, at start, and then sleeps
    settings = fast_settings(hub_database, tmp_path, heartbeat_interval=1.0, monitor_interval=3600)
    with TestClient(create_app(settings, clock=clock)) as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        creds = hub.pair(ana)
        state: HubState = client.app.state.hub  # type: ignore[attr-defined]
        monitor = Monitor(state)
        assert client.portal is not None
        with hub.agent(creds):
            clock.advance(2.5)  # no frame for longer than the window ...
            monitor.lag_ms = 1_000  # ... but for a second of it this node read nothing
            client.portal.call(monitor.close_silent_links, clock())
            assert state.presence.get(creds["agentId"]) is not None
            monitor.lag_ms = 0
            client.portal.call(monitor.close_silent_links, clock())
            assert state.presence.get(creds["agentId"]) is None
