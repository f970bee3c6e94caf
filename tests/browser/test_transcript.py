"""The live transcript on a phone: an SDK agent runs a tool call, a streamed command, a file
change and reports its tokens; the task page shows each as it happens, and after a reload
(everything replayed from the log) it shows them all again."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from lineup.sdk import Agent, AgentConfig, Backoff, TaskContext
from tests.browser.agent import redeem
from tests.browser.conftest import PHONE, Person, screenshot

DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n import os\n-DEBUG = True\n+DEBUG = False\n"


@pytest.fixture
def working_agent(
    make_person: Any, tmp_path: Path
) -> Iterator[tuple[Person, Agent, threading.Event]]:
    person: Person = make_person("Ana")
    code = person.send("/pairing-codes", {}, 201)["code"]
    pairing = redeem(person.hub_url, code, "coder")
    person.confirm_agent(pairing.agent_id)
    config = AgentConfig(
        hub_url=person.hub_url,
        websocket_url=pairing.websocket_url,
        agent_id=pairing.agent_id,
        workspace_id=pairing.workspace_id,
        credential=pairing.credential,
    )
    agent = Agent(config, name="coder", state_dir=tmp_path / "state", backoff=Backoff(0.05, 0.1))
    release = threading.Event()

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        call = await ctx.activity.tool_call("read_file", {"path": "app.py"})
        await call.finish({"lines": 2})
        command = await ctx.activity.command("pytest -q", "/srv/app")
        await command.output("collected 3 items\n")
        await command.output("..F\n")
        command.flush()  # the page shows it while the command still runs
        await asyncio.to_thread(release.wait, 30)
        await command.output("1 failed, 2 passed\n", stream="stderr")
        await command.finish(1)
        await ctx.activity.file_change("app.py", DIFF)
        await ctx.activity.usage(1200, 340, context_window=200_000)
        return "done"

    loop = asyncio.new_event_loop()
    running = threading.Thread(target=loop.run_until_complete, args=(agent.run(),), daemon=True)
    running.start()
    try:
        yield person, agent, release
    finally:
        release.set()
        loop.call_soon_threadsafe(agent.stop)
        running.join(timeout=15)
        loop.close()


def test_a_phone_follows_what_the_agent_does_and_keeps_it_after_a_reload(
    new_context: Any, working_agent: tuple[Person, Agent, threading.Event]
) -> None:
    person, agent, release = working_agent
    task = person.send(
        "/tasks", {"title": "Fix the tests", "targetAgentId": agent.config.agent_id}, 201
    )
    task_id = task["task"]["id"]
    page = new_context(viewport=PHONE, person=person).new_page()
    page.goto(f"/tasks/{task_id}")
    transcript = page.get_by_test_id("transcript")

    # live: the command is running and its output so far is on the page
    command = transcript.locator("article[data-kind=command]")
    expect(command.get_by_label("Command output")).to_have_text("collected 3 items\n..F\n")
    expect(command).to_have_attribute("data-status", "running")
    release.set()
    expect(command).to_contain_text("Failed · exit 1")

    def check() -> None:
        tool = transcript.locator("article[data-kind=tool_call]")
        expect(tool.get_by_text("Tool: read_file")).to_be_visible()
        expect(tool.locator("details")).not_to_have_attribute("open", "")
        expect(tool.get_by_text('"path": "app.py"')).to_be_hidden()  # collapsed
        tool.get_by_text("Tool: read_file").click()
        expect(tool.get_by_text('"path": "app.py"')).to_be_visible()
        expect(tool.get_by_text('"lines": 2')).to_be_visible()
        expect(command.get_by_label("Command output")).to_have_text(
            "collected 3 items\n..F\n1 failed, 2 passed\n"
        )
        expect(command).to_contain_text("Failed · exit 1")
        diff = transcript.get_by_label("Diff of app.py")
        expect(diff).to_contain_text("− DEBUG = True")
        expect(diff).to_contain_text("+ DEBUG = False")
        expect(transcript.get_by_test_id("token-usage")).to_contain_text(
            "1.2k in · 340 out over 1 turn"
        )
        for entry in transcript.locator("article").all():
            box = entry.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]

    check()
    screenshot(page, "transcript-phone")
    page.reload()
    check()
