"""What apps need to render cards and timelines without extra round trips."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.integration.hub.test_client_gateway import _open, _subscribe, _until_caught_up
from tests.support.agents import AgentSocket
from tests.support.hub_client import HubClient
from tests.support.people import Person
from tests.support.waiting import until


@contextmanager
def _waiting_task(hub: HubClient) -> Iterator[tuple[Person, dict[str, Any], AgentSocket, str]]:
    ana = hub.sign_up()
    creds = hub.pair(ana, "builder")
    with hub.agent(creds) as agent:
        task_id = ana.ok(
            ana.post("/tasks", {"title": "Tidy deps", "targetAgentId": creds["agentId"]}), 201
        )["task"]["id"]
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        agent.call(
            "interaction.requested",
            {"interaction": {"id": "int_v", "type": "approval", "title": "Go?"}},
            taskId=task_id,
        )
        yield ana, creds, agent, task_id


def test_interaction_cards_carry_the_agent_name_and_the_task_title(hub: HubClient):
    with _waiting_task(hub) as (ana, _, _, _):
        card = ana.ok(ana.get("/inbox"))["waitingForMe"][0]
        assert (card["agentName"], card["taskTitle"]) == ("builder", "Tidy deps")
        assert ana.ok(ana.get("/interactions/int_v"))["agentName"] == "builder"


def test_a_conflicting_answer_says_who_answered_first_when_and_what(hub: HubClient):
    with _waiting_task(hub) as (ana, _, _, _):
        ana.ok(ana.post("/interactions/int_v/respond", {"response": {"optionId": "approve"}}))
        again = ana.ok(
            ana.post("/interactions/int_v/respond", {"response": {"optionId": "approve"}})
        )
        assert again["status"] == "resolved"  # the same answer again is a no-op
        response = ana.post("/interactions/int_v/respond", {"response": {"optionId": "reject"}})
        assert response.status_code == 409
        details = response.json()["error"]["details"]
        assert details["respondedByName"] == "Ana"
        assert details["response"] == {"optionId": "approve"}
        assert details["respondedAt"].endswith("Z")


def test_an_agents_history_lists_only_that_agent(hub: HubClient):
    ana = hub.sign_up()
    one = hub.pair(ana, "one")
    hub.pair(ana, "two")
    with hub.agent(one):
        pass  # connected, then gone
    # the hub records the disconnect just after the socket closes
    until(lambda: ana.ok(ana.get(f"/agents/{one['agentId']}"))["status"] == "offline", "offline")
    history = ana.ok(ana.get(f"/agents/{one['agentId']}/events"))["events"]
    types = [e["type"] for e in history]
    assert types[:3] == ["agent.paired", "agent.confirmed", "agent.connected"]
    assert "agent.status_changed" in types
    assert {e["payload"]["agentId"] for e in history} == {one["agentId"]}
    assert ana.get("/agents/agent_nope/events").status_code == 404


def test_members_are_listed_for_naming_people(hub: HubClient):
    ana = hub.sign_up()
    members = ana.ok(ana.get("/members"))["members"]
    assert [(m["displayName"], m["role"]) for m in members] == [("Ana", "owner")]


def test_revoking_twice_with_one_key_records_once(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    for _ in range(2):
        ana.ok(ana.post(f"/agents/{creds['agentId']}/revoke", {}, **{"Idempotency-Key": "r-1"}))
    history = ana.ok(ana.get(f"/agents/{creds['agentId']}/events"))["events"]
    assert [e["type"] for e in history].count("agent.revoked") == 1


def test_streamed_text_that_names_only_the_task_reaches_the_app_with_its_conversation(
    hub: HubClient,
):
    with _waiting_task(hub) as (ana, _, agent, task_id):
        conversation = ana.ok(ana.get(f"/tasks/{task_id}"))["task"]["conversationId"]
        with _open(hub, ana) as ws:
            _subscribe(ws, ana)
            _until_caught_up(ws)
            agent.call("message.delta", {"messageId": "m9", "delta": "Hi"}, taskId=task_id)
            frame = json.loads(ws.receive_text())
            while frame["type"] != "message.delta":
                frame = json.loads(ws.receive_text())
            assert frame["conversationId"] == conversation


def test_a_sequence_beyond_what_the_database_holds_is_refused_as_invalid(hub: HubClient):
    ana = hub.sign_up()
    agent = hub.pair(ana)
    conversation = ana.ok(ana.post("/conversations", {"title": "T"}), 201)["id"]
    huge = 2**63
    for path in (
        f"/events?after={huge}",
        f"/agents/{agent['agentId']}/events?after={huge}",
        f"/conversations/{conversation}/messages?before={huge}",
        f"/conversations/{conversation}/messages?after={huge}",
    ):
        response = ana.get(path)
        assert response.status_code == 400, (path, response.text)
        assert response.json()["error"]["code"] == "invalid_argument"


def test_an_idempotency_key_reused_for_another_kind_of_change_is_a_conflict(hub: HubClient):
    ana = hub.sign_up()
    agent = hub.pair(ana)
    first = ana.post("/conversations", {"title": "T"}, **{"Idempotency-Key": "k-1"})
    assert first.status_code == 201, first.text
    conversation = first.json()["id"]
    message = {"content": "hello", "targetAgentId": agent["agentId"]}
    again = ana.post(
        f"/conversations/{conversation}/messages", message, **{"Idempotency-Key": "k-1"}
    )
    assert again.status_code == 409, again.text
    assert again.json()["error"]["code"] == "conflict"
    task = ana.post(
        "/tasks", {"title": "T", "targetAgentId": agent["agentId"]}, **{"Idempotency-Key": "k-2"}
    )
    assert task.status_code == 201, task.text
    reused = ana.post("/conversations", {"title": "T"}, **{"Idempotency-Key": "k-2"})
    assert reused.status_code == 409, reused.text
