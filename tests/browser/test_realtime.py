"""The one WebSocket: a dropped connection shows the offline banner, comes back by itself with
backoff, and resumes from the last sequence — the page is never reloaded."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import Hub, HubProcess, screenshot, start_task


def test_the_page_resumes_after_the_hub_restarts_without_a_reload(
    new_context: Any, make_person: Any, hub_process: HubProcess
) -> None:
    here = Hub(hub_process.url, hub_process.log, hub_process.home)
    person = make_person("Ana", on=here)
    agent = person.pair_agent("builder")
    started = start_task(person, agent, approval=False)
    page = new_context(person=person).new_page()
    page.goto(f"/tasks?task={started.task_id}")
    detail = page.get_by_role("complementary")
    progress = detail.get_by_role("progressbar", name="Task progress")
    expect(progress).to_have_attribute("aria-valuenow", "30")
    page.evaluate("() => { window.__sameDocument = true; }")

    # The hub goes away: the socket drops and the page says so.
    agent.disconnect()
    hub_process.stop()
    banner = page.get_by_test_id("offline-banner")
    expect(banner).to_contain_text("Reconnecting to the hub")
    screenshot(page, "offline-banner")

    # It comes back; the agent reports progress before the page has reconnected, and the page
    # catches up from its last sequence on its own.
    hub_process.start()
    agent.connect()
    agent.call(
        "task.status_changed",
        {"status": "running", "progress": 65, "summary": "Back after the restart"},
        task_id=started.task_id,
    )
    expect(banner).to_have_count(0)
    expect(progress).to_have_attribute("aria-valuenow", "65")
    expect(detail.locator(".td-summary")).to_have_text("Back after the restart")
    assert page.evaluate("() => window.__sameDocument === true"), "the page was reloaded"
