"""Session files (seed 003 §1.4, docs/sessions.md) as pure values: lines in, lines out.

A file read and written again is the same file, byte for byte (generated trees with
branches, any Unicode, file references); an older version and Pi's files are read; a bad file
is an ``invalid_argument`` that names its line; no secret is written in plain text.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lineup.core.canonical import digest
from lineup.protocol import facts as f
from lineup.protocol.errors import InvalidArgument, PayloadTooLarge
from lineup.protocol.session_file import (
    MAX_FILE_BYTES,
    MAX_LINES,
    Happened,
    HistoryWriter,
    active_branch,
    branch_count,
    encode,
    load,
)
from lineup.protocol.session_file import lines as ln
from lineup.protocol.session_file.scrub import clean_text, fit
from tests.support.session_files import TEXT, jsonl, sessions

DATA = Path(__file__).resolve().parents[2] / "data" / "sessions"
HEADER = (
    '{"type":"header","v":2,"sessionId":"s1","timestamp":"2026-01-31T09:30:00.000Z","title":"T"}'
)


def lines_of(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode().splitlines()]


def read(data: bytes) -> Any:
    return load(data, digest)


def entry(kind: str, ident: str, parent: str | None = None, **fields: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "id": ident,
        "parentId": parent,
        "timestamp": "2026-01-31T09:30:01.000Z",
        **fields,
    }


@given(sessions())
@settings(max_examples=150)
def test_a_file_read_and_written_again_is_the_same_bytes(data: bytes) -> None:
    once = encode(read(data).session)
    assert encode(read(once).session) == once


@given(sessions())
@settings(max_examples=60)
def test_reading_keeps_every_entry_its_parent_and_its_order(data: bytes) -> None:
    sent = lines_of(data)[1:]
    session = read(data).session
    assert [(e.id, e.parent_id, e.type) for e in session.entries] == [
        (e["id"], e["parentId"], e["type"]) for e in sent
    ]


def test_text_in_any_script_survives_unchanged() -> None:
    text = "naïve café — 東京 · 🚀 · עברית · \u2028 · \t tab"
    data = jsonl(
        HEADER, entry("message", "m1", role="user", content=[{"type": "text", "text": text}])
    )
    (message,) = read(data).session.entries
    assert isinstance(message, ln.MessageEntry)
    assert message.content[0] == ln.TextBlock(text=text)
    written = encode(read(data).session)
    assert len(written.split(b"\n")) == 3 == len(written.decode().splitlines()) + 1
    assert lines_of(written)[1]["content"][0]["text"] == text


# --- the tree -------------------------------------------------------------------------------


def test_the_active_branch_ends_at_the_last_entry_and_other_branches_are_kept() -> None:
    data = jsonl(
        HEADER,
        entry("message", "a", role="user", content=[]),
        entry("message", "b", "a", role="assistant", content=[]),
        entry("message", "c", "a", role="user", content=[]),
        entry("message", "d", "c", role="assistant", content=[]),
    )
    session = read(data).session
    assert active_branch(session.entries) == ["a", "c", "d"]
    assert branch_count(session.entries) == 2
    assert [e.id for e in session.entries] == ["a", "b", "c", "d"]


# --- older versions and Pi ------------------------------------------------------------------


def test_a_version_1_file_is_migrated_when_read() -> None:
    loaded = read((DATA / "lineup-v1.jsonl").read_bytes())
    assert (loaded.source_format, loaded.source_version) == ("lineup", 1)
    session = loaded.session
    assert session.header.v == 2
    assert session.header.project == "plant-1"
    assert session.header.timestamp == "2025-09-09T08:00:00.000Z"
    assert session.header.title == "Schedule line 3 for next week."
    by_id = {e.id: e for e in session.entries}
    first = by_id["a1"]
    assert isinstance(first, ln.MessageEntry)
    assert first.content[1] == ln.FileBlock(
        name="orders.csv", mime_type="text/csv", size=2048, sha256=first.content[1].sha256
    )
    call, result = by_id["a2"], by_id["a3"]
    assert isinstance(call, ln.ToolCallEntry) and call.name == "aps.schedule.preview"
    assert call.timestamp == first.timestamp  # a v1 line without ts takes the one above's
    assert isinstance(result, ln.ToolResultEntry)
    assert (result.call_id, result.execution_id, result.job_id) == ("a2", "exec-7", "job-42")
    assert active_branch(session.entries) == ["a1", "a2", "a3", "a5", "a6"]
    chart = by_id["a6"]
    assert isinstance(chart, ln.MessageEntry)
    assert chart.content[1] == ln.RichBlock(
        kind="chart", text="load by day", data={"series": [3, 5, 2]}
    )
    assert encode(read(encode(session)).session) == encode(session)


def test_a_session_file_recorded_by_pi_is_read_with_its_branches() -> None:
    loaded = read((DATA / "pi-0.73.1.jsonl").read_bytes())
    assert (loaded.source_format, loaded.source_version) == ("pi", 3)
    session = loaded.session
    header = session.header
    assert header.title == "Greeting check"
    assert header.origin is not None and header.origin.format == "pi"
    assert header.session_id == header.origin.session_id
    by_type: dict[str, list[ln.Entry]] = {}
    for e in session.entries:
        by_type.setdefault(e.type, []).append(e)
    (call,) = by_type["tool_call"]
    assert isinstance(call, ln.ToolCallEntry)
    assert call.name == "bash"
    assert call.args_digest == digest({"command": "echo hello-from-pi"})
    results = [e for e in by_type["tool_result"] if isinstance(e, ln.ToolResultEntry)]
    assert [(r.call_id, r.summary) for r in results] == [
        (call.id, "hello-from-pi\n"),
        ("17c6aecf", "user-ran\n"),
    ]
    (command,) = by_type["command"]
    assert isinstance(command, ln.CommandEntry) and command.command == "echo user-ran"
    summaries = [e for e in by_type["summary"] if isinstance(e, ln.SummaryEntry)]
    assert {s.kind for s in summaries} == {"compaction", "branch"}
    compaction = next(s for s in summaries if s.kind == "compaction")
    assert compaction.first_kept_id == "fd6de4f1" and "768ece2e" in compaction.covers
    assert branch_count(session.entries) == 2
    shown = set(active_branch(session.entries))
    texts = [
        block.text
        for e in session.entries
        if isinstance(e, ln.MessageEntry) and e.id in shown
        for block in e.content
        if isinstance(block, ln.TextBlock)
    ]
    assert texts == [
        "Say hello with the shell",
        "Done: the shell said hello-from-pi.",
        "Now draw it: üñï 👋",
        "Here is a wave: 👋",
    ]
    image = next(
        b
        for e in session.entries
        if isinstance(e, ln.MessageEntry)
        for b in e.content
        if isinstance(b, ln.FileBlock)
    )
    assert (image.mime_type, image.size, image.url) == ("image/png", 70, None)
    written = encode(session)
    assert b"hunter2" not in written and b"iVBORw0KGgo" not in written
    assert encode(read(written).session) == written


def test_a_pi_version_1_file_without_ids_is_read_as_a_chain() -> None:
    data = jsonl(
        {"type": "session", "id": "pi-old", "timestamp": "2025-01-01T00:00:00.000Z", "cwd": "/w"},
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:01.000Z",
            "message": {"role": "user", "content": "hi", "timestamp": 1},
        },
        {
            "type": "message",
            "timestamp": "2025-01-01T00:00:02.000Z",
            "message": {
                "role": "hookMessage",
                "customType": "ext",
                "content": "note",
                "display": True,
            },
        },
        {
            "type": "compaction",
            "timestamp": "2025-01-01T00:00:03.000Z",
            "summary": "s",
            "firstKeptEntryIndex": 2,
            "tokensBefore": 5,
        },
    )
    loaded = read(data)
    assert loaded.source_version == 1
    entries = loaded.session.entries
    assert [(e.id, e.parent_id) for e in entries] == [
        ("00000001", None),
        ("00000002", "00000001"),
        ("00000003", "00000002"),
    ]
    hook = entries[1]
    assert isinstance(hook, ln.MessageEntry) and hook.role == "system"
    assert hook.author == ln.Author(kind="system", name="ext")
    compaction = entries[2]
    assert isinstance(compaction, ln.SummaryEntry)
    assert (compaction.first_kept_id, compaction.covers) == ("00000002", ["00000001"])


# --- what is never written ------------------------------------------------------------------


def test_secrets_in_text_are_redacted_and_arguments_are_only_digested() -> None:
    api_key = "sk-live-4f9a8b7c6d5e4f3a2b1c"
    writer = HistoryWriter(digest)
    facts: list[f.Fact] = [
        f.MessageCreatedPayload(
            message_id="m1",
            author=f.MessageAuthor(kind="user", id="u1", name="Ana"),
            content="my password=hunter2 and Authorization: Bearer abc.def.ghi",
        ),
        f.ActivityStartedPayload(
            activity_id="act1",
            kind="tool_call",
            name="http_get",
            arguments={"url": "https://api.example.com", "apiKey": api_key},
        ),
        f.ActivityFinishedPayload(
            activity_id="act1", status="succeeded", result={"token": api_key, "rows": 3}
        ),
        f.ActivityStartedPayload(
            activity_id="act2", kind="command", command=f"curl -H 'X-Api-Key: {api_key}' x"
        ),
    ]
    for i, fact in enumerate(facts):
        writer.add(Happened(fact, f"e{i}", 1_700_000_000_000 + i))
    from lineup.protocol.session_file import SessionFile

    header = ln.Header(session_id="c1", timestamp="2026-01-01T00:00:00Z", title="t")
    written = encode(SessionFile(header, tuple(writer.entries))).decode()
    for secret in ("hunter2", api_key, "abc.def.ghi"):
        assert secret not in written
    call = writer.entries[1]
    assert isinstance(call, ln.ToolCallEntry)
    assert call.args_digest == digest({"url": "https://api.example.com", "apiKey": api_key})
    result = writer.entries[2]
    assert isinstance(result, ln.ToolResultEntry)
    assert (result.call_id, result.digest) == (call.id, digest({"token": api_key, "rows": 3}))
    assert result.summary is not None and '"rows":3' in result.summary
    assert "[redacted]" in result.summary


def test_a_file_with_a_secret_is_redacted_when_read() -> None:
    data = jsonl(
        HEADER,
        entry("message", "m", role="user", content=[{"type": "text", "text": "password=hunter2"}]),
    )
    assert b"hunter2" not in encode(read(data).session)


@given(TEXT, st.integers(min_value=1, max_value=60))
def test_fitting_text_twice_changes_nothing(text: str, limit: int) -> None:
    once = fit(text + " password=" + text, limit)
    assert len(once) <= limit
    assert fit(once, limit) == once
    assert clean_text(once) == once


# --- a conversation's facts -----------------------------------------------------------------


def test_a_conversations_facts_make_one_chain_linking_results_to_their_calls() -> None:
    writer = HistoryWriter(digest, after="leaf", taken=["leaf"])
    recorded: list[f.Fact] = [
        f.ActivityStartedPayload(activity_id="a", kind="command", command="pytest -q"),
        f.ActivityOutputPayload(activity_id="a", chunk="..F\n", offset=0),
        f.ActivityOutputPayload(activity_id="a", chunk="1 failed\n", offset=4),
        f.ActivityOutputPayload(activity_id="a", chunk="..F\n", offset=0),  # a resend
        f.ActivityFinishedPayload(activity_id="a", status="failed", exit_code=1),
        f.CapabilityInvokedPayload(
            invocation_id="ivk",
            agent_invocation_id="i",
            agent_id="ag",
            capability="crm.update",
            effect="write",
            instance="main",
            params={"x": 1},
            params_digest=digest({"x": 1}),
        ),
        f.ApprovalRequestedPayload(
            approval_id="apr",
            invocation_id="ivk",
            agent_invocation_id="i",
            agent_id="ag",
            capability="crm.update",
            instance="main",
            params={"x": 1},
            params_digest=digest({"x": 1}),
            summary="Update x",
            impact="one row",
            project_id="p",
            expires_at=1_800_000_000_000,
            target_agent_id="ag",
        ),
        f.ApprovalDecidedPayload(
            approval_id="apr",
            invocation_id="ivk",
            agent_invocation_id="i",
            capability="crm.update",
            decision="approved",
            by="user:u",
            by_name="Ana",
            target_agent_id="ag",
        ),
        f.ExecutionAcceptedPayload(
            execution_id="x1",
            invocation_id="ivk",
            agent_invocation_id="i",
            capability="crm.update",
            job_id="job-1",
            target_agent_id="ag",
        ),
        f.TaskAcceptedPayload(task_id="t"),  # not in a session file
        f.ActivityUsagePayload(input_tokens=10, output_tokens=2),
    ]
    for i, fact in enumerate(recorded):
        writer.add(Happened(fact, f"evt{i}", 1_700_000_000_000 + i))
    entries = writer.entries
    assert [e.type for e in entries] == [
        "command",
        "tool_result",
        "tool_call",
        "approval_request",
        "approval",
        "tool_result",
        "usage",
    ]
    assert entries[0].parent_id == "leaf"
    assert all(e.parent_id == prev.id for prev, e in itertools.pairwise(entries))
    command, ended, call, asked, decided, accepted, _ = entries
    assert isinstance(ended, ln.ToolResultEntry)
    assert (ended.call_id, ended.exit_code, ended.summary) == (command.id, 1, "..F\n1 failed\n")
    assert isinstance(asked, ln.ApprovalRequestEntry) and asked.call_id == call.id
    assert isinstance(decided, ln.ApprovalEntry)
    assert (decided.request_id, decided.decision, decided.by) == (asked.id, "approved", "Ana")
    assert isinstance(accepted, ln.ToolResultEntry)
    assert (accepted.call_id, accepted.status, accepted.job_id) == (call.id, "accepted", "job-1")


# --- bad files ------------------------------------------------------------------------------

BAD: list[tuple[bytes, int, str]] = [
    (b"", 1, "empty"),
    (b'{"type":"nonsense"}\n', 1, "header"),
    (b"not json\n", 1, "not JSON"),
    (b"[1,2]\n", 1, "one JSON object"),
    (jsonl(HEADER, "{oops"), 2, "not JSON"),
    (jsonl(HEADER, entry("message", "m", role="robot", content=[])), 2, "role"),
    (jsonl(HEADER, entry("message", "m", content=[])), 2, "role: is missing"),
    (jsonl(HEADER, entry("dance", "m")), 2, "not an entry type"),
    (jsonl(HEADER, entry("reasoning", "m", text=5)), 2, "text"),
    (jsonl(HEADER, entry("reasoning", "m", text="x", extra=1)), 2, "not a field"),
    (jsonl(HEADER, entry("reasoning", "m", "nope", text="x")), 2, "parentId"),
    (
        jsonl(HEADER, entry("reasoning", "m", text="x"), entry("reasoning", "m", text="y")),
        3,
        "already the id of line 2",
    ),
    (jsonl(HEADER, entry("tool_result", "r", callId="gone", status="succeeded")), 2, "callId"),
    (jsonl(HEADER, entry("tool_call", "c", name="x", argsDigest="md5:1")), 2, "argsDigest"),
    (jsonl(HEADER, {**entry("reasoning", "m", text="x"), "timestamp": "yesterday"}), 2, "ISO"),
    (jsonl(HEADER, entry("reasoning", "m", text="a\u0000b")), 2, "NUL"),
    (
        jsonl(
            HEADER, '{"type":"reasoning","id":"m","parentId":null,"timestamp":0,"text":"\\ud800"}'
        ),
        2,
        "surrogate",
    ),
    (
        jsonl(
            HEADER,
            '{"type":"usage","id":"u","parentId":null,"timestamp":0,"inputTokens":NaN,"outputTokens":0}',
        ),
        2,
        "NaN",
    ),
    (jsonl({"type": "header", "v": 3, "sessionId": "s", "timestamp": 0, "title": "t"}), 1, "newer"),
    (jsonl({"type": "header", "v": "2"}), 1, "whole number"),
    (jsonl({"type": "header", "v": 2, "sessionId": "s", "timestamp": 0}), 1, "title"),
    (b'{"type":"header"}\n\xff\n', 2, "UTF-8"),
    (jsonl({"type": "session", "version": 9, "id": "x"}), 1, "newer"),
    (
        jsonl(
            {"type": "session", "version": 3, "id": "x"},
            {
                "type": "message",
                "id": "a",
                "parentId": "zz",
                "timestamp": "2025-01-01T00:00:00Z",
                "message": {"role": "user", "content": "x"},
            },
        ),
        2,
        "parentId",
    ),
    (jsonl(HEADER, "[" * 5000 + "]" * 5000), 2, "nested"),
]


@pytest.mark.parametrize(("data", "line", "phrase"), BAD)
def test_a_bad_file_is_refused_naming_the_line_and_what_is_wrong(
    data: bytes, line: int, phrase: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        read(data)
    assert refused.value.details.get("line") == line
    assert phrase.lower() in refused.value.message.lower()
    if line and refused.value.message.startswith("Line"):
        assert refused.value.message.startswith(f"Line {line}:")


def test_a_file_over_the_size_limit_is_refused_before_it_is_read() -> None:
    with pytest.raises(PayloadTooLarge) as refused:
        read(b" " * (MAX_FILE_BYTES + 1))
    assert refused.value.details["maxBytes"] == MAX_FILE_BYTES


def test_a_file_with_too_many_entries_is_refused() -> None:
    line = '{"type":"label","id":"x","parentId":null,"timestamp":0,"targetId":"x"}\n'
    data = (HEADER + "\n" + line * (MAX_LINES + 1)).encode()
    with pytest.raises(InvalidArgument) as refused:
        read(data)
    assert refused.value.details["maxLines"] == MAX_LINES


@given(sessions(), st.data())
@settings(max_examples=80)
def test_a_damaged_file_is_read_or_refused_as_invalid_never_an_other_error(
    data: bytes, choice: st.DataObject
) -> None:
    damage = choice.draw(
        st.sampled_from(["cut", "flip", "drop_line", "swap_lines", "garble_value"])
    )
    raw = bytearray(data)
    rows = data.split(b"\n")
    if damage == "cut":
        raw = raw[: choice.draw(st.integers(0, len(raw)))]
    elif damage == "flip" and raw:
        i = choice.draw(st.integers(0, len(raw) - 1))
        raw[i] = choice.draw(st.integers(0, 255))
    elif damage == "drop_line" and len(rows) > 1:
        i = choice.draw(st.integers(0, len(rows) - 1))
        raw = bytearray(b"\n".join(rows[:i] + rows[i + 1 :]))
    elif damage == "swap_lines" and len(rows) > 2:
        i = choice.draw(st.integers(0, len(rows) - 2))
        rows[i], rows[i + 1] = rows[i + 1], rows[i]
        raw = bytearray(b"\n".join(rows))
    elif damage == "garble_value":
        garbage = choice.draw(st.sampled_from([b"null", b"[]", b"{}", b"-1", b'"x"', b"1e999"]))
        raw = bytearray(data.replace(b'"timestamp":', b'"timestamp":' + garbage + b',"_":', 1))
    try:
        once = encode(read(bytes(raw)).session)
    except InvalidArgument as refused:
        assert "line" in refused.details or "maxBytes" in refused.details
    else:
        assert encode(read(once).session) == once
