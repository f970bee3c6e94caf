"""Hosted engines with the hub as a real process (``lineup serve``), for each engine of the
conformance suite (``tests/support/hosted_engines.py``): the hub and its engines contact
nothing but loopback; when the hub is killed with SIGKILL in the middle of a turn, no engine
outlives it; started again, it does not send that turn to an engine again (what the engine
did stays done, once), says the turn did not finish, withdraws the question it left open,
and the conversation goes on. SQLite only: what is checked here is processes, not the
database (the conformance suite runs both)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lineup.engines.process_tree import alive, descendants
from tests.e2e.processes import HubProcess
from tests.support.hosted_engines import CASES, INSTALL, EngineCase, make_case
from tests.support.people import Person
from tests.support.scripted_model import ScriptedModel
from tests.support.waiting import until

pytestmark = pytest.mark.slow


def strace_works() -> bool:
    if shutil.which("strace") is None:
        return False
    probe = subprocess.run(["strace", "-f", "-o", os.devnull, "true"], capture_output=True)
    return probe.returncode == 0


@pytest.fixture(params=CASES)
def engine(request: pytest.FixtureRequest) -> Iterator[EngineCase]:
    with ScriptedModel() as model:
        case = make_case(request.param, model if request.param != "fake" else None)
        if case is None:
            pytest.skip(INSTALL[request.param])
        yield case


def agent_replies(person: Person, conversation_id: str) -> list[str]:
    page = person.read(f"/conversations/{conversation_id}/messages?limit=200")
    return [m["content"] for m in page["messages"] if m["author"]["kind"] == "agent"]


def reply_containing(person: Person, conversation_id: str, text: str) -> str:
    found: str = until(
        lambda: next((r for r in agent_replies(person, conversation_id) if text in r), None),
        f"an agent reply containing {text!r}",
    )
    return found


def open_card(person: Person, conversation_id: str, kind: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        page = person.read(f"/conversations/{conversation_id}/messages?limit=200")
        cards = [
            i for i in page["interactions"] if i["status"] == "requested" and i["type"] == kind
        ]
        return cards[0] if cards else None

    card: dict[str, Any] = until(found, f"an open {kind} card")
    return card


def test_a_killed_hub_leaves_no_engine_and_does_not_repeat_the_turn(
    tmp_path: Path, engine: EngineCase
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    effects = project / engine.effects_file
    trace = tmp_path / "connects.trace"
    traced = strace_works()
    launcher = ("strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace)) if traced else ()
    home = tmp_path / "hub"
    home.mkdir()
    env = {"LINEUP_ENGINE_ROOTS": str(tmp_path), **engine.environment()}
    hub = HubProcess(home, None, env=env, launcher=launcher)
    hub.start()
    person = Person.at(hub.url)
    try:
        assert person.read("/hosted-agents")["engines"] == [engine.name]
        agent_id = person.send(
            "/hosted-agents",
            {
                "name": "Builder",
                "engine": engine.name,
                "cwd": str(project),
                "model": engine.model_settings(),
            },
            201,
        )["agentId"]
        cid = person.send("/conversations", {"title": "Build", "agentIds": [agent_id]}, 201)["id"]

        def say(text: str) -> None:
            person.send(
                f"/conversations/{cid}/messages", {"content": text, "targetAgentId": agent_id}, 201
            )

        message, reply = engine.plain("hello there")
        say(message)
        reply_containing(person, cid, reply)

        # a turn runs a command the person allows, then waits: the hub is killed then
        message, _ = engine.command("make install", then_wait=True)
        say(message)
        card = open_card(person, cid, "approval")
        person.send(f"/interactions/{card['id']}/respond", {"response": {"optionId": "approve"}})
        until(lambda: effects.exists() and effects.read_text() == "make install\n", "the effect")
        waiting = open_card(person, cid, "input") if engine.model is not None else None
        assert hub.process is not None
        hub_pid = descendants(hub.process.pid)[0] if traced else hub.process.pid
        engines = until(lambda: descendants(hub_pid), "the engine's process")
        os.kill(hub_pid, signal.SIGKILL)
        until(lambda: not alive(engines), "every engine process to end with the hub", 30)
        hub.process.wait(30)
    finally:
        hub.stop()

    if traced:  # the hub, its hosted agent and the engine, over their whole life
        text = trace.read_text()
        addresses = re.findall(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"', text)
        contacted = {a or b for a, b in addresses}
        assert "127.0.0.1" in contacted, text[-2000:]
        assert contacted <= {"127.0.0.1", "::1"}, f"beyond loopback: {sorted(contacted)}"

    again = HubProcess(home, None, port=hub.port, env=env)
    again.start()
    try:
        reply_containing(person, cid, "LineUp restarted while the engine was working on this")
        if waiting is not None:  # the question it left open is taken back
            until(
                lambda: person.read(f"/interactions/{waiting['id']}")["status"] == "cancelled",
                "the open question to be withdrawn",
            )
        message, reply = engine.after_restart("are you back?")
        say(message)
        reply_containing(person, cid, reply)
        assert effects.read_text() == "make install\n", "the effect happened once"
    finally:
        again.stop()
        person.close()
