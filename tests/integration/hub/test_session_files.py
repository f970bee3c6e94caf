"""A conversation as a session file through the hub (docs/sessions.md, protocol §7.21):
downloaded with everything that happened in it and no secret, uploaded as a new conversation
with every branch kept, and downloaded again byte for byte; older and Pi files read; bad files
refused naming the line; other people's conversations not found. SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from lineup.core.canonical import digest
from lineup.hub import Settings, create_app
from lineup.hub.retention import compact
from lineup.protocol.session_file import MAX_FILE_BYTES, encode, load
from tests.integration.hub.conftest import fast_settings
from tests.integration.hub.test_files import upload
from tests.support.governance import World
from tests.support.hub_client import HubClient
from tests.support.people import Person
from tests.support.providers import API_KEY, LedgerProvider
from tests.support.session_files import jsonl, sessions

DATA = Path(__file__).resolve().parents[2] / "data" / "sessions"
NDJSON = {"Content-Type": "application/x-ndjson"}
STAMP = "2026-02-01T10:00:00.000Z"


def export(person: Person, conversation_id: str) -> bytes:
    response = person.get(f"/conversations/{conversation_id}/session.jsonl")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    assert response.headers["content-disposition"].startswith("attachment; filename=")
    return response.content


def send_file(person: Person, data: bytes, query: str = "", **headers: str) -> httpx.Response:
    person._use()
    return person.client.post(
        person.url(f"/conversations/import{query}"),
        content=data,
        headers=person.headers(**NDJSON, **headers),
    )


def import_file(person: Person, data: bytes, query: str = "") -> dict[str, Any]:
    response = send_file(person, data, query)
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.split(b"\n") if line]


def shown(person: Person, conversation_id: str) -> list[tuple[str, str]]:
    page = person.read(f"/conversations/{conversation_id}/messages?limit=200")
    return [(m["author"]["kind"], m["content"]) for m in page["messages"]]


# --- a conversation with everything in it --------------------------------------------------


@pytest.fixture
def world(hub_database: str, tmp_path: Path) -> Iterator[World]:
    ledger = LedgerProvider()
    settings = fast_settings(
        hub_database,
        tmp_path,
        notify_enabled=False,
        providers=(),
        extra_providers=(ledger,),
        job_poll_interval=0.01,
    )
    with TestClient(create_app(settings), base_url="http://testserver") as client:
        w = World(client, ledger)
        try:
            yield w
        finally:
            w.close()


def _live_conversation(world: World) -> dict[str, str]:
    """Messages, a transcript, a card, an app tool call, a governed write and files, as an
    agent and a person make them in the project's conversation."""
    ana, agent, conversation = world.ana, world.agent, world.conversation
    ana.send(
        f"/conversations/{conversation}/messages",
        {"content": "Close the month. My password=hunter2 if you need it. 東京 👋"},
        201,
    )
    report = b"# Month end\n\nAll balanced.\n"
    stored = upload(world.hub, world.creds, report, name="report.md").json()
    world.ana._use()
    url = stored["url"]

    def say(kind: str, payload: dict[str, Any]) -> None:
        answer = agent.call(kind, payload, conversationId=conversation)
        assert answer["type"] == "ack", (kind, answer)

    say(
        "message.create",
        {
            "content": "Here is the report.",
            "attachments": [{"name": "report.md", "url": url, "mimeType": "text/markdown"}],
        },
    )
    say(
        "activity.started",
        {
            "activityId": "act_get",
            "kind": "tool_call",
            "name": "http_get",
            "arguments": {"url": "https://erp.example", "apiKey": API_KEY},
        },
    )
    say(
        "activity.finished",
        {"activityId": "act_get", "status": "succeeded", "result": {"rows": 3, "token": API_KEY}},
    )
    say("activity.started", {"activityId": "act_sh", "kind": "command", "command": "pytest -q"})
    say("activity.output", {"activityId": "act_sh", "chunk": "..F\n", "offset": 0})
    say("activity.finished", {"activityId": "act_sh", "status": "failed", "exitCode": 1})
    say(
        "activity.started",
        {
            "activityId": "act_diff",
            "kind": "file_change",
            "path": "a.py",
            "change": "modify",
            "diff": "-x = 1\n+x = 2\n",
        },
    )
    say(
        "activity.started",
        {"activityId": "act_why", "kind": "reasoning", "text": "The totals differ by one entry."},
    )
    say("activity.usage", {"inputTokens": 1200, "outputTokens": 340, "model": "m-1"})
    say("artifact.created", {"name": "Report", "url": url, "mimeType": "text/markdown"})
    say(
        "interaction.requested",
        {
            "interaction": {
                "id": "int_pick",
                "type": "choice",
                "title": "Which ledger?",
                "options": [{"id": "main", "label": "Main"}, {"id": "side", "label": "Side"}],
            }
        },
    )
    ana.send("/interactions/int_pick/respond", {"response": {"optionId": "main"}})
    say("tool.call", {"call_id": "c1", "name": "confirm", "arguments": {"message": "Post it?"}})
    call = next(c for c in ana.read("/tool-calls")["toolCalls"] if c["callId"] == "c1")
    ana.send(f"/tool-calls/{call['id']}/result", {"result": {"message": "yes", "confirmed": True}})
    invocation = f"w{world._n + 1}"  # the name approval_of_a_write gives it
    approval = world.approval_of_a_write()
    ana.send(f"/approvals/{approval['id']}/decision", {"decision": "approve"})
    assert world.final(invocation)["status"] == "succeeded"
    return {"sha256": hashlib.sha256(report).hexdigest(), "url": url}


def test_a_conversation_exports_imports_and_exports_again_byte_for_byte(world: World) -> None:
    made = _live_conversation(world)
    ana = world.ana
    first = export(ana, world.conversation)
    written = lines(first)
    header, entries = written[0], written[1:]
    assert header["sessionId"] == world.conversation and header["project"] == world.project
    assert header["title"] == "Month end" and header["v"] == 2
    kinds = {e["type"] for e in entries}
    assert kinds >= {
        "message",
        "tool_call",
        "tool_result",
        "command",
        "file_change",
        "reasoning",
        "usage",
        "file",
        "interaction",
        "answer",
        "approval_request",
        "approval",
    }
    # one chain, in the order it happened
    assert entries[0]["parentId"] is None
    assert all(b["parentId"] == a["id"] for a, b in itertools.pairwise(entries))
    # no secret, no arguments; digests and references instead
    text = first.decode()
    assert "hunter2" not in text and API_KEY not in text
    call = next(e for e in entries if e["type"] == "tool_call" and e["name"] == "http_get")
    assert call["argsDigest"] == digest({"url": "https://erp.example", "apiKey": API_KEY})
    result = next(e for e in entries if e.get("callId") == call["id"])
    assert result["digest"] == digest({"rows": 3, "token": API_KEY})
    governed = next(e for e in entries if e["type"] == "tool_call" and e.get("capabilityId"))
    assert governed["capabilityId"] == "ledger.entry.post"
    assert governed["argsDigest"] == digest({"amount": 5})
    decided = next(e for e in entries if e["type"] == "approval")
    assert decided["decision"] == "approved"
    ran = [e for e in entries if e["type"] == "tool_result" and e.get("executionId")]
    assert ran and ran[-1]["status"] == "succeeded" and ran[-1]["callId"] == governed["id"]
    artifact = next(e for e in entries if e["type"] == "file")
    assert (artifact["sha256"], artifact["url"]) == (made["sha256"], made["url"])
    attached = next(
        b for e in entries if e["type"] == "message" for b in e["content"] if b["type"] == "file"
    )
    assert attached["sha256"] == made["sha256"]
    answer = next(e for e in entries if e["type"] == "answer")
    assert (answer["status"], answer["optionIds"], answer["by"]) == ("resolved", ["main"], "Ana")

    again = import_file(ana, first, f"?projectId={world.project}")
    assert again["session"] == {
        "sessionId": world.conversation,
        "sourceFormat": "lineup",
        "sourceVersion": 2,
        "entries": len(entries),
        "messages": sum(1 for e in entries if e["type"] == "message"),
        "branches": 1,
    }
    copy = again["conversation"]["id"]
    assert again["conversation"]["projectId"] == world.project
    assert export(ana, copy) == first
    texts = [content for _, content in shown(ana, copy)]
    assert texts[0] == "Close the month. My password=[redacted] if you need it. 東京 👋"
    assert texts[1] == "Here is the report."
    page = ana.read(f"/conversations/{copy}/messages")
    assert page["messages"][1]["attachments"] == [
        {"name": "report.md", "url": made["url"], "mimeType": "text/markdown"}
    ]
    assert page["messages"][0]["author"] == {"kind": "user", "id": None, "name": "Ana"}


# --- generated files through the hub --------------------------------------------------------


@given(data=sessions())
@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_generated_session_files_survive_import_and_export_unchanged(
    hub: HubClient, data: bytes
) -> None:
    ana = _person(hub)
    expected = encode(load(data, digest).session)
    made = import_file(ana, data)["conversation"]["id"]
    first = export(ana, made)
    assert first == expected
    second = import_file(ana, first)["conversation"]["id"]
    assert export(ana, second) == first


_PEOPLE: dict[int, Person] = {}


def _person(hub: HubClient) -> Person:
    """One person per hub for the examples of a property (a sign-up per example would only
    add minutes)."""
    key = id(hub.client)
    if key not in _PEOPLE:
        _PEOPLE.clear()
        _PEOPLE[key] = hub.sign_up()
    return _PEOPLE[key]


# --- branches ---------------------------------------------------------------------------------


def _entry(ident: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": ident,
        "parentId": parent,
        "timestamp": STAMP,
        "role": role,
        "content": [{"type": "text", "text": text}],
    }


BRANCHED = jsonl(
    {"type": "header", "v": 2, "sessionId": "s-branch", "timestamp": STAMP, "title": "Two ways"},
    _entry("q", None, "user", "How do I greet?"),
    _entry("a1", "q", "assistant", "Say hello."),
    _entry("q2", "a1", "user", "Too plain."),
    _entry("a2", "q", "assistant", "Wave."),
    {
        "type": "label",
        "id": "l",
        "parentId": "a2",
        "timestamp": STAMP,
        "targetId": "a1",
        "label": "first try",
    },
)


def test_other_branches_are_kept_off_the_conversation_and_a_new_message_follows_the_active_one(
    hub: HubClient,
) -> None:
    ana = hub.sign_up()
    imported = import_file(ana, BRANCHED)
    assert imported["session"]["branches"] == 2 and imported["session"]["messages"] == 2
    conversation = imported["conversation"]
    assert conversation["title"] == "Two ways" and conversation["agentIds"] == []
    assert shown(ana, conversation["id"]) == [("user", "How do I greet?"), ("agent", "Wave.")]
    ana.send(f"/conversations/{conversation['id']}/messages", {"content": "Thanks!"}, 201)
    written = lines(export(ana, conversation["id"]))
    assert [e["id"] for e in written[1:6]] == ["q", "a1", "q2", "a2", "l"]
    assert written[1:6] == lines(encode(load(BRANCHED, digest).session))[1:]
    last = written[-1]
    assert (last["type"], last["parentId"], last["content"]) == (
        "message",
        "l",
        [{"type": "text", "text": "Thanks!"}],
    )


def test_a_replay_of_the_log_rebuilds_the_imported_conversation_exactly(
    hub: HubClient,
) -> None:
    ana = hub.sign_up()
    made = import_file(ana, BRANCHED)["conversation"]["id"]
    before = (export(ana, made), ana.read(f"/conversations/{made}/messages"))
    state = hub.client.app.state.hub  # type: ignore[attr-defined]
    assert hub.client.portal is not None
    hub.client.portal.call(state.store.rebuild_projections)
    assert (export(ana, made), ana.read(f"/conversations/{made}/messages")) == before


# --- other formats ----------------------------------------------------------------------------


def test_an_older_file_and_a_file_recorded_by_pi_are_imported(hub: HubClient) -> None:
    ana = hub.sign_up()
    old = import_file(ana, (DATA / "lineup-v1.jsonl").read_bytes())
    assert (old["session"]["sourceFormat"], old["session"]["sourceVersion"]) == ("lineup", 1)
    assert old["conversation"]["title"] == "Schedule line 3 for next week."
    assert shown(ana, old["conversation"]["id"]) == [
        ("user", "Schedule line 3 for next week.\n\n[file: orders.csv]"),
        ("agent", "The plan is ready."),
    ]
    migrated = export(ana, old["conversation"]["id"])
    assert lines(migrated)[0]["v"] == 2
    assert export(ana, import_file(ana, migrated)["conversation"]["id"]) == migrated

    pi = import_file(ana, (DATA / "pi-0.73.1.jsonl").read_bytes())
    assert pi["session"]["sourceFormat"] == "pi" and pi["session"]["branches"] == 2
    assert pi["conversation"]["title"] == "Greeting check"
    assert shown(ana, pi["conversation"]["id"]) == [
        ("user", "Say hello with the shell"),
        ("agent", ""),
        ("agent", "Done: the shell said hello-from-pi."),
        ("user", "Now draw it: üñï 👋\n\n[file: image/png]"),
        ("agent", "Here is a wave: 👋"),
    ]
    page = ana.read(f"/conversations/{pi['conversation']['id']}/messages")
    assert page["messages"][1]["author"] == {"kind": "agent", "id": None, "name": "mock-model"}
    written = export(ana, pi["conversation"]["id"])
    assert b"hunter2" not in written and b'"origin":{"format":"pi"' in written


# --- refusals ---------------------------------------------------------------------------------

HEADER = {"type": "header", "v": 2, "sessionId": "s", "timestamp": STAMP, "title": "T"}


@pytest.mark.parametrize(
    ("data", "line", "field"),
    [
        (jsonl(HEADER, _entry("a", None, "user", "x"), "{not json"), 3, None),
        (jsonl(HEADER, {**_entry("a", None, "user", "x"), "role": 7}), 2, "role"),
        (jsonl(_entry("a", None, "user", "x")), 1, "type"),
        (jsonl(HEADER, _entry("a", "nowhere", "user", "x")), 2, "parentId"),
    ],
)
def test_a_bad_file_is_refused_naming_its_line_and_nothing_is_recorded(
    hub: HubClient, data: bytes, line: int, field: str | None
) -> None:
    ana = hub.sign_up()
    refused = send_file(ana, data)
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["code"] == "invalid_argument"
    assert error["message"].startswith(f"Line {line}:")
    assert error["details"]["line"] == line
    if field is not None:
        assert error["details"]["field"] == field
    assert ana.read("/conversations")["conversations"] == []


@given(cut=st.integers(min_value=0, max_value=400), byte=st.integers(0, 255))
@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_damaged_file_is_imported_or_refused_as_invalid(
    hub: HubClient, cut: int, byte: int
) -> None:
    ana = _person(hub)
    damaged = bytearray(BRANCHED)
    damaged[cut % len(damaged)] = byte
    answer = send_file(ana, bytes(damaged))
    assert answer.status_code in (201, 400), answer.text
    if answer.status_code == 400:
        assert answer.json()["error"]["code"] == "invalid_argument"


def test_a_file_over_the_limit_is_refused_as_too_large(hub: HubClient) -> None:
    ana = hub.sign_up()
    refused = send_file(ana, b" " * (MAX_FILE_BYTES + 1))
    assert refused.status_code == 413
    assert refused.json()["error"]["code"] == "invalid_argument"
    assert ana.read("/conversations")["conversations"] == []


def test_a_resent_import_with_its_key_finds_the_conversation_it_made(hub: HubClient) -> None:
    ana = hub.sign_up()
    first = send_file(ana, BRANCHED, **{"Idempotency-Key": "import-1"})
    again = send_file(ana, BRANCHED, **{"Idempotency-Key": "import-1"})
    assert first.status_code == again.status_code == 201
    assert again.json()["duplicate"] is True
    assert again.json()["conversation"]["id"] == first.json()["conversation"]["id"]
    assert len(ana.read("/conversations")["conversations"]) == 1


# --- who sees what ----------------------------------------------------------------------------


def test_other_peoples_conversations_are_not_found_and_projects_are_guarded(
    world: World,
) -> None:
    ana, project, conversation = world.ana, world.project, world.conversation
    stranger = world.hub.sign_up(name="Cy")  # another workspace
    assert stranger.get(f"/conversations/{conversation}/session.jsonl").status_code == 404
    outsider = world.join(world.invite(ana)["code"], "Di")  # the workspace, not the project
    missing = outsider.get(f"/conversations/{conversation}/session.jsonl")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"
    assert send_file(outsider, BRANCHED, f"?projectId={project}").status_code == 404
    viewer = world.member("viewer", "Bo")
    assert viewer.get(f"/conversations/{conversation}/session.jsonl").status_code == 200
    refused = send_file(viewer, BRANCHED, f"?projectId={project}")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert send_file(viewer, BRANCHED).status_code == 201  # a personal conversation of theirs


def test_a_personal_import_is_the_workspace_s_and_not_another_s(hub: HubClient) -> None:
    ana, bo = hub.sign_up(), hub.sign_up(name="Bo")
    made = import_file(ana, BRANCHED)["conversation"]["id"]
    bo._use()
    assert (
        bo.client.get(
            f"/api/workspaces/{bo.workspace_id}/conversations/{made}/session.jsonl"
        ).status_code
        == 404
    )
    assert (
        bo.client.get(
            f"/api/workspaces/{ana.workspace_id}/conversations/{made}/session.jsonl"
        ).status_code
        == 403
    )


# --- after the log was compacted --------------------------------------------------------------


def test_after_compaction_the_export_keeps_every_message_and_still_imports_exactly(
    hub: HubClient, settings: Settings
) -> None:
    ana = hub.sign_up()
    creds = hub.pair(ana)
    conversation = ana.send(
        "/conversations", {"title": "Old talk", "agentIds": [creds["agentId"]]}, 201
    )["id"]
    ana.send(f"/conversations/{conversation}/messages", {"content": "First, from long ago"}, 201)
    with hub.agent(creds) as agent:
        for kind, payload in [
            ("activity.started", {"activityId": "old", "kind": "reasoning", "text": "Hmm."}),
            ("message.create", {"content": "An old answer"}),
        ]:
            assert agent.call(kind, payload, conversationId=conversation)["type"] == "ack"
    before = lines(export(ana, conversation))
    state = hub.client.app.state.hub  # type: ignore[attr-defined]
    assert hub.client.portal is not None
    policy = dataclasses.replace(settings, retention_days=0, retention_max_events=1)
    hub.client.portal.call(compact, state.store, policy, state.clock())
    ana.send(f"/conversations/{conversation}/messages", {"content": "And now"}, 201)
    after = export(ana, conversation)
    written = lines(after)
    assert [e["type"] for e in written[1:]] == ["message", "message", "message"]
    # the messages as before (the second now follows the first: the reasoning is gone)
    assert written[1] == before[1]
    assert written[2] == {**before[3], "parentId": before[1]["id"]}
    assert written[3]["parentId"] == written[2]["id"]
    copy = import_file(ana, after)["conversation"]["id"]
    assert export(ana, copy) == after
