"""Hosting an agent from the app, in Chromium on a desktop and on a phone: Ana picks the fake
engine (Codex is shown not installed, with the command that adds it), gives a name, a project,
a working directory — the hub's refusal of one outside the allowed roots shows on the field —
and a model endpoint with a key; the agent comes online, answers in a conversation of the
project with a streamed reply, shows its definition (never the key) on its page, and is
deleted there after a confirmation.

The hub is ``tests/browser/engine_hub.py``: ``lineup serve``'s composition with an engine
host whose engines are the fake one (a real subprocess) and a Codex with no program.
"""

from __future__ import annotations

import re
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import (
    DESKTOP,
    PHONE,
    REPO,
    Hub,
    HubProcess,
    _require_build,
    axe_violations,
    screenshot,
)

API_KEY = "sk-browser-5e2f7c90d1a84b36"
CODEX_HINT = "npm install -g @openai/codex@0.171.0"


@pytest.fixture(scope="module")
def workspace_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The one root engines may work in; a directory beside it is outside."""
    base = tmp_path_factory.mktemp("hosting")
    (base / "root").mkdir()
    (base / "elsewhere").mkdir()
    return base / "root"


@pytest.fixture(scope="module")
def engine_hub(tmp_path_factory: pytest.TempPathFactory, workspace_root: Path) -> Iterator[Hub]:
    _require_build()
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = HubProcess(
        tmp_path_factory.mktemp("engine-hub"),
        port,
        command=[sys.executable, "-m", "tests.browser.engine_hub"],
        env={"LINEUP_ENGINE_ROOTS": str(workspace_root), "PYTHONPATH": str(REPO)},
    )
    try:
        yield process.start()
    finally:
        process.stop()


def no_sideways_scroll(page: Page) -> None:
    width = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
    assert width <= 0, f"the page scrolls sideways by {width}px"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_an_agent_hosted_from_the_app_comes_online_answers_and_is_deleted(
    new_context: Any,
    make_person: Any,
    engine_hub: Hub,
    workspace_root: Path,
    viewport: dict[str, int],
) -> None:
    phone = viewport == PHONE
    shot = "phone" if phone else "desktop"
    ana = make_person("Ana", on=engine_hub)
    project = ana.send("/projects", {"name": "Website"}, 201)["id"]
    site = workspace_root / f"site-{shot}"
    site.mkdir()
    page = new_context(viewport=viewport, person=ana).new_page()

    # --- the form: engines, the roots, the project -------------------------------------------
    page.goto("/agents")
    page.get_by_role("button", name="Host an agent").first.click()
    form = page.get_by_role("form", name="Host an agent")
    fake = form.get_by_role("radio", name=re.compile("Fake engine"))
    expect(fake).to_be_checked()
    expect(fake).to_be_enabled()
    codex = form.get_by_role("radio", name=re.compile("Codex"))
    expect(codex).to_be_disabled()
    expect(codex).to_have_accessible_description("Not installed on this hub")
    expect(form.get_by_text(CODEX_HINT)).to_be_visible()
    expect(form.get_by_role("list", name="Allowed roots")).to_have_text(str(workspace_root))

    form.get_by_label("Agent name").fill("Site builder")
    form.get_by_label("Project").select_option(label="Website")
    form.get_by_label("Working directory").fill(str(workspace_root.parent / "elsewhere"))
    form.get_by_label("API", exact=True).select_option("openai-chat")
    form.get_by_label("Base URL").fill("http://127.0.0.1:9/v1")
    form.get_by_label("Model name").fill("mock-model")
    form.get_by_label("API key (optional)").fill(API_KEY)
    no_sideways_scroll(page)
    page.get_by_role("heading", name="Host an agent").scroll_into_view_if_needed()
    screenshot(page, f"hosting-form-{shot}")
    assert axe_violations(page) == []

    # --- the hub refuses a directory outside the roots, on the field --------------------------
    form.get_by_label("Model name").press("Enter")  # submits, as any form does
    cwd = form.get_by_label("Working directory")
    expect(cwd).to_have_attribute("aria-invalid", "true")
    refusal = re.compile("outside the directories engines may use")
    expect(cwd).to_have_accessible_description(refusal)
    expect(cwd).to_be_focused()
    screenshot(page, f"hosting-refused-{shot}")
    assert axe_violations(page) == []
    cwd.fill(str(site))
    form.get_by_role("button", name="Host this agent").click()

    # --- it is hosted, then online ------------------------------------------------------------
    card = page.get_by_role("region", name="Host an agent")
    expect(card.get_by_text("Site builder is online")).to_be_visible(timeout=20_000)
    expect(card.get_by_text("Online", exact=True)).to_be_visible()
    assert API_KEY not in page.content()
    hosted = ana.read("/hosted-agents")["hostedAgents"]
    assert [(h["cwd"], h["projectId"], h["model"]["hasApiKey"]) for h in hosted] == [
        (str(site.resolve()), project, True)
    ]
    agent_id = hosted[0]["agentId"]
    screenshot(page, f"hosting-online-{shot}")

    # --- a conversation with it: the project's, and its reply streams in ----------------------
    card.get_by_role("button", name="Start a conversation").click()
    expect(page.get_by_label("Project")).to_have_value(project)
    expect(page.get_by_text("Site builder works in project “Website” only")).to_be_visible()
    page.get_by_label("Title").fill("Landing page")
    page.get_by_role("button", name="Create conversation").click()
    expect(page.get_by_role("combobox", name="To")).to_have_value(agent_id)
    page.evaluate(
        """() => {
            window.sawStreaming = false;
            new MutationObserver(() => {
                if (document.querySelector("[data-streaming-id]")) window.sawStreaming = true;
            }).observe(document.body, { childList: true, subtree: true });
        }"""
    )
    page.get_by_label("Message", exact=True).fill("make the landing page faster")
    page.get_by_role("button", name="Send").click()
    messages = page.get_by_role("log", name="Messages")
    expect(messages.get_by_text("You said: make the landing page faster (turn 1)")).to_be_visible(
        timeout=30_000
    )
    assert page.evaluate("() => window.sawStreaming"), "the reply arrived whole, not streamed"
    conversations = ana.read("/conversations")["conversations"]
    assert [c["projectId"] for c in conversations] == [project]
    screenshot(page, f"hosting-conversation-{shot}")

    # --- its page: the definition, never the key ----------------------------------------------
    page.goto(f"/agents/{agent_id}")
    definition = page.get_by_test_id("hosting-definition")
    expect(definition).to_contain_text("Fake engine")
    expect(definition).to_contain_text(str(site.resolve()))
    expect(definition.get_by_role("link", name="Website")).to_be_visible()
    expect(definition).to_contain_text("OpenAI Chat Completions")
    expect(definition).to_contain_text("http://127.0.0.1:9/v1")
    expect(definition).to_contain_text("mock-model")
    expect(definition).to_contain_text("Set")
    assert API_KEY not in page.content()
    # a hosted agent is deleted, not revoked: its credential is the hub's to keep
    expect(page.get_by_role("button", name="Revoke access")).to_have_count(0)
    if phone:
        no_sideways_scroll(page)
    definition.scroll_into_view_if_needed()
    screenshot(page, f"hosting-definition-{shot}")
    assert axe_violations(page) == []

    # --- deleted, with the keyboard, after a confirmation -------------------------------------
    delete = page.get_by_role("button", name="Delete hosted agent")
    delete.focus()
    page.keyboard.press("Enter")
    confirm = page.get_by_role("group", name="Confirm delete")
    expect(confirm).to_contain_text("Its conversations and tasks stay")
    expect(confirm.get_by_role("button", name="Yes, delete Site builder")).to_be_focused()
    assert axe_violations(page) == []
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/agents$"))
    revoked = page.get_by_role("region", name="Revoked")
    expect(revoked.locator(f"[data-agent-id='{agent_id}']")).to_contain_text("Revoked")
    assert ana.read("/hosted-agents")["hostedAgents"] == []
