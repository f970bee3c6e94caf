"""Direct mode in a real browser (seed 000 §3.1): ``lineup direct`` as a real process,
no hub anywhere. A phone opens the printed address, is told a wrong token is wrong, enters the
right one, sees the agent online, tracks a message as a task, watches its progress, answers
the approval and sees the result. A second browser opens the printed address that carries the
token and is let straight in, with the token gone from its address bar. Stopping the process
leaves nothing behind, and its log never holds the token. Tools come with the embedded hub: an
agent of this file's own (``--module``) calls ``choice``, the card renders, the answer arrives.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from lineup.sdk import Agent, AgentConfig, TaskContext
from tests.browser.conftest import (
    DESKTOP,
    PHONE,
    REPO,
    _free_port,
    _require_build,
    axe_violations,
    screenshot,
)

TOKEN = "t7k2-mq4x-w9ha-3pzn-v6rc"
TITLE = "Tidy the release notes"
DEADLINE = 30.0


@dataclass
class DirectProcess:
    process: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path
    scratch: Path
    base: str  # the printed address without the token, on this machine
    with_token: str  # the printed address carrying the token

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(timeout=10)


@pytest.fixture
def direct(tmp_path: Path) -> Iterator[DirectProcess]:
    """``lineup direct --port <free> --token <t>`` with the demo agent; no hub process."""
    yield from _run_direct(tmp_path, [])


@pytest.fixture
def direct_tools(tmp_path: Path) -> Iterator[DirectProcess]:
    """``lineup direct`` serving this file's tool-using agent (``--module``)."""
    yield from _run_direct(tmp_path, ["--module", "tests.browser.test_direct:build_tool_agent"])


def _run_direct(tmp_path: Path, extra: list[str]) -> Iterator[DirectProcess]:
    _require_build()
    port = _free_port()
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    stdout, stderr = tmp_path / "direct.out", tmp_path / "direct.err"
    env = {
        **os.environ,
        "TMPDIR": str(scratch),  # where the throwaway database goes (checked at the end)
        "LINEUP_AGENT_HOME": str(tmp_path / "agent-home"),
        "LINEUP_HOME": str(tmp_path / "unused-hub-home"),
        # this checkout's code, and its tests for --module tests.browser.test_direct:…
        "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
    }
    for name in ("LINEUP_DATABASE_URL", "LINEUP_REDIS_URL", "LINEUP_MODE", "LINEUP_DIRECT_TOKEN"):
        env.pop(name, None)
    lineup = Path(sys.executable).parent / "lineup"
    command = [
        str(lineup),
        "direct",
        "--port",
        str(port),
        "--token",
        TOKEN,
        "--name",
        "builder",
        "--person",
        "Ana",
        "--work-seconds",
        "0.3",
        "--log-level",
        "debug",
        *extra,
    ]
    with stdout.open("wb") as out, stderr.open("wb") as err:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=err)
    try:
        lines = _wait_for_banner(process, stdout, stderr)
        with_token = next(u for u in lines if u.startswith(f"http://127.0.0.1:{port}/#token="))
        base = f"http://127.0.0.1:{port}"
        yield DirectProcess(process, stdout, stderr, scratch, base, with_token)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)


def _wait_for_banner(process: subprocess.Popen[bytes], stdout: Path, stderr: Path) -> list[str]:
    """The addresses ``lineup direct`` prints once it serves (polled with a deadline)."""
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        text = stdout.read_text(errors="replace")
        if "enter the token" in text:
            return [line.strip() for line in text.splitlines() if line.strip().startswith("http")]
        try:
            code = process.wait(timeout=0.1)  # the bounded pause between polls
        except subprocess.TimeoutExpired:
            continue
        pytest.fail(f"lineup direct exited with {code}:\n{stderr.read_text(errors='replace')}")
    pytest.fail(f"lineup direct printed no address in {DEADLINE}s:\n{stderr.read_text()}")


def _context(browser: Browser, base: str, viewport: dict[str, int]) -> BrowserContext:
    context = browser.new_context(
        base_url=base,
        viewport=viewport,  # type: ignore[arg-type]
        locale="en-GB",
        timezone_id="UTC",
    )
    context.set_default_timeout(10_000)
    return context


def _menu(page: Page, name: str) -> None:
    """Navigate on a phone: the menu is behind a button."""
    page.get_by_role("button", name="Open menu").click()
    page.get_by_role("dialog", name="Menu").get_by_role("link", name=re.compile(name)).click()


def test_a_phone_steers_a_direct_mode_agent_with_no_hub(
    browser: Browser, direct: DirectProcess
) -> None:
    phone = _context(browser, direct.base, PHONE)
    try:
        page = phone.new_page()
        _token_screen(page)
        _track_a_task_and_approve(page)
        _open_with_the_printed_address(browser, direct)
    finally:
        phone.close()

    # --- stopping it keeps nothing, and the token was never logged --------------------------
    assert direct.stop() == 0
    assert "nothing was kept" in direct.stdout.read_text()
    assert list(direct.scratch.iterdir()) == [], "the throwaway database outlived the process"
    log = direct.stderr.read_text(errors="replace")
    assert "direct mode: LineUp for builder is at" in log  # the log is there, at debug level
    assert TOKEN not in log


def _token_screen(page: Page) -> None:
    page.goto("/")
    expect(page.get_by_role("heading", name="Open builder")).to_be_visible()
    expect(page.get_by_test_id("direct-limits")).to_contain_text(
        "no history beyond it, one agent, one person, no notifications"
    )
    expect(page.get_by_role("heading", name="Sign in")).to_have_count(0)
    screenshot(page, "direct-token")
    assert axe_violations(page) == []

    # a wrong token first: a clear error, still on the token screen
    page.get_by_label("Token").fill("not-the-token")
    page.get_by_role("button", name="Open").click()
    expect(page.get_by_role("alert")).to_contain_text("That token is not right")
    expect(page.get_by_label("Token")).to_have_attribute("aria-invalid", "true")
    screenshot(page, "direct-token-wrong")

    page.get_by_label("Token").fill(TOKEN)
    page.get_by_role("button", name="Open").click()
    expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()
    expect(page.get_by_test_id("agents-online")).to_have_text("1 of 1 agent online")
    expect(page.get_by_test_id("direct-badge")).to_have_text("Direct mode")
    screenshot(page, "direct-phone-inbox")
    # A 390 px phone: the top bar fits, with the inbox still on screen.
    fits = "() => (b => b.scrollWidth <= b.clientWidth)(document.querySelector('.topbar'))"
    assert page.evaluate(fits), "the top bar overflows"
    inbox = page.get_by_test_id("topbar-inbox").bounding_box()
    assert inbox is not None and inbox["x"] + inbox["width"] <= PHONE["width"]


def _track_a_task_and_approve(page: Page) -> None:
    # --- a conversation with the agent, and a message tracked as a task -----------------------
    _menu(page, "Conversations")
    page.get_by_role("button", name="New conversation").first.click()
    page.get_by_label("Title").fill("Release")
    expect(page.get_by_role("checkbox", name=re.compile("builder"))).to_be_checked()
    page.get_by_role("button", name="Create conversation").click()
    expect(page.get_by_role("heading", name="Release")).to_be_visible()
    # no keyboard hints on a phone: it has no Shift+Enter
    expect(page.get_by_label("Message", exact=True)).to_have_attribute(
        "placeholder", "Write what you need…"
    )
    page.get_by_label("Message", exact=True).fill(TITLE)
    page.get_by_label("Track as task").check()
    page.get_by_role("button", name="Send").click()
    stream = page.get_by_role("log", name="Messages")
    expect(stream.get_by_text(TITLE).first).to_be_visible()

    # --- the demo agent works: progress, a child task, then it asks -----------------------------
    chip = page.locator(".task-chip").first
    expect(chip).to_contain_text("Waiting for you", timeout=DEADLINE * 1000)
    chip.get_by_role("link", name="Open task").click()
    drawer = page.get_by_role("dialog", name="Task detail")
    expect(drawer.get_by_role("progressbar", name="Task progress")).to_have_attribute(
        "aria-valuenow", "40"
    )
    expect(drawer.locator(".td-summary")).to_have_text("Pre-flight checks passed")
    expect(drawer.locator(".child-list")).to_contain_text("Pre-flight checks")
    expect(drawer.locator(".child-list")).to_contain_text("Succeeded")
    screenshot(page, "direct-phone-task")
    page.keyboard.press("Escape")
    expect(drawer).to_have_count(0)

    # --- the approval, from the inbox ---------------------------------------------------------
    expect(page.get_by_test_id("topbar-inbox")).to_have_attribute("aria-label", "Inbox, 1 unread")
    page.get_by_test_id("topbar-inbox").click()
    card = page.locator("[data-interaction-id]").filter(has_text=f"Go ahead with “{TITLE}”?")
    expect(card.get_by_text("High risk")).to_be_visible()
    screenshot(page, "direct-phone-approval")
    card.get_by_role("button", name="Approve").click()
    expect(card.get_by_role("region", name="Outcome")).to_contain_text("Ana answered")

    # --- the result ---------------------------------------------------------------------------
    _menu(page, "Conversations")
    page.get_by_role("link", name=re.compile("Release")).click()
    stream = page.get_by_role("log", name="Messages")
    expect(stream.get_by_text("Done: Ana approved, the report is attached.")).to_be_visible(
        timeout=DEADLINE * 1000
    )
    report = stream.get_by_role("link", name=re.compile("Report"))
    expect(report).to_be_visible()
    # served by the agent's own LineUp, with this person's session: the report opens
    opened = page.request.get(report.evaluate("a => a.href"))
    assert opened.status == 200, opened.text()
    assert opened.text().startswith(f"# {TITLE}")
    expect(page.locator(".task-chip").first).to_contain_text("Succeeded")
    screenshot(page, "direct-phone-done")


def _open_with_the_printed_address(browser: Browser, direct: DirectProcess) -> None:
    """The address with ``#token=`` lets a browser straight in and then forgets the token."""
    desktop = _context(browser, direct.base, DESKTOP)
    try:
        page = desktop.new_page()
        page.goto(direct.with_token)
        expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()
        assert TOKEN not in page.url
        nav = page.get_by_role("navigation", name="Main")
        nav.get_by_role("link", name=re.compile("Tasks")).click()
        title = page.locator(".task-row-title").get_by_text(TITLE, exact=True)
        task = page.locator("a[data-task-id]").filter(has=title)
        expect(task).to_contain_text("Succeeded")
        screenshot(page, "direct-desktop")
        # one agent, served from inside it: nothing to pair, nothing to revoke
        nav.get_by_role("link", name=re.compile("Agents")).click()
        expect(page.get_by_role("heading", name="Agents", level=1)).to_be_visible()
        expect(page.get_by_role("link", name="builder")).to_be_visible()
        expect(page.get_by_role("button", name="Connect my agent")).to_have_count(0)
        page.get_by_role("link", name="builder").click()
        expect(page.get_by_role("button", name="Rename")).to_be_visible()
        expect(page.get_by_role("button", name="Revoke access")).to_have_count(0)
    finally:
        desktop.close()


# --- tools come with the embedded hub --------------------------------------------------------


def build_tool_agent(config: AgentConfig) -> Agent:
    """An agent whose task asks the person through a tool of their app (``choice``)."""
    agent = Agent(config, name="builder")

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        await ctx.progress(20, "Choosing where to deploy")
        where = await ctx.tools.choice("Deploy where?", ["test", "staging", "production"])
        await ctx.say(f"Deploying to {where}.")
        return f"Deployed to {where}"

    return agent


def test_a_tool_call_of_a_direct_mode_agent_renders_and_its_answer_reaches_the_agent(
    browser: Browser, direct_tools: DirectProcess
) -> None:
    context = _context(browser, direct_tools.base, DESKTOP)
    try:
        page = context.new_page()
        page.goto(direct_tools.with_token)
        expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()
        nav = page.get_by_role("navigation", name="Main")
        nav.get_by_role("link", name=re.compile("Conversations")).click()
        page.get_by_role("button", name="New conversation").first.click()
        page.get_by_label("Title").fill("Deploy")
        page.get_by_role("button", name="Create conversation").click()
        page.get_by_label("Message", exact=True).fill("Deploy the site")
        page.get_by_label("Track as task").check()
        page.get_by_role("button", name="Send").click()

        nav.get_by_role("link", name=re.compile("Inbox")).click()
        card = page.locator("article[data-tool='choice']")
        expect(card).to_contain_text("Deploy where?", timeout=DEADLINE * 1000)
        screenshot(page, "direct-tool-choice")
        card.get_by_role("button", name="staging").click()
        expect(card.locator(".outcome-answer")).to_have_text("staging")

        nav.get_by_role("link", name=re.compile("Conversations")).click()
        page.get_by_role("link", name=re.compile("Deploy")).click()
        stream = page.get_by_role("log", name="Messages")
        expect(stream.get_by_text("Deploying to staging.")).to_be_visible(timeout=DEADLINE * 1000)
        expect(page.locator(".task-chip").first).to_contain_text("Succeeded")
    finally:
        context.close()
    assert direct_tools.stop() == 0
    assert TOKEN not in direct_tools.stderr.read_text(errors="replace")
