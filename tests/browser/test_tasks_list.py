"""The Tasks list follows the stream, puts children under their parent and what waits for the
person first."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import request_approval, start_task


def test_the_tasks_list_is_a_live_tree_with_what_waits_for_me_first(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    first = start_task(person, agent, "Refresh the landing page", approval=False)
    second = start_task(person, agent, "Rotate the logs", approval=False)
    page = new_context(person=person).new_page()
    page.goto("/tasks")
    rows = page.locator(".task-list > li")
    child = person.read(f"/tasks/{first.task_id}")["children"][0]

    # Newest first, each child right under its parent.
    expect(rows.locator("a[data-task-id]")).to_have_count(4)
    order = rows.locator("a[data-task-id]").evaluate_all(
        "links => links.map(a => a.dataset.taskId)"
    )
    assert order.index(first.task_id) + 1 == order.index(child["id"]), order
    assert order.index(second.task_id) < order.index(first.task_id), order
    child_row = page.locator(f"li:has(> a[data-task-id='{child['id']}'])")
    expect(child_row).to_have_attribute("data-depth", "1")

    # The older task asks for a decision: it moves to the top, live, with its child.
    page.evaluate("() => { window.__sameDocument = true; }")
    request_approval(agent, first.task_id)
    expect(rows.first.locator("a[data-task-id]")).to_have_attribute("data-task-id", first.task_id)
    expect(rows.first).to_contain_text("Waiting for you")

    # Progress shows as it is reported, without a reload.
    agent.call(
        "task.status_changed",
        {"status": "running", "progress": 80, "summary": "Almost there"},
        task_id=second.task_id,
    )
    expect(page.locator(f"a[data-task-id='{second.task_id}']")).to_contain_text("Almost there")
    assert page.evaluate("() => window.__sameDocument === true"), "the page was reloaded"


def test_an_answered_card_of_a_finished_task_still_names_its_task(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    started = start_task(person, agent, "Refresh the landing page")
    page = new_context(person=person).new_page()
    page.goto("/inbox")
    card = page.locator(f"[data-interaction-id='{started.interaction_id}']")
    card.get_by_role("button", name="Approve").click()
    expect(card).to_have_attribute("data-status", "resolved")
    agent.call("task.status_changed", {"status": "succeeded"}, task_id=started.task_id)
    expect(page.locator("#inbox-done + *")).to_contain_text("Refresh the landing page")
    context = card.locator(".icard-task")
    expect(context).to_contain_text("Task: Refresh the landing page")
    expect(context).not_to_contain_text("open the task")
