"""A phone (390×844): the inbox, the menu behind a button, the task drawer, and answering an
approval with the keyboard."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import PHONE, axe_violations, screenshot, start_task, tab_to


def test_a_phone_shows_the_inbox_and_answers_an_approval_with_the_keyboard(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    started = start_task(person, agent)
    page = new_context(viewport=PHONE, person=person).new_page()

    page.goto("/inbox")
    card = page.locator(f"[data-interaction-id='{started.interaction_id}']")
    expect(card.get_by_role("heading", name="Install 3 development dependencies?")).to_be_visible()
    # Under 640 px: no sidebar; the top bar keeps the unread count and who is online.
    expect(page.get_by_role("navigation", name="Main")).to_have_count(0)
    expect(page.get_by_test_id("topbar-inbox")).to_have_attribute("aria-label", "Inbox, 1 unread")
    expect(page.get_by_test_id("agents-online")).to_have_text("1 of 1 agent online")
    screenshot(page, "phone-inbox")
    assert axe_violations(page) == []

    # The menu opens as a dialog and Esc closes it.
    page.get_by_role("button", name="Open menu").click()
    menu = page.get_by_role("dialog", name="Menu")
    expect(menu.get_by_role("link", name=re.compile("Tasks"))).to_be_visible()
    screenshot(page, "phone-menu")
    page.keyboard.press("Escape")
    expect(menu).to_have_count(0)

    # The task detail is a drawer: a dialog that keeps focus inside and closes with Esc.
    card.get_by_role("link", name=re.compile("Refresh the landing page")).click()
    drawer = page.get_by_role("dialog", name="Task detail")
    expect(drawer.get_by_role("progressbar", name="Task progress")).to_have_attribute(
        "aria-valuenow", "30"
    )
    expect(drawer.locator(".child-list")).to_contain_text("Scan the repository")
    screenshot(page, "phone-task-drawer")
    for _ in range(40):
        page.keyboard.press("Tab")
        inside = page.evaluate("() => !!document.activeElement.closest('[role=dialog]')")
        assert inside, "focus left the drawer"
    page.keyboard.press("Escape")
    expect(drawer).to_have_count(0)

    # Answer with the keyboard only: Tab to Approve, press Space.
    page.locator("body").focus()
    tab_to(page, "Approve")
    page.keyboard.press("Space")
    outcome = card.get_by_role("region", name="Outcome")
    expect(outcome).to_contain_text("Ana answered")
    expect(outcome).to_contain_text("Approve")
    resolved = agent.next_downlink("interaction.resolved")
    assert resolved["payload"]["response"] == {"optionId": "approve"}
    expect(page.get_by_test_id("topbar-inbox")).to_have_attribute(
        "aria-label", "Inbox, nothing unread"
    )
    screenshot(page, "phone-answered")
