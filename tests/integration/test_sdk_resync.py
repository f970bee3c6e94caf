"""An SDK agent whose cursor fell behind a compacted log (seed 001 §10.3): it gets
``system.resync_required``, is replayed what the hub kept for it — the answer to its
question, a person's message, a new task — and ends where an agent on an uncompacted hub
ends: the same tasks, messages, answers and journal.

The same story runs twice, on two hubs: once with the log left whole (the reference) and
once compacted while the agent is away, on each database."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sqlite3
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from lineup import direct
from lineup.hub import Settings, create_app
from lineup.hub.retention import compact
from lineup.hub.state import HubState
from lineup.protocol.times import now_ms
from lineup.sdk import Agent, AgentConfig, Backoff, MessageContext, TaskContext, pair
from tests.support.databases import sqlite_url
from tests.support.waiting import until_async

DEADLINE = 20.0


def build_agent(config: AgentConfig, state_dir: Path) -> Agent:
    agent = Agent(
        config,
        name="builder",
        state_dir=state_dir,
        heartbeat_interval=3600.0,
        backoff=Backoff(initial=0.01, maximum=0.2),
        answer_timeout=30.0,
    )

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        if ctx.title != "ask":
            return f"done: {ctx.title}"
        approval = await ctx.ask_approval("Proceed?")
        return "approved" if approval.approved else "rejected"

    @agent.on_message
    async def on_message(message: MessageContext) -> None:
        await message.say(f"Noted: {message.content}")

    return agent


@dataclass
class Person:
    http: httpx.AsyncClient
    csrf: str
    workspace_id: str

    async def get(self, path: str) -> Any:
        response = await self.http.get(f"/api/workspaces/{self.workspace_id}{path}")
        assert response.status_code == 200, response.text
        return response.json()

    async def send(self, method: str, path: str, body: dict[str, Any], status: int = 200) -> Any:
        response = await self.http.request(
            method,
            f"/api/workspaces/{self.workspace_id}{path}",
            json=body,
            headers={"X-CSRF-Token": self.csrf},
        )
        assert response.status_code == status, response.text
        return response.json()


class _QuietServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def running_hub(database_url: str, home: Path) -> AsyncIterator[tuple[str, Any]]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    settings = Settings(
        database_url=database_url,
        home=home,
        port=port,
        notify_enabled=False,
        retention_days=0,
        static_dir=home / "no-web-app",
    )
    app = create_app(settings)
    server = _QuietServer(uvicorn.Config(app, log_config=None, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        await task
        sock.close()


async def story(database_url: str, home: Path, *, compacted: bool) -> dict[str, Any]:
    """Work for the agent, the agent away while it is answered and more comes, then back."""
    async with (
        running_hub(database_url, home / "hub") as (url, app),
        httpx.AsyncClient(base_url=url, timeout=15) as http,
    ):
        signed = await http.post(
            "/api/auth/signup",
            json={
                "email": "ana@example.test",
                "password": "long enough pw",
                "displayName": "Ana",
            },
        )
        assert signed.status_code == 201, signed.text
        body = signed.json()
        ana = Person(http, body["csrfToken"], body["workspaceId"])
        code = (await ana.send("POST", "/pairing-codes", {}, 201))["code"]
        creds = home / "creds.json"
        config = await pair(url, code, name="builder", credentials_path=creds)
        agent_id = config.agent_id
        await ana.send("POST", f"/agents/{agent_id}/confirm", {})

        async def status() -> str:
            return str((await ana.get(f"/agents/{agent_id}"))["status"])

        agent = build_agent(AgentConfig.load(creds), home / "state")
        running = asyncio.create_task(direct.run(agent))
        await until_async(lambda: _is(status, "online"), "the agent online")
        conversation = (
            await ana.send("POST", "/conversations", {"title": "Ops", "agentIds": [agent_id]}, 201)
        )["id"]
        asked = await ana.send("POST", "/tasks", {"title": "ask", "targetAgentId": agent_id}, 201)
        ask_id = asked["task"]["id"]

        async def waiting() -> Any:
            detail = await ana.get(f"/tasks/{ask_id}")
            return detail if detail["task"]["status"] == "waiting_for_human" else None

        detail = await until_async(waiting, "the agent's question")
        agent.stop()
        await asyncio.wait_for(running, DEADLINE)
        await until_async(lambda: _is(status, "offline"), "the agent offline")

        # while it is away
        (card,) = detail["interactions"]
        await ana.send(
            "POST", f"/interactions/{card['id']}/respond", {"response": {"optionId": "approve"}}
        )
        await ana.send(
            "POST",
            f"/conversations/{conversation}/messages",
            {"content": "while you were away", "targetAgentId": agent_id},
            201,
        )
        await ana.send("POST", "/tasks", {"title": "later", "targetAgentId": agent_id}, 201)
        for n in range(10):
            await ana.send(
                "POST", f"/conversations/{conversation}/messages", {"content": f"chat {n}"}, 201
            )
        if compacted:
            hub: HubState = app.state.hub
            await ana.send(
                "PUT", f"/settings/workspace/{ana.workspace_id}", {"retention.maxEvents": 1}
            )
            (done,) = [
                c
                for c in await compact(hub.store, hub.settings, now_ms())
                if c.workspace_id == ana.workspace_id
            ]
            assert done.deleted > 10
            page = await ana.get("/events?after=0")
            assert page["resyncRequired"] is True

        # back
        agent = build_agent(AgentConfig.load(creds), home / "state")
        running = asyncio.create_task(direct.run(agent))
        try:

            async def finished() -> Any:
                tasks = (await ana.get("/tasks"))["tasks"]
                messages = (await ana.get(f"/conversations/{conversation}/messages"))["messages"]
                replied = any(m["content"] == "Noted: while you were away" for m in messages)
                ended = all(t["status"] == "succeeded" for t in tasks) and len(tasks) == 2
                return (tasks, messages) if ended and replied else None

            tasks, messages = await until_async(finished, "the agent to finish its work")
            interactions = (await ana.get("/interactions"))["interactions"]
        finally:
            agent.stop()
            await asyncio.wait_for(running, DEADLINE)
        latest = (await ana.get("/events?after=0&limit=1"))["latestSequence"]
    return {
        "tasks": sorted((t["title"], t["status"], t["summary"]) for t in tasks),
        "messages": sorted((m["author"]["kind"], m["content"]) for m in messages),
        "interactions": sorted(
            (i["request"]["title"], i["status"], str(i["response"])) for i in interactions
        ),
        "agent": _agent_state(home / "state", latest),
    }


async def _is(read: Any, wanted: str) -> bool:
    return bool(await read() == wanted)


def _agent_state(state_dir: Path, latest: int) -> dict[str, Any]:
    """The agent's journal, with the hub's own ids left out."""
    (path,) = state_dir.rglob("lineup-agent.db")
    with contextlib.closing(sqlite3.connect(path)) as db:
        jobs = sorted(db.execute("SELECT kind, state FROM jobs").fetchall())
        answers = db.execute("SELECT count(*) FROM answers").fetchone()[0]
        outbox = db.execute("SELECT count(*) FROM outbox").fetchone()[0]
        (cursor,) = db.execute("SELECT value FROM meta WHERE key = 'cursor'").fetchone()
    return {
        "jobs": jobs,
        "answers": answers,
        "outbox": outbox,
        "cursor_behind": int(cursor) > latest,
    }


async def test_an_sdk_agent_behind_the_horizon_ends_where_one_that_never_left_ends(
    database_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    reference = await story(sqlite_url(_dir(tmp_path / "ref")), tmp_path / "ref", compacted=False)
    told = "the hub compacted its log"
    assert told not in caplog.text
    with caplog.at_level(logging.WARNING, logger="lineup.sdk"):
        resynced = await story(database_url, _dir(tmp_path / "back"), compacted=True)
    assert told in caplog.text, "the agent was told to resync"
    assert resynced == reference
    assert reference["tasks"] == [
        ("ask", "succeeded", "approved"),
        ("later", "succeeded", "done: later"),
    ]
    assert ("agent", "Noted: while you were away") in reference["messages"]
    assert reference["agent"]["outbox"] == 0


def _dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
