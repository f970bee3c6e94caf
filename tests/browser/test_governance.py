"""A governed write end to end on a phone: a person makes a project in Settings, allows the
scheduling capabilities for its owners and editors, and starts a conversation in it; an agent
previews a schedule of the in-tree scheduling provider's demo plant (a read: it runs at once)
and asks to publish it (a write: it waits); the person sees the confirm card — impact,
summary, target version — and approves with the keyboard; the agent hears accepted, then
succeeded with the published version; the run record shows the status and the audit entries
behind it."""

from __future__ import annotations

import re
from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import PHONE, axe_violations, screenshot, tab_to

PREVIEW = "scheduling.schedule.preview"
PUBLISH = "scheduling.schedule.publish"


def test_a_person_approves_a_scheduling_publish_on_a_phone_and_reads_its_run_record(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("planner")
    page = new_context(viewport=PHONE, person=person).new_page()

    # A project, made in Settings → Projects; its maker is its owner.
    page.goto("/settings/projects")
    page.get_by_role("button", name="New project").click()
    page.get_by_label("Name").fill("Plant 1 scheduling")
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_role("heading", name="Plant 1 scheduling")).to_be_visible()
    expect(page.get_by_role("list", name="Members")).to_contain_text("Ana")
    expect(page.get_by_role("list", name="Members")).to_contain_text("owner")

    # Its rule: scheduling.* allowed for owners and editors (the form's default roles).
    rules = page.get_by_role("form", name="Add a rule")
    rules.get_by_label("Capability").fill("scheduling.*")
    rules.get_by_role("button", name="Add rule").click()
    rule_list = page.get_by_role("list", name="Rules")
    expect(rule_list).to_contain_text("scheduling.*")
    expect(rule_list).to_contain_text("for owner, editor")
    screenshot(page, "governance-project")
    assert axe_violations(page) == []

    # A conversation in the project, with the one agent.
    page.goto("/conversations?new=1")
    page.get_by_label("Title").fill("Next week's plan")
    page.get_by_label("Project").select_option(label="Plant 1 scheduling")
    page.get_by_role("button", name="Create conversation").click()
    expect(page).to_have_url(re.compile(r"/conversations/[^/?]+$"))
    conversation_id = page.url.rstrip("/").split("/")[-1]
    expect(page.get_by_test_id("conversation-project")).to_have_text("Project: Plant 1 scheduling")

    # A read runs at once: the draft and the version it was made against.
    preview = agent.invoke(PREVIEW, {"horizonDays": 7}, conversation_id=conversation_id)
    previewed = agent.capability_result(preview)
    assert previewed["status"] == "succeeded", previewed
    draft_id = previewed["output"]["draftId"]
    based_on = previewed["output"]["basedOnVersion"]

    # A write waits for a person.
    publish = agent.invoke(
        PUBLISH, {"draftId": draft_id, "basedOnVersion": based_on}, conversation_id=conversation_id
    )
    waiting = agent.capability_result(publish)
    assert waiting["status"] == "waiting_for_approval", waiting
    approval_id = waiting["approvalId"]

    card = page.locator(f"[data-approval-id='{approval_id}']")
    expect(card).to_have_attribute("data-status", "pending")
    expect(card.get_by_role("region", name="Impact")).not_to_be_empty()
    expect(card.get_by_role("heading", level=3)).not_to_be_empty()
    expect(card.get_by_test_id("resource-version")).to_contain_text(str(based_on))
    expect(card).to_contain_text(PUBLISH)
    expect(card).to_contain_text(draft_id)
    expect(card).to_contain_text("Waits for any owner or editor of Plant 1 scheduling")
    expect(card).to_contain_text("Expires in")
    expect(card.get_by_text("Waiting for approval")).to_be_visible()
    # the card fits the phone: nothing sticks out sideways
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"the page scrolls sideways by {overflow}px"
    card.evaluate("e => e.scrollIntoView({block: 'start'})")
    screenshot(page, "governance-confirm-card-phone")
    assert axe_violations(page) == []

    # The inbox and the approval center say it waits.
    other = page.context.new_page()
    other.goto("/inbox")
    expect(other.get_by_test_id("inbox-approvals")).to_have_text("1 change waits for your approval")
    other.get_by_test_id("inbox-approvals").click()
    waiting_row = other.locator(f".approval-row[data-approval-id='{approval_id}']")
    expect(waiting_row).to_contain_text("Waiting for approval")
    expect(waiting_row).to_contain_text("Plant 1 scheduling")
    other.close()

    # The card in the dark theme passes axe too.
    dark = new_context(viewport=PHONE, person=person, color_scheme="dark").new_page()
    dark.goto(f"/conversations/{conversation_id}")
    expect(dark.locator(f"[data-approval-id='{approval_id}']")).to_be_visible()
    screenshot(dark, "governance-confirm-card-phone-dark")
    assert axe_violations(dark) == []
    dark.close()

    # keyboard only: Tab to Approve once, press Enter
    page.locator("body").focus()
    tab_to(page, "Approve once")
    page.keyboard.press("Enter")
    outcome = card.get_by_role("region", name="Outcome")
    expect(outcome).to_contain_text("Ana approved")

    accepted = agent.capability_result(publish, "accepted")
    assert accepted["executionId"], accepted
    finished = agent.capability_result(publish, "succeeded", timeout=30)
    published = finished["output"]["publishedVersion"]
    assert isinstance(published, int) and published > int(based_on), finished
    assert finished["executionId"] == accepted["executionId"]

    # The conversation shows the run.
    run = page.locator(f".run-row[data-execution-id='{finished['executionId']}']")
    expect(run).to_have_attribute("data-status", "succeeded")
    expect(run).to_contain_text("Done")
    screenshot(page, "governance-approved-phone")

    # The approval center lists it as done; its row opens the card, which leads to the record.
    page.goto("/approvals?view=done")
    row = page.locator(f".approval-row[data-approval-id='{approval_id}']")
    expect(row).to_contain_text("Approved")
    row.get_by_role("link").click()
    decided = page.locator(f"[data-approval-id='{approval_id}']")
    expect(decided).to_have_attribute("data-status", "approved")
    decided.get_by_role("link", name="Open the run record").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(PUBLISH)
    expect(page.get_by_test_id("run-status")).to_have_text("Done")
    expect(page.get_by_text("Ana", exact=True).first).to_be_visible()
    expect(page.locator("body")).to_contain_text(f'"publishedVersion": {published}')
    screenshot(page, "governance-run-record-phone")
    assert axe_violations(page) == []
    # The audit chain behind it: at least the approval's decision.
    audit = page.get_by_role("list", name="Audit entries")
    expect(audit.locator(".audit-entry").first).to_be_visible()
    expect(audit).to_contain_text("approval.decided")
