"""The Pi driver against the real ``pi --mode rpc`` (0.73.1, as ``make engines`` installs it)
and the scripted model: what a person relies on when LineUp hosts Pi — a conversation in one
long-lived process, LineUp's tools answered by the host, commands and file changes only with
the person's approval and only inside the working directory, interrupt, follow-ups and crash
handled without a hang, a session resumed or rebuilt without redoing what was done, no
process left behind, and nothing contacted but loopback. Several tests share one Pi process
(it takes a second or more to start): each adds its own turns to that conversation."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest
import pytest_asyncio

from lineup.engines.manager import EngineManager
from lineup.engines.pi import PiRuntime, PiSession, find_pi
from lineup.engines.process_tree import alive, descendants
from lineup.engines.runtime import (
    ApprovalDecision,
    ApprovalRequest,
    CommandFinished,
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
from tests.support.clock import FakeClock
from tests.support.scripted_model import ScriptedModel, Step
from tests.support.waiting import until, until_async

INSTALLED = ROOT / "tests/engines/node_modules/@mariozechner/pi-coding-agent/dist/cli.js"
PI = find_pi(str(INSTALLED)) if INSTALLED.exists() else find_pi()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        PI is None or shutil.which("node") is None,
        reason="Pi is not installed: run `make engines` (or set LINEUP_PI_BIN)",
    ),
]

QUESTIONS = ROOT / "tests/support/pi_questions.ts"
"""An operator's extension whose tool asks the person through Pi's own dialogs."""

DEADLINE = 90.0
KEY = "k-test-pi-5d1e"

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
        edit: Callable[[ApprovalRequest], dict[str, object] | None] = lambda _: None,
    ) -> None:
        self.allow = allow
        self.edit = edit
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
        edited = self.edit(request) if allowed else None
        return ApprovalDecision(
            allow=allowed, updated_input=edited, reason=None if allowed else "not now"
        )

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


class SwitchingHost:
    """The shared session's host: each test puts in its own."""

    def __init__(self) -> None:
        self.current = Host()

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        return await self.current.approve(request)

    async def call_tool(self, call: ToolInvocation) -> ToolOutcome:
        return await self.current.call_tool(call)


Dialect = Literal["openai-responses", "openai-chat", "anthropic-messages"]


def spec(
    root: Path, model: ScriptedModel, api: Dialect = "openai-chat", **overrides: object
) -> SessionSpec:
    work = root / "work"
    work.mkdir(parents=True, exist_ok=True)
    base = model.root_url if api == "anthropic-messages" else model.base_url
    values: dict[str, object] = {
        "cwd": str(work),
        "model": ModelEndpoint(api=api, base_url=base, model="scripted", api_key=KEY),
        "state_dir": str(root / "state"),
        "tools": (ASK,),
    }
    values.update(overrides)
    return SessionSpec(**values)  # type: ignore[arg-type]


def runtime(**options: object) -> PiRuntime:
    return PiRuntime(str(PI), **options)  # type: ignore[arg-type]


async def run(session: PiSession, text: str) -> list[RuntimeEvent]:
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


# --- one Pi process shared by the conversation tests ------------------------------------------


@dataclass
class Shared:
    session: PiSession
    model: ScriptedModel
    host: SwitchingHost
    root: Path


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Shared]:
    root = tmp_path_factory.mktemp("pi-shared")
    with ScriptedModel() as model:
        host = SwitchingHost()
        session = await runtime(extensions=[QUESTIONS]).start(spec(root, model), host)
        try:
            yield Shared(session, model, host, root)
        finally:
            await session.close()


@pytest.mark.asyncio(loop_scope="module")
async def test_a_conversation_of_several_turns_runs_in_one_process(shared: Shared) -> None:
    shared.model.then(Step.text("Hel", "lo, Ana."), Step.text("You said your name is Ana."))
    session = shared.session
    pid = session.pid
    assert pid is not None
    first = await run(session, "Hi, I am Ana.")
    second = await run(session, "What is my name?")
    assert session.pid == pid
    assert isinstance(first[0], TurnStarted)
    assert [e.text for e in first if isinstance(e, MessageDelta)] == ["Hel", "lo, Ana."]
    assert any(isinstance(e, MessageDone) and e.text == "Hello, Ana." for e in first)
    assert any(isinstance(e, TokenUsage) and e.input_tokens == 10 for e in first)
    assert finished(first).status == "completed"
    assert finished(second).status == "completed"
    assert finished(second).native_session_id == session.native_session_id
    last = shared.model.model_requests()[-1]  # the whole conversation, with the key
    assert "Hi, I am Ana." in last.text() and "Hello, Ana." in last.text()
    assert "What is my name?" in last.text()
    assert last.headers.get("authorization") == f"Bearer {KEY}"
    # the key is in no argument, no file of Pi's and no log line
    assert KEY not in command_line(pid)
    state = shared.root / "state"
    for path in state.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path


@pytest.mark.asyncio(loop_scope="module")
async def test_pis_own_questions_to_the_person_reach_the_host(shared: Shared) -> None:
    shared.model.then(Step.call("pick_colour"), Step.text("Blue then."))
    # answered as LineUp's ask_choice answers: the chosen labels, read back to Pi's option
    host = shared.host.current = Host(answer=json.dumps({"choices": ["blue"]}))
    events = await run(shared.session, "Let me pick a colour.")
    assert finished(events).status == "completed"
    assert [(c.name, dict(c.arguments)) for c in host.calls] == [
        ("ask_choice", {"title": "Pick a colour", "options": ["red", "blue"]})
    ]
    assert [(a.kind, a.title, a.reason) for a in host.approvals] == [
        ("tool", "Sure?", "You picked blue.")
    ]
    assert shared.model.tool_outputs()[-1] == "picked blue, sure: true"


@pytest.mark.asyncio(loop_scope="module")
async def test_a_command_and_a_write_run_as_the_person_edited_them_and_stay_inside(
    shared: Shared,
) -> None:
    shared.model.then(
        Step.shell("echo proposed > edited-command.txt", tool="bash"),
        Step.call("write", path="edited-write.txt", content="draft\n"),
        Step.call("write", path="escape.txt", content="x\n"),
        Step.text("Done as you edited."),
    )

    def edit(request: ApprovalRequest) -> dict[str, object] | None:
        assert request.editable and request.input is not None
        if request.kind == "command":
            return {**request.input, "command": "echo edited > edited-command.txt"}
        if "edited-write" in str(request.input.get("path")):
            return {**request.input, "content": "the person's words\n"}
        return {**request.input, "path": "../escaped-by-edit.txt"}  # moved outside: refused

    host = shared.host.current = Host(edit=edit)
    events = await run(shared.session, "Write two files.")
    work = shared.root / "work"
    assert (work / "edited-command.txt").read_text() == "edited\n"
    assert (work / "edited-write.txt").read_text() == "the person's words\n"
    assert not (work / "escape.txt").exists()
    assert not (shared.root / "escaped-by-edit.txt").exists()
    assert [r.kind for r in host.approvals] == ["command", "file_change", "file_change"]
    commands = [e.command for e in events if isinstance(e, CommandStarted)]
    assert commands == ["echo edited > edited-command.txt"]  # reported as it ran
    changes = [e for e in events if isinstance(e, FileChange)]
    assert [c.path for c in changes] == ["edited-write.txt"]
    assert changes[0].diff.endswith("+the person's words\n")
    assert "confines this session" in shared.model.tool_outputs()[-1]
    assert finished(events).status == "completed"


@pytest.mark.asyncio(loop_scope="module")
async def test_interrupt_cancels_a_pending_host_call_and_the_next_turn_works(
    shared: Shared,
) -> None:
    shared.model.then(Step.call("ask_human", question="Still there?"), Step.text("Moving on."))
    host = shared.host.current = Host(hold=True)
    session = shared.session

    async def interrupt_when_asked() -> None:
        await host.called.wait()
        await session.interrupt()

    interrupting = asyncio.create_task(interrupt_when_asked())
    events = await run(session, "Ask me something.")
    await interrupting
    assert finished(events).status == "interrupted"
    assert host.cancelled.is_set()
    after = await run(session, "Never mind.")
    assert finished(after).status == "completed"
    assert any(isinstance(e, MessageDone) and e.text == "Moving on." for e in after)
    assert any("cancelled" in o for o in shared.model.tool_outputs()), shared.model.tool_outputs()


@pytest.mark.asyncio(loop_scope="module")
async def test_a_follow_up_sent_while_the_turn_works_reaches_the_model_in_that_turn(
    shared: Shared,
) -> None:
    shared.model.then(
        Step.call("ask_human", question="Colour?"), Step.text("Noted."), Step.text("Quick.")
    )
    host = shared.host.current = Host(hold=True)
    session = shared.session
    before = len(shared.model.model_requests())

    async def steer_then_answer() -> None:
        await host.called.wait()
        await session.steer("Also: make it quick.")
        await session.follow_up("And when you are done, say so.")
        host.release.set()

    steering = asyncio.create_task(steer_then_answer())
    events = await run(session, "Ask me for a colour.")
    await steering
    assert finished(events).status == "completed"
    assert [e.text for e in events if isinstance(e, MessageDone)] == ["Noted.", "Quick."]
    requests = shared.model.model_requests()[before:]
    assert len(requests) == 3
    # steered in before the next model call; the follow-up only once the agent was done
    assert "Also: make it quick." in requests[1].text()
    assert "And when you are done" not in requests[1].text()
    assert "And when you are done, say so." in requests[2].text()


# --- sessions of their own ---------------------------------------------------------------


async def test_a_lineup_tool_is_answered_by_the_host_and_only_loopback_is_contacted(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "connect.trace"
    launcher: tuple[str, ...] = ()
    if traceable():
        launcher = ("strace", "-f", "-qq", "-e", "trace=connect", "-o", str(trace))
    host = Host(answer="blue, the person said")
    with ScriptedModel([Step.call("ask_human", question="Which colour?"), Step.text("Blue.")]) as m:
        session = await runtime(launcher=launcher).start(
            spec(tmp_path, m, api="openai-responses"), host
        )
        try:
            events = await run(session, "Ask me for a colour.")
        finally:
            await session.close()
        assert [(c.name, dict(c.arguments)) for c in host.calls] == [
            ("ask_human", {"question": "Which colour?"})
        ]
        started = next(e for e in events if isinstance(e, ToolCallStarted))
        assert started.name == "ask_human"
        assert ToolCallFinished(started.call_id, ok=True, result="blue, the person said") in events
        assert m.tool_outputs() == ["blue, the person said"]  # what the model saw next
        offered = [t.get("name") for t in m.model_requests()[0].body.get("tools", [])]
        assert "ask_human" in offered
        assert finished(events).status == "completed"
        if launcher:
            text = trace.read_text()
            addresses = re.findall(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"', text)
            contacted = {a or b for a, b in addresses}
            assert "127.0.0.1" in contacted, text[-2000:]
            assert contacted <= {"127.0.0.1", "::1"}, f"beyond loopback: {sorted(contacted)}"
            assert f"sin_port=htons({m.port})" in text


async def test_commands_and_file_changes_run_only_when_approved_and_only_inside_the_work_dir(
    tmp_path: Path,
) -> None:
    steps = [
        Step.shell("touch approved.txt", tool="bash"),
        Step.shell("touch declined.txt", tool="bash"),
        Step.call("write", path="kept.txt", content="hello\n"),
        Step.call("write", path="refused.txt", content="no\n"),
        Step.call("write", path="../outside.txt", content="x\n"),
        Step.call("write", path="link/escaped.txt", content="x\n"),
        Step.text("Done."),
    ]
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "link").symlink_to(tmp_path / "elsewhere")
    host = Host(allow=lambda r: "approved" in (r.command or "") or "kept.txt" in (r.diff or ""))
    with ScriptedModel(steps) as m:  # Anthropic Messages, the third dialect
        session = await runtime().start(spec(tmp_path, m, api="anthropic-messages"), host)
        try:
            events = await run(session, "Make some files.")
        finally:
            await session.close()
        outputs = m.tool_outputs()
    work = tmp_path / "work"
    assert (work / "approved.txt").exists()
    assert not (work / "declined.txt").exists()
    assert (work / "kept.txt").read_text() == "hello\n"
    assert not (work / "refused.txt").exists()
    assert not (tmp_path / "outside.txt").exists()
    assert not (tmp_path / "elsewhere" / "escaped.txt").exists()
    # the ones outside the working directory were refused without asking anyone
    assert [r.kind for r in host.approvals] == ["command", "command", "file_change", "file_change"]
    assert (host.approvals[0].command, host.approvals[0].cwd) == ("touch approved.txt", str(work))
    assert host.approvals[2].diff == "--- /dev/null\n+++ b/kept.txt\n@@ -0,0 +1 @@\n+hello\n"
    assert [e.command for e in events if isinstance(e, CommandStarted)] == ["touch approved.txt"]
    assert any(isinstance(e, CommandFinished) and e.exit_code == 0 for e in events)
    assert [(e.path, e.kind) for e in events if isinstance(e, FileChange)] == [("kept.txt", "add")]
    assert sum("declined" in o for o in outputs) == 2, outputs
    assert sum("confines this session" in o for o in outputs) == 2, outputs
    assert finished(events).status == "completed"


async def test_an_engine_killed_mid_turn_fails_the_turn_and_its_resumed_session_redoes_nothing(
    tmp_path: Path,
) -> None:
    steps = [
        Step.shell("echo ran >> effects.txt"),
        Step.call("ask_human", question="Wait for me?"),
        Step.text("The file was written once; I am back."),
    ]
    with ScriptedModel(steps) as m:
        host = Host(hold=True)
        session = await runtime().start(spec(tmp_path, m), host)
        try:
            pid = session.pid
            assert pid is not None

            async def kill_when_asked() -> None:
                await host.called.wait()
                os.kill(pid, signal.SIGKILL)

            killing = asyncio.create_task(kill_when_asked())
            events = await run(session, "Note it, then ask me.")
            await killing
            hint = session.native_session_id
        finally:
            await session.close()
        errors = [e for e in events if isinstance(e, EngineError)]
        assert errors and errors[0].code == ErrorCode.UNAVAILABLE
        assert "signal 9" in errors[0].message
        assert finished(events).status == "failed"
        assert host.cancelled.is_set()

        history = (Turn(user="Note it, then ask me.", assistant="[the engine stopped]"),)
        again = await runtime().start(spec(tmp_path, m, resume_hint=hint, history=history), Host())
        try:
            assert again.resumed and again.native_session_id == hint
            after = await run(again, "Are you back?")
        finally:
            await again.close()
        assert finished(after).status == "completed"
        # Pi's own record of the interrupted turn came back, the unanswered call marked as
        # such; nothing of it ran again
        assert "echo ran >> effects.txt" in m.model_requests()[-1].text()
        assert m.tool_outputs()[-1] == "No result provided"
    assert (tmp_path / "work" / "effects.txt").read_text() == "ran\n"


async def test_close_leaves_no_process_behind_even_with_a_command_running(
    tmp_path: Path,
) -> None:
    with ScriptedModel([Step.shell("sleep 300")]) as m:
        session = await runtime(ask_before=()).start(spec(tmp_path, m), Host())
        pid = session.pid
        assert pid is not None
        turn = session.turn("Wait a while.")
        async with asyncio.timeout(DEADLINE):
            async for event in turn:
                if isinstance(event, CommandStarted):
                    break

        def sleeping() -> list[int]:
            tree = [pid, *descendants(pid)]
            return tree if any("sleep" in command_line(p) for p in tree) else []

        tree = await until_async(sleeping, "the command to run")
        await session.close()
        await turn.aclose()
    assert alive(tree) == []


async def test_a_stale_hint_starts_afresh_from_lineups_history_with_queued_follow_ups(
    tmp_path: Path,
) -> None:
    history = (Turn(user="My dog is called Rex.", assistant="A fine name."),)
    with ScriptedModel([Step.text("Rex, your dog.")]) as m:
        session = await runtime().start(
            spec(
                tmp_path,
                m,
                resume_hint="01a24236-0000-7000-8000-000000000000",
                history=history,
                instructions="Answer briefly.",
            ),
            Host(),
        )
        try:
            assert not session.resumed
            await session.steer("Answer in three words.")  # no turn running: kept for the next
            events = await run(session, "What is my dog called?")
        finally:
            await session.close()
        sent = m.model_requests()[-1].text()
    assert finished(events).status == "completed"
    assert "My dog is called Rex." in sent and "A fine name." in sent
    assert "Answer briefly." in sent
    assert "Answer in three words." in sent and "What is my dog called?" in sent


def test_doctor_reports_the_installed_version_and_how_to_install() -> None:
    status = runtime().status()
    assert status.installed
    assert status.version == "0.73.1"
    assert status.install_hint == "npm install -g @mariozechner/pi-coding-agent@0.73.1"
    missing = PiRuntime(str(ROOT / "no-such-pi")).status()
    assert not missing.installed and missing.path is None


# --- under the process manager ---------------------------------------------------------------


async def test_under_the_manager_pi_is_evicted_at_the_cap_and_reaped_when_idle(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    manager = EngineManager({"pi": runtime()}, cap=1, idle_seconds=60, clock=clock)
    with ScriptedModel([Step.text("one"), Step.text("two")]) as m:

        def spec_of(name: str) -> Callable[[], SessionSpec]:
            return lambda: spec(tmp_path / name, m)

        try:
            async with asyncio.timeout(DEADLINE):
                first = [e async for e in manager.turn("a", "pi", spec_of("a"), Host(), "hi")]
                pid_a = manager.pid("a")
                clock.advance(1)
                second = [e async for e in manager.turn("b", "pi", spec_of("b"), Host(), "hi")]
            assert finished(first).status == finished(second).status == "completed"
            assert pid_a is not None and manager.running() == ["b"]
            await until_async(lambda: not alive([pid_a]), "the evicted Pi to exit")
            pid_b = manager.pid("b")
            assert pid_b is not None
            clock.advance(59)
            assert await manager.reap() == []
            clock.advance(1)
            assert await manager.reap() == ["b"]
            await until_async(lambda: not alive([pid_b]), "the idle Pi to exit")
        finally:
            await manager.close()


PARENT = textwrap.dedent(
    """
    import asyncio, sys
    from lineup.engines.manager import EngineManager
    from lineup.engines.pi import PiRuntime
    from lineup.engines.runtime import ModelEndpoint, SessionSpec

    class Host:
        async def approve(self, request): ...
        async def call_tool(self, call): ...

    async def main():
        pi, work, base = sys.argv[1:4]
        manager = EngineManager({"pi": PiRuntime(pi)})
        model = ModelEndpoint("openai-chat", base, "scripted", "k")
        spec = lambda: SessionSpec(cwd=work, model=model, state_dir=work + "/state")
        async for _ in manager.turn("a", "pi", spec, Host(), "hi"):
            pass
        print(manager.pid("a"), flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
    """
)


def test_no_pi_outlives_a_parent_killed_with_sigkill(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    with ScriptedModel([Step.text("hello")]) as m:
        parent = subprocess.Popen(
            [sys.executable, "-c", PARENT, str(PI), str(tmp_path), m.base_url],
            stdout=subprocess.PIPE,
            env=env,
        )
        try:
            assert parent.stdout is not None
            engine = int(parent.stdout.readline())
            assert alive([engine])
            parent.send_signal(signal.SIGKILL)
            parent.wait(10)
            until(lambda: not alive([engine]), "Pi to die with its parent")
        finally:
            if parent.poll() is None:
                parent.kill()
                parent.wait(10)
            if parent.stdout is not None:
                parent.stdout.close()
