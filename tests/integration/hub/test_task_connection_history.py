"""A task's timeline and its row show what happened to its agent's connection while it ran."""

from __future__ import annotations

from tests.support.hub_client import HubClient
from tests.support.waiting import until


def test_the_timeline_shows_the_agent_going_offline_and_coming_back_while_the_task_was_open(
    hub: HubClient,
):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task = ana.ok(
            ana.post("/tasks", {"title": "Long job", "targetAgentId": creds["agentId"]}), 201
        )
        task_id = task["task"]["id"]
        agent.next_of("task.assigned")
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
    until(
        lambda: ana.ok(ana.get(f"/tasks/{task_id}"))["task"]["agentConnectionLost"],
        "the task shows the lost connection",
    )
    lost = ana.ok(ana.get(f"/tasks/{task_id}"))["task"]
    assert lost["connectionLostAt"] is not None
    assert lost["connectionLostAt"] >= lost["lastHeartbeatAt"]
    attention = ana.ok(ana.get("/inbox"))["needsAttention"]
    assert [t["connectionLostAt"] for t in attention] == [lost["connectionLostAt"]]
    # The agent's view says when its connection ended: what "queued" vs "delivered" rests on.
    offline = ana.ok(ana.get("/agents"))["agents"][0]
    assert offline["offlineAt"] == lost["connectionLostAt"]
    assert offline["connectedAt"] < offline["offlineAt"]

    with hub.agent(creds) as agent:
        agent.call("task.status_changed", {"status": "succeeded"}, taskId=task_id)
        timeline = ana.ok(ana.get(f"/tasks/{task_id}"))["timeline"]
        kinds = [
            (e["type"], e["payload"].get("status"))
            for e in timeline
            if e["type"].startswith("agent.")
        ]
        # Not the connect before the task existed: only what happened while it was open.
        assert kinds == [("agent.status_changed", "offline"), ("agent.connected", None)]
        assert timeline[0]["type"] == "task.created"
        assert ana.ok(ana.get(f"/tasks/{task_id}"))["task"]["connectionLostAt"] is None


def test_a_finished_task_keeps_later_connection_news_out_of_its_timeline(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task = ana.ok(
            ana.post("/tasks", {"title": "Quick", "targetAgentId": creds["agentId"]}), 201
        )
        task_id = task["task"]["id"]
        agent.next_of("task.assigned")
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        agent.call("task.status_changed", {"status": "succeeded"}, taskId=task_id)
    until(lambda: ana.ok(ana.get("/agents"))["agents"][0]["status"] == "offline", "agent offline")
    timeline = ana.ok(ana.get(f"/tasks/{task_id}"))["timeline"]
    assert not [e for e in timeline if e["type"].startswith("agent.")]
