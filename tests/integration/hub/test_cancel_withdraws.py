"""A task's cancel withdraws its open requests: off the inbox, told to the agent, and a late
answer refused with a reason a person understands."""

from __future__ import annotations

from typing import Any

from tests.support.agents import AgentSocket
from tests.support.hub_client import HubClient
from tests.support.people import Person

APPROVAL = {"interaction": {"id": "int_ship", "type": "approval", "title": "Ship it?"}}


def _running_task(ana: Person, agent: AgentSocket, agent_id: str) -> str:
    task = ana.ok(ana.post("/tasks", {"title": "Release", "targetAgentId": agent_id}), 201)
    task_id: str = task["task"]["id"]
    agent.next_of("task.assigned")
    assert agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)["type"] == "ack"
    return task_id


def _ask(agent: AgentSocket, task_id: str, body: dict[str, Any] = APPROVAL) -> None:
    ack = agent.call("interaction.requested", body, taskId=task_id)
    assert ack["type"] == "ack", ack


def test_a_cancel_request_withdraws_the_open_approval_and_refuses_a_late_answer(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _running_task(ana, agent, creds["agentId"])
        _ask(agent, task_id)
        assert ana.ok(ana.get("/inbox"))["counts"]["waitingForMe"] == 1

        ana.ok(ana.post(f"/tasks/{task_id}/cancel", {"reason": "wrong branch"}))

        inbox = ana.ok(ana.get("/inbox"))
        assert inbox["counts"]["waitingForMe"] == 0
        assert inbox["waitingForMe"] == []
        card = ana.ok(ana.get("/interactions/int_ship"))
        assert card["status"] == "cancelled"
        assert card["cancelReason"] == "The task was cancelled."

        late = ana.post("/interactions/int_ship/respond", {"response": {"optionId": "approve"}})
        assert late.status_code == 409, late.text
        error = late.json()["error"]
        assert error["code"] == "conflict"
        assert error["details"]["reason"] == "cancelled"
        assert "withdrawn" in error["message"] and "task was cancelled" in error["message"]

        withdrawn = agent.next_of("interaction.cancelled")
        assert withdrawn["payload"]["interactionId"] == "int_ship"
        assert withdrawn["payload"]["reason"] == "The task was cancelled."
        assert withdrawn["taskId"] == task_id
        assert not [f for f in agent.frames if f.get("type") == "interaction.resolved"]
        timeline = ana.ok(ana.get(f"/tasks/{task_id}"))["timeline"]
        assert [e["type"] for e in timeline].count("interaction.cancelled") == 1


def test_a_cancel_withdraws_pending_tool_calls_and_the_agent_hears_of_it(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _running_task(ana, agent, creds["agentId"])
        call = {"call_id": "c1", "name": "confirm", "arguments": {"message": "Deploy?"}}
        assert agent.call("tool.call", call, taskId=task_id)["type"] == "ack"
        pending = ana.ok(ana.get("/inbox"))["waitingTools"]
        assert [c["callId"] for c in pending] == ["c1"]

        ana.ok(ana.post(f"/tasks/{task_id}/cancel", {}))

        inbox = ana.ok(ana.get("/inbox"))
        assert inbox["waitingTools"] == [] and inbox["counts"]["waitingForMe"] == 0
        withdrawn = agent.next_of("tool.cancelled")
        assert withdrawn["payload"] == {"call_id": "c1", "reason": "The task was cancelled."}

        late = ana.post(
            f"/tool-calls/{pending[0]['id']}/result",
            {"result": {"message": "yes"}},
        )
        assert late.status_code == 409, late.text
        assert late.json()["error"]["details"]["reason"] == "cancelled"
        assert "task was cancelled" in late.json()["error"]["message"]


def test_a_confirmed_cancel_withdraws_the_requests_of_child_tasks_too(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _running_task(ana, agent, creds["agentId"])
        child = agent.call(
            "task.child_created",
            {"parentTaskId": task_id, "title": "Build", "status": "running", "childTaskId": "t_c"},
            taskId=task_id,
        )
        assert child["type"] == "ack", child
        _ask(agent, "t_c", {"interaction": {"id": "int_child", "type": "input", "title": "Tag?"}})
        call = {"call_id": "c9", "name": "confirm", "arguments": {"message": "Tag it?"}}
        assert agent.call("tool.call", call, taskId="t_c")["type"] == "ack"

        ack = agent.call("task.status_changed", {"status": "cancelled"}, taskId=task_id)
        assert ack["type"] == "ack", ack

        assert ana.ok(ana.get("/interactions/int_child"))["status"] == "cancelled"
        assert ana.ok(ana.get("/inbox"))["counts"]["waitingForMe"] == 0
        assert agent.next_of("interaction.cancelled")["payload"]["interactionId"] == "int_child"
        assert agent.next_of("tool.cancelled")["payload"]["call_id"] == "c9"
        assert ana.ok(ana.get("/inbox"))["waitingTools"] == []


def test_a_task_being_cancelled_cannot_ask_a_person_anything_new(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _running_task(ana, agent, creds["agentId"])
        ana.ok(ana.post(f"/tasks/{task_id}/cancel", {}))
        refused = agent.call("interaction.requested", APPROVAL, taskId=task_id)
        assert refused["type"] == "error"
        assert refused["code"] == "conflict"
        assert ana.ok(ana.get("/inbox"))["counts"]["waitingForMe"] == 0


def test_an_answer_given_before_the_cancel_stands(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _running_task(ana, agent, creds["agentId"])
        _ask(agent, task_id)
        ana.ok(ana.post("/interactions/int_ship/respond", {"response": {"optionId": "approve"}}))
        ana.ok(ana.post(f"/tasks/{task_id}/cancel", {}))
        assert ana.ok(ana.get("/interactions/int_ship"))["status"] == "resolved"
        again = ana.post("/interactions/int_ship/respond", {"response": {"optionId": "approve"}})
        assert again.status_code == 200, again.text
