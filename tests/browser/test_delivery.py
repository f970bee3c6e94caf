"""An answer given while the agent is offline says it is queued, and says delivered once the
agent is back — without a reload."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import start_task


def test_an_answer_to_an_offline_agent_reads_queued_until_it_reconnects(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    started = start_task(person, agent)
    page = new_context(person=person).new_page()
    page.goto(f"/tasks?task={started.task_id}")
    detail = page.get_by_role("complementary")
    card = detail.locator(f"[data-interaction-id='{started.interaction_id}']")
    expect(card.get_by_role("button", name="Approve")).to_be_visible()

    agent.disconnect()
    expect(page.get_by_test_id("agents-online")).to_have_text("0 of 1 agent online")
    card.get_by_role("button", name="Approve").click()
    expect(card).to_contain_text("Queued — delivered when builder reconnects")

    agent.connect()
    expect(card).to_contain_text("Delivered to builder")
    answered = agent.next_downlink("interaction.resolved")
    assert answered["payload"]["interactionId"] == started.interaction_id
