"""A cancel its agent never confirms does not hang the task (seed 001 §11, principle 4): after
the workspace's cancel timeout the hub records it cancelled itself, with the cause; the agent
hears of it — live, or on its next connection — and its later reports are refused cleanly.
The hub's clock and monitor are the test's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from lineup.hub import create_app
from tests.integration.hub.conftest import fast_settings
from tests.support.agents import AgentSocket
from tests.support.clock import FakeClock
from tests.support.governance import put
from tests.support.hub_client import HubClient
from tests.support.monitor import ONCE, TickedMonitor
from tests.support.people import Person

MINUTE = 60.0


@dataclass
class World:
    hub: HubClient
    clock: FakeClock
    monitor: TickedMonitor
    ana: Person
    creds: dict[str, Any]


@contextmanager
def _world(hub_database: str, tmp_path: Path, **settings: Any) -> Iterator[World]:
    clock = FakeClock()
    # the agent's absence alone must not end the task first: a long grace period
    values: dict[str, Any] = {"monitor_interval": ONCE, "grace_period": 24 * 3600.0}
    values.update(settings)
    app = create_app(fast_settings(hub_database, tmp_path, **values), clock=clock)
    with TestClient(app) as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        creds = hub.pair(ana)
        yield World(hub, clock, TickedMonitor(client, clock), ana, creds)


def _running_task(world: World, agent: AgentSocket) -> str:
    ana = world.ana
    body = ana.ok(
        ana.post("/tasks", {"title": "Release", "targetAgentId": world.creds["agentId"]}), 201
    )
    task_id: str = body["task"]["id"]
    agent.next_of("task.assigned")
    assert agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)["type"] == "ack"
    return task_id


def _task(ana: Person, task_id: str) -> dict[str, Any]:
    task: dict[str, Any] = ana.ok(ana.get(f"/tasks/{task_id}"))["task"]
    return task


def _ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _progress(agent: AgentSocket, task_id: str, percent: int) -> dict[str, Any]:
    report = {"status": "running", "progress": percent}
    return agent.call("task.status_changed", report, taskId=task_id)


def _refusal(answer: dict[str, Any]) -> dict[str, Any]:
    assert answer["type"] == "error", answer
    assert answer["code"] == "conflict", answer
    details: dict[str, Any] = answer["details"]
    return details


def test_a_cancel_that_times_out_with_the_agent_offline_ends_the_task_and_refuses_late_reports(
    hub_database: str, tmp_path: Path
) -> None:
    with _world(hub_database, tmp_path) as world:
        ana, clock = world.ana, world.clock
        changed = put(
            ana, f"/settings/workspace/{ana.workspace_id}", {"tasks.cancelTimeoutMinutes": 2}
        )
        assert changed.status_code == 200, changed.text
        with world.hub.agent(world.creds) as agent:
            task_id = _running_task(world, agent)
            cursor = max(f["sequence"] for f in agent.frames if f.get("sequence"))
        # the agent is gone (offline, its machine asleep) when the person asks to stop
        requested_at = clock()
        ana.ok(ana.post(f"/tasks/{task_id}/cancel", {"reason": "wrong branch"}))
        task = _task(ana, task_id)
        assert task["cancelRequested"] and task["status"] == "running"
        assert _ms(task["cancelDeadline"]) == requested_at + 2 * 60_000

        world.monitor.tick(2 * MINUTE - 1)
        assert _task(ana, task_id)["status"] == "running", "the deadline has not come yet"

        world.monitor.tick(1)
        detail = ana.ok(ana.get(f"/tasks/{task_id}"))
        task = detail["task"]
        assert task["status"] == "cancelled"
        assert task["endCause"] == "cancel_timeout"
        assert task["cancelDeadline"] is None
        assert "did not confirm the cancel in time" in task["summary"]
        (ended,) = [e for e in detail["timeline"] if e["type"] == "task.status_changed"]
        assert ended["actor"] == "system"
        assert ended["payload"]["cause"] == "cancel_timeout"

        world.monitor.tick(MINUTE)  # a second pass finds nothing left to do
        timeline = ana.ok(ana.get(f"/tasks/{task_id}"))["timeline"]
        assert [e["type"] for e in timeline].count("task.status_changed") == 1

        # the agent comes back: the replay tells it, after the cancel request
        with world.hub.agent(world.creds, last_sequence=cursor) as agent:
            asked = agent.next_of("task.cancel_requested")
            news = agent.next_of("task.status_changed")
            assert news["sequence"] > asked["sequence"] and news["taskId"] == task_id
            assert news["payload"]["taskId"] == task_id
            assert news["payload"]["status"] == "cancelled"
            assert news["payload"]["cause"] == "cancel_timeout"

            # what it still had queued for the task is refused, saying why
            late = agent.call("task.status_changed", {"status": "succeeded"}, taskId=task_id)
            details = _refusal(late)
            assert details["reason"] == "task_ended"
            assert details["cause"] == "cancel_timeout" and details["status"] == "cancelled"
            assert "did not confirm the cancel in time" in late["message"]
            assert late.get("retryable") is not True
            progress = _progress(agent, task_id, 90)
            assert _refusal(progress)["reason"] == "task_ended"
            confirm = agent.call("task.status_changed", {"status": "cancelled"}, taskId=task_id)
            assert _refusal(confirm)["reason"] == "task_ended"
            accept = agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
            assert _refusal(accept)["reason"] == "task_ended"

        detail = ana.ok(ana.get(f"/tasks/{task_id}"))
        assert detail["task"]["status"] == "cancelled" and detail["task"]["progress"] == 0
        assert not [e for e in detail["timeline"] if e["actor"].startswith("agent:")][1:], (
            "nothing the agent sent after its acceptance was recorded"
        )


def test_a_connected_agent_that_does_not_confirm_hears_the_hubs_cancel_live(
    hub_database: str, tmp_path: Path
) -> None:
    with _world(hub_database, tmp_path, cancel_timeout=30.0) as world:
        ana = world.ana
        with world.hub.agent(world.creds) as agent:
            task_id = _running_task(world, agent)
            requested_at = world.clock()
            ana.ok(ana.post(f"/tasks/{task_id}/cancel", {}))
            agent.next_of("task.cancel_requested")  # ... and the agent is stuck
            # the system default, LINEUP_CANCEL_TIMEOUT, to the second
            assert _ms(_task(ana, task_id)["cancelDeadline"]) == requested_at + 30_000

            world.monitor.tick(30)
            news = agent.next_of("task.status_changed")
            assert news["payload"] == {
                "taskId": task_id,
                "status": "cancelled",
                "cause": "cancel_timeout",
                "summary": _task(ana, task_id)["summary"],
            }
            late = _progress(agent, task_id, 50)
            assert _refusal(late)["reason"] == "task_ended"


def test_a_cancel_the_agent_confirms_in_time_is_the_agents_and_no_deadline_fires(
    hub_database: str, tmp_path: Path
) -> None:
    with _world(hub_database, tmp_path, cancel_timeout=30.0) as world:
        ana = world.ana
        with world.hub.agent(world.creds) as agent:
            task_id = _running_task(world, agent)
            ana.ok(ana.post(f"/tasks/{task_id}/cancel", {}))
            agent.next_of("task.cancel_requested")
            world.clock.advance(29)
            done = agent.call("task.status_changed", {"status": "cancelled"}, taskId=task_id)
            assert done["type"] == "ack"

            world.monitor.tick(60)
            task = _task(ana, task_id)
            assert task["status"] == "cancelled" and task["endCause"] is None
            assert task["cancelDeadline"] is None
            timeline = ana.ok(ana.get(f"/tasks/{task_id}"))["timeline"]
            (ended,) = [e for e in timeline if e["type"] == "task.status_changed"]
            assert ended["actor"] == f"agent:{world.creds['agentId']}"
            # a report after its own end is refused the same way
            again = _progress(agent, task_id, 10)
            details = _refusal(again)
            assert details["reason"] == "task_ended" and "cause" not in details
            assert not [f for f in agent.frames if f.get("type") == "task.status_changed"]


def test_asking_again_keeps_the_first_deadline(hub_database: str, tmp_path: Path) -> None:
    with _world(hub_database, tmp_path, cancel_timeout=60.0) as world:
        ana = world.ana
        with world.hub.agent(world.creds) as agent:
            task_id = _running_task(world, agent)
            ana.ok(ana.post(f"/tasks/{task_id}/cancel", {}))
            first = _task(ana, task_id)["cancelDeadline"]
            world.clock.advance(45)
            ana.ok(ana.post(f"/tasks/{task_id}/cancel", {"reason": "really"}))
            assert _task(ana, task_id)["cancelDeadline"] == first
            world.monitor.tick(15)
            assert _task(ana, task_id)["endCause"] == "cancel_timeout"
