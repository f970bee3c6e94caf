"""An agent's task is the envelope's: a taskId in a payload that has no such field is ignored,
as the ack's warning says, and never reaches another task."""

from __future__ import annotations

from tests.support.hub_client import HubClient


def _task(person, agent_id: str, title: str) -> str:
    created = person.ok(person.post("/tasks", {"title": title, "targetAgentId": agent_id}), 201)
    return str(created["task"]["id"])


def test_a_status_report_changes_the_envelopes_task_not_one_named_in_the_payload(hub: HubClient):
    ana = hub.sign_up()
    mine = hub.pair(ana, "mine")
    theirs = hub.pair(ana, "theirs")
    my_task = _task(ana, mine["agentId"], "Mine")
    their_task = _task(ana, theirs["agentId"], "Theirs")
    with hub.agent(mine) as agent:
        agent.call("task.accepted", {"taskId": my_task}, taskId=my_task)
        ack = agent.call(
            "task.status_changed", {"status": "succeeded", "taskId": their_task}, taskId=my_task
        )
        assert ack["type"] == "ack" and ack["warnings"], ack
    assert ana.ok(ana.get(f"/tasks/{my_task}"))["task"]["status"] == "succeeded"
    assert ana.ok(ana.get(f"/tasks/{their_task}"))["task"]["status"] == "queued"


def test_an_artifact_lands_on_no_task_the_envelope_did_not_name(hub: HubClient):
    ana = hub.sign_up()
    mine = hub.pair(ana, "mine")
    theirs = hub.pair(ana, "theirs")
    their_task = _task(ana, theirs["agentId"], "Theirs")
    conversation = ana.ok(
        ana.post("/conversations", {"title": "Mine", "agentIds": [mine["agentId"]]}), 201
    )["id"]
    with hub.agent(mine) as agent:
        ack = agent.call(
            "artifact.created",
            {"name": "r", "url": "https://example.test/r", "taskId": their_task},
            conversationId=conversation,
        )
        assert ack["type"] == "ack", ack
    assert ana.ok(ana.get(f"/artifacts?taskId={their_task}"))["artifacts"] == []
    listed = ana.ok(ana.get(f"/artifacts?conversationId={conversation}"))["artifacts"]
    assert [a["taskId"] for a in listed] == [None]
