"""A conversation downloaded as a session file from its page, with the keyboard, and the file
imported back from the conversations page: the new conversation opens with the messages and
what the agent did, and its own download is the same file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from tests.browser.conftest import PHONE, axe_violations, screenshot, start_task


def test_the_downloaded_session_file_imports_as_a_new_conversation(
    new_context: Any, make_person: Any, tmp_path: Path
) -> None:
    person = make_person("Ana")
    agent = person.pair_agent("builder")
    started = start_task(person, agent, "Tidy the docs", approval=False)
    task = started.task_id
    agent.call(
        "activity.started",
        {"activityId": "run1", "kind": "command", "command": "make docs"},
        task_id=task,
    )
    agent.call(
        "activity.output",
        {"activityId": "run1", "chunk": "built 12 pages\n", "offset": 0},
        task_id=task,
    )
    agent.call(
        "activity.finished",
        {"activityId": "run1", "status": "succeeded", "exitCode": 0},
        task_id=task,
    )
    person.send(
        f"/conversations/{started.conversation_id}/messages",
        {"content": "Thanks — my password=hunter2 is not for the file"},
        201,
    )
    page = new_context(person=person).new_page()
    page.goto(f"/conversations/{started.conversation_id}")
    log = page.get_by_role("log", name="Messages")
    expect(log).to_contain_text("my password=hunter2")
    download_button = page.get_by_role("button", name="Download session (.jsonl)")
    download_button.focus()
    with page.expect_download() as downloading:
        page.keyboard.press("Enter")
    download = downloading.value
    assert download.suggested_filename.endswith(f"-{started.conversation_id}.jsonl")
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    data = saved.read_bytes()
    assert data == person.get(f"/conversations/{started.conversation_id}/session.jsonl").content
    lines = [json.loads(line) for line in data.splitlines()]
    assert lines[0]["type"] == "header" and lines[0]["title"] == "Tidy the docs"
    assert {"message", "command", "tool_result", "file"} <= {line["type"] for line in lines[1:]}
    assert b"hunter2" not in data

    page.goto("/conversations")
    page.get_by_role("button", name="Import session").click()
    form = page.locator("form", has=page.get_by_role("heading", name="Import a session"))
    assert axe_violations(page) == []
    screenshot(page, "session-import")
    form.get_by_label("Session file (.jsonl)").set_input_files(str(saved))
    expect(form.get_by_label("Project")).to_have_value("")
    form.get_by_role("button", name="Import session").click()
    expect(page).not_to_have_url(f"/conversations/{started.conversation_id}")
    expect(page.get_by_role("heading", name="Tidy the docs")).to_be_visible()
    copy = page.url.rsplit("/", 1)[-1]
    assert copy.startswith("conv_") and copy != started.conversation_id
    imported = page.get_by_role("log", name="Messages")
    expect(imported).to_contain_text("Tidy the docs: analyse it and propose changes")
    expect(imported).to_contain_text("my password=[redacted] is not for the file")
    expect(imported).to_contain_text("$ make docs")
    assert person.get(f"/conversations/{copy}/session.jsonl").content == data
    screenshot(page, "session-imported")
    phone = new_context(person=person, viewport=PHONE).new_page()
    phone.goto(f"/conversations/{copy}")
    expect(phone.get_by_role("log", name="Messages")).to_contain_text("$ make docs")
    expect(phone.get_by_role("button", name="Download session (.jsonl)")).to_be_visible()
    screenshot(phone, "session-imported-phone")


def test_a_file_that_cannot_be_read_is_refused_with_its_line(
    new_context: Any, make_person: Any, tmp_path: Path
) -> None:
    person = make_person("Ana")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type":"header","v":2,"sessionId":"s","timestamp":0,"title":"T"}\n{oops\n')
    page = new_context(person=person).new_page()
    page.goto("/conversations")
    page.get_by_role("button", name="Import session").click()
    page.get_by_label("Session file (.jsonl)").set_input_files(str(bad))
    page.get_by_role("button", name="Import session").last.click()
    expect(page.get_by_role("alert")).to_contain_text("Line 2: not JSON")
    expect(page).to_have_url(f"{person.hub_url}/conversations")
