"""Seed 001 §15 in the browser with the demo agent as a real process (`lineup demo-agent`):
pair it from the Agents screen, give it a task from a conversation, close and reopen the
browser, kill the agent (the lost connection shows), restart it (recovered), answer the
approval with the keyboard only, and see the result — each step once in the timeline."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.agent import new_id
from tests.browser.conftest import PASSWORD, Hub, screenshot, tab_to

LINEUP = str(Path(sys.executable).with_name("lineup"))


class DemoAgent:
    def __init__(self, hub_url: str, state: Path) -> None:
        self.hub_url = hub_url
        self.state = state
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, code: str | None = None) -> None:
        args = [LINEUP, "demo-agent", "--hub", self.hub_url, "--state-dir", str(self.state)]
        args += ["--work-seconds", "0.3", "--name", "builder"]
        if code:
            args += ["--code", code]
        self.state.mkdir(parents=True, exist_ok=True)
        with (self.state / "agent.log").open("ab") as log:
            self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture
def demo_agent(hub: Hub, tmp_path: Path) -> Iterator[DemoAgent]:
    agent = DemoAgent(hub.url, tmp_path / "demo-agent")
    try:
        yield agent
    finally:
        agent.stop()


def _nav(page: Page, name: str) -> None:
    page.get_by_role("navigation", name="Main").get_by_role("link", name=re.compile(name)).click()


def test_the_demo_loop_with_the_real_demo_agent(
    new_context: Any, hub: Hub, demo_agent: DemoAgent
) -> None:
    email = f"{new_id('ana').lower()}@example.test"
    page = new_context().new_page()
    page.goto("/signup")
    page.get_by_label("Display name").fill("Ana")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()

    # pair through the Agents screen, with the command it shows
    _nav(page, "Agents")
    page.get_by_role("button", name="Connect my agent").first.click()
    code = page.get_by_test_id("pairing-code").inner_text().strip()
    expect(page.get_by_test_id("pairing-command")).to_contain_text("lineup demo-agent")
    demo_agent.start(code)
    expect(page.get_by_test_id("confirm-agent-name")).to_have_text("builder", timeout=20_000)
    page.get_by_role("button", name="Confirm agent").click()
    expect(page.get_by_text("builder is connected")).to_be_visible(timeout=20_000)
    page.get_by_role("button", name="Done").click()
    expect(page.get_by_test_id("agents-online")).to_have_text("1 of 1 agent online")

    # a conversation, and a message tracked as a task
    _nav(page, "Conversations")
    page.get_by_role("button", name="New conversation").first.click()
    page.get_by_label("Title").fill("Orders database")
    page.get_by_role("button", name="Create conversation").click()
    page.get_by_label("Message", exact=True).fill("Migrate the orders database")
    page.get_by_label("Track as task").check()
    page.get_by_role("button", name="Send").click()
    chip = page.locator(".task-chip").first
    expect(chip).to_contain_text("Waiting for you", timeout=20_000)
    chip.get_by_role("link", name="Open task").click()
    detail = page.get_by_role("complementary")
    expect(detail.locator(".child-list")).to_contain_text("Pre-flight checks")
    expect(detail.get_by_role("progressbar", name="Task progress")).to_have_attribute(
        "aria-valuenow", "40"
    )
    task_id = chip.get_attribute("data-task-id")

    # close the browser; a new one signs in and finds everything
    page.context.close()
    page = new_context().new_page()
    page.goto("/signin")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    approval = page.locator("[data-interaction-id]").first
    expect(approval.get_by_text("High risk")).to_be_visible()

    # kill the agent: the task shows the lost connection; restart it: recovered
    _nav(page, "Tasks")
    page.locator(f"a[data-task-id='{task_id}']").click()
    detail = page.get_by_role("complementary")
    demo_agent.kill()
    lost = detail.get_by_role("status").filter(has_text="Agent connection lost")
    expect(lost).to_contain_text(
        re.compile(r"Lost at \d\d:\d\d:\d\d .*last heartbeat \d\d:\d\d:\d\d")
    )
    expect(page.get_by_test_id("agents-online")).to_have_text("0 of 1 agent online")
    screenshot(page, "demo-agent-connection-lost")
    demo_agent.start()  # saved credentials: no code the second time
    expect(page.get_by_test_id("agents-online")).to_have_text("1 of 1 agent online")
    expect(lost).to_have_count(0)

    # answer from the Inbox with the keyboard only
    _nav(page, "Inbox")
    approval = page.locator("[data-interaction-id]").first
    expect(approval).to_be_visible()
    page.locator("body").focus()
    tab_to(page, "Approve")
    page.keyboard.press("Enter")
    expect(approval.get_by_role("region", name="Outcome")).to_contain_text("Ana answered")

    # the result: message, artifact, success, and each step once in the timeline
    _nav(page, "Tasks")
    page.locator(f"a[data-task-id='{task_id}']").click()
    detail = page.get_by_role("complementary")
    expect(detail.locator(".td-status")).to_contain_text("Succeeded", timeout=20_000)
    report = detail.get_by_role("link", name=re.compile("Report"))
    expect(report).to_be_visible()
    # the report is a file in the hub: a click downloads what the agent wrote
    with page.expect_download() as downloading:
        report.click()
    saved = Path(downloading.value.path()).read_text(encoding="utf-8")
    assert saved.startswith("# Migrate the orders database"), saved
    assert "Approved by Ana" in saved
    timeline = detail.locator(".timeline")
    expect(timeline).to_contain_text("builder accepted the task")
    for line in ["accepted the task", "added a child task", "asked for an approval", "produced"]:
        expect(timeline.get_by_text(re.compile(line))).to_have_count(1)
    screenshot(page, "demo-agent-done")
    _nav(page, "Conversations")
    page.get_by_role("link", name=re.compile("Orders database")).click()
    stream = page.get_by_role("log", name="Messages")
    expect(stream).to_contain_text("Done: Ana approved")
