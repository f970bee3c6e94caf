"""An SDK agent away while its task's cancel times out (seed 001 §11, principle 4): the hub
records the task cancelled itself; when the agent comes back its handler resumes and finishes,
but what it would report is dropped or refused (``task_ended``) and never resent — the task
stays as the hub ended it, and the agent's outbox ends empty. On each database, with the
hub's clock and monitor in the test's hands."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from lineup.hub import Settings, create_app
from lineup.hub.cluster import MONITOR_LEASE
from lineup.hub.monitor import Monitor
from lineup.hub.state import HubState
from lineup.sdk import Agent, AgentConfig, Backoff, TaskContext, pair
from tests.integration.test_sdk_resync import Person, _QuietServer
from tests.support.clock import FakeClock
from tests.support.monitor import ONCE
from tests.support.waiting import until_async

DEADLINE = 20.0


@contextlib.asynccontextmanager
async def running_hub(
    database_url: str, home: Path, clock: FakeClock
) -> AsyncIterator[tuple[str, HubState]]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    settings = Settings(
        database_url=database_url,
        home=home,
        port=port,
        notify_enabled=False,
        monitor_interval=ONCE,  # the test ticks the monitor itself
        grace_period=24 * 3600.0,  # the agent's absence alone ends nothing here
        cancel_timeout=60.0,
        static_dir=home / "no-web-app",
    )
    app = create_app(settings, clock=clock)
    server = _QuietServer(uvicorn.Config(app, log_config=None, log_level="warning", lifespan="on"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        await until_async(lambda: _started(server), "the hub to start")
        yield f"http://127.0.0.1:{port}", app.state.hub
    finally:
        server.should_exit = True
        await task
        sock.close()


async def _started(server: uvicorn.Server) -> bool:
    return bool(server.started)


def _agent(config: AgentConfig, state_dir: Path, runs: list[str], started: asyncio.Event) -> Agent:
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
        runs.append(ctx.task_id)
        await ctx.progress(10, "Started")
        if len(runs) == 1:
            started.set()
            await asyncio.Event().wait()  # long work; the agent goes away during it
        return "finished late"

    return agent


def _agent_state(state_dir: Path, task_id: str) -> tuple[str, int]:
    (path,) = state_dir.rglob("lineup-agent.db")
    with contextlib.closing(sqlite3.connect(path)) as db:
        (state,) = db.execute("SELECT state FROM jobs WHERE scope = ?", (task_id,)).fetchone()
        (queued,) = db.execute("SELECT count(*) FROM outbox").fetchone()
    return str(state), int(queued)


async def test_an_agent_away_while_its_cancel_times_out_learns_on_return_and_sends_nothing_late(
    database_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = FakeClock()
    async with (
        running_hub(database_url, tmp_path / "hub", clock) as (url, hub),
        httpx.AsyncClient(base_url=url, timeout=15) as http,
    ):
        signed = await http.post(
            "/api/auth/signup",
            json={"email": "ana@example.test", "password": "long enough pw", "displayName": "Ana"},
        )
        assert signed.status_code == 201, signed.text
        body = signed.json()
        ana = Person(http, body["csrfToken"], body["workspaceId"])
        code = (await ana.send("POST", "/pairing-codes", {}, 201))["code"]
        creds = tmp_path / "creds.json"
        config = await pair(url, code, name="builder", credentials_path=creds)
        agent_id = config.agent_id
        await ana.send("POST", f"/agents/{agent_id}/confirm", {})

        async def agent_status() -> str:
            return str((await ana.get(f"/agents/{agent_id}"))["status"])

        async def task() -> dict[str, Any]:
            found: dict[str, Any] = (await ana.get(f"/tasks/{task_id}"))["task"]
            return found

        runs: list[str] = []
        started = asyncio.Event()
        state_dir = tmp_path / "state"
        agent = _agent(AgentConfig.load(creds), state_dir, runs, started)
        running = asyncio.create_task(agent.run())
        # connected before the task exists: its agent.connected is not the task's to show
        await until_async(lambda: _is(agent_status, "online"), "the agent online")
        created = await ana.send(
            "POST", "/tasks", {"title": "Build", "targetAgentId": agent_id}, 201
        )
        task_id = created["task"]["id"]
        async with asyncio.timeout(DEADLINE):
            await started.wait()
        await until_async(
            lambda: _has(task, "progress", 10), "the agent's progress to reach the hub"
        )
        agent.stop()  # the agent's machine goes to sleep mid-task
        await asyncio.wait_for(running, DEADLINE)
        await until_async(lambda: _is(agent_status, "offline"), "the agent offline")

        await ana.send("POST", f"/tasks/{task_id}/cancel", {"reason": "wrong branch"})
        assert (await task())["cancelDeadline"] is not None
        monitor = Monitor(hub)
        await until_async(lambda: _holds_lease(hub), "the node to hold the monitor lease")
        clock.advance(59)
        await monitor.tick(clock())
        assert (await task())["status"] == "running"
        clock.advance(1)
        await monitor.tick(clock())
        ended = await task()
        assert ended["status"] == "cancelled" and ended["endCause"] == "cancel_timeout"

        # back: the resumed handler finishes, but the task is the hub's to have ended
        with caplog.at_level(logging.INFO, logger="lineup.sdk"):
            agent = _agent(AgentConfig.load(creds), state_dir, runs, asyncio.Event())
            running = asyncio.create_task(agent.run())
            try:
                await until_async(lambda: _is(agent_status, "online"), "the agent back online")
                await until_async(
                    lambda: _settled(state_dir, task_id), "the agent to settle the ended task"
                )
            finally:
                agent.stop()
                await asyncio.wait_for(running, DEADLINE)
        assert runs == [task_id, task_id], "the handler resumed once"
        assert "the hub ended task" in caplog.text, "the agent heard of the end"
        dropped = "queued report(s) for it dropped" in caplog.text
        refused = "the hub refused" in caplog.text and "has ended" in caplog.text
        assert dropped or refused, "the late report was dropped, or refused and not resent"

        detail = await ana.get(f"/tasks/{task_id}")
        final = detail["task"]
        assert final["status"] == "cancelled" and final["endCause"] == "cancel_timeout"
        assert "did not confirm the cancel in time" in final["summary"]
        by_agent = [e["type"] for e in detail["timeline"] if e["actor"] == f"agent:{agent_id}"]
        assert by_agent == ["task.accepted", "task.status_changed"], "nothing late recorded"


async def _is(read: Any, wanted: str) -> bool:
    return bool(await read() == wanted)


async def _has(read: Any, key: str, wanted: object) -> bool:
    return bool((await read())[key] == wanted)


async def _holds_lease(hub: HubState) -> bool:
    return hub.leases.held(MONITOR_LEASE)


async def _settled(state_dir: Path, task_id: str) -> bool:
    return _agent_state(state_dir, task_id) == ("done", 0)
