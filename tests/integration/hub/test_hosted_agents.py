"""Hosted agents through the hub's API, with the fake engine as a real subprocess: a person
creates one, talks to it, answers the approval its engine asks for, and it carries on after
its engine is killed mid-turn and after the hub restarts — on SQLite and PostgreSQL.

The hub runs in this process on a free port, composed with :class:`EngineHosting` as
``lineup serve`` composes it; the hosted agent connects to it over loopback like any agent.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import httpx

from lineup.engines.codex import CodexRuntime
from lineup.engines.fake import FakeRuntime
from lineup.engines.fake_engine import EFFECTS_FILE
from tests.integration.hub.conftest import fast_settings
from tests.support.hosted_hub import (
    API_KEY,
    arguments_of,
    files_under,
    pending_approval,
    reply_containing,
    running_hub,
    sign_in,
)
from tests.support.waiting import until_async


async def test_a_hosted_agent_talks_asks_and_survives_a_crash_and_a_restart(
    hub_database: str, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    effects = project / EFFECTS_FILE
    settings = fast_settings(hub_database, tmp_path / "hub", engine_roots=(tmp_path,))

    async with (
        running_hub(settings, tmp_path) as hub,
        httpx.AsyncClient(base_url=hub.url) as http,
    ):
        person = await sign_in(http, first=True)
        listed = await person.get("/hosted-agents")
        assert "fake" in listed["engines"]
        created = await person.post(
            "/hosted-agents",
            {
                "name": "Builder",
                "engine": "fake",
                "cwd": str(project),
                "model": {
                    "api": "openai-responses",
                    "baseUrl": "http://127.0.0.1:9/v1",
                    "model": "mock-model",
                    "apiKey": API_KEY,
                },
            },
            201,
        )
        agent_id = created["agentId"]
        assert created["model"]["hasApiKey"] is True
        shown = await http.get(f"/api/workspaces/{person.workspace_id}/hosted-agents")
        assert API_KEY not in shown.text and API_KEY not in str(created)

        async def online() -> bool:
            agents = (await person.get("/agents"))["agents"]
            return any(a["id"] == agent_id and a["status"] == "online" for a in agents)

        await until_async(online, "the hosted agent to be online")
        assert hub.hosting.manager.running() == [], "no engine before the first message"
        conversation = await person.post(
            "/conversations", {"title": "Build", "agentIds": [agent_id]}, 201
        )
        cid = conversation["id"]

        async def say(text: str) -> None:
            await person.post(
                f"/conversations/{cid}/messages", {"content": text, "targetAgentId": agent_id}, 201
            )

        # a message starts the engine, and its reply comes back
        await say("hello there")
        assert await reply_containing(person, cid, "You said: hello there (turn 1)")
        key = (agent_id, cid)
        first_pid = hub.hosting.manager.pid(key)
        assert first_pid is not None

        # the engine asks for an approval; the person's answer reaches it
        await say("[approve:make build]")
        card = await pending_approval(person, cid)
        assert card["request"]["title"] == "Run make build?"
        await person.post(
            f"/interactions/{card['id']}/respond", {"response": {"optionId": "approve"}}
        )
        assert await reply_containing(person, cid, "ran make build")
        assert effects.read_text().splitlines() == ["make build"]

        # the key is in no argument, no log
        assert API_KEY.encode() not in arguments_of(first_pid)
        for path in files_under(tmp_path / "engines"):
            assert API_KEY.encode() not in path.read_bytes(), path

        # killed mid-turn, after its command ran: restarted, rebuilt, nothing done twice
        await say("[approve:make install][hang]")
        card = await pending_approval(person, cid)
        await person.post(
            f"/interactions/{card['id']}/respond", {"response": {"optionId": "approve"}}
        )
        await until_async(lambda: len(effects.read_text().splitlines()) == 2, "the second effect")
        os.kill(first_pid, signal.SIGKILL)
        assert await reply_containing(person, cid, "stopped unexpectedly")
        await say("are you back?")
        assert await reply_containing(person, cid, "You said: are you back? (turn 4)")
        second_pid = hub.hosting.manager.pid(key)
        assert second_pid not in (None, first_pid)
        assert effects.read_text().splitlines() == ["make build", "make install"]

    # the hub restarts: the hosted agent is there again, and remembers the conversation
    async with (
        running_hub(settings, tmp_path) as hub,
        httpx.AsyncClient(base_url=hub.url) as http,
    ):
        person = await sign_in(http, first=False)
        await until_async(online, "the hosted agent to be online after a restart")
        assert [h["agentId"] for h in (await person.get("/hosted-agents"))["hostedAgents"]] == [
            agent_id
        ]
        await say("still there?")
        assert await reply_containing(person, cid, "You said: still there? (turn 5)")
        assert effects.read_text().splitlines() == ["make build", "make install"]
        for path in files_under(tmp_path / "engines"):
            assert API_KEY.encode() not in path.read_bytes(), path


async def test_a_working_directory_outside_the_roots_is_refused(
    hub_database: str, tmp_path: Path
) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (allowed / "escape").symlink_to(outside)
    settings = fast_settings(hub_database, tmp_path / "hub", engine_roots=(allowed,))
    async with (
        running_hub(settings, tmp_path) as hub,
        httpx.AsyncClient(base_url=hub.url) as http,
    ):
        person = await sign_in(http, first=True)
        model = {"api": "openai-chat", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}
        for cwd, status, code in (
            (str(outside), 403, "forbidden"),
            (str(allowed / "escape"), 403, "forbidden"),
            (str(allowed / "missing"), 400, "invalid_argument"),
            ("relative/path", 400, "invalid_argument"),
        ):
            body = {"name": "x", "engine": "fake", "cwd": cwd, "model": model}
            answer = await person.post("/hosted-agents", body, status)
            assert answer["error"]["code"] == code, cwd
        body = {"name": "x", "engine": "nope", "cwd": str(allowed), "model": model}
        assert (await person.post("/hosted-agents", body, 400))["error"]["code"] == (
            "invalid_argument"
        )
        assert (await person.get("/agents"))["agents"] == []


async def test_only_installed_engines_are_offered_and_a_missing_one_says_how_to_add_it(
    hub_database: str, tmp_path: Path
) -> None:
    settings = fast_settings(hub_database, tmp_path / "hub", engine_roots=(tmp_path,))
    engines = {"fake": FakeRuntime(), "codex": CodexRuntime(str(tmp_path / "no-codex-here"))}
    async with (
        running_hub(settings, tmp_path, engines=engines) as hub,
        httpx.AsyncClient(base_url=hub.url) as http,
    ):
        person = await sign_in(http, first=True)
        assert (await person.get("/hosted-agents"))["engines"] == ["fake"]
        model = {"api": "openai-responses", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}
        for engine, says in (
            ("codex", "Install it with `npm install -g @openai/codex@0.171.0`"),
            ("pi", "no driver for the pi engine yet"),
            ("nope", "There is no engine 'nope' here; choose one of fake."),
        ):
            body = {"name": "x", "engine": engine, "cwd": str(tmp_path), "model": model}
            refused = (await person.post("/hosted-agents", body, 400))["error"]
            assert refused["code"] == "invalid_argument" and says in refused["message"], refused
