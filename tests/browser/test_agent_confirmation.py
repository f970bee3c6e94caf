"""Pairing finishes with the person's confirmation (seed 001 §7.1), and an agent's settings
as a form (seed 001 §6), in a real browser against the real hub."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from tests.browser.agent import ScriptedAgent, redeem
from tests.browser.conftest import axe_violations, screenshot

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "model": {
            "type": "string",
            "title": "Model",
            "enum": ["small", "large"],
            "default": "small",
        },
        "retries": {
            "type": "integer",
            "title": "Retries",
            "minimum": 0,
            "maximum": 5,
            "default": 2,
        },
        "dryRun": {
            "type": "boolean",
            "title": "Dry run",
            "description": "Plan only, change nothing.",
        },
    },
}


def test_a_new_agent_is_shown_confirmed_under_a_new_name_and_then_takes_work(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    page = new_context(person=person).new_page()
    page.goto("/agents?connect=1")
    code = page.get_by_test_id("pairing-code").inner_text().strip()
    expect(page.get_by_role("status").filter(has_text="Waiting for your agent…")).to_be_visible()

    agent = ScriptedAgent(redeem(person.hub_url, code, "builder"))
    agent.connect()
    try:
        assert agent.welcome is not None and agent.welcome["payload"]["awaitingConfirmation"]
        # the agent's details, for the person to recognise
        confirm = page.get_by_role("region", name="Is this your agent?")
        expect(confirm.get_by_test_id("confirm-agent-name")).to_have_text("builder")
        expect(confirm).to_contain_text("0.1.0")
        expect(confirm).to_contain_text("python")
        expect(confirm).to_contain_text("tasks, code")
        expect(confirm).to_contain_text("connected, waiting for you")
        screenshot(page, "agents-confirm")
        assert axe_violations(page) == []
        # not offered as a partner for work until confirmed
        refused = person.post("/tasks", {"title": "early", "targetAgentId": agent.pairing.agent_id})
        assert refused.status_code == 409

        confirm.get_by_label("Agent name").fill("Site builder")
        confirm.get_by_role("button", name="Confirm agent").click()
        expect(page.get_by_text("Site builder is connected")).to_be_visible()
        news = agent.next_downlink("agent.confirmed")
        assert news["payload"]["name"] == "Site builder"

        task = person.send(
            "/tasks", {"title": "Now it works", "targetAgentId": agent.pairing.agent_id}, 201
        )
        assigned = agent.next_downlink("task.assigned")
        assert assigned["payload"]["taskId"] == task["task"]["id"]
        page.get_by_role("button", name="Done").click()
        card = page.locator(f"[data-agent-id='{agent.pairing.agent_id}']")
        expect(card).to_contain_text("Site builder")
        expect(card.get_by_text("Awaiting confirmation")).to_have_count(0)
    finally:
        agent.disconnect()


def test_a_stranger_agent_can_be_rejected_from_its_page(new_context: Any, make_person: Any) -> None:
    person = make_person("Ana")
    code = person.send("/pairing-codes", {}, 201)["code"]
    agent = ScriptedAgent(redeem(person.hub_url, code, "stranger"))
    agent.connect()
    try:
        page = new_context(person=person).new_page()
        page.goto("/agents")
        card = page.locator(f"[data-agent-id='{agent.pairing.agent_id}']")
        expect(card.get_by_text("Awaiting confirmation")).to_be_visible()
        card.get_by_role("link", name="stranger").click()
        page.get_by_role("button", name="Reject — not my agent").click()
        expect(page.get_by_text("No such agent in this workspace")).to_be_visible()
        assert person.get(f"/agents/{agent.pairing.agent_id}").status_code == 404
    finally:
        agent.disconnect()


def test_the_settings_form_saves_checked_values_that_reach_the_agent(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    code = person.send("/pairing-codes", {}, 201)["code"]
    agent = ScriptedAgent(redeem(person.hub_url, code, "builder"), hello={"settingsSchema": SCHEMA})
    person.confirm_agent(agent.pairing.agent_id)
    agent.connect()
    try:
        assert agent.welcome is not None
        assert agent.welcome["payload"]["settings"] == {"model": "small", "retries": 2}
        page = new_context(person=person).new_page()
        page.goto(f"/agents/{agent.pairing.agent_id}")
        form = page.get_by_role("form", name="Agent settings")
        expect(form.get_by_label("Model")).to_have_value("small")
        expect(form.get_by_label("Retries")).to_have_value("2")
        expect(form.get_by_label("Dry run")).not_to_be_checked()
        expect(form.get_by_text("Plan only, change nothing.")).to_be_visible()

        # a wrong value is refused next to its field
        form.get_by_label("Retries").fill("9")
        form.get_by_role("button", name="Save settings").click()
        expect(form.get_by_role("alert")).to_contain_text(re.compile("maximum of 5"))
        expect(form.get_by_label("Retries")).to_have_attribute("aria-invalid", "true")

        form.get_by_label("Retries").fill("4")
        form.get_by_label("Model").select_option("large")
        form.get_by_label("Dry run").check()
        form.get_by_role("button", name="Save settings").click()
        expect(form.get_by_role("status")).to_have_text("Saved — the agent has them.")
        screenshot(page, "agent-settings")
        assert axe_violations(page) == []
        live = agent.next_downlink("agent.settings")
        assert live["payload"]["values"] == {"model": "large", "retries": 4, "dryRun": True}

        agent.disconnect()
        again = ScriptedAgent(agent.pairing, hello={"settingsSchema": SCHEMA})
        welcome = again.connect()
        try:
            assert welcome["payload"]["settings"] == {
                "model": "large",
                "retries": 4,
                "dryRun": True,
            }
        finally:
            again.disconnect()
    finally:
        agent.disconnect()
