"""Raw events on demand (seed 001 §4, progressive disclosure): a task, a message or a card
shows the recorded events behind it, with their ids and sequences, paged, without secrets,
and says where the log was compacted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from lineup.hub import Settings, create_app
from lineup.protocol.times import now_ms
from tests.integration.hub.test_log_retention import _app, _compact
from tests.support.agents import AgentSocket
from tests.support.clock import FakeClock
from tests.support.governance import World, put
from tests.support.hub_client import HubClient
from tests.support.people import Person


def raw(person: Person, subject: str, query: str = "") -> dict[str, Any]:
    page: dict[str, Any] = person.read(f"/raw-events?subject={subject}{query}")
    return page


def _sequences_in_log(person: Person) -> dict[int, dict[str, Any]]:
    return {e["sequence"]: e for e in person.read("/events?after=0&limit=1000")["events"]}


def _task_with_a_question(ana: Person, agent: AgentSocket) -> str:
    task: str = ana.send("/tasks", {"title": "Ship", "targetAgentId": agent.agent_id}, 201)["task"][
        "id"
    ]
    agent.call("task.accepted", {"taskId": task}, taskId=task)
    agent.call("task.status_changed", {"status": "running", "progress": 40}, taskId=task)
    agent.call(
        "interaction.requested",
        {"interaction": {"id": "int_go", "type": "approval", "title": "Go?"}},
        taskId=task,
    )
    ana.send("/interactions/int_go/respond", {"response": {"optionId": "approve"}})
    agent.call("task.status_changed", {"status": "succeeded", "summary": "done"}, taskId=task)
    return task


def test_a_tasks_events_come_in_log_order_with_their_ids_and_sequences(hub: HubClient) -> None:
    ana = hub.sign_up()
    with hub.agent(hub.pair(ana)) as agent:
        task = _task_with_a_question(ana, agent)
        other = ana.send("/tasks", {"title": "Other", "targetAgentId": agent.agent_id}, 201)
    page = raw(ana, f"task:{task}")
    assert page["subject"] == f"task:{task}"
    assert page["hasMore"] is False and page["compactedBefore"] is None
    types = [e["type"] for e in page["events"]]
    assert types == [
        "task.created",
        "task.accepted",
        "task.status_changed",
        "interaction.requested",
        "interaction.resolved",
        "task.status_changed",
    ]
    sequences = [e["sequence"] for e in page["events"]]
    assert sequences == sorted(sequences) and len(set(sequences)) == len(sequences)
    log = _sequences_in_log(ana)
    for event in page["events"]:
        recorded = log[event["sequence"]]
        assert (event["id"], event["type"], event["actor"]) == (
            recorded["id"],
            recorded["type"],
            recorded["actor"],
        )
        assert event["payload"] == recorded["payload"]
        assert event["recordedAt"].endswith("Z") and event["taskId"] in (task, None)
    assert event["actor"] == f"agent:{agent.agent_id}"
    assert other["task"]["id"] not in str(page)


def test_a_messages_events_and_an_interactions_events(hub: HubClient) -> None:
    ana = hub.sign_up()
    with hub.agent(hub.pair(ana)) as agent:
        conversation = ana.send("/conversations", {"title": "Ops"}, 201)["id"]
        posted = ana.send(f"/conversations/{conversation}/messages", {"content": "hello"}, 201)
        _task_with_a_question(ana, agent)
    message = posted["message"]
    page = raw(ana, f"message:{message['id']}")
    assert [(e["type"], e["sequence"]) for e in page["events"]] == [
        ("message.created", message["sequence"])
    ]
    assert page["events"][0]["conversationId"] == conversation
    assert page["events"][0]["payload"]["content"] == "hello"

    card = raw(ana, "interaction:int_go")
    assert [e["type"] for e in card["events"]] == ["interaction.requested", "interaction.resolved"]
    assert card["events"][1]["payload"]["response"] == {"optionId": "approve"}
    assert card["events"][1]["actor"] == f"user:{ana.user_id}"

    whole = raw(ana, f"conversation:{conversation}")
    assert [e["type"] for e in whole["events"]] == ["conversation.created", "message.created"]


def test_a_subjects_events_page_forward_and_back(hub: HubClient) -> None:
    ana = hub.sign_up()
    with hub.agent(hub.pair(ana)) as agent:
        task = _task_with_a_question(ana, agent)
    every = [e["sequence"] for e in raw(ana, f"task:{task}")["events"]]
    first = raw(ana, f"task:{task}", "&limit=4")
    assert [e["sequence"] for e in first["events"]] == every[:4] and first["hasMore"] is True
    rest = raw(ana, f"task:{task}", f"&limit=4&after={every[3]}")
    assert [e["sequence"] for e in rest["events"]] == every[4:] and rest["hasMore"] is False
    latest = raw(ana, f"task:{task}", f"&limit=2&before={every[-1] + 1}")
    assert [e["sequence"] for e in latest["events"]] == every[-2:] and latest["hasMore"] is True
    older = raw(ana, f"task:{task}", f"&limit=10&before={every[-2]}")
    assert [e["sequence"] for e in older["events"]] == every[:-2] and older["hasMore"] is False
    window = raw(ana, f"task:{task}", f"&after={every[0]}&before={every[2]}")
    assert [e["sequence"] for e in window["events"]] == [every[1]]


def test_a_payloads_secrets_are_not_shown(hub: HubClient) -> None:
    ana = hub.sign_up()
    conversation = ana.send("/conversations", {"title": "Ops"}, 201)["id"]
    text = "use password=hunter2 and token lna_abcdefghijklmnop"
    posted = ana.send(f"/conversations/{conversation}/messages", {"content": text}, 201)
    (event,) = raw(ana, f"message:{posted['message']['id']}")["events"]
    shown = event["payload"]["content"]
    assert "hunter2" not in shown and "abcdefghijklmnop" not in shown
    assert "[redacted]" in shown


@pytest.mark.parametrize(
    "subject",
    ["", "task", "task:", "workspace:ws_1", "nonsense:1", "task:" + "x" * 129],
)
def test_a_malformed_subject_is_an_invalid_argument(hub: HubClient, subject: str) -> None:
    ana = hub.sign_up()
    response = ana.get("/raw-events", params={"subject": subject})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "invalid_argument"


def test_an_unknown_subject_is_not_found(hub: HubClient) -> None:
    ana = hub.sign_up()
    for subject in ("task:nope", "message:nope", "interaction:nope", "tool_call:nope"):
        response = ana.get("/raw-events", params={"subject": subject})
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "not_found"


def test_after_compaction_the_horizon_is_reported_and_kept_events_still_show(
    hub_database: str, tmp_path: Path
) -> None:
    clock = FakeClock(start_ms=now_ms())
    with _app(hub_database, tmp_path, clock, retention_days=0) as client:
        hub = HubClient(client)
        ana = hub.sign_up()
        with hub.agent(hub.pair(ana)) as agent:
            done = _task_with_a_question(ana, agent)
            still_open = ana.send("/tasks", {"title": "Open", "targetAgentId": agent.agent_id}, 201)
            open_id = still_open["task"]["id"]
            agent.call("task.accepted", {"taskId": open_id}, taskId=open_id)
        conversation = ana.send("/conversations", {"title": "Chat"}, 201)["id"]
        for n in range(5):
            ana.send(f"/conversations/{conversation}/messages", {"content": f"chat {n}"}, 201)
        changed = put(ana, f"/settings/workspace/{ana.workspace_id}", {"retention.maxEvents": 2})
        assert changed.status_code == 200, changed.text
        (compaction,) = [c for c in _compact(client) if c.workspace_id == ana.workspace_id]
        horizon = compaction.horizon_after
        assert compaction.deleted > 0 and horizon > 1

        finished = raw(ana, f"task:{done}")
        assert finished["compactedBefore"] == horizon
        assert finished["events"] == [], "a finished task's events are compacted away"
        kept = raw(ana, f"task:{open_id}")  # an open task's events are kept for its readers
        assert kept["compactedBefore"] == horizon
        assert [e["type"] for e in kept["events"]] == ["task.created", "task.accepted"]
        card = raw(ana, "interaction:int_go")
        assert card["events"] == [] and card["compactedBefore"] == horizon


def test_someone_outside_a_project_is_told_its_subjects_do_not_exist(settings: Settings) -> None:
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        world = World(client)
        try:
            posted = world.ana.send(
                f"/conversations/{world.conversation}/messages", {"content": "board figures"}, 201
            )
            task = world.ana.send(
                "/tasks",
                {
                    "title": "Board pack",
                    "targetAgentId": world.agent_id,
                    "conversationId": world.conversation,
                },
                201,
            )["task"]["id"]
            code = world.ana.send("/invitations", {}, 201)["code"]
            out = Person.sign_up(world.client, None, "Out", invitationCode=code)
            viewer = world.member("viewer", "Vi")
            subjects = (
                f"message:{posted['message']['id']}",
                f"task:{task}",
                f"conversation:{world.conversation}",
            )
            for subject in subjects:
                refused = out.get("/raw-events", params={"subject": subject})
                assert refused.status_code == 404, (subject, refused.text)
                assert "board" not in refused.text.lower()
                assert raw(viewer, subject)["events"], subject  # members read them
        finally:
            world.close()
