"""A session file the installed Pi writes now (``make engines``), offline against the scripted
model, imports into a running hub like the committed recording does: the same kinds of
entries, two branches, the tool call and its result linked, no password in the export, and
the export exact through a second import."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from lineup.core.canonical import digest
from lineup.protocol.session_file import active_branch, branch_count, load
from tests.e2e.processes import HubProcess
from tests.support.people import Person
from tests.support.pi_sessions import FIXTURE, pi_installed, record_pi_session


def _shape(data: bytes) -> list[tuple[str, bool]]:
    """Each entry's type and whether it is on the active branch: what a recording must
    keep whatever its ids and times."""
    session = load(data, digest).session
    shown = set(active_branch(session.entries))
    return [(e.type, e.id in shown) for e in session.entries]


def test_a_session_recorded_by_the_installed_pi_imports_as_the_committed_one_does(
    hub: HubProcess, sign_up: Callable[..., Person], tmp_path: Path
) -> None:
    if not pi_installed():
        pytest.fail("Pi is not installed under tests/engines: run `make engines` first.")
    recorded = record_pi_session(tmp_path / "pi").read_bytes()
    assert _shape(recorded) == _shape(FIXTURE.read_bytes())
    session = load(recorded, digest).session
    assert branch_count(session.entries) == 2

    ana = sign_up("ana@example.test")
    ana._use()
    answer = ana.client.post(
        ana.url("/conversations/import"),
        content=recorded,
        headers=ana.headers(**{"Content-Type": "application/x-ndjson"}),
    )
    assert answer.status_code == 201, answer.text
    made = answer.json()
    assert made["session"]["sourceFormat"] == "pi" and made["session"]["branches"] == 2
    conversation = made["conversation"]["id"]
    page = ana.read(f"/conversations/{conversation}/messages")
    assert [m["content"] for m in page["messages"]][-1] == "Here is a wave: 👋"
    exported = ana.get(f"/conversations/{conversation}/session.jsonl").content
    assert b"hunter2" not in exported
    again = ana.client.post(
        ana.url("/conversations/import"),
        content=exported,
        headers=ana.headers(**{"Content-Type": "application/x-ndjson"}),
    )
    assert again.status_code == 201, again.text
    copy = again.json()["conversation"]["id"]
    assert ana.get(f"/conversations/{copy}/session.jsonl").content == exported
