"""Cancelling a task withdraws its open approval: the card leaves every open inbox at once,
and a tab that missed the news has its late answer refused with the reason."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import WebSocketRoute, expect

from tests.browser.conftest import screenshot, start_task


def test_cancelling_a_task_takes_its_approval_off_the_inbox_and_refuses_a_late_answer(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    started = start_task(person, agent)
    card_selector = f"[data-interaction-id='{started.interaction_id}']"

    inbox = new_context(person=person).new_page()
    inbox.goto("/inbox")
    expect(inbox.locator(card_selector)).to_be_visible()
    expect(inbox.locator("#inbox-waiting .section-count")).to_have_text("1")

    # A second tab whose live updates never arrive: it still shows the card as open.
    stale = new_context(person=person).new_page()

    def silent(ws: WebSocketRoute) -> None:
        """Accept the app's socket and never send anything on it."""

    stale.route_web_socket("**/ws/client**", silent)
    stale.goto("/inbox")
    stale_card = stale.locator(card_selector)
    expect(stale_card.get_by_role("button", name="Approve")).to_be_visible()

    tasks = new_context(person=person).new_page()
    tasks.goto(f"/tasks?task={started.task_id}")
    detail = tasks.get_by_role("complementary")
    expect(detail.locator(card_selector)).to_be_visible()
    detail.get_by_role("button", name="Cancel task").click()
    detail.get_by_role("button", name="Yes, cancel task").click()

    # Live: the card leaves the inbox and the count drops; the task shows it withdrawn.
    expect(inbox.locator(card_selector)).to_have_count(0)
    expect(inbox.locator("#inbox-waiting .section-count")).to_have_text("0")
    withdrawn = detail.locator(card_selector)
    expect(withdrawn).to_have_attribute("data-status", "cancelled")
    expect(withdrawn).to_contain_text("Withdrawn because the task was cancelled")
    expect(detail.locator(".timeline")).to_contain_text("withdrawn: the task was cancelled")
    # the cancel waits for the agent, and the task says how long LineUp waits (10 min)
    pending = detail.get_by_role("status").filter(has_text="Cancel requested")
    expect(pending).to_contain_text("The task ends when the agent confirms")
    expect(pending.get_by_test_id("cancel-countdown")).to_have_text(
        re.compile(r"^(10:00|9:[0-5]\d)$")
    )
    told = agent.next_downlink("interaction.cancelled")
    assert told["payload"]["interactionId"] == started.interaction_id
    screenshot(tasks, "task-cancel-withdraws-approval")

    # The stale tab answers anyway: refused, and it says why.
    stale_card.get_by_role("button", name="Approve").click()
    outcome = stale_card.get_by_role("region", name="Outcome")
    expect(outcome).to_contain_text("Your answer was not recorded")
    expect(outcome).to_contain_text("withdrawn because its task was cancelled")
    expect(stale_card).to_have_attribute("data-status", "cancelled")
    assert person.read(f"/interactions/{started.interaction_id}")["status"] == "cancelled"
