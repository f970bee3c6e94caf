"""A hosted engine asks before using one of its tools, and offers the input for editing (as
Claude Code does); on a phone the person changes the input as JSON — a mistake is caught on
the card before anything is sent — and allows it: the engine does it with the edited input,
and the card and the transcript say what happened. A message marked "Steer", sent while the
engine waits, goes into that very turn. Driven by the fake engine, hosted by the
session's hub (``LINEUP_ENGINE_FAKE``)."""

from __future__ import annotations

import json
from typing import Any

from playwright.sync_api import expect

from lineup.engines.fake_engine import EFFECTS_FILE
from tests.browser.agent import new_id
from tests.browser.conftest import PHONE, Hub, Person, screenshot
from tests.support.waiting import until


def test_a_phone_steers_the_turn_and_allows_a_tool_with_the_input_the_person_edited(
    new_context: Any, make_person: Any, hub: Hub
) -> None:
    person: Person = make_person("Ana")
    work = hub.home / new_id("work")
    work.mkdir()
    agent_id = person.send(
        "/hosted-agents",
        {
            "name": "Builder",
            "engine": "fake",
            "cwd": str(work),
            "model": {"api": "openai-chat", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"},
        },
        201,
    )["agentId"]
    until(
        lambda: any(
            a["id"] == agent_id and a["status"] == "online"
            for a in person.read("/agents")["agents"]
        ),
        "the hosted agent to be online",
    )
    conversation = person.send("/conversations", {"title": "Notes", "agentIds": [agent_id]}, 201)[
        "id"
    ]
    page = new_context(viewport=PHONE, person=person).new_page()
    page.goto(f"/conversations/{conversation}")
    proposed = {"path": "notes.txt", "text": "draft"}
    person.send(
        f"/conversations/{conversation}/messages",
        {"content": f"[approve-tool:write {json.dumps(proposed)}]", "targetAgentId": agent_id},
        201,
    )

    card = page.locator("article.icard-open")
    expect(card.get_by_role("heading", name="Let the engine use write?")).to_be_visible()
    expect(card.get_by_role("region", name="What it will do")).to_contain_text('"text": "draft"')
    page.get_by_role("textbox", name="Message").fill("Also: keep it short")
    page.get_by_label("Steer").check()
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_text("Also: keep it short", exact=True)).to_be_visible()
    card.get_by_role("button", name="Edit input").click()
    field = card.get_by_label("Input (JSON)")
    expect(field).to_be_focused()
    field.fill('{"path": "notes.txt", "text": ')  # half typed
    card.get_by_role("button", name="Allow with edits").click()
    expect(card.get_by_text("The input is not valid JSON", exact=False)).to_be_visible()
    expect(field).to_have_attribute("aria-invalid", "true")
    field.fill('{"path": "notes.txt", "text": "final"}')
    screenshot(page, "hosted-approval-edit-input-phone")
    card.get_by_role("button", name="Allow with edits").click()

    answered = page.locator("article[data-status='resolved']").filter(
        has_text="Let the engine use write?"
    )
    expect(answered.locator(".outcome-answer")).to_have_text("Allow with an edited input")
    edited = json.dumps({"path": "notes.txt", "text": "final"}, sort_keys=True)
    reply = page.get_by_text(f"ran write with {edited}", exact=False)
    expect(reply).to_be_visible()
    expect(reply).to_contain_text("steered: Also: keep it short")
    assert (work / EFFECTS_FILE).read_text() == f"write {edited}\n"
    transcript_context = page.locator("article[data-kind='context']").first
    expect(transcript_context).to_contain_text("The engine started with")
    screenshot(page, "hosted-approval-allowed-phone")
