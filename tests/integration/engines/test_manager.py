"""The process manager on real fake-engine processes: lazily started, one per session, idle
ones reaped on an injected clock, the cap kept, crashes restarted from LineUp's history, and
no engine left behind when its parent is killed."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from lineup.engines.fake import FakeRuntime
from lineup.engines.manager import EngineManager
from lineup.engines.runtime import (
    ApprovalDecision,
    ApprovalRequest,
    EngineError,
    MessageDelta,
    MessageDone,
    ModelEndpoint,
    RuntimeEvent,
    SessionSpec,
    ToolInvocation,
    ToolOutcome,
    Turn,
    TurnFinished,
)
from lineup.protocol.errors import RateLimited
from tests.support.clock import FakeClock
from tests.support.waiting import until, until_async

KEY = "sk-manager-test-4be1c0"


class Host:
    def __init__(self) -> None:
        self.approvals: list[ApprovalRequest] = []
        self.gate = asyncio.Event()
        self.gate.set()

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        self.approvals.append(request)
        await self.gate.wait()
        return ApprovalDecision(allow=True)

    async def call_tool(self, call: ToolInvocation) -> ToolOutcome:
        return ToolOutcome(text=f"answer to {call.name}")


def spec_for(
    tmp_path: Path, name: str, history: list[Turn] | None = None
) -> Callable[[], SessionSpec]:
    def make() -> SessionSpec:
        (tmp_path / name).mkdir(exist_ok=True)
        return SessionSpec(
            cwd=str(tmp_path),
            model=ModelEndpoint("openai-chat", "http://127.0.0.1:9/v1", "m", KEY),
            state_dir=str(tmp_path / name),
            history=tuple(history or ()),
        )

    return make


async def collect(events: AsyncIterator[RuntimeEvent]) -> list[RuntimeEvent]:
    return [e async for e in events]


def reply(events: list[RuntimeEvent]) -> str:
    return next(e.text for e in events if isinstance(e, MessageDone))


@pytest.fixture
async def manager() -> AsyncIterator[EngineManager]:
    made = EngineManager({"fake": FakeRuntime()}, cap=2, idle_seconds=60, clock=FakeClock())
    try:
        yield made
    finally:
        await made.close()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


async def test_started_lazily_reused_streamed_and_reaped_when_idle(
    manager: EngineManager, tmp_path: Path
) -> None:
    clock = manager.clock
    assert isinstance(clock, FakeClock)
    assert manager.running() == []
    events = await collect(manager.turn("a", "fake", spec_for(tmp_path, "a"), Host(), "hi there"))
    assert [e.text for e in events if isinstance(e, MessageDelta)] == [
        "You",
        " said:",
        " hi",
        " there",
        " (turn",
        " 1)",
    ]
    pid = manager.pid("a")
    assert pid is not None
    events = await collect(manager.turn("a", "fake", spec_for(tmp_path, "a"), Host(), "again"))
    assert reply(events) == "You said: again (turn 2)" and manager.pid("a") == pid
    clock.advance(59)
    assert await manager.reap() == []
    clock.advance(1)
    assert await manager.reap() == ["a"]
    await until_async(lambda: not alive(pid), "the idle engine to exit")
    assert manager.started == 1


async def test_the_cap_makes_room_from_the_least_recently_used_idle_and_refuses_when_all_busy(
    manager: EngineManager, tmp_path: Path
) -> None:
    clock = manager.clock
    assert isinstance(clock, FakeClock)
    await collect(manager.turn("a", "fake", spec_for(tmp_path, "a"), Host(), "one"))
    clock.advance(1)
    await collect(manager.turn("b", "fake", spec_for(tmp_path, "b"), Host(), "two"))
    first = manager.pid("a")
    await collect(manager.turn("c", "fake", spec_for(tmp_path, "c"), Host(), "three"))
    assert sorted(map(str, manager.running())) == ["b", "c"]
    assert first is not None
    await until_async(lambda: not alive(first), "the evicted engine to exit")

    # b and c busy (each waiting for an approval): a new session is told clearly
    hosts = [Host(), Host()]
    for host in hosts:
        host.gate.clear()
    turns = [
        asyncio.create_task(
            collect(manager.turn(k, "fake", spec_for(tmp_path, k), h, "[approve:x]"))
        )
        for k, h in zip(("b", "c"), hosts, strict=True)
    ]
    await until_async(lambda: all(h.approvals for h in hosts), "both approvals")
    with pytest.raises(RateLimited, match="busy"):
        await collect(manager.turn("d", "fake", spec_for(tmp_path, "d"), Host(), "four"))
    for host in hosts:
        host.gate.set()
    await asyncio.gather(*turns)


async def test_a_crash_mid_turn_is_reported_and_the_next_turn_restarts_from_history(
    manager: EngineManager, tmp_path: Path
) -> None:
    history = [Turn("one", "You said: one (turn 1)")]
    events = await collect(
        manager.turn("a", "fake", spec_for(tmp_path, "a", history), Host(), "[crash]")
    )
    assert any(isinstance(e, EngineError) and e.code == "unavailable" for e in events)
    assert isinstance(events[-1], TurnFinished) and events[-1].status == "failed"
    assert manager.running() == []
    history.append(Turn("[crash]", "[interrupted]"))
    events = await collect(
        manager.turn("a", "fake", spec_for(tmp_path, "a", history), Host(), "back?")
    )
    assert reply(events) == "You said: back? (turn 3)"
    assert manager.started == 2


async def test_an_engine_killed_while_idle_is_restarted_for_the_next_turn_transparently(
    manager: EngineManager, tmp_path: Path
) -> None:
    await collect(manager.turn("a", "fake", spec_for(tmp_path, "a"), Host(), "one"))
    pid = manager.pid("a")
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    await until_async(lambda: not alive(pid), "the engine to die")
    events = await collect(manager.turn("a", "fake", spec_for(tmp_path, "a"), Host(), "two"))
    assert not any(isinstance(e, EngineError) for e in events), "nothing of the turn had run"
    assert reply(events).startswith("You said: two")
    assert manager.pid("a") not in (None, pid)


async def test_a_running_turn_is_steered_and_stopped_and_the_process_stays(
    manager: EngineManager, tmp_path: Path
) -> None:
    assert not await manager.steer("a", "too early") and not await manager.interrupt("a")
    host = Host()
    host.gate.clear()
    turn = asyncio.create_task(
        collect(manager.turn("a", "fake", spec_for(tmp_path, "a"), host, "[approve:x]"))
    )
    await until_async(lambda: host.approvals, "the approval")
    assert manager.busy("a")
    assert await manager.steer("a", "also this")
    host.gate.set()
    assert "steered: also this" in reply(await turn)
    pid = manager.pid("a")

    turn = asyncio.create_task(
        collect(manager.turn("a", "fake", spec_for(tmp_path, "a"), Host(), "[hang]"))
    )
    await until_async(lambda: manager.busy("a"), "the turn to run")
    assert await manager.interrupt("a")
    events = await turn
    assert isinstance(events[-1], TurnFinished) and events[-1].status == "interrupted"
    assert manager.pid("a") == pid and not manager.busy("a")


async def test_a_turn_left_half_way_stops_its_process(
    manager: EngineManager, tmp_path: Path
) -> None:
    host = Host()
    host.gate.clear()
    turn = asyncio.create_task(
        collect(manager.turn("a", "fake", spec_for(tmp_path, "a"), host, "[approve:x]"))
    )
    await until_async(lambda: host.approvals, "the approval")
    pid = manager.pid("a")
    assert pid is not None
    turn.cancel()  # its reader went away: the engine's state is nobody's to know
    await asyncio.gather(turn, return_exceptions=True)
    await until_async(lambda: not alive(pid), "the engine to be stopped")
    assert manager.running() == []
    events = await collect(manager.turn("a", "fake", spec_for(tmp_path, "a"), Host(), "again"))
    assert reply(events).startswith("You said: again")


async def test_the_key_is_in_no_argument_and_no_log(manager: EngineManager, tmp_path: Path) -> None:
    await collect(manager.turn("a", "fake", spec_for(tmp_path, "a"), Host(), f"echo {KEY}"))
    pid = manager.pid("a")
    assert pid is not None
    arguments, log = arguments_and_log(pid, tmp_path / "a" / "engine.log")
    assert KEY.encode() not in arguments
    assert "api key set" in log and KEY not in log


def arguments_and_log(pid: int, log: Path) -> tuple[bytes, str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes(), log.read_text()


PARENT = textwrap.dedent(
    """
    import asyncio, sys
    from lineup.engines.fake import FakeRuntime
    from lineup.engines.manager import EngineManager
    from lineup.engines.runtime import ModelEndpoint, SessionSpec

    class Host:
        async def approve(self, request): ...
        async def call_tool(self, call): ...

    async def main():
        manager = EngineManager({"fake": FakeRuntime()})
        model = ModelEndpoint("openai-chat", "http://x", "m")
        spec = lambda: SessionSpec(cwd=sys.argv[1], model=model, state_dir=sys.argv[1])
        async for _ in manager.turn("a", "fake", spec, Host(), "hi"):
            pass
        print(manager.pid("a"), flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
    """
)


def test_no_engine_outlives_a_parent_killed_with_sigkill(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "src")}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(tmp_path)], stdout=subprocess.PIPE, env=env
    )
    try:
        assert parent.stdout is not None
        engine = int(parent.stdout.readline())
        assert alive(engine)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        until(lambda: not alive(engine), "the engine to die with its parent")
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)
        if parent.stdout is not None:
            parent.stdout.close()
