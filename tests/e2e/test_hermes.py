"""Hermes Agent (the real ``hermes-agent`` package, in its own virtualenv) as a LineUp agent,
through the LineUp platform plugin: a person talks to it from a conversation, its streamed
reply is recorded, its dangerous-command approval is a card the person answers, killing
and restarting Hermes in the middle loses nothing and repeats nothing, a task shows its tool
run as progress and its file as an artifact, and each conversation is a Hermes session of
its own. Its model is a
scripted one on loopback, and the gateway reaches nothing else."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.e2e.hermes import GREETING, HERMES_VENV, HermesGateway, chores
from tests.e2e.processes import HubProcess
from tests.e2e.scripted_model import ScriptedModel
from tests.support.envelopes import envelope
from tests.support.people import Person
from tests.support.waiting import until

pytestmark = pytest.mark.skipif(
    not (HERMES_VENV / "bin" / "hermes").exists(),
    reason=f"Hermes Agent is not installed in {HERMES_VENV} (make hermes-venv)",
)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    directory = tmp_path / "scratch"
    directory.mkdir()
    (directory / "old.log").write_text("stale")
    return directory


@pytest.fixture
def model(scratch: Path) -> Iterator[ScriptedModel]:
    with ScriptedModel(chores(scratch)) as running:
        yield running
    (scratch.parent / "model-requests.json").write_text(json.dumps(running.requests, indent=1))


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubProcess]:
    process = HubProcess(tmp_path / "hub", None)
    process.home.mkdir()
    process.start()
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def ana(hub: HubProcess) -> Iterator[Person]:
    person = Person.at(hub.url, "ana@example.test")
    yield person
    person.close()


@pytest.fixture
def gateway(tmp_path: Path, model: ScriptedModel) -> Iterator[HermesGateway]:
    running = HermesGateway(tmp_path / "hermes", model.base_url)
    running.home.mkdir()
    try:
        yield running
    finally:
        running.stop()
        print(running.tail())  # shown when the test fails


@contextmanager
def _app_socket(hub: HubProcess, ana: Person) -> Iterator[list[dict[str, Any]]]:
    """What Ana's app hears live on the people's socket (the frames, as they come)."""
    frames: list[dict[str, Any]] = []
    cookie = "; ".join(f"{k}={v}" for k, v in ana.cookies().items())
    with connect(
        f"ws://127.0.0.1:{hub.port}/ws/client?workspaceId={ana.workspace_id}",
        additional_headers={"Cookie": cookie},
        origin=hub.url,  # type: ignore[arg-type]
    ) as ws:
        ws.send(json.dumps(envelope("client.subscribe", {"lastSequence": 0}, ana.workspace_id)))

        def listen() -> None:
            for text in ws:
                frames.append(json.loads(text))

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        yield frames
    listener.join(5)


def _messages(ana: Person, conversation: str) -> dict[str, Any]:
    return dict(ana.read(f"/conversations/{conversation}/messages?limit=100"))


def _agent_says(ana: Person, conversation: str) -> list[str]:
    return [
        m["content"]
        for m in _messages(ana, conversation)["messages"]
        if m["author"]["kind"] == "agent"
    ]


def test_a_person_talks_to_hermes_and_answers_its_approval_across_a_restart(
    hub: HubProcess, ana: Person, gateway: HermesGateway, model: ScriptedModel, scratch: Path
):
    code = ana.send("/pairing-codes", {}, 201)["code"]
    assert "paired as agent" in gateway.install(hub.url, code)
    gateway.start()

    def online() -> dict[str, Any] | None:
        agents = ana.read("/agents")["agents"]
        return agents[0] if agents and agents[0]["status"] == "online" else None

    agent = until(online, "Hermes to come online in LineUp", timeout=30)
    assert agent["runtime"] == "hermes" and "hermes-agent" in agent["version"]
    ana.confirm_agent(agent["id"])
    conversation = ana.send("/conversations", {"title": "Chores", "agentIds": [agent["id"]]}, 201)
    chat = conversation["id"]

    with _app_socket(hub, ana) as frames:
        ana.send(
            f"/conversations/{chat}/messages",
            {"content": "hello there", "targetAgentId": agent["id"]},
            201,
        )
        until(
            lambda: _agent_says(ana, chat) == ["".join(GREETING)],
            "Hermes's streamed reply in the conversation",
            timeout=30,
        )
    deltas = [f["payload"]["delta"] for f in frames if f.get("type") == "message.delta"]
    assert "".join(deltas) == "".join(GREETING), "the reply streamed to the app as it came"

    ana.send(
        f"/conversations/{chat}/messages",
        {"content": "please clean the scratch directory", "targetAgentId": agent["id"]},
        201,
    )

    def card() -> dict[str, Any] | None:
        pending = [i for i in _messages(ana, chat)["interactions"] if i["status"] == "requested"]
        return pending[0] if pending else None

    interaction = until(card, "the approval card", timeout=30)
    assert interaction["type"] == "approval"
    assert interaction["request"]["description"] == f"rm -rf {scratch}"
    assert interaction["request"]["risk"] == "high"
    assert scratch.exists(), "the command waits for the person"

    # Hermes dies while the card waits; it comes back with its saved credentials
    gateway.kill()
    until(
        lambda: ana.read(f"/agents/{agent['id']}")["status"] == "offline",
        "LineUp to notice Hermes is gone",
        timeout=10,
    )
    gateway.start()
    until(
        lambda: ana.read(f"/agents/{agent['id']}")["status"] == "online",
        "Hermes back online",
        timeout=30,
    )
    ana.send(f"/interactions/{interaction['id']}/respond", {"response": {"optionId": "approve"}})

    until(
        lambda: len(_agent_says(ana, chat)) == 2,
        "Hermes's answer after the command ran",
        timeout=30,
    )
    assert _agent_says(ana, chat) == ["".join(GREETING), "Cleaned the scratch directory."]
    assert not scratch.exists(), "the approved command ran"
    conversation_now = _messages(ana, chat)
    assert len(conversation_now["interactions"]) == 1, "one card, not one per run"
    assert conversation_now["interactions"][0]["status"] == "resolved"

    # a task: Hermes's tool run is its progress, the file it sends is its artifact
    task = ana.send("/tasks", {"title": "Write the report", "targetAgentId": agent["id"]}, 201)
    task_id = task["task"]["id"]

    def finished() -> dict[str, Any] | None:
        detail: dict[str, Any] = ana.read(f"/tasks/{task_id}")
        return detail if detail["task"]["status"] in ("succeeded", "failed") else None

    detail = until(finished, "the task to finish", timeout=30)
    assert detail["task"]["status"] == "succeeded", detail["task"]
    summaries = [
        e["payload"].get("summary")
        for e in detail["timeline"]
        if e["type"] == "task.status_changed"
    ]
    assert "Running terminal" in summaries, summaries
    (artifact,) = detail["artifacts"]
    assert artifact["name"] == "report.txt"
    download = ana.client.get(artifact["url"])
    assert download.status_code == 200 and download.content == b"Q3 figures"

    # each LineUp conversation is a Hermes session of its own: the task's turns (in the task's
    # conversation) carry none of the chat's messages, and the chat's none of the task's
    def turns_with(text: str) -> list[list[str]]:
        turns = [
            [str(m.get("content")) for m in r["messages"] if m.get("role") == "user"]
            for r in model.requests
        ]
        return [t for t in turns if any(text in said for said in t)]

    assert turns_with("Write the report") and turns_with("hello there")
    assert not any("hello there" in said for t in turns_with("Write the report") for said in t)
    assert not any("Write the report" in said for t in turns_with("hello there") for said in t)

    # nothing but loopback: the model Hermes used is the scripted one, and no other host
    assert model.requests and all(r["model"] == "scripted-model" for r in model.requests)
    assert not gateway.network_log.exists(), gateway.network_log.read_text()
