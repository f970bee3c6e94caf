"""Where protocol.md and the hub disagreed, they now say and do the same thing."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta

from tests.support.envelopes import now_iso
from tests.support.hub_client import HubClient
from tests.support.people import Person


def _task(ana: Person, agent_id: str, title: str = "Tidy deps") -> str:
    body = ana.ok(ana.post("/tasks", {"title": title, "targetAgentId": agent_id}), 201)
    return str(body["task"]["id"])


def _timeline(ana: Person, task_id: str) -> list[str]:
    return [e["type"] for e in ana.ok(ana.get(f"/tasks/{task_id}"))["timeline"]]


def _raw(hub: HubClient, credential: str, frame: dict) -> tuple[dict, int | None]:
    """Open an agent socket, send ``frame`` first; the answer and the close code."""
    with hub.client.websocket_connect(
        "/ws/agent", headers={"Authorization": f"Bearer {credential}"}
    ) as ws:
        ws.send_text(json.dumps(frame))
        answer = json.loads(ws.receive_text())
        closed = ws.receive()
        return answer, closed.get("code")


def _hello(workspace_id: str, **overrides: object) -> dict:
    frame = {
        "id": "hello-1",
        "type": "agent.hello",
        "version": "0.1",
        "occurredAt": now_iso(),
        "workspaceId": workspace_id,
        "payload": {"agentVersion": "1", "runtime": "python", "capabilities": []},
    }
    frame.update(overrides)
    return frame


def test_task_accepted_without_the_envelope_task_id_is_refused_like_other_task_events(
    hub: HubClient,
):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        bare = agent.call("task.accepted", {"taskId": task_id})
        assert bare["type"] == "error" and bare["code"] == "invalid_argument"
        other = _task(ana, creds["agentId"], "Other")
        mixed = agent.call("task.accepted", {"taskId": other}, taskId=task_id)
        assert mixed["code"] == "invalid_argument"
        assert _timeline(ana, task_id) == ["task.created"]
        assert agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)["sequence"]


def test_a_frame_without_a_version_is_refused(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        frame = {
            "id": "no-version",
            "type": "task.accepted",
            "occurredAt": now_iso(),
            "workspaceId": creds["workspaceId"],
            "taskId": task_id,
            "payload": {"taskId": task_id},
        }
        agent.ws.send_text(json.dumps(frame))
        refused = agent.answer("no-version")
        assert refused["type"] == "error" and refused["code"] == "invalid_argument"
        assert refused["details"]["supported"] == ["0.1"]
        assert _timeline(ana, task_id) == ["task.created"]


def test_failed_without_an_error_and_an_error_on_another_status_are_invalid_argument(
    hub: HubClient,
):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        failed = agent.call("task.status_changed", {"status": "failed"}, taskId=task_id)
        assert failed["code"] == "invalid_argument"
        done = {"status": "succeeded", "error": "oops"}
        assert agent.call("task.status_changed", done, taskId=task_id)["code"] == (
            "invalid_argument"
        )
        assert _timeline(ana, task_id) == ["task.created", "task.accepted"]


def test_a_first_frame_that_is_not_hello_is_answered_by_its_id_before_the_close(
    hub: HubClient,
):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    answer, code = _raw(
        hub, creds["credential"], _hello(creds["workspaceId"], type="agent.heartbeat", payload={})
    )
    assert (answer["type"], answer["id"], answer["code"]) == (
        "error",
        "hello-1",
        "invalid_argument",
    )
    assert code == 4400


def test_a_hello_naming_another_workspace_is_answered_by_its_id_before_the_close(
    hub: HubClient,
):
    ana, bob = hub.sign_up(), hub.sign_up(name="Bob")
    creds = hub.pair(ana)
    answer, code = _raw(hub, creds["credential"], _hello(bob.workspace_id))
    assert (answer["type"], answer["id"], answer["code"]) == ("error", "hello-1", "forbidden")
    assert code == 4403


def test_an_unreadable_frame_is_answered_with_a_null_id(hub: HubClient):
    ana = hub.sign_up()
    with hub.agent(hub.pair(ana)) as agent:
        agent.ws.send_text("{not json")
        answer = agent.receive()
        assert answer["type"] == "error" and "id" in answer and answer["id"] is None


def test_every_http_error_carries_details_even_when_empty(hub: HubClient):
    ana = hub.sign_up()
    missing = ana.get("/tasks/task_nope")
    assert missing.status_code == 404 and isinstance(missing.json()["error"]["details"], dict)
    nowhere = hub.client.get("/api/there-is-nothing-here")
    assert nowhere.status_code == 404 and nowhere.json()["error"]["details"] == {}


def test_the_same_progress_report_again_records_nothing_and_gets_no_sequence(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        report = {"status": "running", "progress": 50, "summary": "halfway"}
        first = agent.call("task.status_changed", report, taskId=task_id)
        again = agent.call("task.status_changed", report, taskId=task_id)
        assert first["sequence"] and again["type"] == "ack"
        assert "sequence" not in again and again["duplicate"] is False
        more = agent.call("task.status_changed", {**report, "progress": 60}, taskId=task_id)
        assert more["sequence"] > first["sequence"]
        assert _timeline(ana, task_id).count("task.status_changed") == 2


def test_an_expired_interaction_reaches_the_agent_that_asked(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        soon = datetime.now(UTC) + timedelta(milliseconds=200)
        interaction = {
            "id": "int_soon",
            "type": "approval",
            "title": "Deploy?",
            "expiresAt": soon.isoformat().replace("+00:00", "Z"),
        }
        asked = agent.call("interaction.requested", {"interaction": interaction}, taskId=task_id)
        assert asked["type"] == "ack"
        expired = agent.next_of("interaction.expired")  # the monitor records it when due
        assert expired["payload"]["interactionId"] == "int_soon"
        assert expired["payload"]["expiresAt"] == int(soon.timestamp() * 1000)
        assert expired["sequence"] > asked["sequence"] and expired["taskId"] == task_id


def test_an_agent_gets_responded_at_in_milliseconds_like_everyone_else(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
        interaction = {"id": "int_ms", "type": "approval", "title": "Deploy?"}
        agent.call("interaction.requested", {"interaction": interaction}, taskId=task_id)
        before = int(time.time() * 1000)
        ana.ok(ana.post("/interactions/int_ms/respond", {"response": {"optionId": "approve"}}))
        resolved = agent.next_of("interaction.resolved")["payload"]
        assert isinstance(resolved["respondedAt"], int) and resolved["respondedAt"] >= before - 1
        recorded = [
            e
            for e in ana.ok(ana.get(f"/tasks/{task_id}"))["timeline"]
            if e["type"] == "interaction.resolved"
        ]
        assert recorded[0]["payload"]["respondedAt"] == resolved["respondedAt"]


def test_problems_are_objects_with_a_path_on_frames_and_on_http(hub: HubClient):
    ana = hub.sign_up()
    creds = hub.pair(ana)
    with hub.agent(creds) as agent:
        task_id = _task(ana, creds["agentId"])
        bad = agent.call("task.status_changed", {"status": 7}, taskId=task_id)
        assert bad["details"]["problems"][0] == {
            "path": "payload.status",
            "problem": bad["details"]["problems"][0]["problem"],
        }
        http = ana.post("/tasks", {"title": 7})
        assert http.status_code == 400
        for problems in (bad["details"]["problems"], http.json()["error"]["details"]["problems"]):
            assert all(set(p) == {"path", "problem"} for p in problems)
            assert all(isinstance(p["path"], str) for p in problems)


def test_a_binary_message_is_refused_and_the_connections_stay_up(hub: HubClient):
    ana = hub.sign_up()
    with hub.agent(hub.pair(ana)) as agent:
        heartbeat = json.dumps(
            {
                "id": "bin-1",
                "type": "agent.heartbeat",
                "version": "0.1",
                "occurredAt": now_iso(),
                "workspaceId": agent.workspace_id,
                "payload": {},
            }
        )
        agent.ws.send_bytes(heartbeat.encode())
        refused = agent.receive()
        assert refused["type"] == "error" and refused["code"] == "invalid_argument"
        assert refused["id"] is None and "text message" in refused["message"]
        assert agent.call("agent.heartbeat", {})["type"] == "ack"
    ana._use()
    with hub.client.websocket_connect(f"/ws/client?workspaceId={ana.workspace_id}") as ws:
        ws.send_bytes(b'{"id": "x"}')
        refused = json.loads(ws.receive_text())
        assert refused["code"] == "invalid_argument" and "text message" in refused["message"]
        subscribe = {
            "id": "sub-1",
            "type": "client.subscribe",
            "version": "0.1",
            "occurredAt": now_iso(),
            "workspaceId": ana.workspace_id,
            "payload": {"lastSequence": 0},
        }
        ws.send_text(json.dumps(subscribe))
        assert json.loads(ws.receive_text()) == {
            "type": "ack",
            "id": "sub-1",
            "duplicate": False,
            "ignored": False,
        }
