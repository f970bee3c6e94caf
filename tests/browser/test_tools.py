"""Agents use tools on the person's app through the real hub: each built-in tool is
called by an agent and answered through the real UI in Chromium — options clicked, text typed,
the calculator's answer seen, an agent-drawn canvas watched, undone, cleared and reloaded — and
a call made while no browser was open is answered after the browser was closed and reopened."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from lineup.protocol.builtin_tools import BUILTIN_DEFINITIONS
from tests.browser.agent import DEADLINE, ScriptedAgent, new_id, redeem
from tests.browser.conftest import Person, axe_violations, screenshot
from tests.support.envelopes import now_iso


def call_tool(
    agent: ScriptedAgent,
    name: str,
    action: str | None,
    arguments: dict[str, Any],
    *,
    conversation_id: str | None = None,
    call_id: str | None = None,
) -> str:
    """Send ``tool.call`` (in a conversation, if given); assert the hub acks it."""
    call_id = call_id or new_id("c")
    payload: dict[str, Any] = {"call_id": call_id, "name": name, "arguments": arguments}
    if action is not None:
        payload["action"] = action
    frame: dict[str, Any] = {
        "id": new_id("evt"),
        "type": "tool.call",
        "version": "0.1",
        "occurredAt": now_iso(),
        "workspaceId": agent.pairing.workspace_id,
        "payload": payload,
    }
    if conversation_id is not None:
        frame["conversationId"] = conversation_id
    assert agent.ws is not None
    agent.ws.send(json.dumps(frame))
    answer = agent._wait_answer(frame["id"])
    assert answer["type"] == "ack", answer
    return call_id


def result_of(agent: ScriptedAgent, call_id: str) -> dict[str, Any]:
    """The agent's downlink ``tool.result`` for ``call_id`` (others stay queued)."""
    held: list[dict[str, Any]] = []
    try:
        while True:
            frame = agent.next_downlink("tool.result")
            if frame["payload"]["call_id"] == call_id:
                return dict(frame["payload"])
            held.append(frame)
    finally:
        for frame in held:
            agent.downlink.put(frame)


def conversation(person: Person, agent: ScriptedAgent, title: str) -> str:
    body = person.send(
        "/conversations", {"title": title, "agentIds": [agent.pairing.agent_id]}, 201
    )
    return str(body["id"])


def tool_card(page: Page, tool: str) -> Any:
    return page.locator(f"article[data-tool='{tool}']")


def test_a_person_answers_choice_confirm_and_input_from_the_inbox(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    page = new_context(person=person).new_page()
    page.goto("/inbox")
    expect(page.get_by_role("heading", name="Inbox", level=1)).to_be_visible()

    choice = call_tool(
        agent,
        "choice",
        "select",
        {"question": "Deploy where?", "options": ["test", "staging", "production"]},
    )
    confirm = call_tool(agent, "confirm", None, {"message": "Restart the web server?"})
    ask = call_tool(
        agent,
        "input",
        None,
        {"question": "Who should be told?", "format": "email", "placeholder": "name@example.com"},
    )
    cards = page.locator("article[data-tool]")
    expect(cards).to_have_count(3)
    expect(page.locator(".inbox .page-sub")).to_have_text("3 requests need your decision.")
    assert axe_violations(page) == []
    screenshot(page, "tools-inbox")

    tool_card(page, "choice").get_by_role("button", name="staging").click()
    expect(tool_card(page, "choice").locator(".outcome-answer")).to_have_text("staging")
    assert result_of(agent, choice) == {
        "call_id": choice,
        "name": "choice",
        "action": "select",
        "result": {"message": "staging", "index": 1},
    }

    tool_card(page, "confirm").get_by_role("button", name="Yes").click()
    expect(tool_card(page, "confirm").get_by_text("Answered", exact=True)).to_be_visible()
    expect(tool_card(page, "confirm").locator(".outcome-answer")).to_have_text("Yes")
    assert result_of(agent, confirm)["result"] == {"message": "yes", "confirmed": True}

    field = tool_card(page, "input").get_by_label("Your answer")
    field.fill("bo at example")
    field.press("Enter")
    expect(tool_card(page, "input").get_by_role("alert")).to_contain_text("Enter an email address")
    field.fill("bo@example.test")
    field.press("Enter")
    expect(tool_card(page, "input").locator(".outcome-answer")).to_have_text("bo@example.test")
    assert result_of(agent, ask)["result"] == {"message": "bo@example.test"}
    expect(page.locator(".inbox .page-sub")).to_have_text("Nothing needs you right now.")
    screenshot(page, "tools-inbox-answered")


def test_the_calculator_answers_by_itself_and_shows_the_computation(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    conv = conversation(person, agent, "Numbers")
    page = new_context(person=person).new_page()
    page.goto(f"/conversations/{conv}")
    expect(page.get_by_role("heading", name="Numbers", level=1)).to_be_visible()

    add = call_tool(agent, "calculator", "add", {"a": 2, "b": 3}, conversation_id=conv)
    assert result_of(agent, add)["result"] == {"message": "5", "value": 5}
    card = tool_card(page, "calculator")
    expect(card.locator(".outcome-answer")).to_have_text("2 + 3 = 5")
    expect(card).to_contain_text("answered automatically")

    divide = call_tool(agent, "calculator", "divide", {"a": 1, "b": 0}, conversation_id=conv)
    assert result_of(agent, divide)["error"] == {
        "code": "invalid_argument",
        "message": "Cannot divide by zero.",
    }
    expect(tool_card(page, "calculator").nth(1)).to_contain_text("Cannot divide by zero.")
    expect(tool_card(page, "calculator").nth(1).get_by_text("Error", exact=True)).to_be_visible()
    screenshot(page, "tools-calculator")


def _strokes(page: Page, instance: str) -> Any:
    return page.locator(f"[data-canvas-id='{instance}'] [data-testid='canvas-stroke']")


def test_an_agent_drawn_canvas_appears_undo_and_clear_show_live_and_a_reload_keeps_it(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("painter")
    conv = conversation(person, agent, "Sketch")
    page = new_context(person=person).new_page()
    page.goto(f"/conversations/{conv}")
    expect(page.get_by_role("heading", name="Sketch", level=1)).to_be_visible()

    opened = call_tool(agent, "canvas", "open", {"width": 400, "height": 300}, conversation_id=conv)
    result = result_of(agent, opened)["result"]
    instance = result["instance_id"]
    assert result["message"] == f"instance_id: {instance}"

    def canvas(action: str, **arguments: Any) -> dict[str, Any]:
        call = call_tool(
            agent,
            "canvas",
            action,
            {"instance_id": instance, **arguments},
            conversation_id=conv,
        )
        return result_of(agent, call)

    canvas("draw", path="M20 20 L200 150", color="red", width=4)
    canvas("draw", path="M50 250 Q 200 50 350 250", color="#1060e0", width=6)
    strokes = _strokes(page, instance)
    expect(strokes).to_have_count(2)
    expect(strokes.nth(0)).to_have_attribute("d", "M20 20 L200 150")
    expect(strokes.nth(0)).to_have_attribute("stroke", "red")
    expect(strokes.nth(1)).to_have_attribute("stroke-width", "6")
    expect(page.get_by_role("img", name="Canvas 400 by 300, 2 strokes")).to_be_visible()
    screenshot(page, "tools-canvas")

    assert canvas("undo")["result"]["message"] == "undone"
    expect(strokes).to_have_count(1)
    canvas("clear")
    expect(strokes).to_have_count(0)
    canvas("undo")  # undoing the clear brings its stroke back
    expect(strokes).to_have_count(1)

    page.reload()
    expect(_strokes(page, instance)).to_have_count(1)
    expect(_strokes(page, instance).first).to_have_attribute("d", "M20 20 L200 150")
    other = new_context(person=person).new_page()
    other.goto(f"/conversations/{conv}")
    expect(_strokes(other, instance)).to_have_count(1)

    canvas("close")
    card = page.locator(f"[data-canvas-card='{instance}']")
    expect(card.get_by_text("Closed", exact=True)).to_be_visible()
    other_card = other.locator(f"[data-canvas-card='{instance}']")
    expect(other_card.get_by_text("Closed", exact=True)).to_be_visible()


def test_a_call_made_with_no_browser_open_is_answered_after_the_browser_was_closed_and_reopened(
    new_context: Any, make_person: Any
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    asked = call_tool(
        agent,
        "choice",
        None,
        {"question": "Which release name?", "options": ["Aurora", "Borealis"]},
    )
    agent.disconnect()  # the agent goes away too; the answer must still reach it

    first = new_context(person=person)
    page = first.new_page()
    page.goto("/inbox")
    expect(tool_card(page, "choice")).to_contain_text("Which release name?")
    first.close()  # closed without answering

    page = new_context(person=person).new_page()
    page.goto("/inbox")
    card = tool_card(page, "choice")
    expect(card.get_by_text("Waiting for you", exact=True)).to_be_visible()
    card.get_by_role("button", name="Borealis").click()
    expect(card.locator(".outcome-answer")).to_have_text("Borealis")

    agent.connect()  # resumes from its last sequence: the result is replayed
    assert result_of(agent, asked)["result"] == {"message": "Borealis", "index": 1}


@pytest.fixture
def sdk_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop in a thread, for an SDK agent running beside the sync browser test."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="sdk-loop", daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=DEADLINE)
        loop.close()


def test_an_sdk_agent_lists_and_calls_the_tools_of_the_open_app(
    new_context: Any, make_person: Any, sdk_loop: asyncio.AbstractEventLoop, tmp_path: Any
) -> None:
    from lineup.sdk import Agent, AgentConfig

    person = make_person("Ana")
    code = person.send("/pairing-codes", {}, 201)["code"]
    pairing = redeem(person.hub_url, code, "sdk-agent")
    person.confirm_agent(pairing.agent_id)
    config = AgentConfig(
        hub_url=person.hub_url,
        websocket_url=pairing.websocket_url,
        agent_id=pairing.agent_id,
        workspace_id=pairing.workspace_id,
        credential=pairing.credential,
    )
    page = new_context(person=person).new_page()
    # The page registers this browser's tools with the hub: exactly the built-ins.
    with page.expect_response(
        lambda r: r.request.method == "PUT" and r.url.endswith("/tools")
    ) as registration:
        page.goto("/inbox")
    assert registration.value.status == 200
    devices = person.read("/tools")["devices"]
    assert [d["tools"] for d in devices] == [[d["name"] for d in BUILTIN_DEFINITIONS]]

    agent = Agent(config, state_dir=tmp_path / "sdk", heartbeat_interval=1.0)

    async def work() -> dict[str, Any]:
        async with agent:
            listed = await agent.tools.list()
            picked = await agent.tools.choice("Ship it?", ["now", "tomorrow"])
            product = await agent.tools.calculator.multiply(6, 7)
            return {"listed": listed, "picked": picked, "product": product}

    outcome: Future[dict[str, Any]] = asyncio.run_coroutine_threadsafe(work(), sdk_loop)
    card = tool_card(page, "choice")
    card.get_by_role("button", name="tomorrow").click()
    done = outcome.result(timeout=DEADLINE * 2)
    assert done["listed"] == list(BUILTIN_DEFINITIONS)
    assert done["picked"] == "tomorrow"
    assert done["product"] == 42
    # The page answered the calculator by itself (maybe before the inbox ever listed it).
    calls = {c["name"]: c for c in person.read("/tool-calls")["toolCalls"]}
    assert calls["calculator"]["status"] == "completed"
    assert calls["calculator"]["result"] == {"message": "42", "value": 42}
    assert calls["calculator"]["answeredByName"] == "Ana"
    assert calls["choice"]["answeredByName"] == "Ana"
