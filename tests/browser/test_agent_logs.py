"""The Agents screen answers "why was my agent offline" without a terminal: an SDK agent that
could not reach the hub at first shows those failed attempts, then its connection, in its
diagnostic logs — on a desktop and on a phone — and the fields it marked sensitive folded
open show no secret."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from lineup.sdk import Agent, AgentConfig, Backoff, TaskContext, WebSocketTransport
from lineup.sdk._transport import Connection
from tests.browser.agent import redeem
from tests.browser.conftest import PHONE, Person, axe_violations, screenshot

API_KEY = "sk-live-9z8y7x6w5v"


class FailingFirst(WebSocketTransport):
    """The real WebSocket transport; the first attempts go to a port nobody listens on."""

    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    async def connect(self, url: str, headers: Mapping[str, str]) -> Connection:
        if self.failures > 0:
            self.failures -= 1
            return await super().connect("ws://127.0.0.1:9/ws/agent", headers)
        return await super().connect(url, headers)


@pytest.fixture
def sdk_agent(make_person: Any, tmp_path: Path) -> Iterator[tuple[Person, Agent]]:
    person: Person = make_person("Ana")
    code = person.send("/pairing-codes", {}, 201)["code"]
    pairing = redeem(person.hub_url, code, "builder")
    person.confirm_agent(pairing.agent_id)
    config = AgentConfig(
        hub_url=person.hub_url,
        websocket_url=pairing.websocket_url,
        agent_id=pairing.agent_id,
        workspace_id=pairing.workspace_id,
        credential=pairing.credential,
    )
    agent = Agent(
        config,
        name="builder",
        state_dir=tmp_path / "state",
        backoff=Backoff(initial=0.05, maximum=0.1),
        transport=FailingFirst(2),
        sensitive_fields=("api_key",),
        diagnostics_interval=0.2,
    )

    @agent.task
    async def handle(ctx: TaskContext) -> str:
        logging.getLogger("lineup.sdk").warning(
            "the model refused the key", extra={"api_key": API_KEY, "model": "m1"}
        )
        return "done"

    loop = asyncio.new_event_loop()
    running = threading.Thread(target=loop.run_until_complete, args=(agent.run(),), daemon=True)
    running.start()
    try:
        yield person, agent
    finally:
        loop.call_soon_threadsafe(agent.stop)
        running.join(timeout=15)
        loop.close()


def test_the_agents_screen_shows_why_the_agent_was_offline(
    new_context: Any, sdk_agent: tuple[Person, Agent]
) -> None:
    person, agent = sdk_agent
    page = new_context(person=person).new_page()
    page.goto(f"/agents/{agent.config.agent_id}")
    expect(page.get_by_role("heading", name="builder", level=1)).to_be_visible()
    expect(page.get_by_role("heading", name="Diagnostic logs")).to_be_visible()
    lines = page.get_by_role("list", name="Diagnostic log lines")
    page.get_by_role("button", name="Refresh").click()
    expect(lines.get_by_role("listitem").filter(has_text="connected to")).to_have_count(1)
    failed = lines.get_by_role("listitem").filter(has_text="cannot reach the hub")
    expect(failed).to_have_count(2)
    expect(failed.first).to_contain_text("Warning")
    expect(failed.first).to_contain_text("lineup.sdk")
    # the connection history sits beside them
    expect(page.locator(".diagnostics .timeline")).to_be_visible()

    person.send("/tasks", {"title": "Call the model", "targetAgentId": agent.config.agent_id}, 201)
    refused = lines.get_by_role("listitem").filter(has_text="the model refused the key")
    page.get_by_role("button", name="Refresh").click()
    expect(refused).to_have_count(1)
    refused.get_by_text("Fields").click()
    expect(refused.locator("pre")).to_contain_text('"api_key": "[redacted]"')
    expect(refused.locator("pre")).to_contain_text('"model": "m1"')
    assert API_KEY not in page.content()
    assert agent.config.credential not in page.content()
    assert axe_violations(page) == []
    screenshot(page, "agent-diagnostic-logs")

    phone = new_context(viewport=PHONE, person=person).new_page()
    phone.goto(f"/agents/{agent.config.agent_id}")
    first = phone.get_by_role("list", name="Diagnostic log lines").get_by_role("listitem").first
    expect(first).to_be_visible()
    box = first.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    screenshot(phone, "agent-diagnostic-logs-phone")
