"""The Claude Code driver's event mapping, fed a session recorded from ``claude -p`` 2.1.332 in
stream-json (a greeting with reasoning, a LineUp tool call, three commands — run, run as the
person edited it, denied — an edit and a write, a refused model request, an interrupted turn,
and follow-ups taken into a turn and run after it), with no process.

The recording holds every line Claude Code printed, and, wrapped as ``{"host": …}``, every line
the driver wrote to it; the replay makes the mapper calls the driver makes at those points."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lineup.engines.claude_code_events import (
    ClaudeCodeEventMapper,
    anthropic_base_url,
    edited_text,
    lineup_tool,
    proposed_diff,
    status_code,
)
from lineup.engines.runtime import (
    CommandFinished,
    CommandOutput,
    CommandStarted,
    EngineError,
    FileChange,
    MessageDelta,
    MessageDone,
    ReasoningSummary,
    RuntimeEvent,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
)
from lineup.protocol.errors import ErrorCode

RECORDED = Path(__file__).parents[2] / "data" / "engines" / "claude-code-2.1.332-session.jsonl"
CWD = "/home/ana/project/work"
SESSION = "b02d7971-9468-46e3-b368-e3c5be306f62"


def recorded() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDED.read_text().splitlines() if line.strip()]


def replay(mapper: ClaudeCodeEventMapper) -> list[list[RuntimeEvent]]:
    """The recorded lines through the mapper, the events grouped by turn."""
    turns: list[list[RuntimeEvent]] = []
    asked: dict[str, dict[str, Any]] = {}
    for line in recorded():
        sent = line.get("host")
        if sent is None:
            if line.get("type") == "control_request":
                asked[line["request_id"]] = line["request"]  # answered by the driver
            else:
                events = mapper.line(line)
                if turns:
                    turns[-1].extend(events)
        elif sent["type"] == "user" and mapper.in_turn:
            mapper.sent(sent["uuid"])  # a follow-up (steer)
        elif sent["type"] == "user":
            turns.append(mapper.begin(sent["uuid"], sent["uuid"]))
        elif sent["type"] == "control_request" and sent["request"]["subtype"] == "interrupt":
            mapper.interrupting()
        elif sent["type"] == "control_response":
            answer = sent["response"].get("response") or {}
            request = asked.get(sent["response"]["request_id"]) or {}
            if request.get("subtype") == "can_use_tool" and answer.get("behavior") == "allow":
                turns[-1] += mapper.permitted(request["tool_use_id"], answer["updatedInput"])
    return turns


TURNS = replay(ClaudeCodeEventMapper(CWD))


def finished(events: list[RuntimeEvent]) -> TurnFinished:
    last = events[-1]
    assert isinstance(last, TurnFinished), events
    return last


def test_a_streamed_reply_comes_as_deltas_then_the_whole_message_after_its_reasoning() -> None:
    first = TURNS[0]
    assert [type(e) for e in first] == [
        TurnStarted,
        ReasoningSummary,
        MessageDelta,
        MessageDelta,
        MessageDone,
        TokenUsage,
        TurnFinished,
    ]
    assert first[1] == ReasoningSummary(item_id="msg_0", text="The person greets me.")
    assert [e.text for e in first if isinstance(e, MessageDelta)] == ["Hel", "lo, Ana."]
    assert first[4] == MessageDone(item_id="msg_0", text="Hello, Ana.")
    assert first[5] == TokenUsage(input_tokens=10, output_tokens=5, context_window=1_000_000)
    assert finished(first).status == "completed"
    assert finished(first).native_session_id == SESSION
    assert all(finished(turn).turn_id == turn[0].turn_id for turn in TURNS)  # type: ignore[attr-defined]


def test_a_lineup_tool_call_is_reported_under_lineups_name_with_the_hosts_answer() -> None:
    second = TURNS[1]
    assert (
        ToolCallStarted(
            call_id="toolu_1", name="ask_human", arguments={"question": "Which colour?"}
        )
        in second
    )
    assert ToolCallFinished(call_id="toolu_1", ok=True, result="blue") in second
    assert [e.text for e in second if isinstance(e, MessageDone)] == ["Blue it is."]


def test_commands_are_reported_as_they_ran_with_their_output_and_exit_code() -> None:
    commands = [
        e for e in TURNS[2] if isinstance(e, CommandStarted | CommandOutput | CommandFinished)
    ]
    assert commands == [
        CommandStarted(item_id="toolu_3", command="echo approved; exit 3", cwd=CWD),
        CommandOutput(item_id="toolu_3", chunk="approved"),
        CommandFinished(item_id="toolu_3", exit_code=3),
        # the person rewrote it before allowing it
        CommandStarted(item_id="toolu_4", command="echo edited > edited.txt", cwd=CWD),
        CommandFinished(item_id="toolu_4", exit_code=0),
        # denied: it never ran, and the person's reason is its output
        CommandStarted(item_id="toolu_5", command="touch declined.txt", cwd=CWD),
        CommandOutput(item_id="toolu_5", chunk="not in this folder, please"),
        CommandFinished(item_id="toolu_5", exit_code=None),
    ]


def test_file_changes_carry_unified_diffs_of_what_was_written() -> None:
    third = TURNS[2]
    assert [e for e in third if isinstance(e, FileChange)] == [
        FileChange(
            item_id="toolu_7",
            path="notes.txt",
            kind="modify",
            diff="--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n",
        ),
        # the model proposed "draft"; the person's words are what was written
        FileChange(
            item_id="toolu_8",
            path="new.txt",
            kind="add",
            diff="--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+the person's words\n",
        ),
    ]
    names = [e.name for e in third if isinstance(e, ToolCallStarted)]
    assert names == ["Read", "Edit", "Write"]
    assert finished(third).status == "completed"


def test_a_refused_model_request_fails_the_turn_in_the_taxonomy() -> None:
    fourth = TURNS[3]
    assert [type(e) for e in fourth] == [TurnStarted, EngineError, TurnFinished]
    error = fourth[1]
    assert isinstance(error, EngineError)
    assert error.code == ErrorCode.RATE_LIMITED
    assert "slow down" in error.message
    assert finished(fourth).status == "failed"


def test_an_interrupted_turn_ends_interrupted_without_an_error() -> None:
    fifth = TURNS[4]
    assert not [e for e in fifth if isinstance(e, EngineError)]
    cancelled = next(e for e in fifth if isinstance(e, ToolCallFinished))
    assert cancelled.call_id == "toolu_11" and not cancelled.ok
    assert finished(fifth).status == "interrupted"


def test_follow_ups_keep_the_turn_open_until_claude_code_has_answered_them() -> None:
    taken_in, run_after = TURNS[5], TURNS[6]
    assert [e.text for e in taken_in if isinstance(e, MessageDone)] == ["Noted, quickly."]
    assert [type(e) for e in taken_in].count(TurnFinished) == 1
    # the second came after the last model request: Claude Code ran it as a turn of its own
    assert [e.text for e in run_after if isinstance(e, MessageDone)] == [
        "The size is small.",
        "One more answer.",
    ]
    assert [type(e) for e in run_after].count(TurnFinished) == 1
    assert finished(run_after).status == "completed"
    assert len(TURNS) == 7


def test_a_retry_and_a_refusal_by_rule_are_reported_in_the_taxonomy() -> None:
    mapper = ClaudeCodeEventMapper(CWD)
    mapper.begin("t1", "u1")
    retry = {
        "type": "system",
        "subtype": "api_retry",
        "attempt": 1,
        "max_retries": 3,
        "retry_delay_ms": 2000,
        "error_status": 529,
        "error": "overloaded",
    }
    refused = {
        "type": "system",
        "subtype": "permission_denied",
        "tool_name": "WebFetch",
        "tool_use_id": "toolu_9",
        "decision_reason": "a deny rule in the project's settings",
        "message": "Permission to use WebFetch has been denied.",
    }
    assert mapper.line(retry) == [
        EngineError(
            code=ErrorCode.UNAVAILABLE,
            message="The model request failed (529); Claude Code tries again in 2 s "
            "(attempt 1 of 3).",
        )
    ]
    [denied] = mapper.line(refused)
    assert isinstance(denied, EngineError)
    assert denied.code == ErrorCode.FORBIDDEN and "deny rule" in denied.message


def test_a_turn_cut_by_its_turn_limit_fails_as_rate_limited() -> None:
    mapper = ClaudeCodeEventMapper(CWD)
    mapper.begin("t1", "u1")
    mapper.line({"type": "command_lifecycle", "command_uuid": "u1", "state": "started"})
    events = mapper.line(
        {
            "type": "result",
            "subtype": "error_max_turns",
            "is_error": True,
            "terminal_reason": "max_turns",
            "errors": ["Reached maximum number of turns (3)"],
            "session_id": "s1",
        }
    )
    assert events == [
        EngineError(code=ErrorCode.RATE_LIMITED, message="Reached maximum number of turns (3)"),
        TurnFinished(turn_id="t1", status="failed", native_session_id="s1"),
    ]


def test_model_server_statuses_map_onto_the_taxonomy() -> None:
    assert status_code(401) == ErrorCode.UNAUTHENTICATED
    assert status_code(403) == ErrorCode.FORBIDDEN
    assert status_code(404) == ErrorCode.NOT_FOUND
    assert status_code(413) == ErrorCode.INVALID_ARGUMENT
    assert status_code(429) == ErrorCode.RATE_LIMITED
    assert status_code(529) == ErrorCode.UNAVAILABLE
    assert status_code(None) == ErrorCode.UNAVAILABLE  # no answer at all


def test_a_proposed_edit_is_shown_against_the_file_as_it_is() -> None:
    current = "one\ntwo\nthree\n"
    edit = {"old_string": "two", "new_string": "2"}
    assert proposed_diff("Edit", edit, "a.txt", current) == (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
    )
    every = {"old_string": "o", "new_string": "0", "replace_all": True}
    assert edited_text("Edit", every, current) == "0ne\ntw0\nthree\n"
    assert edited_text("Edit", {**every, "replace_all": False}, current) == "0ne\ntwo\nthree\n"
    several = {
        "edits": [{"old_string": "one", "new_string": "1"}, {"old_string": "1", "new_string": "I"}]
    }
    assert edited_text("MultiEdit", several, current) == "I\ntwo\nthree\n"
    assert proposed_diff("Write", {"content": "new\n"}, "b.txt", None) == (
        "--- /dev/null\n+++ b/b.txt\n@@ -0,0 +1 @@\n+new\n"
    )
    # an edit that cannot apply (the string is not there, the file is missing) shows no diff
    missing = {"old_string": "four", "new_string": "4"}
    assert proposed_diff("Edit", missing, "a.txt", current) is None
    assert proposed_diff("Edit", edit, "c.txt", None) is None


def test_the_endpoint_and_tool_names_are_translated_for_claude_code() -> None:
    assert anthropic_base_url("http://127.0.0.1:8765/v1") == "http://127.0.0.1:8765"
    assert anthropic_base_url("https://models.example/anthropic/") == (
        "https://models.example/anthropic"
    )
    assert lineup_tool("mcp__lineup__ask_human") == "ask_human"
    assert lineup_tool("mcp__other__ask_human") is None
