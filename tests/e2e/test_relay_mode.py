"""Relay mode end to end: ``lineup relay`` (a real process, the SDK agent of every mode) and a
person's app (the Python stand-in, speaking the tunnel 3101–3104) meet only through the relay
test peer (a loopback WuKongIM server + TangSengDaoDao stub).

The story: the app creates a task; the agent reports progress and asks a ``choice`` tool
call; the agent's process is killed (SIGKILL) while it waits; a request is sent while it is
down; it restarts; the request is run and answered once; the tool call, then an approval, are
answered; the task succeeds — with nothing lost and nothing done twice. A uid that is not
configured gets nothing. The agent process reaches nothing beyond loopback.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.relay import RelayAgentProcess
from tests.support.relay_app import TunnelApp
from tests.support.relay_peer import RelayPeer, relay_peer  # noqa: F401
from tests.support.waiting import until_async

DEADLINE = 40.0


@pytest.fixture
def agent_process(
    relay_peer: RelayPeer,  # noqa: F811
    tmp_path: Path,
) -> Iterator[RelayAgentProcess]:
    bot = relay_peer.add_user("bot", name="Relay builder")
    agent = RelayAgentProcess(relay_peer, bot, tmp_path / "agent-home")
    agent.start()
    try:
        yield agent
    finally:
        agent.stop()


@pytest.fixture
async def app(
    relay_peer: RelayPeer,  # noqa: F811
    agent_process: RelayAgentProcess,
) -> AsyncIterator[TunnelApp]:
    ana = relay_peer.add_user("ana", name="Ana")
    opened = await TunnelApp.open(relay_peer.ws, ana.uid, ana.token, "bot")
    try:
        yield opened
    finally:
        await opened.close()


async def _online(app: TunnelApp) -> str:
    async def online() -> str | None:
        agents = (await app.ok("GET", app.ws("/agents")))["agents"]
        return next((a["id"] for a in agents if a["status"] == "online"), None)

    return await until_async(online, "the agent to be online", timeout=DEADLINE)


async def _pending_calls(app: TunnelApp) -> list[dict[str, Any]]:
    return (await app.ok("GET", app.ws("/tool-calls?status=pending")))["toolCalls"]  # type: ignore[no-any-return]


async def test_a_conversation_survives_the_agent_being_killed_with_nothing_lost_or_doubled(
    relay_peer: RelayPeer,  # noqa: F811
    agent_process: RelayAgentProcess,
    app: TunnelApp,
) -> None:
    try:
        await _story(relay_peer, agent_process, app)
    except BaseException:
        print(agent_process.tail())
        raise


async def _story(peer: RelayPeer, agent: RelayAgentProcess, app: TunnelApp) -> None:
    await app.find_workspace()  # answered once the agent is up: the request waited for it
    agent_id = await _online(app)
    asked = {"title": "Deploy the site", "targetAgentId": agent_id}
    task_id = (await app.ok("POST", app.ws("/tasks"), asked, 201))["task"]["id"]
    call = await until_async(
        lambda: _first(_pending_calls(app)), "the choice tool call", timeout=DEADLINE
    )
    assert call["name"] == "choice"
    detail = await app.ok("GET", app.ws(f"/tasks/{task_id}"))
    assert detail["task"]["progress"] == 40

    # killed mid-conversation; a request made while it is down waits for it
    agent.kill()
    while_down = await app.send_request(
        "POST", app.ws("/conversations"), {"title": "Asked while down", "agentIds": [agent_id]}
    )
    agent.start()
    answered = await app.answer(while_down)
    assert answered.status == 201, answered.body

    # the same tool call is still the one pending; answering it goes on from there
    assert [c["id"] for c in await _pending_calls(app)] == [call["id"]]
    await app.ok("POST", app.ws(f"/tool-calls/{call['id']}/result"),
                 {"result": {"message": "staging"}})  # fmt: skip

    async def waiting() -> Any:
        detail = await app.ok("GET", app.ws(f"/tasks/{task_id}"))
        return detail if detail["task"]["status"] == "waiting_for_human" else None

    detail = await until_async(waiting, "the approval", timeout=DEADLINE)
    (interaction,) = detail["interactions"]
    assert interaction["request"]["title"] == "Deploy to staging?"
    await app.ok("POST", app.ws(f"/interactions/{interaction['id']}/respond"),
                 {"response": {"optionId": "approve"}})  # fmt: skip

    async def succeeded() -> Any:
        detail = await app.ok("GET", app.ws(f"/tasks/{task_id}"))
        return detail if detail["task"]["status"] == "succeeded" else None

    done = await until_async(succeeded, "the task to succeed", timeout=DEADLINE)
    assert done["task"]["summary"] == "Deployed to staging"

    # nothing doubled: one call, one approval, one conversation made while down, each step
    # after the crash done once. A request whose answer was sent just before the kill, but
    # not yet marked done, is answered again after the restart: from the ledger, the same
    # answer (the app drops it by request id), never run a second time.
    calls = (await app.ok("GET", app.ws("/tool-calls")))["toolCalls"]
    assert len(calls) == 1 and len(done["interactions"]) == 1
    titles = [c["title"] for c in (await app.ok("GET", app.ws("/conversations")))["conversations"]]
    assert titles.count("Asked while down") == 1
    assert app.answered[while_down] == 1
    replayed = {rid: answers for rid, answers in app.answers.items() if len(answers) > 1}
    assert all(a == answers[0] for answers in replayed.values() for a in answers), replayed
    assert agent.steps.count("chose staging") == 1 and agent.steps.count("approved True") == 1

    # someone not configured is ignored: no answer reaches them
    mallory = peer.add_user("mallory")
    intruder = await TunnelApp.open(peer.ws, mallory.uid, mallory.token, "bot")
    try:
        await intruder.send_request("GET", "/api/workspaces")
        await app.ok("GET", "/api/workspaces")  # the bridge handles messages in order
        async with httpx.AsyncClient(base_url=peer.api) as api:
            synced = await api.post(
                "/v1/message/channel/sync",
                headers={"token": mallory.token},
                json={
                    "channel_id": "bot",
                    "channel_type": 1,
                    "start_message_seq": 0,
                    "end_message_seq": 0,
                    "limit": 100,
                    "pull_mode": 1,
                },
            )
        assert [m["from_uid"] for m in synced.json()["messages"]] == ["mallory"]
    finally:
        await intruder.close()

    assert agent.refused == ""  # the agent's process contacted nothing beyond loopback


async def _first(items: Any) -> Any:
    listed = await items
    return listed[0] if listed else None


async def test_relay_mode_without_the_token_in_the_environment_says_so(tmp_path: Path) -> None:
    env = {**os.environ, "LINEUP_HOME": str(tmp_path)}
    env.pop("LINEUP_RELAY_TOKEN", None)
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "lineup", "relay", "--server", "ws://127.0.0.1:1/", "--api",
         "http://127.0.0.1:1", "--uid", "bot", "--people", "ana"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "LINEUP_RELAY_TOKEN" in done.stderr
