"""The web app under the hub's Content-Security-Policy: it loads, works live, keeps its saved
theme before first paint (the theme script is a file, not inline), and breaks no rule."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import start_task


def test_the_app_runs_under_its_content_security_policy_without_violations(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    context = new_context(person=person)
    page = context.new_page()
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    response = page.goto("/inbox")
    assert response is not None
    assert "frame-ancestors 'none'" in response.headers["content-security-policy"]

    # the live socket works: a card an agent asks for appears without a reload
    started = start_task(person, agent)
    card = page.locator(f"[data-interaction-id='{started.interaction_id}']")
    expect(card).to_be_visible()

    # the saved theme is applied by /theme.js before the app starts
    page.evaluate("localStorage.setItem('lineup.theme', 'dark')")
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    assert violations == []
