"""What the app needs to host an agent, through the hub's API on SQLite and PostgreSQL: the
engines this hub knows and the directories they may work in, refusals that name their field,
a hosted agent's project that its conversations start in, workspaces kept apart, the key never
shown, and who may delete one.

The hub runs in-process with an engine host that records what it is given: running engines
is ``test_hosted_agents.py``'s subject.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from lineup.engines.runtime import EngineStatus
from lineup.hub import create_app
from lineup.hub.hosted import HostedDefinition
from tests.integration.hub.conftest import fast_settings
from tests.support.people import Person

API_KEY = "sk-test-4b1d9e0c77a2f3e8"
CODEX_HINT = "npm install -g @openai/codex@0.171.0"


class RecordingHost:
    """Runs nothing: records the definitions it is given. ``codex`` is a driver whose
    program is not installed; ``pi`` is installed but has no driver."""

    def __init__(self) -> None:
        self.started: dict[str, HostedDefinition] = {}
        self.stopped: list[str] = []
        self.probed_on_loop: list[bool] = []

    def drivers(self) -> tuple[str, ...]:
        return ("codex", "fake")

    def statuses(self) -> tuple[EngineStatus, ...]:
        try:
            asyncio.get_running_loop()
            self.probed_on_loop.append(True)
        except RuntimeError:
            self.probed_on_loop.append(False)
        return (
            EngineStatus("fake", True, "9.9.9", "/usr/bin/python3", "(part of LineUp)"),
            EngineStatus("codex", False, None, None, CODEX_HINT),
            EngineStatus("pi", True, "0.73.1", "/usr/bin/pi", "npm install -g pi"),
        )

    async def start(self, definition: HostedDefinition) -> None:
        self.started[definition.agent_id] = definition

    async def stop(self, agent_id: str) -> None:
        self.stopped.append(agent_id)

    async def close(self) -> None:
        pass


@pytest.fixture
def roots(tmp_path: Path) -> Path:
    allowed = tmp_path / "work"
    (allowed / "site").mkdir(parents=True)
    return allowed


@pytest.fixture
def host() -> RecordingHost:
    return RecordingHost()


@pytest.fixture
def client(hub_database: str, tmp_path: Path, roots: Path, host: RecordingHost) -> Iterator[Any]:
    settings = fast_settings(hub_database, tmp_path / "hub", engine_roots=(roots,))
    with TestClient(create_app(settings, engine_host=host), base_url="http://testserver") as c:
        yield c


def definition(roots: Path, **changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "Builder",
        "engine": "fake",
        "cwd": str(roots / "site"),
        "model": {
            "api": "openai-chat",
            "baseUrl": "http://127.0.0.1:9/v1",
            "model": "mock-model",
            "apiKey": API_KEY,
        },
    }
    model = changes.pop("model", {})
    body.update(changes)
    body["model"].update(model)
    return body


def refusal(person: Person, body: dict[str, Any], status: int) -> dict[str, Any]:
    response = person.post("/hosted-agents", body)
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


def test_the_engines_are_listed_with_versions_install_commands_and_the_allowed_roots(
    client: TestClient, roots: Path
) -> None:
    ana = Person.sign_up(client)
    catalog = ana.read("/engines")
    assert catalog["hosting"] is True
    assert catalog["roots"] == [str(roots)]
    assert catalog["engines"] == [
        {
            "name": "fake",
            "runnable": True,
            "installed": True,
            "version": "9.9.9",
            "installHint": "(part of LineUp)",
        },
        {
            "name": "codex",
            "runnable": True,
            "installed": False,
            "version": None,
            "installHint": CODEX_HINT,
        },
        {
            "name": "pi",
            "runnable": False,
            "installed": True,
            "version": "0.73.1",
            "installHint": "npm install -g pi",
        },
    ]
    assert "/usr/bin" not in str(catalog), "where a binary lives is the operator's business"


def test_a_hub_without_engines_says_it_hosts_none(hub_database: str, tmp_path: Path) -> None:
    settings = fast_settings(hub_database, tmp_path)
    with TestClient(create_app(settings), base_url="http://testserver") as bare:
        ana = Person.sign_up(bare)
        assert ana.read("/engines") == {
            "hosting": False,
            "engines": [],
            "roots": [str(Path.home())],
        }


def test_every_refusal_of_a_definition_names_its_field(
    client: TestClient, roots: Path, tmp_path: Path
) -> None:
    ana = Person.sign_up(client)
    elsewhere = Person.sign_up(client, name="Bo")
    foreign_project = elsewhere.send("/projects", {"name": "Bo's"}, 201)["id"]
    outside = tmp_path / "outside"
    outside.mkdir()
    ana._use()
    cases: list[tuple[dict[str, Any], int, str, str]] = [
        (definition(roots, name=""), 400, "invalid_argument", "name"),
        (definition(roots, name="   "), 400, "invalid_argument", "name"),
        (definition(roots, engine="nope"), 400, "invalid_argument", "engine"),
        (definition(roots, model={"api": "gemini"}), 400, "invalid_argument", "model.api"),
        (definition(roots, model={"baseUrl": "ftp://x"}), 400, "invalid_argument", "model.baseUrl"),
        (definition(roots, model={"baseUrl": "http://"}), 400, "invalid_argument", "model.baseUrl"),
        (definition(roots, model={"model": "m" * 201}), 400, "invalid_argument", "model.model"),
        (definition(roots, model={"model": "  "}), 400, "invalid_argument", "model.model"),
        (definition(roots, cwd="site"), 400, "invalid_argument", "cwd"),
        (definition(roots, cwd=str(roots / "missing")), 400, "invalid_argument", "cwd"),
        (definition(roots, cwd=str(outside)), 403, "forbidden", "cwd"),
        (definition(roots, projectId=foreign_project), 404, "not_found", "projectId"),
    ]
    for body, status, code, field in cases:
        error = refusal(ana, body, status)
        assert (error["code"], error["details"].get("field")) == (code, field), body
    not_installed = refusal(ana, definition(roots, engine="codex"), 400)
    assert not_installed["details"]["field"] == "engine"
    assert CODEX_HINT in not_installed["message"]
    no_driver = refusal(ana, definition(roots, engine="pi"), 400)
    assert no_driver["details"]["field"] == "engine"
    assert "no driver for the pi engine" in no_driver["message"]
    assert ana.read("/hosted-agents")["hostedAgents"] == []
    assert ana.read("/agents")["agents"] == []


def test_a_hosted_agents_conversations_start_in_its_project(
    client: TestClient, roots: Path, host: RecordingHost
) -> None:
    ana = Person.sign_up(client)
    books = ana.send("/projects", {"name": "Books"}, 201)["id"]
    plant = ana.send("/projects", {"name": "Plant"}, 201)["id"]
    hosted = ana.send("/hosted-agents", definition(roots, projectId=books), 201)
    agent_id = hosted["agentId"]
    assert hosted["projectId"] == books
    assert ana.read(f"/hosted-agents/{agent_id}")["projectId"] == books

    # started with it, a conversation is the project's without being told
    chat = ana.send("/conversations", {"title": "Fix", "agentIds": [agent_id]}, 201)
    assert chat["projectId"] == books
    said = {"content": "hello", "targetAgentId": agent_id}
    ana.send(f"/conversations/{chat['id']}/messages", said, 201)
    task = ana.send("/tasks", {"title": "Build it", "targetAgentId": agent_id}, 201)
    assert ana.read(f"/conversations/{task['task']['conversationId']}")["projectId"] == books

    # another project's conversation, or a personal one, is not where it works
    other = ana.post("/conversations", {"title": "X", "agentIds": [agent_id], "projectId": plant})
    assert other.status_code == 400
    assert other.json()["error"]["details"]["field"] == "projectId"
    assert "Books" in other.json()["error"]["message"]
    personal = ana.send("/conversations", {"title": "Mine", "agentIds": []}, 201)
    assert personal["projectId"] is None
    refused = ana.post(f"/conversations/{personal['id']}/messages", said)
    assert refused.status_code == 400
    assert refused.json()["error"]["details"]["field"] == "targetAgentId"

    # a hosted agent with no project works anywhere
    free = ana.send("/hosted-agents", definition(roots, name="Free"), 201)
    assert free["projectId"] is None
    anywhere = ana.send("/conversations", {"title": "Y", "agentIds": [free["agentId"]]}, 201)
    assert anywhere["projectId"] is None
    assert set(host.started) == {agent_id, free["agentId"]}


def test_only_a_projects_owners_and_editors_host_an_agent_in_it(
    client: TestClient, roots: Path
) -> None:
    ana = Person.sign_up(client)
    books = ana.send("/projects", {"name": "Books"}, 201)["id"]
    code = ana.send("/invitations", {"projectId": books, "projectRole": "viewer"}, 201)["code"]
    client.cookies.clear()
    vic = Person.sign_up(client, name="Vic", invitationCode=code)
    error = refusal(vic, definition(roots, projectId=books), 403)
    assert (error["code"], error["details"]["field"]) == ("forbidden", "projectId")
    assert vic.read("/hosted-agents")["hostedAgents"] == []


def test_another_workspaces_hosted_agent_is_not_found_and_the_key_is_never_shown(
    client: TestClient, roots: Path, host: RecordingHost
) -> None:
    ana = Person.sign_up(client)
    created = ana.post("/hosted-agents", definition(roots))
    assert created.status_code == 201, created.text
    agent_id = created.json()["agentId"]
    assert created.json()["model"] == {
        "api": "openai-chat",
        "baseUrl": "http://127.0.0.1:9/v1",
        "model": "mock-model",
        "hasApiKey": True,
    }
    assert host.started[agent_id].api_key == API_KEY, "the engine host gets it, in memory"
    for response in (
        created,
        ana.get("/hosted-agents"),
        ana.get(f"/hosted-agents/{agent_id}"),
        ana.get("/agents"),
        ana.get(f"/agents/{agent_id}"),
        ana.get("/events?after=0&limit=1000"),
    ):
        assert response.status_code == 200 or response.status_code == 201, response.text
        assert API_KEY not in response.text

    bo = Person.sign_up(client, name="Bo")
    for method in ("GET", "DELETE"):
        bo._use()
        response = client.request(
            method, bo.url(f"/hosted-agents/{agent_id}"), headers=bo.headers()
        )
        assert response.status_code == 404, response.text
        assert response.json()["error"]["code"] == "not_found"
    assert bo.read("/hosted-agents")["hostedAgents"] == []
    assert ana.read(f"/hosted-agents/{agent_id}")["agentId"] == agent_id
    assert host.stopped == []


def test_the_workspaces_owners_and_its_creator_may_delete_a_hosted_agent(
    client: TestClient, roots: Path, host: RecordingHost
) -> None:
    ana = Person.sign_up(client)
    code = ana.send("/invitations", {}, 201)["code"]
    client.cookies.clear()
    bo = Person.sign_up(client, name="Bo", invitationCode=code)
    anas = ana.send("/hosted-agents", definition(roots), 201)["agentId"]
    bos = bo.send("/hosted-agents", definition(roots, name="Bo's"), 201)["agentId"]

    def may_delete(person: Person) -> dict[str, bool]:
        return {h["agentId"]: h["mayDelete"] for h in person.read("/hosted-agents")["hostedAgents"]}

    assert may_delete(bo) == {anas: False, bos: True}
    assert may_delete(ana) == {anas: True, bos: True}
    bo._use()
    refused = client.delete(bo.url(f"/hosted-agents/{anas}"), headers=bo.headers())
    assert refused.status_code == 403
    assert host.stopped == []

    bo._use()
    assert client.delete(bo.url(f"/hosted-agents/{bos}"), headers=bo.headers()).status_code == 204
    ana._use()
    assert (
        client.delete(ana.url(f"/hosted-agents/{anas}"), headers=ana.headers()).status_code == 204
    )
    assert sorted(host.stopped) == sorted([anas, bos])
    assert ana.read("/hosted-agents")["hostedAgents"] == []
    statuses = {a["id"]: a["status"] for a in ana.read("/agents")["agents"]}
    assert statuses == {anas: "revoked", bos: "revoked"}


def test_a_hosted_agent_is_not_revoked_or_given_a_new_credential_by_hand(
    client: TestClient, roots: Path, host: RecordingHost
) -> None:
    ana = Person.sign_up(client)
    agent_id = ana.send("/hosted-agents", definition(roots), 201)["agentId"]
    for path in (f"/agents/{agent_id}/revoke", f"/agents/{agent_id}/credential/rotate"):
        response = ana.post(path, {})
        assert response.status_code == 409, response.text
        assert response.json()["error"]["details"]["reason"] == "hosted_agent"
    statuses = {a["id"]: a["status"] for a in ana.read("/agents")["agents"]}
    assert statuses[agent_id] != "revoked"
    assert host.stopped == []


def test_engines_are_probed_off_the_event_loop_and_not_again_for_each_agent(
    client: TestClient, roots: Path, host: RecordingHost
) -> None:
    """Asking an engine's binary its version can take seconds: never on the event loop that
    serves everyone, and once for a while however many agents are created."""
    ana = Person.sign_up(client)
    for name in ("One", "Two", "Three"):
        ana.send("/hosted-agents", definition(roots, name=name), 201)
    assert ana.read("/hosted-agents")["engines"] == ["fake"]
    ana.read("/engines")
    assert host.probed_on_loop == [False]
