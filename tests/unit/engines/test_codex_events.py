"""The Codex driver's event mapping, fed a session recorded from ``codex app-server`` 0.171
(a greeting with a reasoning summary, a LineUp tool call, two commands — one approved —
and two approved file changes), with no process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lineup.engines.codex_events import CodexEventMapper, codex_config, error_code, unified_diff
from lineup.engines.runtime import (
    CommandFinished,
    CommandOutput,
    CommandStarted,
    EngineError,
    FileChange,
    MessageDelta,
    MessageDone,
    ModelEndpoint,
    ReasoningSummary,
    RuntimeEvent,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
    TurnStarted,
)
from lineup.protocol.errors import ErrorCode

RECORDED = Path(__file__).parents[2] / "data" / "engines" / "codex-0.171-session.jsonl"
CWD = "/home/ana/project/work"


def recorded() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDED.read_text().splitlines() if line.strip()]


def replay(mapper: CodexEventMapper) -> list[list[RuntimeEvent]]:
    """The recorded notifications through the mapper, the events grouped by turn."""
    turns: list[list[RuntimeEvent]] = []
    for message in recorded():
        if "id" in message:
            continue  # a server request: answered by the driver, not mapped
        for event in mapper.notification(message["method"], message["params"]):
            if isinstance(event, TurnStarted):
                turns.append([])
            turns[-1].append(event)
    return turns


def test_a_streamed_reply_comes_as_deltas_then_the_whole_message_after_its_reasoning() -> None:
    first = replay(CodexEventMapper(CWD))[0]
    kinds = [type(e) for e in first]
    assert kinds == [
        TurnStarted,
        ReasoningSummary,
        MessageDelta,
        MessageDelta,
        MessageDone,
        TokenUsage,
        TurnFinished,
    ]
    assert first[1] == ReasoningSummary(item_id="rs_0", text="The person greets me.")
    assert [e.text for e in first if isinstance(e, MessageDelta)] == ["Hel", "lo"]
    assert first[4] == MessageDone(item_id="msg_0", text="Hello")
    finished = first[-1]
    assert isinstance(finished, TurnFinished)
    assert finished.status == "completed"
    assert finished.native_session_id == "01a24236-ebb3-7e80-b791-53e66a679653"


def test_a_lineup_tool_call_reports_its_arguments_and_the_hosts_answer() -> None:
    second = replay(CodexEventMapper(CWD))[1]
    started = next(e for e in second if isinstance(e, ToolCallStarted))
    finished = next(e for e in second if isinstance(e, ToolCallFinished))
    assert started == ToolCallStarted(
        call_id="call_1", name="ask_human", arguments={"question": "Which colour?"}
    )
    assert finished == ToolCallFinished(call_id="call_1", ok=True, result="blue")


def test_a_command_streams_its_output_and_ends_with_its_exit_code() -> None:
    third = replay(CodexEventMapper(CWD))[2]
    commands = [e for e in third if isinstance(e, CommandStarted | CommandOutput | CommandFinished)]
    first_id = commands[0].item_id
    started = commands[0]
    assert isinstance(started, CommandStarted)
    assert "printf" in started.command
    assert started.cwd == CWD
    output = "".join(
        e.chunk for e in commands if isinstance(e, CommandOutput) and e.item_id == first_id
    )
    assert output.endswith("one\ntwo\n")
    assert CommandFinished(item_id=first_id, exit_code=0) in commands
    assert CommandFinished(item_id="call_4", exit_code=0) in commands  # the approved one


def test_file_changes_are_unified_diffs_relative_to_the_working_directory() -> None:
    fourth = replay(CodexEventMapper(CWD))[3]
    changes = [e for e in fourth if isinstance(e, FileChange)]
    assert changes == [
        FileChange(
            item_id="call_6",
            path="notes.txt",
            kind="add",
            diff="--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+first line\n",
        ),
        FileChange(
            item_id="call_7",
            path="notes.txt",
            kind="modify",
            diff="--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-first line\n+second line\n",
        ),
    ]


def test_an_approval_request_is_shown_with_the_command_or_the_diff_of_its_item() -> None:
    mapper = CodexEventMapper(CWD)
    requests: dict[str, dict[str, Any]] = {}
    for message in recorded():
        if "id" in message and message["method"].endswith("requestApproval"):
            item_id = message["params"]["itemId"]
            requests[message["method"]] = {
                "command": mapper.command_of(item_id),
                "diff": mapper.diff_of(item_id),
            }
            if message["method"].startswith("item/fileChange"):
                break  # the first file change's approval
        elif "id" not in message:
            mapper.notification(message["method"], message["params"])
    command, cwd = requests["item/commandExecution/requestApproval"]["command"]
    assert command is not None and "touch made.txt" in command
    assert cwd == CWD
    assert requests["item/fileChange/requestApproval"]["diff"] == (
        "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+first line\n"
    )


def test_token_usage_is_the_latest_requests_with_the_context_window() -> None:
    usage = [e for turn in replay(CodexEventMapper(CWD)) for e in turn if isinstance(e, TokenUsage)]
    assert usage[0] == TokenUsage(
        input_tokens=10, output_tokens=5, cached_input_tokens=0, context_window=258400
    )


def test_a_failed_turn_reports_one_error_in_the_taxonomy() -> None:
    mapper = CodexEventMapper()
    mapper.notification(
        "turn/started", {"threadId": "t", "turn": {"id": "u", "status": "inProgress"}}
    )
    error = {"message": "429 Too Many Requests", "codexErrorInfo": "usageLimitExceeded"}
    retrying = mapper.notification(
        "error", {"threadId": "t", "turnId": "u", "willRetry": True, "error": error}
    )
    final = mapper.notification(
        "error", {"threadId": "t", "turnId": "u", "willRetry": False, "error": error}
    )
    done = mapper.notification(
        "turn/completed",
        {"threadId": "t", "turn": {"id": "u", "status": "failed", "error": error, "items": []}},
    )
    assert retrying == []
    assert final == [EngineError(code=ErrorCode.RATE_LIMITED, message="429 Too Many Requests")]
    assert done == [TurnFinished(turn_id="u", status="failed", native_session_id="t")]


def test_error_kinds_map_onto_the_taxonomy() -> None:
    assert error_code({"httpConnectionFailed": {"httpStatusCode": None}}) == ErrorCode.UNAVAILABLE
    assert error_code("unauthorized") == ErrorCode.UNAUTHENTICATED
    assert error_code("contextWindowExceeded") == ErrorCode.INVALID_ARGUMENT
    assert error_code("somethingNew") == ErrorCode.UNKNOWN_RESULT
    assert error_code(None) == ErrorCode.UNKNOWN_RESULT


def test_a_deleted_file_is_a_diff_of_its_removed_lines() -> None:
    assert unified_diff("old.txt", "delete", "a\nb\n") == (
        "--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\n-b\n"
    )


def test_the_config_points_at_the_endpoint_names_the_key_variable_and_holds_no_key() -> None:
    endpoint = ModelEndpoint(
        api="openai-responses", base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-secret"
    )
    config = codex_config(endpoint, approval_policy="on-request", sandbox="workspace-write")
    assert 'base_url = "http://127.0.0.1:9/v1"' in config
    assert 'env_key = "LINEUP_MODEL_API_KEY"' in config
    assert "sk-secret" not in config
    for off in ("plugins = false", "apps = false", "check_for_update_on_startup = false"):
        assert off in config
    keyless = codex_config(
        ModelEndpoint(api="openai-responses", base_url="http://127.0.0.1:9/v1", model="m"),
        approval_policy="never",
        sandbox="read-only",
    )
    assert "env_key" not in keyless
