"""The Pi driver's event mapping, fed a session recorded from ``pi --mode rpc`` 0.73.1 with
LineUp's extension (a greeting with reasoning, a LineUp tool call, three approved or declined
commands, an approved write and edit, then a model that cannot be reached), with no process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lineup.engines.pi_events import (
    BRIDGE,
    PiEventMapper,
    apply_edits,
    approval_request,
    bridge_request,
    command_result,
    error_code,
    file_diff,
    pi_models,
    pi_settings,
    question_tool,
    tool_request,
)
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
    ToolOutcome,
    TurnFinished,
    TurnStarted,
)
from lineup.protocol.errors import ErrorCode

RECORDED = Path(__file__).parents[2] / "data" / "engines" / "pi-0.73-session.jsonl"
CWD = "/home/ana/project/work"
SESSION = "01a243c6-caf6-7742-8ce0-8a9e370933ff"


def recorded() -> list[dict[str, Any]]:
    return [json.loads(line) for line in RECORDED.read_text().split("\n") if line.strip()]


def replay(mapper: PiEventMapper) -> list[list[RuntimeEvent]]:
    """The recorded lines through the mapper as the driver feeds them — the answer to the
    question asked after ``agent_end`` settles the run — the events grouped by turn."""
    mapper.session_id = SESSION
    turns: list[list[RuntimeEvent]] = []
    for message in recorded():
        if message.get("type") == "response":
            events = mapper.settle() if message.get("command") == "get_state" else []
        else:
            events = mapper.event(message)
        for event in events:
            if isinstance(event, TurnStarted):
                turns.append([])
            turns[-1].append(event)
    return turns


def bridge_requests() -> list[dict[str, Any]]:
    found = []
    for message in recorded():
        if message.get("type") == "extension_ui_request" and message.get("method") == "input":
            request = bridge_request(message.get("title"), message.get("placeholder"))
            assert request is not None
            found.append(dict(request))
    return found


def test_a_streamed_reply_comes_as_deltas_then_the_whole_message_after_its_reasoning() -> None:
    first = replay(PiEventMapper(CWD))[0]
    assert [type(e) for e in first] == [
        TurnStarted,
        ReasoningSummary,
        MessageDelta,
        MessageDelta,
        MessageDone,
        TokenUsage,
        TurnFinished,
    ]
    assert first[1] == ReasoningSummary(item_id="turn-1/1/0", text="The person greets me.")
    assert [e.text for e in first if isinstance(e, MessageDelta)] == ["Hel", "lo"]
    assert first[4] == MessageDone(item_id="turn-1/1/1", text="Hello")
    assert first[5] == TokenUsage(input_tokens=10, output_tokens=5)
    assert first[-1] == TurnFinished(
        turn_id="turn-1", status="completed", native_session_id=SESSION
    )


def test_a_lineup_tool_call_reports_its_arguments_and_the_hosts_answer() -> None:
    second = replay(PiEventMapper(CWD))[1]
    assert (
        ToolCallStarted(
            call_id="call_1|fc_1", name="ask_human", arguments={"question": "Which colour?"}
        )
        in second
    )
    assert ToolCallFinished(call_id="call_1|fc_1", ok=True, result="blue") in second
    asked = tool_request(bridge_requests()[0])
    assert (asked.call_id, asked.name, dict(asked.arguments)) == (
        "call_1|fc_1",
        "ask_human",
        {"question": "Which colour?"},
    )


def test_commands_stream_their_output_and_end_with_the_exit_code() -> None:
    second = replay(PiEventMapper(CWD))[1]
    ran = [e for e in second if isinstance(e, CommandStarted | CommandOutput | CommandFinished)]
    assert ran == [
        CommandStarted(item_id="call_2|fc_2", command="echo hello; echo done", cwd=CWD),
        CommandOutput(item_id="call_2|fc_2", chunk="hello\ndone\n"),
        CommandFinished(item_id="call_2|fc_2", exit_code=0),
        CommandStarted(item_id="call_4|fc_4", command="ls missing-file", cwd=CWD),
        CommandOutput(
            item_id="call_4|fc_4",
            chunk="ls: cannot access 'missing-file': No such file or directory\n",
        ),
        CommandFinished(item_id="call_4|fc_4", exit_code=2),
    ]


def test_a_declined_command_is_a_tool_call_that_did_not_run_with_the_persons_reason() -> None:
    second = replay(PiEventMapper(CWD))[1]
    assert not any(isinstance(e, CommandStarted) and "rm" in e.command for e in second)
    assert (
        ToolCallStarted(
            call_id="call_3|fc_3", name="bash", arguments={"command": "rm -rf notes.txt"}
        )
        in second
    )
    assert (
        ToolCallFinished(
            call_id="call_3|fc_3", ok=False, result="The person declined this: not that one"
        )
        in second
    )


def test_writes_and_edits_are_unified_diffs_relative_to_the_working_directory() -> None:
    second = replay(PiEventMapper(CWD))[1]
    assert [e for e in second if isinstance(e, FileChange)] == [
        FileChange(
            item_id="call_5|fc_5",
            path="colour.txt",
            kind="add",
            diff="--- /dev/null\n+++ b/colour.txt\n@@ -0,0 +1 @@\n+blue\n",
        ),
        FileChange(
            item_id="call_6|fc_6",
            path="notes.txt",
            kind="modify",
            diff="--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n",
        ),
    ]
    assert second[-1] == TurnFinished(
        turn_id="turn-2", status="completed", native_session_id=SESSION
    )


def test_approvals_show_the_command_and_its_directory_or_the_diff_before_anything_runs() -> None:
    approvals = [approval_request(r, CWD) for r in bridge_requests() if r["op"] == "approve"]
    assert [(a.kind, a.title) for a in approvals] == [
        ("command", "Run echo hello; echo done"),
        ("command", "Run rm -rf notes.txt"),
        ("command", "Run ls missing-file"),
        ("file_change", "Create colour.txt"),
        ("file_change", "Change notes.txt"),
    ]
    assert (approvals[0].command, approvals[0].cwd) == ("echo hello; echo done", CWD)
    assert approvals[3].diff == "--- /dev/null\n+++ b/colour.txt\n@@ -0,0 +1 @@\n+blue\n"
    assert approvals[4].diff == (
        "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
    )
    assert approvals[0].request_id == "call_2|fc_2"  # the tool call's id
    assert all(a.editable and a.input for a in approvals)  # the extension runs an edited input


def test_a_command_allowed_as_the_person_edited_it_is_reported_as_it_runs() -> None:
    mapper = PiEventMapper(CWD)
    mapper.event({"type": "agent_start"})
    args = {"command": "rm -rf build"}
    mapper.event(
        {"type": "tool_execution_start", "toolCallId": "c1", "toolName": "bash", "args": args}
    )
    mapper.permitted("c1", {"command": "rm -rf build/cache"})
    update = {"content": [{"type": "text", "text": "gone"}]}
    events = mapper.event(
        {"type": "tool_execution_update", "toolCallId": "c1", "partialResult": update}
    )
    assert events[0] == CommandStarted(item_id="c1", command="rm -rf build/cache", cwd=CWD)


def test_a_model_that_cannot_be_reached_fails_the_turn_as_unavailable() -> None:
    third = replay(PiEventMapper(CWD))[2]
    assert third == [
        TurnStarted(turn_id="turn-3"),
        EngineError(code=ErrorCode.UNAVAILABLE, message="Connection error."),
        TurnFinished(turn_id="turn-3", status="failed", native_session_id=SESSION),
    ]


def _assistant(stop: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": [], "stopReason": stop, **extra}


def test_the_turn_goes_on_when_pi_compacts_and_runs_again_after_agent_end() -> None:
    mapper = PiEventMapper(CWD)
    assert mapper.event({"type": "agent_start"}) == [TurnStarted(turn_id="turn-1")]
    overflow = _assistant("error", errorMessage="context length exceeded")
    mapper.event({"type": "agent_end", "messages": [overflow]})
    mapper.event({"type": "compaction_start", "reason": "overflow"})
    assert mapper.settle() == []  # the answer to the driver's question came while compacting
    assert mapper.event({"type": "compaction_end", "reason": "overflow", "willRetry": True}) == []
    assert mapper.event({"type": "agent_start"}) == []  # the same LineUp turn
    mapper.event({"type": "agent_end", "messages": [_assistant("stop")]})
    assert mapper.settle() == [TurnFinished(turn_id="turn-1", status="completed")]
    assert not mapper.running


def test_an_aborted_run_or_one_the_driver_interrupted_ends_interrupted() -> None:
    mapper = PiEventMapper()
    mapper.event({"type": "agent_start"})
    mapper.event({"type": "agent_end", "messages": [_assistant("aborted")]})
    assert mapper.settle()[-1] == TurnFinished(turn_id="turn-1", status="interrupted")
    mapper.event({"type": "agent_start"})
    mapper.interrupting = True
    mapper.event({"type": "agent_end", "messages": [_assistant("stop")]})
    assert mapper.settle() == [TurnFinished(turn_id="turn-2", status="interrupted")]
    assert not mapper.interrupting


def test_output_that_pi_resends_as_a_moving_tail_is_not_lost() -> None:
    mapper = PiEventMapper(CWD)
    mapper.event({"type": "agent_start"})
    start = {"toolCallId": "c", "toolName": "bash", "args": {"command": "yes | head"}}
    mapper.event({"type": "tool_execution_start", **start})

    def update(text: str) -> list[RuntimeEvent]:
        content = [{"type": "text", "text": text}]
        return mapper.event(
            {"type": "tool_execution_update", **start, "partialResult": {"content": content}}
        )

    assert update("a\n") == [
        CommandStarted(item_id="c", command="yes | head", cwd=CWD),
        CommandOutput(item_id="c", chunk="a\n"),
    ]
    assert update("a\nb\n") == [CommandOutput(item_id="c", chunk="b\n")]
    assert update("y\nz\n") == [CommandOutput(item_id="c", chunk="\n[…]\ny\nz\n")]


def test_the_exit_code_is_read_from_the_text_pi_gives_the_model() -> None:
    assert command_result("hi\n", False) == ("hi\n", 0)
    assert command_result("(no output)", False) == ("", 0)
    assert command_result("oops\n\n\nCommand exited with code 3", True) == ("oops\n", 3)
    assert command_result("partial\n\nCommand aborted", True) == ("partial", None)
    assert command_result("Command timed out after 5 seconds", True) == ("", None)


def test_pis_error_messages_map_onto_the_taxonomy() -> None:
    assert error_code("401 Incorrect API key provided") == ErrorCode.UNAUTHENTICATED
    assert error_code("429 Rate limit reached") == ErrorCode.RATE_LIMITED
    assert error_code("404 The model `x` does not exist") == ErrorCode.NOT_FOUND
    assert error_code("400 This model's maximum context length is 8192") == (
        ErrorCode.INVALID_ARGUMENT
    )
    assert error_code("503 Service Unavailable") == ErrorCode.UNAVAILABLE
    assert error_code("Connection error.") == ErrorCode.UNAVAILABLE
    assert error_code("something odd") == ErrorCode.UNKNOWN_RESULT


def test_the_config_names_only_the_sessions_endpoint_and_not_its_key() -> None:
    endpoint = ModelEndpoint("openai-chat", "http://127.0.0.1:9/v1", "m-1", "sk-secret")
    models = pi_models(endpoint)
    assert "sk-secret" not in json.dumps(models)
    provider = models["providers"]["lineup"]
    assert provider["api"] == "openai-completions"
    assert provider["apiKey"] == "LINEUP_MODEL_API_KEY"
    assert [m["id"] for m in provider["models"]] == ["m-1"]
    assert (
        pi_models(ModelEndpoint("anthropic-messages", "http://h", "c"))["providers"]["lineup"][
            "api"
        ]
        == "anthropic-messages"
    )
    settings = pi_settings(endpoint)
    assert (settings["defaultProvider"], settings["defaultModel"]) == ("lineup", "m-1")
    assert settings["retry"]["enabled"] is False
    assert settings["enableInstallTelemetry"] is False


def test_a_planned_edit_is_shown_as_it_will_apply() -> None:
    edits = [{"oldText": "b", "newText": "B"}, {"oldText": "missing", "newText": "x"}]
    assert apply_edits("a\nb\nb\n", edits) == "a\nB\nb\n"
    assert file_diff("x.txt", "a\n", None) == "--- a/x.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"


def test_only_lineups_own_dialogs_are_bridge_requests_and_pis_questions_become_tool_calls() -> None:
    assert bridge_request("Allow?", '{"op": "tool"}') is None
    assert bridge_request(BRIDGE, "not json") is None
    select = question_tool({"method": "select", "title": "Pick", "options": ["A", "B"]})
    assert select is not None
    assert (select.tool, select.arguments) == (
        "ask_choice",
        {"title": "Pick", "options": ["A", "B"]},
    )
    assert select.read(ToolOutcome(json.dumps({"choices": ["B"], "answered_by": "Ana"}))) == ["B"]
    typed = question_tool({"method": "input", "title": "Name?", "placeholder": "a name"})
    assert typed is not None
    assert (typed.tool, typed.arguments) == (
        "ask_input",
        {"title": "Name?", "placeholder": "a name"},
    )
    assert typed.read(ToolOutcome(json.dumps({"text": "Ana"}))) == ["Ana"]
    edited = question_tool({"method": "editor", "title": "Edit", "prefill": "x"})
    assert edited is not None and edited.tool == "ask_input"
    assert edited.arguments == {"title": "Edit", "description": "The text so far:\n\nx"}
    assert question_tool({"method": "select", "title": "Pick", "options": []}) is None
