"""Raw events on demand: a task, a message and a request card each open the recorded events
behind them — ids, sequences, types and payloads — and keep them folded away until asked."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import start_task


def test_a_task_a_message_and_a_card_show_the_events_behind_them(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    started = start_task(person, agent, "Refresh the landing page")
    recorded = person.read(f"/raw-events?subject=task:{started.task_id}")["events"]
    page = new_context(person=person).new_page()

    # The task's detail: closed by default, then every event with its sequence and id.
    page.goto(f"/tasks?task={started.task_id}")
    detail = page.locator(f".task-detail[data-task-id='{started.task_id}']")
    show = detail.get_by_role("button", name="Show events of this task")
    expect(show).to_have_attribute("aria-expanded", "false")
    expect(detail.locator(".raw-event")).to_have_count(0)
    show.click()
    listed = detail.get_by_role("list", name="Events of this task").locator(".raw-event")
    expect(listed).to_have_count(len(recorded))
    first = listed.first
    expect(first).to_have_attribute("data-sequence", str(recorded[0]["sequence"]))
    expect(first).to_contain_text(f"#{recorded[0]['sequence']}")
    expect(first).to_contain_text(recorded[0]["type"])
    expect(first).to_contain_text(recorded[0]["id"])
    expect(first.locator("pre")).to_contain_text(f'"taskId": "{started.task_id}"')
    font = first.locator("pre").evaluate("pre => getComputedStyle(pre).fontFamily")
    assert "mono" in font.lower(), font
    shown = listed.evaluate_all("items => items.map(li => Number(li.dataset.sequence))")
    assert shown == [e["sequence"] for e in recorded]
    detail.get_by_role("button", name="Hide events of this task").click()
    expect(detail.locator(".raw-event")).to_have_count(0)

    # A message of the conversation: the one event that made it.
    messages = person.read(f"/conversations/{started.conversation_id}/messages")["messages"]
    message = messages[0]
    page.goto(f"/conversations/{started.conversation_id}")
    bubble = page.locator(f"[data-message-id='{message['id']}']")
    bubble.get_by_role("button", name="Show events of this message").click()
    (event,) = person.read(f"/raw-events?subject=message:{message['id']}")["events"]
    item = bubble.locator(".raw-event")
    expect(item).to_have_count(1)
    expect(item).to_contain_text("message.created")
    expect(item).to_have_attribute("data-sequence", str(message["sequence"]))
    expect(item).to_contain_text(event["id"])

    # A request card in the inbox: asked, then answered, both shown.
    page.goto("/inbox")
    card = page.locator(f"[data-interaction-id='{started.interaction_id}']")
    card.get_by_role("button", name="Approve").click()
    expect(card).to_have_attribute("data-status", "resolved")
    card.get_by_role("button", name="Show events of this request").click()
    types = card.locator(".raw-event .raw-event-type")
    expect(types).to_have_text(["interaction.requested", "interaction.resolved"])
