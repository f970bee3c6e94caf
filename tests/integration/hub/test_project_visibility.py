"""Permissions follow the project (seed 003 §1): a project's conversations and governance are
seen by its members and the workspace's owners only — over HTTP and on the people's socket —
and in a project only owners and editors act; viewers read."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from lineup.hub import Settings, create_app
from tests.support.governance import World
from tests.support.people import Person
from tests.support.providers import LedgerProvider


@pytest.fixture
def world(settings: Settings) -> Iterator[World]:
    ledger = LedgerProvider()
    settings = dataclasses.replace(settings, providers=(), extra_providers=(ledger,))
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        w = World(client, ledger)
        try:
            yield w
        finally:
            w.close()


def outsider(world: World) -> Person:
    code = world.ana.send("/invitations", {}, 201)["code"]
    return Person.sign_up(world.client, None, "Out", invitationCode=code)


def test_someone_outside_the_project_sees_none_of_it(world: World) -> None:
    world.ana.send(
        f"/conversations/{world.conversation}/messages",
        {"content": "numbers for the board", "targetAgentId": world.agent_id},
        201,
    )
    world.invoke("ledger.entry.post", {"amount": 3}, "w1")
    approval = world.result("w1")["approvalId"]
    out = outsider(world)
    assert world.conversation not in [c["id"] for c in out.read("/conversations")["conversations"]]
    assert out.get(f"/conversations/{world.conversation}").status_code == 404
    assert out.get(f"/conversations/{world.conversation}/messages").status_code == 404
    assert out.get(f"/approvals/{approval}").status_code == 404
    assert out.read("/projects")["projects"] == []
    page = out.read("/events?after=0&limit=1000")
    seen = {e["type"] for e in page["events"]}
    assert not seen & {"message.created", "approval.requested", "project.created"}
    assert "member.joined" in seen  # the workspace's own news is everyone's
    posted = out.post(f"/conversations/{world.conversation}/messages", {"content": "let me in"})
    assert posted.status_code == 404


def test_the_people_socket_carries_a_project_only_to_its_members(world: World) -> None:
    out = outsider(world)
    frames: list[dict[str, Any]] = []
    with world.hub.people_socket(out) as socket:
        socket.send_text(json.dumps(subscribe(out)))
        while True:
            frame = json.loads(socket.receive_text())
            frames.append(frame)
            if frame.get("type") == "client.caught_up":
                break
    types = {f.get("type") for f in frames}
    assert "conversation.created" not in types and "project.created" not in types
    assert "member.joined" in types


def subscribe(person: Person) -> dict[str, Any]:
    from tests.support.envelopes import envelope

    return envelope("client.subscribe", {"lastSequence": 0}, person.workspace_id)


def test_a_viewer_reads_a_project_conversation_but_does_not_act_in_it(world: World) -> None:
    viewer = world.member("viewer", "Vi")
    assert world.conversation in [c["id"] for c in viewer.read("/conversations")["conversations"]]
    assert viewer.get(f"/conversations/{world.conversation}/messages").status_code == 200
    posted = viewer.post(f"/conversations/{world.conversation}/messages", {"content": "hi"})
    assert posted.status_code == 403
    assert posted.json()["error"]["details"]["reason"] == "role"
    task = viewer.post(
        "/tasks",
        {"title": "do it", "targetAgentId": world.agent_id, "conversationId": world.conversation},
    )
    assert task.status_code == 403
    made = viewer.post("/conversations", {"title": "mine", "projectId": world.project})
    assert made.status_code == 403


def test_a_workspace_owner_sees_every_project(world: World) -> None:
    editor = world.member("editor", "Ed")
    own = editor.send("/projects", {"name": "Ed's"}, 201)["id"]
    listed = {p["id"]: p["role"] for p in world.ana.read("/projects")["projects"]}
    assert listed[own] is None and listed[world.project] == "owner"


def test_a_projects_tool_calls_and_canvases_stay_in_the_project(world: World) -> None:
    opened = world.agent.call(
        "tool.call",
        {
            "call_id": "c1",
            "name": "canvas",
            "action": "open",
            "arguments": {"width": 8, "height": 8},
        },
        conversationId=world.conversation,
    )
    assert opened["type"] == "ack"
    (call,) = world.ana.read("/tool-calls")["toolCalls"]
    instance = call["instanceId"]
    answer = {"result": {"message": f"instance_id: {instance}", "instance_id": instance}}
    world.ana.send(f"/tool-calls/{call['id']}/result", answer)
    assert world.ana.read(f"/canvases/{instance}")["status"] == "open"
    out = outsider(world)
    assert out.read("/tool-calls")["toolCalls"] == []
    assert out.get(f"/tool-calls/{call['id']}").status_code == 404
    assert out.read("/canvases")["canvases"] == []
    assert out.get(f"/canvases/{instance}").status_code == 404
