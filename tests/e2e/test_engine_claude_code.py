"""The Claude Code driver against the real ``claude`` (2.1.332, as ``make engines`` installs it)
and the scripted model speaking the Anthropic Messages API: what a person relies on when
LineUp hosts Claude Code — a conversation in one long-lived process, LineUp's tools answered by
the host, commands and file changes only with the person's approval (and as the person edited
them), interrupt, follow-ups and crashes handled without a hang, no process left behind, and
nothing contacted but loopback."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lineup.engines.claude_code import ClaudeCodeRuntime, ClaudeCodeSession, find_claude
from lineup.engines.process_tree import alive, descendants
from lineup.engines.runtime import (
    ApprovalDecision,
    ApprovalRequest,
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
    SessionSpec,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    ToolInvocation,
    ToolOutcome,
    ToolSpec,
    Turn,
    TurnFinished,
    TurnStarted,
)
from lineup.protocol.errors import ErrorCode
from tests.e2e.processes import ROOT
from tests.support.scripted_model import Request, ScriptedModel, Step
from tests.support.waiting import until_async

INSTALLED = ROOT / "tests/engines/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
CLAUDE = find_claude(str(INSTALLED)) if INSTALLED.exists() else find_claude()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CLAUDE is None,
        reason="Claude Code is not installed: run `make engines` (or set LINEUP_CLAUDE_BIN)",
    ),
]

DEADLINE = 60.0
KEY = "k-test-claude-secret"

ASK = ToolSpec(
    name="ask_human",
    description="Ask the person a question and wait for the answer.",
    input_schema={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
)
ASK_TOOL = "mcp__lineup__ask_human"
"""How the model calls LineUp's tool: Claude Code names MCP tools by server and tool."""


class Host:
    """A RuntimeHost for tests: ``decide`` answers approvals (allow by default), tools are
    answered with ``answer`` — or, with ``hold``, kept pending until released or cancelled."""

    def __init__(
        self,
        decide: Callable[[ApprovalRequest], ApprovalDecision] | None = None,
        answer: str = "blue",
        hold: bool = False,
    ) -> None:
        self.decide = decide or (lambda _: ApprovalDecision(allow=True))
        self.answer = answer
        self.hold = hold
        self.approvals: list[ApprovalRequest] = []
        self.calls: list[ToolInvocation] = []
        self.called = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.approvals.append(request)
        return self.decide(request)

    async def call_tool(self, call: ToolInvocation) -> ToolOutcome:
        self.calls.append(call)
        self.called.set()
        if self.hold:
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        return ToolOutcome(text=self.answer)


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as scripted:
        yield scripted


def spec(tmp_path: Path, model: ScriptedModel, **overrides: object) -> SessionSpec:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    values: dict[str, object] = {
        "cwd": str(work),
        "model": ModelEndpoint(
            api="anthropic-messages", base_url=model.base_url, model="scripted", api_key=KEY
        ),
        "state_dir": str(tmp_path / "state"),
        "tools": (ASK,),
    }
    values.update(overrides)
    return SessionSpec(**values)  # type: ignore[arg-type]


async def start(
    tmp_path: Path, model: ScriptedModel, host: Host, **overrides: object
) -> ClaudeCodeSession:
    return await ClaudeCodeRuntime(str(CLAUDE)).start(spec(tmp_path, model, **overrides), host)


async def run(session: ClaudeCodeSession, text: str) -> list[RuntimeEvent]:
    async with asyncio.timeout(DEADLINE):
        return [event async for event in session.turn(text)]


def finished(events: list[RuntimeEvent]) -> TurnFinished:
    last = events[-1]
    assert isinstance(last, TurnFinished), events
    return last


def replies(events: list[RuntimeEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, MessageDone)]


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def traceable() -> bool:
    if shutil.which("strace") is None:
        return False
    probe = subprocess.run(["strace", "-f", "-o", os.devnull, "true"], capture_output=True)
    return probe.returncode == 0


def edited(request: ApprovalRequest, **changes: Any) -> ApprovalDecision:
    assert request.editable and request.input is not None
    return ApprovalDecision(allow=True, updated_input={**request.input, **changes})


async def test_a_conversation_of_several_turns_runs_in_one_process_with_the_key_kept_secret(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(
        Step.text("Hel", "lo, Ana.", reasoning="The person greets me."),
        Step.text("You said your name is Ana."),
        Step.error(429, "slow down"),
        Step.text("Back again."),
    )
    spawned = time.monotonic()
    session = await start(tmp_path, model, Host())
    try:
        pid = session.pid
        assert pid is not None and KEY not in command_line(pid)
        first = await run(session, "Hi, I am Ana.")
        first_done = time.monotonic()
        second = await run(session, "What is my name?")
        second_done = time.monotonic()
        limited = await run(session, "And now?")
        after = await run(session, "Try again.")
        assert session.pid == pid
    finally:
        await session.close()
    print(
        f"\nClaude Code: spawn to first turn done {first_done - spawned:.2f} s, "
        f"second turn {second_done - first_done:.2f} s"
    )
    assert isinstance(first[0], TurnStarted)
    assert ReasoningSummary(item_id="msg_0", text="The person greets me.") in first
    assert [e.text for e in first if isinstance(e, MessageDelta)] == ["Hel", "lo, Ana."]
    assert MessageDone(item_id="msg_0", text="Hello, Ana.") in first
    usage = next(e for e in first if isinstance(e, TokenUsage))
    assert (usage.input_tokens, usage.output_tokens) == (10, 5)
    assert finished(first).status == "completed"
    assert finished(second).status == "completed"
    assert finished(second).native_session_id == session.native_session_id
    # the second model request carries the whole conversation, and the key as Anthropic's
    request = model.model_requests()[1]
    assert request.path.startswith("/v1/messages")
    assert "Hi, I am Ana." in request.text() and "Hello, Ana." in request.text()
    assert "What is my name?" in request.text()
    assert request.headers.get("x-api-key") == KEY
    # a refused model request fails that turn in the taxonomy; the next one works
    errors = [e for e in limited if isinstance(e, EngineError)]
    assert [e.code for e in errors] == [ErrorCode.RATE_LIMITED]
    assert "slow down" in errors[0].message
    assert finished(limited).status == "failed"
    assert replies(limited) == []
    assert replies(after) == ["Back again."]
    log = (tmp_path / "state" / "claude-code.log").read_text()
    assert KEY not in log


async def test_a_lineup_tool_is_answered_by_the_host_and_only_loopback_is_contacted(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.call(ASK_TOOL, question="Which colour?"), Step.text("Blue it is."))
    trace = tmp_path / "connect.trace"
    launcher: tuple[str, ...] = ()
    if traceable():
        launcher = ("strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace))
    host = Host(answer="blue, the person said")
    runtime = ClaudeCodeRuntime(str(CLAUDE), launcher=launcher)
    session = await runtime.start(spec(tmp_path, model), host)
    try:
        events = await run(session, "Ask me for a colour.")
    finally:
        await session.close()
    assert [(c.name, dict(c.arguments)) for c in host.calls] == [
        ("ask_human", {"question": "Which colour?"})
    ]
    assert host.approvals == []  # LineUp's own tools reach the person without a prompt
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    assert (started.name, host.calls[0].call_id) == ("ask_human", started.call_id)
    assert (
        ToolCallFinished(call_id=started.call_id, ok=True, result="blue, the person said") in events
    )
    assert model.tool_outputs() == ["blue, the person said"]  # what the model saw next
    offered = [t.get("name") for t in model.model_requests()[0].body.get("tools", [])]
    assert ASK_TOOL in offered
    assert finished(events).status == "completed"
    if launcher:
        text = trace.read_text()
        addresses = re.findall(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"', text)
        contacted = {a or b for a, b in addresses}
        assert "127.0.0.1" in contacted, text[-2000:]
        assert contacted <= {"127.0.0.1", "::1"}, f"beyond loopback: {sorted(contacted)}"
        assert f"sin_port=htons({model.port})" in text


async def test_commands_run_as_the_person_allows_edits_or_denies_them(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(
        Step.shell("echo approved > approved.txt; exit 3"),
        Step.shell("touch proposed.txt"),
        Step.shell("touch declined.txt"),
        Step.text("Done as you said."),
    )

    def decide(request: ApprovalRequest) -> ApprovalDecision:
        if "proposed" in (request.command or ""):
            return edited(request, command="echo edited > edited.txt")
        if "declined" in (request.command or ""):
            return ApprovalDecision(allow=False, reason="not in this folder, please")
        return ApprovalDecision(allow=True)

    host = Host(decide=decide)
    session = await start(tmp_path, model, host)
    try:
        events = await run(session, "Make three files.")
    finally:
        await session.close()
    work = tmp_path / "work"
    assert (work / "approved.txt").read_text() == "approved\n"
    assert (work / "edited.txt").read_text() == "edited\n"  # what ran is what the person wrote
    assert not (work / "proposed.txt").exists()
    assert not (work / "declined.txt").exists()
    assert [(r.kind, r.command) for r in host.approvals] == [
        ("command", "echo approved > approved.txt; exit 3"),
        ("command", "touch proposed.txt"),
        ("command", "touch declined.txt"),
    ]
    assert host.approvals[0].cwd == str(work) and host.approvals[0].tool == "Bash"
    started = [e for e in events if isinstance(e, CommandStarted)]
    assert [s.command for s in started] == [  # as they ran
        "echo approved > approved.txt; exit 3",
        "echo edited > edited.txt",
        "touch declined.txt",
    ]
    ends = {e.item_id: e.exit_code for e in events if isinstance(e, CommandFinished)}
    assert [ends[s.item_id] for s in started] == [3, 0, None]
    assert CommandOutput(item_id=started[2].item_id, chunk="not in this folder, please") in events
    assert "not in this folder, please" in model.tool_outputs()  # the model was told why
    assert finished(events).status == "completed"


async def test_file_changes_are_shown_as_diffs_of_the_file_on_disk_and_written_as_allowed(
    tmp_path: Path, model: ScriptedModel
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("one\ntwo\n")
    model.then(
        Step.call("Read", file_path=str(work / "notes.txt")),
        Step.call("Edit", file_path=str(work / "notes.txt"), old_string="two", new_string="2"),
        Step.call("Write", file_path=str(work / "new.txt"), content="draft\n"),
        Step.text("Both written."),
    )

    def decide(request: ApprovalRequest) -> ApprovalDecision:
        if request.tool == "Write":
            return edited(request, content="the person's words\n")
        return ApprovalDecision(allow=True)

    host = Host(decide=decide)
    session = await start(tmp_path, model, host)
    try:
        events = await run(session, "Tidy the notes and start a new file.")
    finally:
        await session.close()
    assert (work / "notes.txt").read_text() == "one\n2\n"
    assert (work / "new.txt").read_text() == "the person's words\n"
    edit, write = [r for r in host.approvals if r.kind == "file_change"]
    assert edit.title == "Edit notes.txt"
    assert edit.diff == ("--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n")
    assert write.diff == "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+draft\n"
    changes = [e for e in events if isinstance(e, FileChange)]
    assert [(c.path, c.kind) for c in changes] == [("notes.txt", "modify"), ("new.txt", "add")]
    assert changes[0].diff.endswith(" one\n-two\n+2\n")
    assert changes[1].diff.endswith("+the person's words\n")  # as written, not as proposed
    assert finished(events).status == "completed"


async def test_interrupt_cancels_a_pending_host_call_and_the_next_turn_works(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.call(ASK_TOOL, question="Still there?"), Step.text("Fine, moving on."))
    host = Host(hold=True)
    session = await start(tmp_path, model, host)
    try:

        async def interrupt_when_asked() -> None:
            await host.called.wait()
            await session.interrupt()

        interrupting = asyncio.create_task(interrupt_when_asked())
        events = await run(session, "Ask me something.")
        await interrupting
        assert finished(events).status == "interrupted"
        assert not [e for e in events if isinstance(e, EngineError)]
        assert host.cancelled.is_set()
        after = await run(session, "Never mind.")
    finally:
        await session.close()
    assert finished(after).status == "completed"
    assert replies(after) == ["Fine, moving on."]
    assert "Never mind." in model.model_requests()[-1].text()


async def test_follow_ups_sent_while_the_turn_works_are_answered_within_it(
    tmp_path: Path,
) -> None:
    """Claude Code shows a follow-up to the model with its next request; one that comes when
    the turn has no request left runs right after it, and the turn lasts until it has."""
    answering = threading.Event()
    go_on = threading.Event()
    numbers = iter(range(100))

    def script(_: Request) -> Step:
        number = next(numbers)
        if number == 0:
            return Step.call(ASK_TOOL, question="Colour?")
        if number == 2:
            answering.set()
            go_on.wait(DEADLINE)
        return Step.text(f"Answer {number}.")

    host = Host(hold=True)
    with ScriptedModel(script) as model:
        session = await start(tmp_path, model, host)
        try:

            async def steer_then_answer() -> None:
                await host.called.wait()
                await session.steer("Also: make it quick.")
                host.release.set()

            steering = asyncio.create_task(steer_then_answer())
            taken_in = await run(session, "Ask me for a colour.")
            await steering

            async def steer_at_the_last_request() -> None:
                await asyncio.to_thread(answering.wait, DEADLINE)
                await session.steer("One more thing.")
                go_on.set()

            steering = asyncio.create_task(steer_at_the_last_request())
            run_after = await run(session, "And the size?")
            await steering
        finally:
            go_on.set()
            await session.close()
        requests = model.model_requests()
    assert replies(taken_in) == ["Answer 1."]
    assert "Also: make it quick." in requests[1].text()
    assert [type(e) for e in taken_in].count(TurnFinished) == 1
    assert finished(taken_in).status == "completed"
    assert replies(run_after) == ["Answer 2.", "Answer 3."]
    assert "One more thing." in requests[3].text()
    assert [type(e) for e in run_after].count(TurnFinished) == 1
    assert finished(run_after).status == "completed"


async def test_an_engine_killed_mid_turn_fails_the_turn_and_a_rebuilt_session_does_not_redo_it(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(
        Step.shell("echo once >> effect.txt"),
        Step.call(ASK_TOOL, question="Wait for me?"),
        Step.text("Carrying on."),
    )
    host = Host(hold=True)
    session = await start(tmp_path, model, host)
    try:
        pid = session.pid
        assert pid is not None

        async def kill_when_asked() -> None:
            await host.called.wait()
            os.kill(pid, signal.SIGKILL)

        killing = asyncio.create_task(kill_when_asked())
        events = await run(session, "Note it once, then ask me.")
        await killing
        hint = session.native_session_id
        dead = await run(session, "Are you there?")  # never started: the host may retry it
    finally:
        await session.close()
    assert [type(e) for e in dead] == [EngineError, TurnFinished]
    assert finished(dead).status == "failed"
    errors = [e for e in events if isinstance(e, EngineError)]
    assert errors and errors[0].code == ErrorCode.UNAVAILABLE
    assert "signal 9" in errors[0].message
    assert finished(events).status == "failed"
    assert host.cancelled.is_set()
    rebuilt = await start(tmp_path, model, Host(), resume_hint=hint)
    try:
        assert rebuilt.resumed
        after = await run(rebuilt, "Go on.")
    finally:
        await rebuilt.close()
    assert replies(after) == ["Carrying on."]
    assert (tmp_path / "work" / "effect.txt").read_text() == "once\n"
    assert "Note it once, then ask me." in model.model_requests()[-1].text()


async def test_close_leaves_no_process_behind_even_with_a_command_running(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.shell("tail -f /dev/null"))  # Claude Code refuses a bare long sleep
    session = await start(tmp_path, model, Host())
    pid = session.pid
    assert pid is not None
    turn = session.turn("Wait a while.")
    async with asyncio.timeout(DEADLINE):
        async for event in turn:
            if isinstance(event, CommandStarted):
                break

    def running() -> list[int]:
        tree = [pid, *descendants(pid)]
        return tree if any("tail -f" in command_line(p) for p in tree) else []

    tree = await until_async(running, "the command to run")  # once its approval is answered
    await session.close()
    await turn.aclose()
    assert alive(tree) == []


async def test_a_new_process_resumes_the_session_from_its_hint(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.text("Noted: the code word is heron."), Step.text("It was heron."))
    first = await start(tmp_path, model, Host())
    try:
        await run(first, "The code word is heron.")
        hint = first.native_session_id
    finally:
        await first.close()
    second = await start(tmp_path, model, Host(), resume_hint=hint)
    try:
        assert second.resumed
        assert second.native_session_id == hint
        events = await run(second, "What was the code word?")
    finally:
        await second.close()
    assert finished(events).status == "completed"
    assert finished(events).native_session_id == hint
    assert "The code word is heron." in model.model_requests()[-1].text()


async def test_a_stale_hint_starts_afresh_from_lineups_history_with_queued_follow_ups(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.text("Rex, your dog."))
    history = (Turn(user="My dog is called Rex.", assistant="A fine name."),)
    stale = "01a24236-0000-4000-8000-000000000000"
    session = await start(tmp_path, model, Host(), resume_hint=stale, history=history)
    try:
        assert not session.resumed
        assert session.native_session_id not in (None, stale)
        await session.steer("Answer in three words.")  # no turn running: kept for the next
        events = await run(session, "What is my dog called?")
    finally:
        await session.close()
    assert finished(events).status == "completed"
    sent = model.model_requests()[-1].text()
    assert "My dog is called Rex." in sent and "A fine name." in sent
    assert "Answer in three words." in sent and "What is my dog called?" in sent


def test_doctor_reports_the_installed_version_and_how_to_install() -> None:
    status = ClaudeCodeRuntime(str(CLAUDE)).status()
    assert status.installed
    assert status.version == "2.1.332"
    assert status.install_hint == "npm install -g @anthropic-ai/claude-code@2.1.332"
    missing = ClaudeCodeRuntime(str(ROOT / "no-such-claude")).status()
    assert not missing.installed and missing.path is None


async def test_the_models_question_to_the_person_is_asked_as_lineups_choice_and_answered(
    tmp_path: Path, model: ScriptedModel
) -> None:
    asked = {
        "question": "Which colour should the button be?",
        "header": "Colour",
        "options": [
            {"label": "Red", "description": "Loud"},
            {"label": "Blue", "description": "Calm"},
        ],
        "multiSelect": False,
    }
    model.then(Step.call("AskUserQuestion", questions=[asked]), Step.text("Blue it is."))
    host = Host(answer=json.dumps({"choices": ["Blue"], "answered_by": "Ana"}))
    choice = ToolSpec("ask_choice", "Ask to choose", {"type": "object"})
    session = await start(tmp_path, model, host, tools=(ASK, choice))
    try:
        events = await run(session, "Ask me about the button.")
    finally:
        await session.close()
    assert host.approvals == []  # a choice card, not an approval of the tool's input
    assert [(c.name, dict(c.arguments)) for c in host.calls] == [
        (
            "ask_choice",
            {
                "title": "Which colour should the button be?",
                "options": ["Red", "Blue"],
                "allow_other": True,
                "description": "Colour\n- Red: Loud\n- Blue: Calm",
            },
        )
    ]
    told = model.tool_outputs()[-1]
    assert '"Which colour should the button be?"="Blue"' in told, told
    assert finished(events).status == "completed"
