"""axe-core on every main screen, in light and dark: no serious or critical violations."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import axe_violations, screenshot, start_task


def _check(page: Page, screen: str, scheme: str) -> None:
    violations = axe_violations(page)
    assert violations == [], f"{screen} ({scheme}): {violations}"
    screenshot(page, f"{screen}-{scheme}")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_main_screen_passes_axe(new_context: Any, make_person: Any, scheme: str) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    started = start_task(person, agent)
    page = new_context(person=person, color_scheme=scheme).new_page()

    page.goto("/inbox")
    expect(page.locator(f"[data-interaction-id='{started.interaction_id}']")).to_be_visible()
    _check(page, "a11y-inbox", scheme)

    page.goto(f"/conversations/{started.conversation_id}")
    expect(page.get_by_role("log", name="Messages")).to_contain_text("Refresh the landing page")
    _check(page, "a11y-conversation", scheme)

    page.goto("/tasks")
    expect(page.locator(f"a[data-task-id='{started.task_id}']")).to_be_visible()
    _check(page, "a11y-tasks", scheme)

    page.goto(f"/tasks?task={started.task_id}")
    expect(page.get_by_role("complementary").locator(".timeline")).to_contain_text("accepted")
    _check(page, "a11y-task-detail", scheme)

    page.goto("/agents")
    expect(page.get_by_test_id("agents-online")).to_have_text("1 of 1 agent online")
    _check(page, "a11y-agents", scheme)

    page.goto(f"/agents/{agent.pairing.agent_id}")
    expect(page.locator(".diagnostics .timeline")).to_contain_text("Connected")
    _check(page, "a11y-agent-detail", scheme)

    page.goto("/settings")
    expect(page.get_by_role("group", name="Tell me when")).to_be_visible()
    _check(page, "a11y-settings", scheme)

    signed_out = new_context(color_scheme=scheme).new_page()
    signed_out.goto("/inbox")
    expect(signed_out).to_have_url(re.compile(r"/signin"))
    expect(signed_out.get_by_role("heading", name="Sign in")).to_be_visible()
    _check(signed_out, "a11y-signin", scheme)
    signed_out.goto("/signup")
    expect(signed_out.get_by_role("heading", name="Create your account")).to_be_visible()
    _check(signed_out, "a11y-signup", scheme)
