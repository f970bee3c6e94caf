"""Seed 001 §15 end to end, with the hub and the demo agent as real processes: the
agent is killed mid-task, the hub reports it offline, the person answers meanwhile,
the agent restarts, and no step runs twice and no answer is lost."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.e2e.processes import AgentProcess, HubProcess
from tests.support.people import Person
from tests.support.waiting import until

WORK = ["--work-seconds", "0.2"]


def _online_agent(ana: Person) -> str:
    """The demo agent once online, confirmed by Ana as its person would (the first time)."""

    def online() -> dict[str, Any] | None:
        agents = ana.read("/agents")["agents"]
        return agents[0] if agents and agents[0]["status"] == "online" else None

    agent = until(online, "the demo agent to come online")
    if not agent["confirmed"]:
        ana.confirm_agent(agent["id"])
    return str(agent["id"])


def test_the_demo_loop_survives_an_agent_crash_without_repeating_a_step(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
):
    ana = sign_up()
    code = ana.send("/pairing-codes", {}, 201)["code"]
    state = tmp_path / "agent"
    agent = AgentProcess(hub.url, state, code, WORK).start()
    try:
        agent_id = _online_agent(ana)
        task = ana.send(
            "/tasks", {"title": "Migrate the orders database", "targetAgentId": agent_id}, 201
        )
        task_id = task["task"]["id"]

        def waiting() -> dict | None:
            detail = ana.read(f"/tasks/{task_id}")
            return detail if detail["task"]["status"] == "waiting_for_human" else None

        detail = until(waiting, "the approval request")
        progress = [
            e["payload"].get("progress")
            for e in detail["timeline"]
            if e["type"] == "task.status_changed" and e["taskId"] == task_id
        ]
        assert len({p for p in progress if p is not None}) >= 2, progress
        assert len(detail["children"]) == 1
        (interaction,) = detail["interactions"]
        assert interaction["type"] == "approval"
        assert interaction["request"]["risk"] == "high"
        assert ana.read("/inbox")["counts"]["waitingForMe"] == 1

        agent.kill()
        until(
            lambda: ana.read(f"/agents/{agent_id}")["status"] == "offline",
            "the hub to notice the agent is gone",
            timeout=5,
        )
        lost = ana.read(f"/tasks/{task_id}")["task"]
        assert lost["agentConnectionLost"] is True and lost["lastHeartbeatAt"]

        # the person answers while the agent is down: the answer must not be lost
        ana.send(
            f"/interactions/{interaction['id']}/respond", {"response": {"optionId": "approve"}}
        )

        agent = AgentProcess(hub.url, state, None, WORK).start()  # saved credentials, no code

        def succeeded() -> dict | None:
            detail = ana.read(f"/tasks/{task_id}")
            return detail if detail["task"]["status"] == "succeeded" else None

        final = until(succeeded, "the task to succeed after the restart")
    finally:
        agent.stop()

    counts = Counter(e["type"] for e in final["timeline"])  # the task's and its child's
    assert counts["task.accepted"] == 1
    assert counts["task.child_created"] == 1
    assert counts["interaction.requested"] == 1
    assert counts["interaction.resolved"] == 1
    assert counts["artifact.created"] == 1
    (report,) = final["artifacts"]
    # the report is stored in the hub, so the person can open it (not a path on the agent's
    # machine): the exact text the agent wrote, as a download
    opened = ana.client.get(report["url"])
    assert opened.status_code == 200, opened.text
    assert opened.text.startswith("# Migrate the orders database")
    assert "Approved by Ana" in opened.text
    assert opened.headers["content-disposition"].startswith("attachment;")
    assert report["mimeType"] == "text/markdown"
    conversation = final["task"]["conversationId"]
    messages = ana.read(f"/conversations/{conversation}/messages")["messages"]
    from_agent = [m for m in messages if m["author"]["kind"] == "agent"]
    assert len(from_agent) == 1 and from_agent[0]["content"]
    assert final["task"]["progress"] == 100


def test_a_rejected_approval_stops_the_task_cleanly(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
):
    ana = sign_up()
    code = ana.send("/pairing-codes", {}, 201)["code"]
    agent = AgentProcess(hub.url, tmp_path / "agent", code, WORK).start()
    try:
        agent_id = _online_agent(ana)
        task_id = ana.send("/tasks", {"title": "Risky", "targetAgentId": agent_id}, 201)["task"][
            "id"
        ]

        def pending() -> str | None:
            rows = ana.read("/interactions?status=requested")["interactions"]
            return rows[0]["id"] if rows else None

        interaction_id = until(pending, "the approval request")
        ana.send(
            f"/interactions/{interaction_id}/respond",
            {"response": {"optionId": "reject", "text": "not today"}},
        )

        def ended() -> dict | None:
            task = ana.read(f"/tasks/{task_id}")
            return task if task["task"]["status"] in ("cancelled", "succeeded", "failed") else None

        final = until(ended, "the task to stop")
    finally:
        agent.stop()
    assert final["task"]["status"] == "cancelled"
    assert final["artifacts"] == []
