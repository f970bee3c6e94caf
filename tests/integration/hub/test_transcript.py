"""An agent's transcript entries (``activity.*``) are checked, recorded in its task and its
conversation, and read back from the log; large content must be a file of the workspace.
Runs on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from lineup.protocol.activity import MAX_INLINE_JSON, MAX_INLINE_OUTPUT
from tests.integration.hub.test_files import upload
from tests.support.agents import AgentSocket
from tests.support.hub_client import HubClient
from tests.support.people import Person


@pytest.fixture
def ana(hub: HubClient) -> Person:
    return hub.sign_up(name="Ana")


@pytest.fixture
def creds(hub: HubClient, ana: Person) -> dict[str, Any]:
    return hub.pair(ana)


@contextmanager
def _working(
    hub: HubClient, ana: Person, creds: dict[str, Any]
) -> Iterator[tuple[AgentSocket, str]]:
    with hub.agent(creds) as agent:
        body = {"title": "Fix the tests", "targetAgentId": creds["agentId"]}
        task_id = ana.ok(ana.post("/tasks", body), 201)["task"]["id"]
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        yield agent, task_id


def _activities(ana: Person, task_id: str) -> list[dict[str, Any]]:
    timeline = ana.ok(ana.get(f"/tasks/{task_id}"))["timeline"]
    return [e for e in timeline if e["type"].startswith("activity.")]


def test_a_tool_call_a_command_a_diff_and_usage_are_recorded_in_the_task(hub, ana, creds):
    with _working(hub, ana, creds) as (agent, task_id):
        sent = [
            (
                "activity.started",
                {
                    "activityId": "act_t",
                    "kind": "tool_call",
                    "name": "read",
                    "arguments": {"path": "README.md"},
                },
            ),
            (
                "activity.finished",
                {"activityId": "act_t", "status": "succeeded", "result": {"text": "# LineUp"}},
            ),
            (
                "activity.started",
                {
                    "activityId": "act_c",
                    "kind": "command",
                    "command": "pytest -q",
                    "cwd": "/srv/app",
                },
            ),
            ("activity.output", {"activityId": "act_c", "chunk": "..F\n", "offset": 0}),
            (
                "activity.output",
                {"activityId": "act_c", "chunk": "1 failed\n", "offset": 4, "stream": "stderr"},
            ),
            ("activity.finished", {"activityId": "act_c", "status": "failed", "exitCode": 1}),
            (
                "activity.started",
                {
                    "activityId": "act_d",
                    "kind": "file_change",
                    "path": "app.py",
                    "change": "modify",
                    "diff": "--- a/app.py\n+++ b/app.py\n-x = 1\n+x = 2\n",
                },
            ),
            ("activity.usage", {"inputTokens": 1200, "outputTokens": 340}),
        ]
        for event_type, payload in sent:
            answer = agent.call(event_type, payload, taskId=task_id)
            assert answer["type"] == "ack" and answer["sequence"], answer
    recorded = _activities(ana, task_id)
    assert [(e["type"], e["payload"]) for e in recorded] == sent
    conversation_id = ana.ok(ana.get(f"/tasks/{task_id}"))["task"]["conversationId"]
    assert {e["conversationId"] for e in recorded} == {conversation_id}


def test_a_resent_entry_is_recorded_once(hub, ana, creds):
    with _working(hub, ana, creds) as (agent, task_id):
        payload = {"activityId": "act_1", "kind": "reasoning", "text": "Look at the tests."}
        first = agent.call("activity.started", payload, taskId=task_id, event_id="evt_same")
        again = agent.call("activity.started", payload, taskId=task_id, event_id="evt_same")
        assert again["sequence"] == first["sequence"] and again.get("duplicate") is True
    assert len(_activities(ana, task_id)) == 1


@pytest.mark.parametrize(
    ("event_type", "payload", "where"),
    [
        ("activity.started", {"activityId": "a", "kind": "command"}, "command"),
        ("activity.started", {"activityId": "a", "kind": "tool_call"}, "name"),
        ("activity.started", {"activityId": "a", "kind": "dance", "name": "x"}, "kind"),
        ("activity.output", {"activityId": "a", "chunk": "", "offset": 0}, "chunk"),
        ("activity.output", {"activityId": "a", "chunk": "x", "offset": -1}, "offset"),
        ("activity.finished", {"activityId": "a", "status": "maybe"}, "status"),
        ("activity.usage", {"inputTokens": -1, "outputTokens": 0}, "inputTokens"),
    ],
)
def test_an_invalid_entry_is_refused_and_not_recorded(hub, ana, creds, event_type, payload, where):
    with _working(hub, ana, creds) as (agent, task_id):
        answer = agent.call(event_type, payload, taskId=task_id)
        assert answer["code"] == "invalid_argument", answer
        assert where in str(answer), answer
    assert _activities(ana, task_id) == []


def test_oversized_content_is_refused_with_a_clear_error(hub, ana, creds):
    big = {"blob": "x" * (MAX_INLINE_JSON + 10)}
    with _working(hub, ana, creds) as (agent, task_id):
        answer = agent.call(
            "activity.started",
            {"activityId": "a", "kind": "tool_call", "name": "write", "arguments": big},
            taskId=task_id,
        )
        assert answer["code"] == "invalid_argument", answer
        assert "inline limit" in str(answer) and "/api/agent/artifacts" in str(answer)
        past = {"activityId": "a", "chunk": "tail", "offset": MAX_INLINE_OUTPUT - 2}
        answer = agent.call("activity.output", past, taskId=task_id)
        assert answer["code"] == "invalid_argument", answer
        assert "outputUrl" in str(answer)
    assert _activities(ana, task_id) == []


def test_large_output_is_a_file_of_the_workspace(hub, ana, creds):
    url = upload(hub, creds, b"line\n" * 50_000, name="output.txt", mime_type="text/plain")
    url = url.json()["url"]
    bo_url = upload(hub, hub.pair(hub.sign_up(name="Bo"))).json()["url"]
    with _working(hub, ana, creds) as (agent, task_id):
        agent.call(
            "activity.started",
            {"activityId": "c", "kind": "command", "command": "yes line"},
            taskId=task_id,
        )
        for wrong in (bo_url, "https://example.test/out.txt"):
            answer = agent.call(
                "activity.finished",
                {"activityId": "c", "status": "succeeded", "outputUrl": wrong},
                taskId=task_id,
            )
            assert answer["code"] == "invalid_argument", answer
        done = {
            "activityId": "c",
            "status": "succeeded",
            "exitCode": 0,
            "outputUrl": url,
            "outputChars": 250_000,
        }
        assert agent.call("activity.finished", done, taskId=task_id)["type"] == "ack"
    finished = [e for e in _activities(ana, task_id) if e["type"] == "activity.finished"]
    assert [e["payload"] for e in finished] == [done]


def test_an_entry_outside_the_agents_work_is_refused(hub, ana, creds):
    other = hub.pair(ana)
    with hub.agent(other):
        body = {"title": "Not yours", "targetAgentId": other["agentId"]}
        task_id = ana.ok(ana.post("/tasks", body), 201)["task"]["id"]
    with hub.agent(creds) as agent:
        entry = {"activityId": "a", "kind": "reasoning", "text": "hm"}
        assert agent.call("activity.started", entry, taskId=task_id)["code"] == "forbidden"
        assert agent.call("activity.started", entry)["code"] == "invalid_argument"
