"""The Codex driver against the real ``codex app-server`` (0.171, as ``make mcp-hosts``
installs it) and the scripted model: what a person relies on when LineUp hosts Codex —
a conversation in one long-lived process, LineUp's tools answered by the host, commands and
file changes only with the person's approval, interrupt and crash handled without a hang,
no process left behind, and nothing contacted but loopback."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lineup.engines.codex import CodexRuntime, CodexSession, find_codex
from lineup.engines.process_tree import alive, descendants
from lineup.engines.runtime import (
    ApprovalDecision,
    ApprovalRequest,
    CommandStarted,
    EngineError,
    FileChange,
    MessageDelta,
    MessageDone,
    ModelEndpoint,
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
from tests.support.scripted_model import ScriptedModel, Step

VENDORED = (
    ROOT
    / "tests/mcp-conformance/node_modules/@openai/codex-linux-x64/vendor"
    / "x86_64-unknown-linux-musl/bin/codex"
)
CODEX = find_codex(str(VENDORED)) if VENDORED.exists() else find_codex()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        CODEX is None,
        reason="the Codex CLI is not installed: run `make mcp-hosts` (or set LINEUP_CODEX_BIN)",
    ),
]

DEADLINE = 60.0

ASK = ToolSpec(
    name="ask_human",
    description="Ask the person a question and wait for the answer.",
    input_schema={
        "type": "object",
        "properties": {"question": {"type": "string"}},
        "required": ["question"],
    },
)


class Host:
    """A RuntimeHost for tests: approves what ``allow`` says, answers tools with
    ``answer`` — or, with ``hold``, keeps a tool call pending until released or cancelled."""

    def __init__(
        self,
        allow: Callable[[ApprovalRequest], bool] = lambda _: True,
        answer: str = "blue",
        hold: bool = False,
    ) -> None:
        self.allow = allow
        self.answer = answer
        self.hold = hold
        self.approvals: list[ApprovalRequest] = []
        self.calls: list[ToolInvocation] = []
        self.called = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = asyncio.Event()

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.approvals.append(request)
        allowed = self.allow(request)
        return ApprovalDecision(allow=allowed, reason=None if allowed else "not now")

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
            api="openai-responses", base_url=model.base_url, model="scripted", api_key="k-test"
        ),
        "state_dir": str(tmp_path / "state"),
        "tools": (ASK,),
    }
    values.update(overrides)
    return SessionSpec(**values)  # type: ignore[arg-type]


async def run(session: CodexSession, text: str) -> list[RuntimeEvent]:
    async with asyncio.timeout(DEADLINE):
        return [event async for event in session.turn(text)]


def finished(events: list[RuntimeEvent]) -> TurnFinished:
    last = events[-1]
    assert isinstance(last, TurnFinished), events
    return last


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


async def test_a_conversation_of_several_turns_runs_in_one_process(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.text("Hel", "lo, Ana."), Step.text("You said your name is Ana."))
    spawned = time.monotonic()
    session = await CodexRuntime(str(CODEX)).start(spec(tmp_path, model), Host())
    try:
        pid = session.pid
        first = await run(session, "Hi, I am Ana.")
        first_done = time.monotonic()
        second = await run(session, "What is my name?")
        second_done = time.monotonic()
        assert session.pid == pid
    finally:
        await session.close()
    print(
        f"\nCodex: spawn to first turn done {first_done - spawned:.2f} s, "
        f"second turn {second_done - first_done:.2f} s"
    )
    assert isinstance(first[0], TurnStarted)
    assert [e.text for e in first if isinstance(e, MessageDelta)] == ["Hel", "lo, Ana."]
    assert MessageDone(item_id="msg_0", text="Hello, Ana.") in first
    assert any(isinstance(e, TokenUsage) and e.input_tokens == 10 for e in first)
    assert finished(first).status == "completed"
    assert finished(second).status == "completed"
    assert finished(second).native_session_id == session.native_session_id
    # the second model request carries the whole conversation
    last = model.model_requests()[-1]
    assert "Hi, I am Ana." in last.text() and "Hello, Ana." in last.text()
    assert "What is my name?" in last.text()
    assert last.headers.get("authorization") == "Bearer k-test"


async def test_a_lineup_tool_is_answered_by_the_host_and_only_loopback_is_contacted(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.call("ask_human", question="Which colour?"), Step.text("Blue it is."))
    trace = tmp_path / "connect.trace"
    launcher: tuple[str, ...] = ()
    if traceable():
        launcher = ("strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace))
    host = Host(answer="blue, the person said")
    session = await CodexRuntime(str(CODEX), launcher=launcher).start(spec(tmp_path, model), host)
    try:
        events = await run(session, "Ask me for a colour.")
    finally:
        await session.close()
    assert [(c.name, dict(c.arguments)) for c in host.calls] == [
        ("ask_human", {"question": "Which colour?"})
    ]
    started = next(e for e in events if isinstance(e, ToolCallStarted))
    assert started.name == "ask_human"
    assert (
        ToolCallFinished(call_id=started.call_id, ok=True, result="blue, the person said") in events
    )
    assert model.tool_outputs() == ["blue, the person said"]  # what the model saw next
    offered = [t.get("name") for t in model.model_requests()[0].body.get("tools", [])]
    assert "ask_human" in offered
    assert finished(events).status == "completed"
    if launcher:
        text = trace.read_text()
        addresses = re.findall(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"', text)
        contacted = {a or b for a, b in addresses}
        assert "127.0.0.1" in contacted, text[-2000:]
        assert contacted <= {"127.0.0.1", "::1"}, f"beyond loopback: {sorted(contacted)}"
        assert f"sin_port=htons({model.port})" in text


async def test_a_command_runs_only_when_the_person_approves_it(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(
        Step.shell("touch approved.txt", escalated=True),
        Step.shell("touch declined.txt", escalated=True),
        Step.text("One ran, one did not."),
    )
    host = Host(allow=lambda r: "approved" in (r.command or ""))
    runtime = CodexRuntime(str(CODEX), sandbox="read-only")
    session = await runtime.start(spec(tmp_path, model), host)
    try:
        events = await run(session, "Make two files.")
    finally:
        await session.close()
    work = tmp_path / "work"
    assert (work / "approved.txt").exists()
    assert not (work / "declined.txt").exists()
    assert [r.kind for r in host.approvals] == ["command", "command"]
    assert "touch approved.txt" in (host.approvals[0].command or "")
    assert host.approvals[0].cwd == str(work)
    assert any(isinstance(e, CommandStarted) and "approved" in e.command for e in events)
    assert finished(events).status == "completed"
    assert any("rejected" in o or "declined" in o for o in model.tool_outputs()), (
        model.tool_outputs()
    )


async def test_a_file_change_is_shown_as_a_diff_and_applied_only_when_approved(
    tmp_path: Path, model: ScriptedModel
) -> None:
    def patch(name: str) -> str:
        body = f"*** Begin Patch\n*** Add File: {name}\n+hello\n*** End Patch\n"
        return f"apply_patch <<'EOF'\n{body}EOF\n"

    model.then(Step.shell(patch("kept.txt")), Step.shell(patch("refused.txt")), Step.text("ok"))
    host = Host(allow=lambda r: "kept.txt" in (r.diff or ""))
    session = await CodexRuntime(str(CODEX), sandbox="read-only").start(spec(tmp_path, model), host)
    try:
        events = await run(session, "Write two files.")
    finally:
        await session.close()
    work = tmp_path / "work"
    assert (work / "kept.txt").read_text() == "hello\n"
    assert not (work / "refused.txt").exists()
    assert [r.kind for r in host.approvals] == ["file_change", "file_change"]
    assert host.approvals[0].diff == "--- /dev/null\n+++ b/kept.txt\n@@ -0,0 +1 @@\n+hello\n"
    assert [e.path for e in events if isinstance(e, FileChange)] == ["kept.txt"]


async def test_interrupt_cancels_a_pending_host_call_and_the_next_turn_works(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.call("ask_human", question="Still there?"), Step.text("Fine, moving on."))
    host = Host(hold=True)
    session = await CodexRuntime(str(CODEX)).start(spec(tmp_path, model), host)
    try:

        async def interrupt_when_asked() -> None:
            await host.called.wait()
            await session.interrupt()

        interrupting = asyncio.create_task(interrupt_when_asked())
        events = await run(session, "Ask me something.")
        await interrupting
        assert finished(events).status == "interrupted"
        assert host.cancelled.is_set()
        after = await run(session, "Never mind.")
    finally:
        await session.close()
    assert finished(after).status == "completed"
    assert any(isinstance(e, MessageDone) and e.text == "Fine, moving on." for e in after)
    assert any("cancelled" in o for o in model.tool_outputs()), model.tool_outputs()


async def test_a_follow_up_sent_while_the_turn_works_reaches_the_model(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.call("ask_human", question="Colour?"), Step.text("Noted."))
    host = Host(hold=True)
    session = await CodexRuntime(str(CODEX)).start(spec(tmp_path, model), host)
    try:

        async def steer_then_answer() -> None:
            await host.called.wait()
            await session.steer("Also: make it quick.")
            host.release.set()

        steering = asyncio.create_task(steer_then_answer())
        events = await run(session, "Ask me for a colour.")
        await steering
    finally:
        await session.close()
    assert finished(events).status == "completed"
    assert "Also: make it quick." in model.model_requests()[-1].text()


async def test_an_engine_killed_mid_turn_fails_the_turn_as_unavailable(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.call("ask_human", question="Wait for me?"))
    host = Host(hold=True)
    session = await CodexRuntime(str(CODEX)).start(spec(tmp_path, model), host)
    try:
        pid = session.pid
        assert pid is not None

        async def kill_when_asked() -> None:
            await host.called.wait()
            os.kill(pid, signal.SIGKILL)

        killing = asyncio.create_task(kill_when_asked())
        events = await run(session, "Ask me.")
        await killing
    finally:
        await session.close()
    errors = [e for e in events if isinstance(e, EngineError)]
    assert errors and errors[0].code == ErrorCode.UNAVAILABLE
    assert "signal 9" in errors[0].message
    assert finished(events).status == "failed"
    assert host.cancelled.is_set()


async def test_close_leaves_no_process_behind_even_with_a_command_running(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.shell("sleep 300"))
    session = await CodexRuntime(str(CODEX)).start(spec(tmp_path, model), Host())
    pid = session.pid
    assert pid is not None
    turn = session.turn("Wait a while.")
    async with asyncio.timeout(DEADLINE):
        async for event in turn:
            if isinstance(event, CommandStarted):
                break
    tree = [pid, *descendants(pid)]
    assert any("sleep" in command_line(p) for p in tree)
    await session.close()
    await turn.aclose()
    assert alive(tree) == []


async def test_a_new_process_resumes_the_thread_from_its_hint(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.text("Noted: the code word is heron."), Step.text("It was heron."))
    first = await CodexRuntime(str(CODEX)).start(spec(tmp_path, model), Host())
    try:
        await run(first, "The code word is heron.")
        hint = first.native_session_id
    finally:
        await first.close()
    second = await CodexRuntime(str(CODEX)).start(spec(tmp_path, model, resume_hint=hint), Host())
    try:
        assert second.resumed
        assert second.native_session_id == hint
        events = await run(second, "What was the code word?")
    finally:
        await second.close()
    assert finished(events).status == "completed"
    assert "The code word is heron." in model.model_requests()[-1].text()


def test_doctor_reports_the_installed_version_and_how_to_install() -> None:
    status = CodexRuntime(str(CODEX)).status()
    assert status.installed
    assert status.version == "0.171.0"
    assert status.install_hint == "npm install -g @openai/codex@0.171.0"
    missing = CodexRuntime(str(ROOT / "no-such-codex")).status()
    assert not missing.installed and missing.path is None


async def test_a_stale_hint_starts_afresh_from_lineups_history_with_queued_follow_ups(
    tmp_path: Path, model: ScriptedModel
) -> None:
    model.then(Step.text("Rex, your dog."))
    history = (Turn(user="My dog is called Rex.", assistant="A fine name."),)
    session = await CodexRuntime(str(CODEX)).start(
        spec(tmp_path, model, resume_hint="01a24236-0000-7000-8000-000000000000", history=history),
        Host(),
    )
    try:
        assert not session.resumed
        await session.steer("Answer in three words.")  # no turn running: kept for the next
        events = await run(session, "What is my dog called?")
    finally:
        await session.close()
    assert finished(events).status == "completed"
    sent = model.model_requests()[-1].text()
    assert "My dog is called Rex." in sent and "A fine name." in sent
    assert "Answer in three words." in sent and "What is my dog called?" in sent
