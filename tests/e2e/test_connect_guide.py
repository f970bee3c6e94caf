"""docs/connect-an-agent.md followed as written, from an empty directory to an agent online and
working: the page's own commands and files, with only the reader's two values (the hub's
address and the pairing code) and the place of their LineUp copy filled in. Every path of the
page: Python, TypeScript, MCP (the official MCP client as the host) and Hermes (from a Hermes
Agent the reader already runs)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.hermes import GREETING, HERMES_VENV, chores, config_yaml
from tests.e2e.processes import ROOT, HubProcess
from tests.e2e.scripted_model import ScriptedModel
from tests.support.guide import steps
from tests.support.people import Person
from tests.support.waiting import until, until_async

INSTALL_DEADLINE = 300


def _environment(hub: HubProcess, code: str, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LINEUP_", "VIRTUAL_ENV"))}
    env.update(
        HOME=str(home),
        LINEUP_HUB=hub.url,
        LINEUP_CODE=code,
        LINEUP_SOURCE=str(ROOT),
        # The reader's pip and npm caches, not the throwaway home's: the installs are then local.
        PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
        NPM_CONFIG_CACHE=os.environ.get("NPM_CONFIG_CACHE", str(Path.home() / ".npm")),
    )
    return env


def _follow(path: str, workdir: Path, env: dict[str, str]) -> subprocess.Popen[bytes] | None:
    """Run the guide's steps for ``path`` in ``workdir``; returns the agent it started, if
    it starts one itself (an MCP host starts its server)."""
    started: subprocess.Popen[bytes] | None = None
    for step in steps(path):
        if step.kind == "file":
            assert step.name is not None
            target = workdir / step.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(step.body)
        elif step.kind == "run":
            done = subprocess.run(
                ["bash", "-euo", "pipefail", "-c", step.body],
                cwd=workdir,
                env=env,
                capture_output=True,
                timeout=INSTALL_DEADLINE,
            )
            assert done.returncode == 0, (step.body, done.stdout[-2000:], done.stderr[-2000:])
        else:
            assert started is None, "the guide starts one agent"
            with (workdir / "agent.log").open("wb") as log:
                started = subprocess.Popen(
                    ["bash", "-euo", "pipefail", "-c", step.body],
                    cwd=workdir,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
    return started


def _stop(agent: subprocess.Popen[bytes]) -> None:
    if agent.poll() is None:
        os.killpg(agent.pid, signal.SIGTERM)
        try:
            agent.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(agent.pid, signal.SIGKILL)
            agent.wait(10)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_python_path_gets_an_agent_online_and_working(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
) -> None:
    _the_path_works("python", hub, tmp_path, sign_up())


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_typescript_path_gets_an_agent_online_and_working(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
) -> None:
    _the_path_works("typescript", hub, tmp_path, sign_up())


def _the_path_works(path: str, hub: HubProcess, tmp_path: Path, ana: Person) -> None:
    """The guide's agent of ``path`` comes online, takes a task, asks, and finishes it."""
    code = ana.send("/pairing-codes", {}, 201)["code"]
    workdir = tmp_path / "empty"
    workdir.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    agent = _follow(path, workdir, _environment(hub, code, home))
    assert agent is not None, f"the guide's {path} path starts the agent"
    log = workdir / "agent.log"
    try:

        def listed() -> dict[str, Any] | None:
            agents = ana.read("/agents")["agents"]
            return agents[0] if agents and agents[0]["status"] == "online" else None

        found = until(listed, f"the guide's agent online\n{_tail(log)}", timeout=120)
        assert found["name"] == "my-agent"
        ana.confirm_agent(found["id"])
        task_id = ana.send(
            "/tasks", {"title": "Water the plants", "targetAgentId": found["id"]}, 201
        )["task"]["id"]

        def asked() -> dict[str, Any] | None:
            detail = ana.read(f"/tasks/{task_id}")
            return detail if detail["task"]["status"] == "waiting_for_human" else None

        detail = until(asked, f"the guide's approval card\n{_tail(log)}")
        progress = {
            e["payload"].get("progress")
            for e in detail["timeline"]
            if e["type"] == "task.status_changed"
        }
        assert 20 in progress, progress
        (approval,) = detail["interactions"]
        assert approval["type"] == "approval"
        ana.send(f"/interactions/{approval['id']}/respond", {"response": {"optionId": "approve"}})

        def finished() -> dict[str, Any] | None:
            task = ana.read(f"/tasks/{task_id}")["task"]
            return task if task["status"] == "succeeded" else None

        task = until(finished, f"the guide's task to finish\n{_tail(log)}")
        messages = ana.read(f"/conversations/{task['conversationId']}/messages")["messages"]
        said = [m["content"] for m in messages if m["author"]["kind"] == "agent"]
        assert "Done: Water the plants" in said, said
        assert (home / ".lineup-agent" / "credentials.json").exists()
    finally:
        _stop(agent)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_the_mcp_path_gets_a_host_its_persons_answer(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
) -> None:
    ana = sign_up()
    code = ana.send("/pairing-codes", {}, 201)["code"]
    workdir = tmp_path / "empty"
    workdir.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = _environment(hub, code, home)
    assert await asyncio.to_thread(_follow, "mcp", workdir, env) is None
    (paired,) = ana.read("/agents")["agents"]
    assert paired["name"] == "Claude Code"
    ana.confirm_agent(paired["id"])

    # The host, as its configuration in the guide tells it (with the reader's home).
    entry = tomllib.loads((workdir / "host.toml").read_text())["mcp_servers"]["lineup"]
    command = entry["command"].replace("/home/you", str(home))
    server = StdioServerParameters(command=command, args=entry["args"], env=env)
    async with Client(server) as host:

        async def answer() -> None:
            def card() -> dict[str, Any] | None:
                cards = ana.read("/interactions?status=requested")["interactions"]
                return cards[0] if cards else None

            found = await until_async(lambda: asyncio.to_thread(card), "the host's question")
            assert found["request"]["title"] == "Delete the branch old-ui?"
            await asyncio.to_thread(
                ana.send,
                f"/interactions/{found['id']}/respond",
                {"response": {"optionId": "approve"}},
            )

        answering = asyncio.create_task(answer())
        result = await host.call_tool("ask_approval", {"title": "Delete the branch old-ui?"})
        await answering
    assert not result.is_error, result.content
    assert '"approved": true' in json.dumps(result.structured_content), result.structured_content
    assert (home / ".lineup-agent" / "mcp" / "credentials.json").exists()


@pytest.mark.skipif(
    not (HERMES_VENV / "bin" / "hermes").exists(),
    reason=f"Hermes Agent is not installed in {HERMES_VENV} (make hermes-venv)",
)
@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
def test_the_hermes_path_gets_hermes_online_and_answering(
    hub: HubProcess, tmp_path: Path, sign_up: Callable[..., Person]
) -> None:
    ana = sign_up()
    code = ana.send("/pairing-codes", {}, 201)["code"]
    workdir = tmp_path / "empty"
    workdir.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = _environment(hub, code, home)
    # Where the guide starts: the reader runs Hermes Agent — the version the Hermes tests pin,
    # in a virtualenv of its own, configured with a model (here the scripted one).
    hermes = home / "hermes-agent"
    subprocess.run(["python3", "-m", "venv", str(hermes)], check=True, env=env, timeout=120)
    pinned = f"hermes-agent=={version_in(HERMES_VENV, 'hermes-agent')}"
    installed = subprocess.run(
        [str(hermes / "bin" / "pip"), "install", "--quiet", pinned],
        env=env, capture_output=True, timeout=INSTALL_DEADLINE,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-2000:]
    env.update(PATH=f"{hermes / 'bin'}:{env['PATH']}", VIRTUAL_ENV=str(hermes))  # active
    with ScriptedModel(chores(tmp_path / "scratch")) as model:
        (home / ".hermes").mkdir()
        (home / ".hermes" / "config.yaml").write_text(config_yaml(model.base_url))
        gateway = _follow("hermes", workdir, env)
        assert gateway is not None, "the guide's Hermes path starts the gateway"
        log = workdir / "agent.log"
        try:

            def listed() -> dict[str, Any] | None:
                agents = ana.read("/agents")["agents"]
                return agents[0] if agents and agents[0]["status"] == "online" else None

            found = until(listed, f"Hermes online\n{_tail(log)}", timeout=120)
            assert (found["name"], found["runtime"]) == ("Hermes", "hermes")
            ana.confirm_agent(found["id"])
            talk = {"title": "Hello", "agentIds": [found["id"]]}
            chat = ana.send("/conversations", talk, 201)["id"]
            ana.send(
                f"/conversations/{chat}/messages",
                {"content": "hello there", "targetAgentId": found["id"]},
                201,
            )

            def replied() -> list[str] | None:
                messages = ana.read(f"/conversations/{chat}/messages")["messages"]
                said = [m["content"] for m in messages if m["author"]["kind"] == "agent"]
                return said or None

            assert until(replied, f"Hermes's reply\n{_tail(log)}", timeout=60) == [
                "".join(GREETING)
            ]
            assert (home / ".hermes" / "plugins" / "lineup" / "plugin.yaml").exists()
            assert (home / ".hermes" / "lineup" / "credentials.json").exists()
        finally:
            _stop(gateway)


def version_in(venv: Path, distribution: str) -> str:
    """The version of ``distribution`` installed in the virtualenv ``venv``."""
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         f"from importlib.metadata import version; print(version({distribution!r}))"],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return done.stdout.strip()


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-2000:] if log.exists() else "(no agent log)"
