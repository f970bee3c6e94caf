"""Every hosted engine answered from the app, in Chromium: for the fake engine, Codex, Pi and
Claude Code (``tests/support/hosted_engines.py``), a person talks to a hosted agent from the
conversation page, answers the question one of LineUp's tools puts to them on its card, and
allows a command on its approval card; the answer reaches the engine (its model, for a real
one) and the allowed command's effect is on disk, once.

One hub for the module — ``lineup serve`` offering every engine installed here, each real one
pointed at a scripted model of the test's — and one hosted agent per engine. An engine not
installed is skipped with the command that installs it.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import PHONE, Hub, HubProcess, Person, _require_build, screenshot
from tests.support.hosted_engines import (
    BINARY_ENV,
    CASES,
    INSTALL,
    EngineCase,
    binary,
    make_case,
)
from tests.support.scripted_model import ScriptedModel, Step
from tests.support.waiting import until

REPLY_SECONDS = 60_000
"""Milliseconds an engine may take to answer (a real one starts its process first)."""


@pytest.fixture(scope="module")
def engines_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    """``lineup serve`` with every engine this machine has (the fake one too)."""
    _require_build()
    env = {BINARY_ENV[name]: str(found) for name in BINARY_ENV if (found := binary(name))}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = HubProcess(tmp_path_factory.mktemp("engines-hub"), port, env=env)
    try:
        yield process.start()
    finally:
        process.stop()


@pytest.fixture(params=CASES)
def engine(request: pytest.FixtureRequest) -> Iterator[EngineCase]:
    with ScriptedModel() as model:
        case = make_case(request.param, model if request.param != "fake" else None)
        if case is None:
            pytest.skip(INSTALL[request.param])
        yield case


def test_a_person_answers_a_hosted_engines_question_and_allows_its_command_in_the_app(
    new_context: Any, make_person: Any, engines_hub: Hub, engine: EngineCase
) -> None:
    person: Person = make_person("Ana", on=engines_hub)
    work = engines_hub.home / f"work-{engine.name}"
    work.mkdir()
    effects = work / engine.effects_file
    agent_id = person.send(
        "/hosted-agents",
        {
            "name": "Builder",
            "engine": engine.name,
            "cwd": str(work),
            "model": engine.model_settings(),
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
    conversation = person.send("/conversations", {"title": "Build", "agentIds": [agent_id]}, 201)
    page = new_context(person=person).new_page()
    page.goto(f"/conversations/{conversation['id']}")
    messages = page.get_by_role("log", name="Messages")

    def say(text: str) -> None:
        page.get_by_label("Message", exact=True).fill(text)
        page.get_by_role("button", name="Send").click()

    # --- LineUp's question, answered on its card ------------------------------------------
    message, ends = engine.question("What is your name?")
    say(message)
    card = page.locator("article.icard-open")
    expect(card.get_by_role("heading", name="What is your name?")).to_be_visible(
        timeout=REPLY_SECONDS
    )
    field = card.get_by_label("Your answer")
    field.fill("Ana")
    field.press("Enter")
    answered = page.locator("article[data-status='resolved']").filter(has_text="What is your name?")
    expect(answered.locator(".outcome-answer")).to_have_text("Ana")
    reply = messages.get_by_text(ends, exact=False)
    expect(reply).to_be_visible(timeout=REPLY_SECONDS)
    assert engine.answer_reached(reply.inner_text(), "Ana")

    # --- a command, allowed on its approval card ------------------------------------------
    message, title = engine.command("make build")
    say(message)
    card = page.locator("article.icard-open")
    heading = card.get_by_role("heading", name=title, exact=False)
    expect(heading).to_be_visible(timeout=REPLY_SECONDS)
    asked = heading.inner_text()
    expect(card.get_by_role("region", name="What it will do")).to_contain_text("make build")
    screenshot(page, f"hosted-{engine.name}-approval")
    card.get_by_role("button", name="Allow").click()
    expect(messages.get_by_text(engine.allowed_reply("make build"), exact=False)).to_be_visible(
        timeout=REPLY_SECONDS
    )
    assert effects.read_text() == "make build\n"
    allowed = page.locator("article[data-status='resolved']").filter(has_text=asked)
    expect(allowed.locator(".outcome-answer")).to_have_text("Allow")


def hosted(person: Person, name: str, engine: EngineCase, work: Path) -> str:
    """A hosted agent of ``engine`` working in ``work``, once it is online."""
    agent_id: str = person.send(
        "/hosted-agents",
        {"name": name, "engine": engine.name, "cwd": str(work), "model": engine.model_settings()},
        201,
    )["agentId"]
    until(
        lambda: any(
            a["id"] == agent_id and a["status"] == "online"
            for a in person.read("/agents")["agents"]
        ),
        f"{name} to be online",
    )
    return agent_id


def test_a_phone_follows_a_hosted_session_live_and_allows_claude_codes_edit_as_changed(
    new_context: Any, make_person: Any, engines_hub: Hub
) -> None:
    """The live transcript on a phone: a command whose output arrives while it runs (Pi's
    bash: Claude Code gives a command's output only whole, when it ends), and a permission
    request of Claude Code's — an edit, its diff marked on the card — allowed with the input
    the person edited there: the file on disk and the diff in the transcript are the
    person's version."""
    with ScriptedModel() as pi_model, ScriptedModel() as claude_model:
        pi = make_case("pi", pi_model)
        claude = make_case("claude-code", claude_model)
        if pi is None or claude is None:
            pytest.skip(INSTALL["pi" if pi is None else "claude-code"])
        person: Person = make_person("Ana", on=engines_hub)
        work = engines_hub.home / "work-phone"
        work.mkdir()
        app = work / "app.py"
        app.write_text("import os\nDEBUG = True\n")
        runner = hosted(person, "Runner", pi, work)
        editor = hosted(person, "Editor", claude, work)
        conversation = person.send(
            "/conversations", {"title": "Ship it", "agentIds": [runner, editor]}, 201
        )["id"]
        page = new_context(viewport=PHONE, person=person).new_page()
        page.goto(f"/conversations/{conversation}")
        messages = page.get_by_role("log", name="Messages")

        def say(to: str, text: str) -> None:
            page.get_by_role("combobox", name="To").select_option(label=to)
            page.get_by_label("Message", exact=True).fill(text)
            page.get_by_role("button", name="Send").click()

        # --- Pi runs a command; its output shows while it still runs -----------------------
        waits = "echo first; while [ ! -e release ]; do sleep 0.1; done; echo second"
        pi_model.then(pi.command_step(waits), Step.text("Ran it."))
        say("Runner", "Run the slow check.")
        card = page.locator("article.icard-open")
        expect(card.get_by_role("heading", name="Run echo first", exact=False)).to_be_visible(
            timeout=REPLY_SECONDS
        )
        card.get_by_role("button", name="Allow").click()
        command = page.locator("article[data-kind=command]").filter(has_text="echo first")
        expect(command.get_by_label("Command output")).to_have_text("first\n", timeout=30_000)
        expect(command).to_have_attribute("data-status", "running")
        screenshot(page, "hosted-live-command-phone")
        (work / "release").touch()
        expect(command.get_by_label("Command output")).to_have_text("first\nsecond\n")
        expect(command).to_contain_text("Done · exit 0")
        expect(messages.get_by_text("Ran it.")).to_be_visible(timeout=REPLY_SECONDS)

        # --- Claude Code asks to edit; the person changes the edit on the card -------------
        claude_model.then(
            Step.call("Read", file_path=str(app)),
            Step.call(
                "Edit", file_path=str(app), old_string="DEBUG = True", new_string="DEBUG = False"
            ),
            Step.text("Edited as you said."),
        )
        say("Editor", "Turn debugging off.")
        card = page.locator("article.icard-open")
        expect(card.get_by_role("heading", name="Edit app.py")).to_be_visible(timeout=REPLY_SECONDS)
        proposed = card.get_by_role("region", name="What it will do")
        expect(proposed.locator(".diff-remove")).to_have_text("removed: -DEBUG = True")
        expect(proposed.locator(".diff-add")).to_have_text("added: +DEBUG = False")
        screenshot(page, "hosted-claude-code-edit-phone")
        card.get_by_role("button", name="Edit input").click()
        field = card.get_by_label("Input (JSON)")
        expect(field).to_be_focused()
        asked = json.loads(field.input_value())
        assert (asked["file_path"], asked["old_string"], asked["new_string"]) == (
            str(app),
            "DEBUG = True",
            "DEBUG = False",
        )
        field.fill(json.dumps({**asked, "new_string": "DEBUG = os.environ.get('DEBUG') == '1'"}))
        card.get_by_role("button", name="Allow with edits").click()
        answered = page.locator("article[data-status='resolved']").filter(has_text="Edit app.py")
        expect(answered.locator(".outcome-answer")).to_have_text("Allow with an edited input")
        expect(messages.get_by_text("Edited as you said.")).to_be_visible(timeout=REPLY_SECONDS)
        assert app.read_text() == "import os\nDEBUG = os.environ.get('DEBUG') == '1'\n"
        diff = page.get_by_label("Diff of app.py")
        expect(diff).to_contain_text("− DEBUG = True")
        expect(diff).to_contain_text("+ DEBUG = os.environ.get('DEBUG') == '1'")
        for entry in page.locator("article[data-kind]").all():
            box = entry.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        diff.scroll_into_view_if_needed()
        screenshot(page, "hosted-claude-code-edited-phone")
