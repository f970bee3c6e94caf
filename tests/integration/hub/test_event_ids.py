"""An event id is its sender's idempotency key in its workspace: other agents and other
workspaces may use the same id, and only a true resend is answered as a duplicate."""

from __future__ import annotations

from tests.support.hub_client import HubClient
from tests.support.people import Person


def _task(ana: Person, agent_id: str, title: str = "Tidy deps") -> str:
    body = ana.ok(ana.post("/tasks", {"title": title, "targetAgentId": agent_id}), 201)
    return str(body["task"]["id"])


def _status(ana: Person, task_id: str) -> str:
    return str(ana.ok(ana.get(f"/tasks/{task_id}"))["task"]["status"])


def test_two_agents_numbering_their_events_alike_both_get_them_recorded(hub: HubClient):
    ana = hub.sign_up()
    first_creds, second_creds = hub.pair(ana, "first"), hub.pair(ana, "second")
    with hub.agent(first_creds) as first, hub.agent(second_creds) as second:
        first_task = _task(ana, first_creds["agentId"])
        second_task = _task(ana, second_creds["agentId"])
        a = first.call("task.accepted", {"taskId": first_task}, taskId=first_task, event_id="1")
        b = second.call("task.accepted", {"taskId": second_task}, taskId=second_task, event_id="1")
        assert a["type"] == b["type"] == "ack"
        assert a["duplicate"] is False and b["duplicate"] is False
        assert b["sequence"] != a["sequence"]
        assert _status(ana, first_task) == _status(ana, second_task) == "running"


def test_an_id_another_workspace_used_is_neither_a_duplicate_nor_a_conflict(hub: HubClient):
    ana, bob = hub.sign_up(), hub.sign_up(name="Bob")
    ana_creds, bob_creds = hub.pair(ana), hub.pair(bob)
    with hub.agent(ana_creds) as ana_agent, hub.agent(bob_creds) as bob_agent:
        ana_task = _task(ana, ana_creds["agentId"])
        bob_task = _task(bob, bob_creds["agentId"])
        ana_agent.call("task.accepted", {"taskId": ana_task}, taskId=ana_task, event_id="1")
        answer = bob_agent.call(
            "task.accepted", {"taskId": bob_task}, taskId=bob_task, event_id="1"
        )
        assert answer["type"] == "ack" and answer["duplicate"] is False
        assert _status(bob, bob_task) == "running"


def test_an_agent_reusing_an_id_for_another_event_gets_a_conflict_not_a_duplicate(
    hub: HubClient,
):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        accepted = agent.call("task.accepted", {"taskId": task_id}, taskId=task_id, event_id="7")
        # e.g. an agent whose counter started again at 1 after a restart
        progress = {"status": "running", "progress": 40, "summary": "halfway"}
        reused = agent.call("task.status_changed", progress, taskId=task_id, event_id="7")
        assert reused["type"] == "error" and reused["code"] == "conflict"
        assert reused["details"]["reason"] == "id_reused"
        resent = agent.call("task.accepted", {"taskId": task_id}, taskId=task_id, event_id="7")
        assert (resent["duplicate"], resent["sequence"]) == (True, accepted["sequence"])
        timeline = ana.ok(ana.get(f"/tasks/{task_id}"))["timeline"]
        assert [e["type"] for e in timeline] == ["task.created", "task.accepted"]


def test_an_id_of_the_full_128_characters_is_recorded(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        long_id = "e" * 128
        accepted = agent.call(
            "task.accepted", {"taskId": task_id}, taskId=task_id, event_id=long_id
        )
        assert accepted["type"] == "ack" and accepted["sequence"]
        again = agent.call("task.accepted", {"taskId": task_id}, taskId=task_id, event_id=long_id)
        assert (again["duplicate"], again["sequence"]) == (True, accepted["sequence"])


def test_one_persons_idempotency_key_is_never_answered_with_another_workspaces_task(
    hub: HubClient,
):
    ana = hub.sign_up()
    ana._use()
    created = hub.client.post("/api/workspaces", json={"name": "Second"}, headers=ana.headers())
    assert created.status_code == 201, created.text
    second = Person(ana.client, ana.email, ana.csrf, created.json()["id"], ana.user_id)
    second.session = ana.session
    agents = [hub.pair(person)["agentId"] for person in (ana, second)]
    body = {"title": "Same key", "targetAgentId": agents[0]}
    first = ana.ok(ana.post("/tasks", body, **{"Idempotency-Key": "k-1"}), 201)
    assert first["task"]["targetAgentId"] == agents[0]
    # the key names its first request (this path, in the first workspace): elsewhere it is
    # a conflict, never the first workspace's task and never a silent second one
    other = {"title": "Same key", "targetAgentId": agents[1]}
    reused = second.post("/tasks", other, **{"Idempotency-Key": "k-1"})
    assert reused.status_code == 409, reused.text
    assert reused.json()["error"]["details"]["reason"] == "different_request"
    assert second.ok(second.get("/tasks"))["tasks"] == []
    fresh = second.ok(second.post("/tasks", other, **{"Idempotency-Key": "k-2"}), 201)
    assert fresh["task"]["id"] != first["task"]["id"]
