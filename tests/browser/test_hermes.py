"""Hermes Agent (the real package, through the LineUp plugin) in Chromium: Ana writes to it in
a conversation, its streamed reply shows, and she answers its dangerous-command approval on
the card in the page; the command runs and Hermes's answer shows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Hub, screenshot
from tests.e2e.hermes import GREETING, HERMES_VENV, HermesGateway, chores
from tests.e2e.scripted_model import ScriptedModel
from tests.support.waiting import until

pytestmark = pytest.mark.skipif(
    not (HERMES_VENV / "bin" / "hermes").exists(),
    reason=f"Hermes Agent is not installed in {HERMES_VENV} (make hermes-venv)",
)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    directory = tmp_path / "scratch"
    directory.mkdir()
    return directory


@pytest.fixture
def gateway(tmp_path: Path, scratch: Path) -> Iterator[HermesGateway]:
    with ScriptedModel(chores(scratch)) as model:
        running = HermesGateway(tmp_path / "hermes", model.base_url)
        running.home.mkdir()
        try:
            yield running
        finally:
            running.stop()
            print(running.tail())  # shown when the test fails


def test_a_hermes_approval_is_answered_on_its_card_in_the_browser(
    hub: Hub, new_context: Any, make_person: Any, gateway: HermesGateway, scratch: Path
) -> None:
    ana = make_person("Ana")
    gateway.install(hub.url, ana.send("/pairing-codes", {}, 201)["code"])
    gateway.start()

    def online() -> dict[str, Any] | None:
        agents = ana.read("/agents")["agents"]
        return agents[0] if agents and agents[0]["status"] == "online" else None

    agent = until(online, "Hermes to come online in LineUp", timeout=30)
    ana.confirm_agent(agent["id"])
    chat = ana.send("/conversations", {"title": "Chores", "agentIds": [agent["id"]]}, 201)["id"]

    page = new_context(person=ana).new_page()
    page.goto(f"/conversations/{chat}")
    # the composer addresses the conversation's agent once the page has loaded it
    expect(page.get_by_role("combobox", name="To")).to_have_value(agent["id"])
    page.get_by_label("Message", exact=True).fill("hello there")
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_text("".join(GREETING))).to_be_visible(timeout=30_000)

    page.get_by_label("Message", exact=True).fill("please clean the scratch directory")
    page.get_by_role("button", name="Send").click()
    allow = page.get_by_role("button", name="Allow once")
    expect(allow).to_be_visible(timeout=30_000)
    page.get_by_text("Details", exact=True).click()
    expect(page.locator("dd").filter(has_text=f"rm -rf {scratch}")).to_be_visible()
    screenshot(page, "hermes-approval")
    assert scratch.exists(), "the command waits for Ana"
    allow.click()

    expect(page.get_by_text("Cleaned the scratch directory.")).to_be_visible(timeout=30_000)
    assert not scratch.exists(), "the approved command ran"
    assert not gateway.network_log.exists(), gateway.network_log.read_text()
