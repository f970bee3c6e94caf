"""The fake engine's driver: :class:`FakeRuntime` runs ``python -m lineup.engines.fake_engine``
as a real subprocess and speaks its protocol, one JSON object per line on stdio.

Host to engine: ``init {history, resume, model, tools, instructions}``, ``turn {text}``,
``approval {id, allow, reason, updated_input}``, ``tool_result {id, text, ok}``,
``steer {text}``, ``interrupt``. Engine to host: ``ready {session, remembered, resumed}``,
``turn_started {turn}``, ``delta {item, text}``, ``message {item, text}``, ``reasoning {item,
text}``, ``tool_call {id, name, arguments}``, ``tool_finished {id, ok, text}``,
``approval_request {id, command, cwd}`` or ``{id, tool, input}`` (an editable one),
``command_started {item, command, cwd}``, ``command_output {item, chunk}``,
``command_finished {item, exit_code}``, ``file_change {item, path, diff}``, ``usage {input,
output, window}``, ``error {code, message}``, ``turn_finished {turn, status, session}``.

Being a real process, it shows everything the process manager must handle — lazy start,
crashes, the watchdog, logs, the key kept out of the arguments — with no engine installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import lineup
from lineup.engines.process import EngineProcess, RotatingLog, engine_environment, spawn
from lineup.engines.runtime import (
    ApprovalDecision,
    ApprovalRequest,
    CommandFinished,
    CommandOutput,
    CommandStarted,
    EngineError,
    EngineStatus,
    FileChange,
    MessageDelta,
    MessageDone,
    ReasoningSummary,
    RuntimeEvent,
    RuntimeHost,
    SessionSpec,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    ToolInvocation,
    ToolOutcome,
    TurnFinished,
    TurnStarted,
)
from lineup.protocol.errors import ErrorCode, Unavailable

KEY_VARIABLE = "LINEUP_MODEL_API_KEY"
START_SECONDS = 20.0
LOG_FILE = "engine.log"
_PACKAGE_ROOT = str(Path(lineup.__file__).resolve().parents[1])
"""Where this very package was installed from: the engine program is part of it."""


class FakeRuntime:
    """The fake engine: always installed (it is part of LineUp)."""

    name = "fake"

    def __init__(self, *, log_max_bytes: int = 1_000_000) -> None:
        self.log_max_bytes = log_max_bytes

    def status(self) -> EngineStatus:
        from lineup import __version__

        return EngineStatus(
            engine=self.name,
            installed=True,
            version=__version__,
            path=sys.executable,
            install_hint="(part of LineUp)",
        )

    async def start(self, spec: SessionSpec, host: RuntimeHost) -> FakeSession:
        secrets = [spec.model.api_key] if spec.model.api_key else []
        log = RotatingLog(
            Path(spec.state_dir) / LOG_FILE, max_bytes=self.log_max_bytes, secrets=secrets
        )
        home = Path(spec.state_dir) / "home"
        home.mkdir(parents=True, exist_ok=True)
        extra = {"PYTHONPATH": _PACKAGE_ROOT, **spec.env}
        if spec.model.api_key:
            extra[KEY_VARIABLE] = spec.model.api_key
        process = await spawn(
            [sys.executable, "-m", "lineup.engines.fake_engine"],
            cwd=spec.cwd,
            env=engine_environment(str(home), extra),
            log=log,
        )
        session = FakeSession(process, host)
        try:
            await asyncio.wait_for(session.handshake(spec), START_SECONDS)
        except BaseException:
            await process.stop()
            raise
        return session


class FakeSession:
    def __init__(self, process: EngineProcess, host: RuntimeHost) -> None:
        self._process = process
        self._host = host
        self._native: str | None = None
        self._asks: set[asyncio.Task[None]] = set()

    @property
    def native_session_id(self) -> str | None:
        return self._native

    @property
    def pid(self) -> int | None:
        return self._process.pid

    async def _send(self, **message: Any) -> None:
        await self._process.send_line(json.dumps(message))

    async def handshake(self, spec: SessionSpec) -> None:
        await self._send(
            type="init",
            history=[{"user": t.user, "assistant": t.assistant} for t in spec.history],
            resume=spec.resume_hint,
            model=spec.model.model,
            tools=[t.name for t in spec.tools],
            instructions=spec.instructions,
        )
        while True:
            line = await self._process.read_line()
            if line is None:
                raise Unavailable("The fake engine exited while starting (see its log).")
            message = _parse(line)
            if message is not None and message.get("type") == "ready":
                self._native = str(message.get("session"))
                return

    async def turn(self, text: str) -> AsyncIterator[RuntimeEvent]:
        try:
            await self._send(type="turn", text=text)
        except (BrokenPipeError, ConnectionResetError):
            yield _lost()
            yield TurnFinished(turn_id="", status="failed")
            return
        turn_id = ""
        try:
            while True:
                line = await self._process.read_line()
                if line is None:
                    yield _lost()
                    yield TurnFinished(turn_id=turn_id, status="failed")
                    return
                message = _parse(line)
                if message is None:
                    self._process.log.write(line)
                    continue
                kind = message.get("type")
                if kind == "turn_started":
                    turn_id = str(message.get("turn"))
                    yield TurnStarted(turn_id)
                elif kind == "delta":
                    yield MessageDelta(str(message["item"]), str(message["text"]))
                elif kind == "message":
                    yield MessageDone(str(message["item"]), str(message["text"]))
                elif kind == "command_started":
                    yield CommandStarted(
                        str(message["item"]), str(message["command"]), str(message["cwd"])
                    )
                elif kind == "command_output":
                    yield CommandOutput(str(message["item"]), str(message["chunk"]))
                elif kind == "command_finished":
                    code = message.get("exit_code")
                    yield CommandFinished(
                        str(message["item"]), int(code) if code is not None else None
                    )
                elif kind == "reasoning":
                    yield ReasoningSummary(str(message["item"]), str(message["text"]))
                elif kind == "file_change":
                    yield FileChange(
                        str(message["item"]), str(message["path"]), "modify", str(message["diff"])
                    )
                elif kind == "usage":
                    yield TokenUsage(
                        int(message["input"]), int(message["output"]), 0, message.get("window")
                    )
                elif kind == "error":
                    yield EngineError(ErrorCode(message["code"]), str(message["message"]))
                elif kind == "tool_call":
                    call = ToolInvocation(
                        str(message["id"]),
                        str(message["name"]),
                        dict(message.get("arguments") or {}),
                    )
                    yield ToolCallStarted(call.call_id, call.name, call.arguments)
                    self._ask(self._answer_tool(call))
                elif kind == "tool_finished":
                    yield ToolCallFinished(
                        str(message["id"]), bool(message.get("ok")), str(message.get("text", ""))
                    )
                elif kind == "approval_request":
                    self._ask(self._answer_approval(_approval(message)))
                elif kind == "turn_finished":
                    self._native = str(message.get("session") or self._native)
                    status = message.get("status")
                    yield TurnFinished(
                        turn_id=turn_id,
                        status=status if status in ("completed", "interrupted") else "failed",
                        native_session_id=self._native,
                    )
                    return
        finally:
            for task in list(self._asks):
                task.cancel()
            await asyncio.gather(*self._asks, return_exceptions=True)

    def _ask(self, work: Any) -> None:
        """Ask the host while the turn's events keep flowing (a person may take hours)."""
        task: asyncio.Task[None] = asyncio.create_task(work)
        self._asks.add(task)
        task.add_done_callback(self._asks.discard)

    async def _answer_tool(self, call: ToolInvocation) -> None:
        outcome: ToolOutcome = await self._host.call_tool(call)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await self._send(type="tool_result", id=call.call_id, text=outcome.text, ok=outcome.ok)

    async def _answer_approval(self, request: ApprovalRequest) -> None:
        decision: ApprovalDecision = await self._host.approve(request)
        updated = dict(decision.updated_input) if decision.updated_input is not None else None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await self._send(
                type="approval",
                id=request.request_id,
                allow=decision.allow,
                reason=decision.reason,
                updated_input=updated,
            )

    async def steer(self, text: str) -> None:
        """Into the running turn (acknowledged in its reply); with none running, it goes
        with the next."""
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await self._send(type="steer", text=text)

    async def interrupt(self) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            await self._send(type="interrupt")

    async def close(self) -> None:
        await self._process.stop()


def _approval(message: dict[str, Any]) -> ApprovalRequest:
    if message.get("tool"):
        tool = str(message["tool"])
        arguments = message.get("input")
        return ApprovalRequest(
            request_id=str(message["id"]),
            kind="tool",
            title=f"Let the engine use {tool}?",
            tool=tool,
            input=dict(arguments) if isinstance(arguments, dict) else {},
            editable=True,
        )
    return ApprovalRequest(
        request_id=str(message["id"]),
        kind="command",
        title=f"Run {message['command']}?",
        command=str(message["command"]),
        cwd=str(message.get("cwd") or ""),
    )


def _lost() -> EngineError:
    return EngineError(
        ErrorCode.UNAVAILABLE, "The engine process stopped unexpectedly in the middle of the turn."
    )


def _parse(line: str) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None
