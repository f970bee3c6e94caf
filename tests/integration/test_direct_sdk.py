"""Direct and relay mode through the SDK (seed 000 §3.1): the same handler code runs against
a hub, in direct mode and in relay mode, and only the configuration says which — with real
sockets.

Every mode runs the agent the same way, ``lineup.direct.run(agent)``. In hub mode the hub
runs in-process on a free port and the agent pairs with it; in direct mode the agent's own
process serves LineUp and a person opens it with the token; in relay mode the agent's process
hosts LineUp and the person's app reaches it through WuKongIM only (the relay test peer, the
app the Python stand-in speaking the tunnel). Each way the person creates a task, the agent
reports progress and asks for an approval, the person approves, and the task succeeds with
the handler's summary and the file it uploaded.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import socket
import ssl
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from lineup import direct
from lineup.hub import Settings, create_app
from lineup.hub.tls import certificate_fingerprint
from lineup.sdk import (
    Agent,
    AgentConfig,
    Backoff,
    DirectModeError,
    MessageContext,
    TaskContext,
    pair,
)
from tests.support.databases import sqlite_url
from tests.support.relay_app import TunnelApp
from tests.support.relay_peer import RelayPeer, relay_peer  # noqa: F401
from tests.support.waiting import until_async

TOKEN = "k7wq-3hxa-p2mn-t8rv-c4zd"
DEADLINE = 20.0
MIGRATION_LOG = b"orders: 3 columns added\n"


# --- the one agent, whatever the mode --------------------------------------------------------


def build_agent(config: AgentConfig, state_dir: Path) -> Agent:
    """Handlers written once; nothing here knows about hubs or direct mode."""
    agent = Agent(
        config,
        name="builder",
        state_dir=state_dir,
        heartbeat_interval=3600.0,
        backoff=Backoff(initial=0.01, maximum=0.2),
        answer_timeout=10.0,
    )

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        await ctx.progress(30, "Planning")
        approval = await ctx.ask_approval("Run the migration?", risk="high")
        outcome = "Migrated" if approval.approved else "Skipped"
        await ctx.upload_artifact("Migration log", MIGRATION_LOG, file_name="migration.log")
        await ctx.say(f"{outcome}: {approval.by_name} answered.")
        return outcome

    @agent.on_message
    async def on_message(message: MessageContext) -> None:
        await message.say(f"Noted: {message.content}")

    return agent


# --- a person, over HTTP ---------------------------------------------------------------------


@dataclass
class Person:
    http: httpx.AsyncClient
    csrf: str
    workspace_id: str

    async def get(self, path: str) -> Any:
        response = await self.http.get(f"/api/workspaces/{self.workspace_id}{path}")
        assert response.status_code == 200, response.text
        return response.json()

    async def post(self, path: str, body: dict[str, Any], status: int = 200) -> Any:
        response = await self.http.post(
            f"/api/workspaces/{self.workspace_id}{path}",
            json=body,
            headers={"X-CSRF-Token": self.csrf},
        )
        assert response.status_code == status, response.text
        return response.json()

    async def open(self, url: str) -> bytes:
        response = await self.http.get(url)
        assert response.status_code == 200, response.text
        return response.content


@dataclass
class RelayPerson:
    """The same person, through the relay tunnel (3101/3102) instead of HTTP."""

    app: TunnelApp
    workspace_id: str

    async def get(self, path: str) -> Any:
        return await self.app.ok("GET", self.app.ws(path))

    async def post(self, path: str, body: dict[str, Any], status: int = 200) -> Any:
        return await self.app.ok("POST", self.app.ws(path), body, status)

    async def open(self, url: str) -> bytes:
        answer = await self.app.call("GET", url)
        assert answer.status == 200, answer.body
        if answer.headers.get("content-transfer-encoding") == "base64":
            return base64.b64decode(answer.body)
        return answer.body.encode()


async def the_story(person: Person | RelayPerson, agent_id: str) -> None:
    async def online() -> bool:
        agents = (await person.get("/agents"))["agents"]
        return any(a["id"] == agent_id and a["status"] == "online" for a in agents)

    await until_async(online, "the agent to be online")
    created = await person.post(
        "/tasks", {"title": "Migrate the orders table", "targetAgentId": agent_id}, 201
    )
    task_id = created["task"]["id"]

    async def waiting() -> Any:
        detail = await person.get(f"/tasks/{task_id}")
        return detail if detail["task"]["status"] == "waiting_for_human" else None

    detail = await until_async(waiting, "the approval request")
    (interaction,) = detail["interactions"]
    assert interaction["request"]["title"] == "Run the migration?"
    assert detail["task"]["progress"] == 30
    await person.post(
        f"/interactions/{interaction['id']}/respond", {"response": {"optionId": "approve"}}
    )

    async def succeeded() -> Any:
        detail = await person.get(f"/tasks/{task_id}")
        return detail if detail["task"]["status"] == "succeeded" else None

    done = await until_async(succeeded, "the task to succeed")
    assert done["task"]["summary"] == "Migrated"
    # the artifact the agent uploaded opens for the person, from the hub (or the agent itself)
    (artifact,) = done["artifacts"]
    assert artifact["url"].startswith(f"/api/workspaces/{person.workspace_id}/files/")
    assert await person.open(artifact["url"]) == MIGRATION_LOG


# --- a hub in this process, for the hub-mode side --------------------------------------------


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def running_hub(home: Path) -> AsyncIterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    settings = Settings(database_url=sqlite_url(home), home=home, port=port)
    server = _QuietServer(
        uvicorn.Config(create_app(settings), log_config=None, log_level="warning", lifespan="on")
    )
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


# --- the test, once per mode -----------------------------------------------------------------


async def test_the_same_handlers_run_against_a_hub(tmp_path: Path) -> None:
    async with running_hub(tmp_path / "hub") as url, httpx.AsyncClient(base_url=url) as http:
        signed_up = await http.post(
            "/api/auth/signup",
            json={"email": "ana@example.test", "password": "long enough pw", "displayName": "Ana"},
        )
        assert signed_up.status_code == 201, signed_up.text
        body = signed_up.json()
        person = Person(http, body["csrfToken"], body["workspaceId"])
        code = (await person.post("/pairing-codes", {}, 201))["code"]
        config = await pair(url, code, name="builder", credentials_path=tmp_path / "creds.json")
        await person.post(f"/agents/{config.agent_id}/confirm", {}, 200)

        agent = build_agent(AgentConfig.load(tmp_path / "creds.json"), tmp_path / "state")
        assert agent.config == config and agent.config.mode == "hub"
        running = asyncio.create_task(direct.run(agent))
        try:
            await the_story(person, config.agent_id)
        finally:
            agent.stop()
            await running
        with pytest.raises(RuntimeError, match="connects to a hub"):
            await agent.serving()


async def test_the_same_handlers_run_in_direct_mode_from_configuration_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    path = tmp_path / "creds.json"
    path.write_text(json.dumps({"mode": "direct", "host": "127.0.0.1", "port": 0, "token": TOKEN}))

    agent = build_agent(AgentConfig.load(path), tmp_path / "state")
    assert agent.config.mode == "direct"
    running = asyncio.create_task(direct.run(agent))
    try:
        endpoint = await asyncio.wait_for(agent.serving(), DEADLINE)
        assert agent.direct_endpoint == endpoint
        assert endpoint.urls == (f"http://127.0.0.1:{endpoint.port}",) and endpoint.port > 0
        async with httpx.AsyncClient(base_url=endpoint.urls[0]) as http:
            assert (await http.get("/api/direct")).json() == {
                "mode": "direct",
                "agentName": "builder",
                "csrfCookie": f"lineup_direct_{agent.config.agent_id}_csrf",
            }
            opened = await http.post("/api/direct/session", json={"token": TOKEN})
            assert opened.status_code == 200, opened.text
            body = opened.json()
            person = Person(http, body["csrfToken"], body["workspaceId"])
            await the_story(person, agent.config.agent_id)
            assert any(scratch.iterdir()), "the embedded hub keeps its data in the temp dir"

            async def connected_line() -> bool:
                lines = (await person.get(f"/agents/{agent.config.agent_id}/logs"))["lines"]
                return any(line["message"].startswith("connected to") for line in lines)

            # the agent's diagnostic lines reach the hub it hosts, as they reach a hub
            await until_async(connected_line, "the agent's diagnostic lines")
    finally:
        agent.stop()
        await asyncio.wait_for(running, DEADLINE)
    assert list(scratch.iterdir()) == [], "no history beyond the agent process"
    assert not (tmp_path / "state").exists(), "direct mode keeps the agent's state there too"
    assert agent.direct_endpoint is None


async def test_the_same_handlers_run_in_relay_mode_from_configuration_alone(
    relay_peer: RelayPeer,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LINEUP_HOME", str(tmp_path / "home"))
    ana, bot = relay_peer.add_user("ana", name="Ana"), relay_peer.add_user("bot")
    path = tmp_path / "creds.json"
    relay = {"mode": "relay", "server": relay_peer.tcp, "api": relay_peer.api, "uid": bot.uid,
             "token": bot.token, "people": [ana.uid]}  # fmt: skip
    path.write_text(json.dumps(relay))

    agent = build_agent(AgentConfig.load(path), tmp_path / "state")
    assert agent.config.mode == "relay"
    running = asyncio.create_task(direct.run(agent))
    try:
        await asyncio.wait_for(agent.serving(), DEADLINE)
        app = await TunnelApp.open(relay_peer.ws, ana.uid, ana.token, bot.uid)
        try:
            person = RelayPerson(app, await app.find_workspace())
            # the agent's id is the one its lasting hub gave it (identity.json), not the config's
            (listed,) = (await person.get("/agents"))["agents"]
            await the_story(person, listed["id"])
        finally:
            await app.close()
    finally:
        agent.stop()
        await asyncio.wait_for(running, DEADLINE)
    assert (tmp_path / "home" / "relay" / bot.uid / "hub" / "lineup.db").exists()


async def test_a_busy_port_is_a_clear_error_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        config = AgentConfig.from_json(
            {"mode": "direct", "host": "127.0.0.1", "port": port, "token": TOKEN}
        )
        agent = build_agent(config, tmp_path / "state")
        with pytest.raises(DirectModeError, match=f"Cannot listen on 127.0.0.1:{port}"):
            await asyncio.wait_for(direct.run(agent), DEADLINE)
    assert list(scratch.iterdir()) == []


async def test_a_direct_mode_agent_run_without_a_host_says_how_to_run_it(
    tmp_path: Path,
) -> None:
    config = AgentConfig.from_json(
        {"mode": "direct", "host": "127.0.0.1", "port": 0, "token": TOKEN}
    )
    agent = build_agent(config, tmp_path / "state")
    with pytest.raises(DirectModeError, match=r"lineup\.direct\.run\(agent\)"):
        await agent.run()
    assert not (tmp_path / "state").exists()


async def test_direct_mode_serves_tls_and_its_own_agent_pins_the_certificate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("LINEUP_HOME", str(home))
    config = AgentConfig.from_json(
        {"mode": "direct", "host": "127.0.0.1", "port": 0, "token": TOKEN, "tlsSelfSigned": True}
    )
    agent = build_agent(config, tmp_path / "state")
    running = asyncio.create_task(direct.run(agent))
    try:
        endpoint = await asyncio.wait_for(agent.serving(), DEADLINE)
        assert endpoint.urls == (f"https://127.0.0.1:{endpoint.port}",)
        certificate = home / "tls" / "cert.pem"
        assert endpoint.tls_fingerprint == certificate_fingerprint(certificate)
        trusting = ssl.create_default_context(cafile=str(certificate))
        async with httpx.AsyncClient(base_url=endpoint.urls[0], verify=trusting) as http:
            opened = await http.post("/api/direct/session", json={"token": TOKEN})
            assert opened.status_code == 200, opened.text
            body = opened.json()
            person = Person(http, body["csrfToken"], body["workspaceId"])
            info = await person.get("/hub")
            assert info["tlsMode"] == "self_signed"
            assert info["tlsFingerprint"] == endpoint.tls_fingerprint
            # the agent reaches its own hub over wss, pinned, and uploads over https
            await the_story(person, agent.config.agent_id)
    finally:
        agent.stop()
        await asyncio.wait_for(running, DEADLINE)
