"""Steering from the web app: cancel a task (requested until the agent confirms), rename an
agent, revoke it after a confirmation."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import screenshot, start_task


def test_cancel_shows_requested_until_the_agent_confirms(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    started = start_task(person, agent, approval=False)
    page = new_context(person=person).new_page()
    page.goto(f"/tasks?status=running&task={started.task_id}")
    detail = page.get_by_role("complementary")
    expect(page.get_by_role("tab", name="Running")).to_have_attribute("aria-selected", "true")

    detail.get_by_role("button", name="Cancel task").click()
    detail.get_by_role("button", name="Yes, cancel task").click()
    expect(detail.get_by_text("Cancel requested", exact=True).first).to_be_visible()
    expect(detail.get_by_role("button", name="Cancel task")).to_have_count(0)
    asked = agent.next_downlink("task.cancel_requested")
    assert asked["payload"]["taskId"] == started.task_id
    row = page.locator(f"a[data-task-id='{started.task_id}']")
    expect(row).to_contain_text("Cancel requested")
    screenshot(page, "task-cancel-requested")

    agent.call("task.status_changed", {"status": "cancelled"}, task_id=started.task_id)
    expect(detail.locator(".td-status")).to_have_text("Cancelled")
    expect(detail.locator(".timeline")).to_contain_text("You asked the agent to stop")
    # The running tab no longer lists it; done & cancelled does.
    expect(row).to_have_count(0)
    page.get_by_role("tab", name="Running").focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="Done & cancelled")).to_be_focused()
    expect(page.locator(f"a[data-task-id='{started.task_id}']")).to_contain_text("Cancelled")


def test_an_agent_can_be_renamed_and_revoked(new_context: Any, make_person: Any) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    page = new_context(person=person).new_page()
    page.goto(f"/agents/{agent.pairing.agent_id}")
    expect(page.get_by_role("heading", name="builder", level=1)).to_be_visible()

    page.get_by_label("Name").fill("site-builder")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("heading", name="site-builder", level=1)).to_be_visible()
    expect(page.locator(".diagnostics .timeline")).to_contain_text("You renamed it “site-builder”")

    page.get_by_role("button", name="Revoke access").click()
    expect(page.get_by_role("group", name="Confirm revoke")).to_contain_text(
        "its credential never works again"
    )
    page.get_by_role("button", name="Yes, revoke site-builder").click()
    expect(page.locator(".agent-title").get_by_text("Revoked")).to_be_visible()
    expect(page.locator(".diagnostics .timeline")).to_contain_text("You revoked its access")
    expect(page.get_by_test_id("agents-online")).to_have_text("No agents")
    screenshot(page, "agent-revoked")

    page.get_by_role("link", name=re.compile("^Agents$")).first.click()
    expect(page.get_by_text("No agents yet — Connect my agent to pair one")).to_be_visible()
    expect(page.get_by_role("heading", name="Revoked")).to_be_visible()
