"""Seed 001 §15, the MVP demo, through the web app in a real browser against the real hub.

Sign up → pair an agent from the Agents screen → a tracked task from a conversation → live
progress and a child task → close the browser, sign in again, everything is still there →
answer the approval from the Inbox with the keyboard only → the agent drops (lost connection
with its last heartbeat) and comes back → a streamed result message, an artifact, and a
succeeded task whose timeline tells the whole story.
"""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.agent import ScriptedAgent, new_id, redeem
from tests.browser.conftest import PASSWORD, Hub, axe_violations, screenshot, tab_to


def _nav(page: Page, name: str) -> None:
    page.get_by_role("navigation", name="Main").get_by_role("link", name=re.compile(name)).click()


def test_the_mvp_demo_runs_end_to_end_in_the_browser(new_context: Any, hub: Hub) -> None:
    email = f"{new_id('ana').lower()}@example.test"
    context = new_context()
    page = context.new_page()

    # --- sign up: the account comes with its first workspace --------------------------------
    page.goto("/")
    # a new hub opens on Create account; one with accounts (other tests') on Sign in
    expect(page).to_have_url(re.compile(r"/(signin|signup)$"))
    if page.url.endswith("/signin"):
        page.get_by_role("link", name="Create an account").click()
    page.get_by_label("Display name").fill("Ana")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("Workspace name (optional)").fill("Website team")
    page.get_by_role("button", name="Create account").click()
    expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()
    expect(page.get_by_text("No agents yet — Connect my agent to pair one")).to_be_visible()
    expect(page.get_by_test_id("agents-online")).to_have_text("No agents")

    # --- pair the agent from the Agents screen ------------------------------------------------
    _nav(page, "Agents")
    page.get_by_role("button", name="Connect my agent").first.click()
    code = page.get_by_test_id("pairing-code").inner_text().strip()
    assert re.fullmatch(r"[A-Z0-9-]{6,}", code), code
    expect(page.get_by_test_id("pairing-command")).to_contain_text(f"--code {code}")
    expect(page.get_by_test_id("pairing-countdown")).to_have_text(re.compile(r"^(10:00|9:\d\d)$"))
    screenshot(page, "agents-connect")

    agent = ScriptedAgent(redeem(hub.url, code, "builder"))
    agent.connect()
    try:
        _run_demo(page, agent, new_context, email)
    finally:
        agent.disconnect()


def _run_demo(page: Page, agent: ScriptedAgent, new_context: Any, email: str) -> None:
    # the person finishes the pairing: the agent's details, then Confirm
    expect(page.get_by_test_id("confirm-agent-name")).to_have_text("builder")
    page.get_by_role("button", name="Confirm agent").click()
    expect(page.get_by_text("builder is connected")).to_be_visible()
    # the used code stops counting down, and the next step is offered
    expect(page.get_by_test_id("pairing-used")).to_contain_text("Used by builder")
    expect(page.get_by_test_id("pairing-countdown")).to_have_count(0)
    expect(page.get_by_role("button", name="Start a conversation")).to_be_visible()
    page.get_by_role("button", name="Done").click()
    card = page.locator(f"[data-agent-id='{agent.pairing.agent_id}']")
    expect(card.get_by_text("Online", exact=True)).to_be_visible()
    expect(card).to_contain_text("python · 0.1.0")
    expect(page.get_by_test_id("agents-online")).to_have_text("1 of 1 agent online")
    screenshot(page, "agents")

    # --- a conversation, and a message tracked as a task -------------------------------------
    _nav(page, "Conversations")
    expect(page.get_by_text("No conversations yet")).to_be_visible()
    page.get_by_role("button", name="New conversation").first.click()
    page.get_by_label("Title").fill("Website refresh")
    expect(page.get_by_role("checkbox", name=re.compile("builder"))).to_be_checked()
    page.get_by_role("button", name="Create conversation").click()
    expect(page.get_by_role("heading", name="Website refresh")).to_be_visible()

    page.get_by_label("Message", exact=True).fill(
        "Analyse the current pages and propose improvements"
    )
    expect(page.get_by_label("To")).to_have_value(agent.pairing.agent_id)
    page.get_by_label("Track as task").check()
    page.get_by_role("button", name="Send").click()
    stream = page.get_by_role("log", name="Messages")
    expect(stream.get_by_text("Analyse the current pages and propose improvements")).to_be_visible()

    # --- the agent works: progress and a child task appear live ------------------------------
    assigned = agent.next_downlink("task.assigned")
    task_id = assigned["payload"]["taskId"]
    assert assigned["payload"]["title"] == "Analyse the current pages and propose improvements"
    chip = page.locator(f".task-chip[data-task-id='{task_id}']")
    expect(chip).to_contain_text("Queued")
    agent.call("task.accepted", {"taskId": task_id}, task_id=task_id)
    agent.call(
        "task.status_changed",
        {"status": "running", "progress": 10, "summary": "Reading the brief"},
        task_id=task_id,
    )
    expect(chip).to_contain_text("Running")
    expect(chip).to_contain_text("10%")
    chip.get_by_role("link", name="Open task").click()
    detail = page.get_by_role("complementary")
    expect(detail.get_by_role("heading", level=2)).to_have_text(
        "Analyse the current pages and propose improvements"
    )
    progress = detail.get_by_role("progressbar", name="Task progress")
    expect(progress).to_have_attribute("aria-valuenow", "10")

    child_id = new_id("task")
    agent.call(
        "task.child_created",
        {
            "parentTaskId": task_id,
            "childTaskId": child_id,
            "title": "Scan the repository",
            "status": "running",
        },
        task_id=task_id,
    )
    agent.call(
        "task.status_changed",
        {"status": "running", "progress": 40, "summary": "Scanning the repository"},
        task_id=task_id,
    )
    expect(progress).to_have_attribute("aria-valuenow", "40")
    expect(detail.locator(".td-summary")).to_have_text("Scanning the repository")
    children = detail.locator(".child-list")
    expect(children.get_by_text("Scan the repository")).to_be_visible()
    expect(children).to_contain_text("Running")
    screenshot(page, "conversation")

    # --- the agent asks for an approval -------------------------------------------------------
    interaction_id = new_id("int")
    agent.call(
        "interaction.requested",
        {
            "interaction": {
                "id": interaction_id,
                "type": "approval",
                "title": "Install 3 development dependencies?",
                "why": "The audit needs a linter, a test runner and a bundler plugin.",
                "impact": "Changes package.json and the lock file; nothing is deployed.",
                "risk": "high",
                "details": {"packages": ["eslint", "vitest", "vite-plugin-inspect"]},
            }
        },
        task_id=task_id,
    )
    expect(page.get_by_test_id("topbar-inbox")).to_have_attribute("aria-label", "Inbox, 1 unread")
    expect(detail).to_contain_text("Waiting for you")

    # --- close the browser; a new one signs in and finds everything ---------------------------
    page.context.close()
    context = new_context()
    page = context.new_page()
    page.goto("/inbox")
    expect(page).to_have_url(re.compile(r"/signin"))
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(r"/inbox"))
    approval = page.locator(f"[data-interaction-id='{interaction_id}']")
    expect(
        approval.get_by_role("heading", name="Install 3 development dependencies?")
    ).to_be_visible()
    expect(approval.get_by_text("High risk")).to_be_visible()
    expect(page.get_by_test_id("topbar-inbox")).to_have_attribute("aria-label", "Inbox, 1 unread")
    screenshot(page, "inbox")
    assert axe_violations(page) == []

    _nav(page, "Conversations")
    page.get_by_role("link", name=re.compile("Website refresh")).click()
    stream = page.get_by_role("log", name="Messages")
    expect(stream.get_by_text("Analyse the current pages and propose improvements")).to_be_visible()
    expect(page.locator(f".task-chip[data-task-id='{task_id}']")).to_contain_text("40%")

    # --- answer from the Inbox with the keyboard only -----------------------------------------
    _nav(page, "Inbox")
    approval = page.locator(f"[data-interaction-id='{interaction_id}']")
    expect(approval).to_be_visible()
    page.locator("body").focus()
    tab_to(page, "Approve")
    page.keyboard.press("Enter")
    outcome = approval.get_by_role("region", name="Outcome")
    expect(outcome).to_contain_text("Ana answered")
    expect(outcome).to_contain_text("Approve")
    expect(approval.get_by_role("button", name="Approve")).to_have_count(0)
    resolved = agent.next_downlink("interaction.resolved")
    assert resolved["payload"]["interactionId"] == interaction_id
    assert resolved["payload"]["response"] == {"optionId": "approve"}
    expect(page.get_by_test_id("topbar-inbox")).to_have_attribute(
        "aria-label", "Inbox, nothing unread"
    )
    agent.call(
        "task.status_changed",
        {"status": "running", "progress": 70, "summary": "Installing the dependencies"},
        task_id=task_id,
    )

    # --- the agent drops: lost connection with the last heartbeat; then it comes back ----------
    _nav(page, "Tasks")
    page.locator(f"a[data-task-id='{task_id}']").click()
    detail = page.get_by_role("complementary")
    expect(detail.get_by_role("progressbar", name="Task progress")).to_have_attribute(
        "aria-valuenow", "70"
    )
    agent.disconnect()
    lost = detail.get_by_role("status").filter(has_text="Agent connection lost")
    expect(lost).to_contain_text(
        re.compile(r"Lost at \d\d:\d\d:\d\d \(.*\); last heartbeat \d\d:\d\d:\d\d")
    )
    expect(detail.get_by_text("Agent connection lost", exact=True).first).to_be_visible()
    expect(page.get_by_test_id("agents-online")).to_have_text("0 of 1 agent online")
    screenshot(page, "task-detail-connection-lost")

    agent.connect()
    expect(page.get_by_test_id("agents-online")).to_have_text("1 of 1 agent online")
    expect(lost).to_have_count(0)
    expect(detail.get_by_text("Running", exact=True).first).to_be_visible()

    # --- the result: streamed text, the final message, an artifact, success -------------------
    _nav(page, "Conversations")
    page.get_by_role("link", name=re.compile("Website refresh")).click()
    stream = page.get_by_role("log", name="Messages")
    message_id = new_id("msg")
    for piece in ["Done: ", "3 pages improved, ", "1 dependency removed."]:
        agent.send_delta(message_id, piece, task_id=task_id)
    streaming = page.locator(f"[data-streaming-id='{message_id}']")
    expect(streaming).to_contain_text("Done: 3 pages improved, 1 dependency removed.")
    agent.call(
        "message.create",
        {"messageId": message_id, "content": "Done: 3 pages improved, 1 dependency removed."},
        task_id=task_id,
    )
    final = page.locator(f"[data-message-id='{message_id}']")
    expect(final).to_contain_text("Done: 3 pages improved, 1 dependency removed.")
    expect(streaming).to_have_count(0)
    agent.call(
        "artifact.created",
        {
            "name": "improvements.md",
            "url": "https://example.test/improvements.md",
            "mimeType": "text/markdown",
            "summary": "The proposed changes, page by page",
        },
        task_id=task_id,
    )
    agent.call("task.status_changed", {"status": "succeeded", "progress": 100}, task_id=child_id)
    agent.call(
        "task.status_changed",
        {"status": "succeeded", "progress": 100, "summary": "3 pages improved"},
        task_id=task_id,
    )
    artifact = stream.get_by_role("link", name=re.compile("improvements.md"))
    expect(artifact).to_have_attribute("href", "https://example.test/improvements.md")
    expect(page.locator(f".task-chip[data-task-id='{task_id}']")).to_contain_text("Succeeded")
    screenshot(page, "conversation-done")

    page.locator(f".task-chip[data-task-id='{task_id}']").get_by_role(
        "link", name="Open task"
    ).click()
    detail = page.get_by_role("complementary")
    expect(detail.locator(".td-status")).to_contain_text("Succeeded")
    expect(detail.get_by_role("link", name=re.compile("improvements.md"))).to_be_visible()
    expect(detail.locator(".child-list")).to_contain_text("Succeeded")
    timeline = detail.locator(".timeline")
    for line in [
        "You created the task",
        "builder accepted the task",
        "builder added a child task “Scan the repository”",
        "builder asked for an approval: “Install 3 development dependencies?”",
        "Ana answered: Approve",
        "builder produced “improvements.md”",
        "builder reported succeeded, 100% — 3 pages improved",
    ]:
        expect(timeline).to_contain_text(line)
    screenshot(page, "task-detail")

    # --- the agent's diagnostics show the drop and the return --------------------------------
    _nav(page, "Agents")
    page.get_by_role("link", name="builder").click()
    history = page.locator(".diagnostics .timeline")
    expect(history).to_contain_text("Paired as “builder”")
    expect(history).to_contain_text(re.compile(r"Went offline — last heartbeat \d\d:\d\d:\d\d"))
    expect(history.get_by_text("Connected (python 0.1.0)")).to_have_count(2)
    screenshot(page, "agent-detail")

    _nav(page, "Tasks")
    expect(page.get_by_role("tab", name="All")).to_have_attribute("aria-selected", "true")
    page.get_by_role("tab", name="Done & cancelled").click()
    expect(page.locator(f"a[data-task-id='{task_id}']")).to_contain_text("Succeeded")
    screenshot(page, "tasks")

    _nav(page, "Settings")
    expect(page.get_by_role("group", name="Tell me when")).to_be_visible()
    expect(page.get_by_text(email)).to_have_count(2)
    screenshot(page, "settings")
    page.locator("label.segment", has_text="Dark").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(page.get_by_role("radio", name="Dark")).to_be_checked()
    screenshot(page, "settings-dark")
    page.locator("label.segment", has_text="Match system").click()
    expect(page.locator("html")).not_to_have_attribute("data-theme", "dark")
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    screenshot(page, "signin")
