"""The HTTP API against its own /openapi.json: generated requests, valid and not, from a
signed-in person with the CSRF header, never get a 5xx, an undocumented status or a body
that differs from the documented schema.

Runs on SQLite only and is bounded (a few examples per operation) to stay well under a minute;
``LINEUP_FUZZ_EXAMPLES=60`` makes a longer run by hand.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from lineup.engines.runtime import EngineStatus
from lineup.hub import Settings, create_app
from lineup.hub.hosted import HostedDefinition
from tests.integration.hub.conftest import fast_settings
from tests.support.databases import sqlite_url
from tests.support.hub_client import HubClient
from tests.support.people import Person

EXAMPLES = int(os.environ.get("LINEUP_FUZZ_EXAMPLES", "6"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
BODY_IDS = {"targetAgentId": "agent_id", "conversationId": "conversation_id"}
"""Body fields that name rows: half the time a real one, so creation is reached too."""
DOCUMENT = create_app(Settings(database_url="sqlite://")).openapi()
RUNS = [
    pytest.param(method.upper(), path, mode, id=f"{mode.value} {method.upper()} {path}")
    for path, item in sorted(DOCUMENT["paths"].items())
    for method, operation in sorted(item.items())
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
    # an operation without input has no invalid request to make
    if mode is GenerationMode.POSITIVE or operation.get("parameters") or "requestBody" in operation
]


class RecordingEngineHost:
    """Takes hosted agents without running them: the fuzzer checks the API's answers, and the
    engines have suites of their own."""

    def __init__(self) -> None:
        self.started: list[str] = []

    def statuses(self) -> tuple[EngineStatus, ...]:
        return (EngineStatus("fake", True, "0", None, "(part of LineUp)"),)

    def drivers(self) -> tuple[str, ...]:
        return ("fake",)

    async def start(self, definition: HostedDefinition) -> None:
        self.started.append(definition.agent_id)

    async def stop(self, agent_id: str) -> None:
        pass

    async def close(self) -> None:
        pass


@dataclass
class World:
    """A hub with one of everything, so generated requests also reach real rows."""

    client: TestClient
    person: Person
    schema: Any
    ids: dict[str, str]
    app: Any

    def forgive(self) -> None:
        """Generated wrong passwords (a password change) count against the person's account;
        throttling is tested elsewhere, and here it would lock the fuzzer out."""
        self.app.state.hub.limits.signin_by_account.succeeded(self.person.email)

    def sign_in_again(self) -> None:
        response = self.client.post(
            "/api/auth/signin",
            json={"email": self.person.email, "password": "correct horse battery"},
        )
        assert response.status_code == 200, response.text
        self.person.csrf = response.json()["csrfToken"]
        self.person.session = response.cookies.get("lineup_session") or ""
        self.person._use()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home: Path = tmp_path_factory.mktemp("fuzz")
    hub_settings = fast_settings(
        sqlite_url(home),
        home,
        signin_attempts_per_ip=1_000_000,
        pairing_attempts_per_ip=1_000_000,
        engine_roots=(home,),
    )
    app = create_app(hub_settings, engine_host=RecordingEngineHost())
    with TestClient(app, base_url="http://testserver") as client:
        hub = HubClient(client)
        ana = hub.sign_up(name="Ana")
        creds = hub.pair(ana)
        agent_id = creds["agentId"]
        conversation = ana.ok(
            ana.post("/conversations", {"title": "Fuzz", "agentIds": [agent_id]}), 201
        )["id"]
        task = ana.ok(ana.post("/tasks", {"title": "Fuzz", "targetAgentId": agent_id}), 201)
        task_id = task["task"]["id"]
        with hub.agent(creds) as agent:
            agent.call("task.accepted", {"taskId": task_id}, taskId=task_id)
            agent.call(
                "interaction.requested",
                {"interaction": {"id": "int_fuzz", "type": "input", "title": "Name?"}},
                taskId=task_id,
            )
            agent.call(
                "tool.call",
                {"call_id": "c1", "name": "confirm", "arguments": {"message": "Ok?"}},
                conversationId=conversation,
            )
        ana._use()
        tool_call = ana.ok(ana.get("/tool-calls"))["toolCalls"][0]["id"]
        ids = {
            "workspace_id": ana.workspace_id,
            "agent_id": agent_id,
            "conversation_id": conversation,
            "task_id": task_id,
            "interaction_id": "int_fuzz",
            "tool_call_id": tool_call,
        }
        schema = schemathesis.openapi.from_dict(app.openapi())
        # the session cookie and CSRF header come from the signed-in client, not from generation
        schema.config.generation.update(with_security_parameters=False)
        yield World(client, ana, schema, ids, app)


def _send(world: World, case: Any) -> httpx.Response:
    sent = case.as_transport_kwargs(
        base_url="http://testserver", headers={"X-CSRF-Token": world.person.csrf}
    )
    body = sent.pop("data", None)
    if isinstance(body, str):
        body = body.encode()
    return world.client.request(
        sent["method"],
        sent["url"],
        params=sent.get("params"),
        headers=sent.get("headers"),
        json=sent.get("json"),
        content=body,
    )


@pytest.mark.parametrize(("method", "path", "mode"), RUNS)
def test_generated_requests_get_only_documented_answers(world, method, path, mode):
    operation = world.schema[path][method]

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=mode), real=st.data())
    def check(case: Any, real: st.DataObject) -> None:
        replaced = False
        for name in case.path_parameters or {}:
            if name in world.ids and real.draw(st.booleans(), label=f"real {name}"):
                case.path_parameters[name] = world.ids[name]
                replaced = True
        if isinstance(case.body, dict) and mode is GenerationMode.POSITIVE:
            for key, name in BODY_IDS.items():
                if key in case.body and real.draw(st.booleans(), label=f"real {key}"):
                    case.body[key] = world.ids[name]
        try:
            response = _send(world, case)
        except (httpx.InvalidURL, UnicodeEncodeError, httpx.LocalProtocolError):
            return  # a request no HTTP client can send
        assert response.status_code < 500, response.text
        # a real id may undo the very violation a negative case was made of
        rejecting = mode is GenerationMode.NEGATIVE and not replaced
        # 413 refuses a body by its size before anything reads it: a rejection the check's
        # list of statuses does not name
        rejecting = rejecting and response.status_code != 413
        case.validate_response(
            response, checks=[*CHECKS, negative_data_rejection] if rejecting else CHECKS
        )
        world.forgive()
        if response.status_code == 401 or path == "/api/auth/signout":
            world.sign_in_again()

    check()
