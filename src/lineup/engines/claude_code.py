"""The Claude Code driver: one long-lived ``claude -p`` process per session, in stream-json.

Claude Code reads JSON lines on stdin — the person's messages (``{"type": "user", …}``) and
the host's control requests (``initialize``, ``interrupt``) — and prints JSON lines on stdout:
its stream (:mod:`~lineup.engines.claude_code_events` maps it) and control requests of its own,
which this driver answers: ``can_use_tool`` (``--permission-prompt-tool stdio``) goes to
:meth:`RuntimeHost.approve <lineup.engines.runtime.RuntimeHost.approve>`, and
``mcp_message`` carries the JSON-RPC of an MCP server that exists only in this process (an
``sdk`` server in ``--mcp-config``): LineUp's tools, whose calls go to
:meth:`RuntimeHost.call_tool <lineup.engines.runtime.RuntimeHost.call_tool>`.

The process runs offline but for the model: its ``HOME`` and temporary directory are under
the session's state directory, the endpoint is ``ANTHROPIC_BASE_URL``, the key is in
``ANTHROPIC_API_KEY`` (the environment only), and telemetry, update checks and retries are
off. It speaks the Anthropic Messages API alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import lineup
from lineup.engines.claude_code_events import (
    ASK_TOOL,
    FILE_TOOLS,
    SERVER,
    SHELL_TOOL,
    TOOL_PREFIX,
    ClaudeCodeEventMapper,
    anthropic_base_url,
    lineup_tool,
    proposed_diff,
    user_questions,
)
from lineup.engines.engine_questions import AskedQuestion
from lineup.engines.process import (
    EngineProcess,
    RotatingLog,
    engine_environment,
    program_version,
    spawn,
)
from lineup.engines.runtime import (
    ApprovalRequest,
    EngineError,
    EngineStatus,
    RuntimeEvent,
    RuntimeHost,
    SessionSpec,
    ToolInvocation,
    ToolSpec,
    TurnFinished,
    history_text,
)
from lineup.protocol.errors import ErrorCode, InvalidArgument, LineupError, Unavailable

VERSION = "2.1.332"
"""The release this driver is written and tested against."""

INSTALL_HINT = f"npm install -g @anthropic-ai/claude-code@{VERSION}"

BINARY_ENV = "LINEUP_CLAUDE_BIN"

START_SECONDS = 60.0
"""How long Claude Code may take to answer ``initialize`` (it starts its MCP servers first)."""
CONTROL_SECONDS = 10.0
CLOSE_GRACE = 3.0
LOG_FILE = "claude-code.log"
PROMPT_FILE = "claude-code-prompt.md"
MAX_LINE = 64 * 1024 * 1024
"""A line may carry a whole file (a ``Write``) or a command's output."""
MAX_DIFF_SOURCE = 2 * 1024 * 1024
"""A file larger than this is not read to show a proposed edit as a diff."""

NO_KEY = "lineup-no-key"
"""Claude Code will not start a turn without a key; an endpoint that takes none gets this."""

MCP_PROTOCOL = "2025-06-18"

_MODEL_VARIABLES = (
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "ANTHROPIC_DEFAULT_FABLE_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "CLAUDE_CODE_SUBAGENT_MODEL",
)
"""Claude Code's model aliases and its background and subagent models: all set to the
endpoint's one model, so no request asks it for a model it does not serve."""

OFFLINE: Mapping[str, str] = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_MAX_RETRIES": "0",
    "ENABLE_TOOL_SEARCH": "false",
}
"""No telemetry, update checks or connectivity probes; a failing model request fails the turn
at once instead of backing off for minutes; MCP tools are offered to the model directly rather
than behind a tool-search tool."""


class _StaleHint(Exception):
    """The process stopped before it answered ``initialize`` while resuming a session."""


# --- finding the program ---------------------------------------------------------------------


def _is_script(path: Path) -> bool:
    if path.suffix in {".js", ".cjs", ".mjs"}:
        return True
    try:
        with path.open("rb") as file:
            return file.read(2) == b"#!"
    except OSError:
        return True


def _platform_binary(package_dir: Path) -> Path | None:
    """The native program of an npm install whose postinstall step did not put it in place
    (``npm install --ignore-scripts``): it is in a platform package beside the wrapper."""
    roots = [package_dir.parent, package_dir / "node_modules" / "@anthropic-ai"]
    for root in roots:
        for candidate in sorted(root.glob("claude-code-*/claude")):
            if os.access(candidate, os.X_OK) and not _is_script(candidate):
                return candidate
    return None


def find_claude(explicit: str | None = None) -> Path | None:
    """The Claude Code program: ``explicit``, ``$LINEUP_CLAUDE_BIN``, or ``claude`` on
    ``PATH`` — followed through an npm wrapper to the native binary it would run, so Node is
    not needed to run it."""
    candidate = explicit or os.environ.get(BINARY_ENV) or shutil.which("claude")
    if not candidate:
        return None
    path = Path(candidate).resolve()
    if not path.is_file():
        return None
    if _is_script(path):
        package = next((p for p in path.parents if (p / "package.json").exists()), None)
        return _platform_binary(package) if package is not None else None
    return path


# --- the runtime -----------------------------------------------------------------------------


class ClaudeCodeRuntime:
    """Starts Claude Code sessions. ``permission_mode`` is Claude Code's own (``default``
    asks before commands and file changes; ``acceptEdits`` lets file changes in the working
    directory through; ``plan`` only plans)."""

    name = "claude-code"

    def __init__(
        self,
        binary: str | None = None,
        *,
        permission_mode: str = "default",
        launcher: Sequence[str] = (),
        log_max_bytes: int = 1_000_000,
    ) -> None:
        self._binary = binary
        self.permission_mode = permission_mode
        self.launcher = tuple(launcher)
        """A command the program is started under (a tracer, a confining wrapper)."""
        self.log_max_bytes = log_max_bytes

    def binary(self) -> Path | None:
        return find_claude(self._binary)

    def status(self) -> EngineStatus:
        path = self.binary()
        quiet = {"PATH": os.environ.get("PATH", ""), "DISABLE_AUTOUPDATER": "1"}
        version = program_version([str(path)], quiet) if path is not None else None
        return EngineStatus(
            engine=self.name,
            installed=path is not None and version is not None,
            version=version,
            path=str(path) if path is not None else None,
            install_hint=INSTALL_HINT,
        )

    async def start(self, spec: SessionSpec, host: RuntimeHost) -> ClaudeCodeSession:
        if spec.model.api != "anthropic-messages":
            raise InvalidArgument(
                "Claude Code speaks the Anthropic Messages API only; give this agent an "
                f"anthropic-messages endpoint (this one is {spec.model.api}).",
                details={"api": spec.model.api},
            )
        path = self.binary()
        if path is None:
            raise Unavailable(f"Claude Code is not installed: {INSTALL_HINT}")
        session = ClaudeCodeSession(
            path,
            spec,
            host,
            permission_mode=self.permission_mode,
            launcher=self.launcher,
            log_max_bytes=self.log_max_bytes,
        )
        try:
            await session.open()
        except BaseException:
            await session.close()
            raise
        return session


def _mcp_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": dict(tool.input_schema),
    }


def _rpc_result(rpc_id: Any, result: Mapping[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "result": dict(result)}


def _rpc_error(rpc_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rpc_id, "error": {"code": code, "message": message}}


def _tool_text(text: str, *, ok: bool = True) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": not ok}


# --- a session -------------------------------------------------------------------------------


class ClaudeCodeSession:
    """One ``claude -p`` process and the one conversation it holds."""

    def __init__(
        self,
        binary: Path,
        spec: SessionSpec,
        host: RuntimeHost,
        *,
        permission_mode: str = "default",
        launcher: Sequence[str] = (),
        log_max_bytes: int = 1_000_000,
    ) -> None:
        self._binary = binary
        self._spec = spec
        self._host = host
        self._permission_mode = permission_mode
        self._launcher = tuple(launcher)
        self._tools = {t.name: t for t in spec.tools}
        secrets = [spec.model.api_key] if spec.model.api_key else []
        self.log = RotatingLog(
            Path(spec.state_dir) / LOG_FILE, max_bytes=log_max_bytes, secrets=secrets
        )
        self._process: EngineProcess | None = None
        self._reader: asyncio.Task[None] | None = None
        self._gone = asyncio.Event()
        self._mapper = ClaudeCodeEventMapper(spec.cwd)
        self._events: asyncio.Queue[RuntimeEvent] | None = None
        self._queued: list[str] = []
        self._pending: dict[str, asyncio.Future[Mapping[str, Any]]] = {}
        self._handlers: dict[str, asyncio.Task[None]] = {}
        self._host_calls: set[asyncio.Task[None]] = set()
        self._mcp_calls: dict[Any, str] = {}
        self._requests = 0
        self._session_id: str | None = None
        self.resumed = False
        """Whether the resume hint was taken (else the session is new, seeded from history)."""

    # --- RuntimeSession -----------------------------------------------------------------

    @property
    def native_session_id(self) -> str | None:
        return self._mapper.session_id or self._session_id

    @property
    def pid(self) -> int | None:
        """The process LineUp started: Claude Code, or the launcher it runs under."""
        return self._process.pid if self._process is not None else None

    def home(self) -> Path:
        return Path(self._spec.state_dir) / "claude-home"

    async def open(self) -> None:
        if self._spec.resume_hint:
            try:
                await self._launch(resume=self._spec.resume_hint)
                self.resumed = True
                return
            except _StaleHint:
                self.log.write(
                    f"session {self._spec.resume_hint} could not be resumed; starting afresh "
                    "from LineUp's history"
                )
                await self._stop_process()
        await self._launch(resume=None)

    async def turn(self, text: str) -> AsyncIterator[RuntimeEvent]:
        if self._events is not None:
            raise InvalidArgument("a turn is already running; steer it instead")
        events: asyncio.Queue[RuntimeEvent] = asyncio.Queue()
        self._events = events
        message_uuid = str(uuid.uuid4())
        queued, self._queued = self._queued, []
        try:
            started = self._mapper.begin(message_uuid, message_uuid)
            try:
                await self._send_user(message_uuid, [*queued, text])
            except (BrokenPipeError, ConnectionResetError, Unavailable):
                # not started: nothing of the turn ran, so the host may retry it elsewhere
                await self._reap()
                yield EngineError(code=ErrorCode.UNAVAILABLE, message=self._exit_message())
                yield self._failed(message_uuid)
                return
            for event in started:
                yield event
            while True:
                next_event = await self._next_event(events)
                if next_event is None:
                    await self._reap()
                    yield EngineError(code=ErrorCode.UNAVAILABLE, message=self._exit_message())
                    yield self._failed(message_uuid)
                    return
                yield next_event
                if isinstance(next_event, TurnFinished):
                    return
        finally:
            self._events = None
            self._mapper.turn_id = None
            await self._cancel_host_calls()

    async def steer(self, text: str) -> None:
        """Into the running turn: Claude Code shows it to the model with its next request, or
        runs it right after when the turn has none left (the turn lasts until it has run).
        With no turn running it is kept and sent with the next turn."""
        if self._events is not None and self._mapper.in_turn:
            message_uuid = str(uuid.uuid4())
            self._mapper.sent(message_uuid)
            try:
                await self._send_user(message_uuid, [text])
                return
            except (BrokenPipeError, ConnectionResetError, Unavailable):
                pass  # the process is gone: the turn fails, the text waits for the next one
        self._queued.append(text)

    async def interrupt(self) -> None:
        if self._events is None or not self._mapper.in_turn:
            return
        self._mapper.interrupting()
        try:
            # cancel_queued: a follow-up not yet taken in is dropped with the turn
            with contextlib.suppress(Unavailable, TimeoutError, LineupError):
                await self._control({"subtype": "interrupt", "cancel_queued": True})
        finally:
            # a pending approval or tool call: the person is not asked on. Claude Code has
            # withdrawn it (control_cancel_request, notifications/cancelled); it gets no answer
            await self._cancel_host_calls()

    async def close(self) -> None:
        await self._stop_process()

    # --- the process --------------------------------------------------------------------

    def _environment(self) -> dict[str, str]:
        model = self._spec.model.model
        extra = {
            **self._spec.env,
            **OFFLINE,
            **dict.fromkeys(_MODEL_VARIABLES, model),
            "ANTHROPIC_BASE_URL": anthropic_base_url(self._spec.model.base_url),
            "ANTHROPIC_API_KEY": self._spec.model.api_key or NO_KEY,
            "CLAUDE_CODE_TMPDIR": str(Path(self._spec.state_dir) / "claude-tmp"),
        }
        return engine_environment(str(self.home()), extra)

    def _argv(self, resume: str | None) -> list[str]:
        mcp = {"mcpServers": {SERVER: {"type": "sdk", "name": SERVER}}}
        argv = [
            *self._launcher,
            str(self._binary),
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
            "--permission-prompt-tool",
            "stdio",
            "--permission-mode",
            self._permission_mode,
            "--mcp-config",
            json.dumps(mcp),
            "--strict-mcp-config",
            "--model",
            self._spec.model.model,
        ]
        if self._tools:
            # LineUp's tools reach the person anyway: Claude Code need not ask first
            argv += ["--allowedTools", TOOL_PREFIX.rstrip("_")]
        prompt = self._prompt(fresh=resume is None)
        if prompt:
            path = Path(self._spec.state_dir) / PROMPT_FILE
            path.write_text(prompt, encoding="utf-8")
            argv += ["--append-system-prompt-file", str(path)]
        if resume:
            argv += ["--resume", resume]
        else:
            self._session_id = str(uuid.uuid4())
            argv += ["--session-id", self._session_id]
        return argv

    def _prompt(self, *, fresh: bool) -> str:
        parts = [s for s in (self._spec.instructions,) if s]
        if fresh and self._spec.history:
            parts.append(history_text(self._spec.history))
        return "\n\n".join(parts)

    async def _launch(self, resume: str | None) -> None:
        self.home().mkdir(parents=True, exist_ok=True)
        (Path(self._spec.state_dir) / "claude-tmp").mkdir(parents=True, exist_ok=True)
        self._gone = asyncio.Event()
        self._mapper = ClaudeCodeEventMapper(self._spec.cwd)
        if resume:
            self._mapper.session_id = resume
        self._process = await spawn(
            self._argv(resume),
            cwd=self._spec.cwd,
            env=self._environment(),
            log=self.log,
            limit=MAX_LINE,
        )
        self._reader = asyncio.create_task(self._read(self._process))
        try:
            await self._control({"subtype": "initialize", "hooks": None}, within=START_SECONDS)
        except Unavailable:
            await self._reap()
            if resume:
                raise _StaleHint(self._exit_message()) from None
            raise Unavailable(f"Claude Code did not start: {self._exit_message()}") from None
        except TimeoutError:
            raise Unavailable(
                f"Claude Code did not answer within {START_SECONDS:g} s of starting (see "
                f"{self.log.path})."
            ) from None

    async def _stop_process(self) -> None:
        process, reader = self._process, self._reader
        if process is not None:
            await process.stop(CLOSE_GRACE)
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await reader
        handlers = list(self._handlers.values())
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        self._handlers.clear()
        self._mcp_calls.clear()

    async def _read(self, process: EngineProcess) -> None:
        gone = self._gone
        try:
            while (line := await process.read_line()) is not None:
                try:
                    message = json.loads(line)
                except ValueError:
                    self.log.write(line)
                    continue
                if isinstance(message, dict):
                    self._dispatch(message)
        except (ValueError, ConnectionError) as error:  # a line past MAX_LINE, a broken pipe
            self.log.write(f"reading Claude Code's output failed: {error}")
        finally:
            gone.set()
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(Unavailable(self._exit_message()))
            self._pending.clear()

    def _dispatch(self, message: Mapping[str, Any]) -> None:
        kind = message.get("type")
        if kind == "control_request":
            self._serve(message)
        elif kind == "control_response":
            self._answered(message.get("response") or {})
        elif kind == "control_cancel_request":
            task = self._handlers.get(str(message.get("request_id", "")))
            if task is not None:
                task.cancel()
        else:
            for event in self._mapper.line(message):
                if self._events is not None:
                    self._events.put_nowait(event)

    # --- requests to Claude Code --------------------------------------------------------

    async def _write(self, message: Mapping[str, Any]) -> None:
        if self._process is None or self._gone.is_set():
            raise Unavailable(self._exit_message())
        await self._process.send_line(json.dumps(message))

    async def _send_user(self, message_uuid: str, texts: Sequence[str]) -> None:
        content: Any = texts[0] if len(texts) == 1 else [{"type": "text", "text": t} for t in texts]
        await self._write(
            {
                "type": "user",
                "uuid": message_uuid,
                "session_id": "",
                "parent_tool_use_id": None,
                "message": {"role": "user", "content": content},
            }
        )

    async def _control(
        self, request: Mapping[str, Any], within: float = CONTROL_SECONDS
    ) -> Mapping[str, Any]:
        self._requests += 1
        request_id = f"lineup-{self._requests}"
        future: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            try:
                await self._write(
                    {"type": "control_request", "request_id": request_id, "request": dict(request)}
                )
            except (BrokenPipeError, ConnectionResetError):
                raise Unavailable(self._exit_message()) from None
            async with asyncio.timeout(within):
                return await future
        finally:
            self._pending.pop(request_id, None)

    def _answered(self, response: Mapping[str, Any]) -> None:
        future = self._pending.get(str(response.get("request_id", "")))
        if future is None or future.done():
            return
        if response.get("subtype") == "error":
            future.set_exception(InvalidArgument(str(response.get("error") or "refused")))
        else:
            answer = response.get("response")
            future.set_result(answer if isinstance(answer, Mapping) else {})

    # --- Claude Code's requests ---------------------------------------------------------

    def _serve(self, message: Mapping[str, Any]) -> None:
        request_id = str(message.get("request_id", ""))
        request = message.get("request") or {}
        task = asyncio.create_task(self._answer(request_id, request))
        self._handlers[request_id] = task
        task.add_done_callback(lambda _: self._handlers.pop(request_id, None))
        if request.get("subtype") == "can_use_tool":
            self._track_host_call(task)
        elif request.get("subtype") == "mcp_message":
            rpc = request.get("message") or {}
            if rpc.get("method") == "tools/call" and rpc.get("id") is not None:
                self._mcp_calls[rpc["id"]] = request_id
                self._track_host_call(task)

    def _track_host_call(self, task: asyncio.Task[None]) -> None:
        self._host_calls.add(task)
        task.add_done_callback(self._host_calls.discard)

    async def _cancel_host_calls(self) -> None:
        calls = list(self._host_calls)
        for task in calls:
            task.cancel()
        await asyncio.gather(*calls, return_exceptions=True)

    async def _answer(self, request_id: str, request: Mapping[str, Any]) -> None:
        subtype = request.get("subtype")
        try:
            if subtype == "can_use_tool":
                response = await self._permission(request_id, request)
            elif subtype == "mcp_message":
                response = {"mcp_response": await self._mcp(request)}
            else:
                raise InvalidArgument(f"LineUp does not answer {subtype!r} requests")
            answer: dict[str, Any] = {
                "subtype": "success",
                "request_id": request_id,
                "response": response,
            }
        except asyncio.CancelledError:
            raise  # withdrawn by Claude Code, or the turn ended: no answer is wanted
        except LineupError as error:
            answer = {"subtype": "error", "request_id": request_id, "error": error.message}
        except Exception as error:  # a host that broke: Claude Code must not wait forever
            self.log.write(f"answering Claude Code's {subtype} request failed: {error!r}")
            answer = {"subtype": "error", "request_id": request_id, "error": "LineUp failed"}
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, Unavailable):
            await self._write({"type": "control_response", "response": answer})

    async def _permission(self, request_id: str, request: Mapping[str, Any]) -> dict[str, Any]:
        tool = str(request.get("tool_name", ""))
        arguments = request.get("input")
        if not isinstance(arguments, Mapping):
            arguments = {}
        if lineup_tool(tool) in self._tools:
            return {"behavior": "allow", "updatedInput": dict(arguments)}
        if tool == ASK_TOOL and "ask_choice" in self._tools:
            asked = user_questions(arguments)
            if asked is not None:
                call_id = str(request.get("tool_use_id") or request_id)
                return await self._ask_user(call_id, arguments, asked)
        approval = self._approval(request_id, request, tool, arguments)
        try:
            decision = await self._host.approve(approval)
        except LineupError as error:
            return {"behavior": "deny", "message": error.message}
        if decision.allow:
            chosen = decision.updated_input if decision.updated_input is not None else arguments
            for event in self._mapper.permitted(approval.request_id, chosen):
                if self._events is not None:
                    self._events.put_nowait(event)
            return {"behavior": "allow", "updatedInput": dict(chosen)}
        return {
            "behavior": "deny",
            "message": decision.reason or "The person did not allow this.",
        }

    async def _ask_user(
        self,
        call_id: str,
        arguments: Mapping[str, Any],
        asked: Sequence[tuple[str, AskedQuestion]],
    ) -> dict[str, Any]:
        """``AskUserQuestion``: each question a LineUp choice card; the person's picks go back
        as the tool's edited input, as Claude Code takes them (``answers``)."""
        answers: dict[str, str] = {}
        for number, (key, question) in enumerate(asked):
            try:
                outcome = await self._host.call_tool(
                    ToolInvocation(
                        call_id=f"{call_id}/{number}",
                        name=question.tool,
                        arguments=question.arguments,
                    )
                )
            except LineupError as error:
                return {"behavior": "deny", "message": error.message}
            picked = question.read(outcome)
            if not picked:
                return {"behavior": "deny", "message": "The person did not answer in LineUp."}
            answers[key] = ", ".join(picked)
        return {"behavior": "allow", "updatedInput": {**arguments, "answers": answers}}

    def _approval(
        self, request_id: str, request: Mapping[str, Any], tool: str, arguments: Mapping[str, Any]
    ) -> ApprovalRequest:
        common: dict[str, Any] = {
            "request_id": str(request.get("tool_use_id") or request_id),
            "tool": tool,
            "input": dict(arguments),
            "cwd": self._spec.cwd,
            "editable": True,
        }
        if tool == SHELL_TOOL:
            command = str(arguments.get("command", ""))
            described = arguments.get("description")
            return ApprovalRequest(
                kind="command",
                title=f"Run {command}",
                command=command,
                reason=str(described) if described else None,
                **common,
            )
        if tool in FILE_TOOLS:
            path = str(arguments.get("file_path", ""))
            shown = self._mapper.relative(path)
            readable, current = self._current(path)
            diff = proposed_diff(tool, arguments, shown, current) if readable else None
            verb = "Write" if tool == "Write" else "Edit"
            return ApprovalRequest(kind="file_change", title=f"{verb} {shown}", diff=diff, **common)
        name = str(request.get("display_name") or tool)
        why = request.get("decision_reason")
        return ApprovalRequest(
            kind="tool", title=f"Use {name}", reason=str(why) if why else None, **common
        )

    def _current(self, path: str) -> tuple[bool, str | None]:
        """The file a proposed edit applies to: (readable, its text or ``None`` if absent)."""
        target = Path(path) if os.path.isabs(path) else Path(self._spec.cwd) / path
        try:
            if target.stat().st_size > MAX_DIFF_SOURCE:
                return False, None
            return True, target.read_text(encoding="utf-8")
        except FileNotFoundError:
            return True, None
        except (OSError, UnicodeDecodeError):
            return False, None

    async def _mcp(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """LineUp's MCP server, one JSON-RPC message at a time."""
        message = request.get("message") or {}
        method = message.get("method")
        rpc_id = message.get("id")
        params = message.get("params") or {}
        if request.get("server_name") != SERVER:
            return _rpc_error(rpc_id, -32601, f"no MCP server {request.get('server_name')!r}")
        if method == "initialize":
            return _rpc_result(
                rpc_id,
                {
                    "protocolVersion": params.get("protocolVersion") or MCP_PROTOCOL,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "lineup", "version": lineup.__version__},
                },
            )
        if method == "tools/list":
            return _rpc_result(rpc_id, {"tools": [_mcp_tool(t) for t in self._tools.values()]})
        if method == "tools/call":
            return _rpc_result(rpc_id, await self._call_tool(rpc_id, params))
        if method == "notifications/cancelled":
            served = self._mcp_calls.get(params.get("requestId"))
            task = self._handlers.get(served) if served is not None else None
            if task is not None:
                task.cancel()
            return {"jsonrpc": "2.0", "result": {}}
        if rpc_id is None:  # any other notification
            return {"jsonrpc": "2.0", "result": {}}
        if method == "ping":
            return _rpc_result(rpc_id, {})
        return _rpc_error(rpc_id, -32601, f"Method {method!r} not found")

    async def _call_tool(self, rpc_id: Any, params: Mapping[str, Any]) -> dict[str, Any]:
        try:
            name = str(params.get("name", ""))
            if name not in self._tools:
                return _tool_text(f"LineUp offers no tool {name!r}", ok=False)
            arguments = params.get("arguments")
            meta = params.get("_meta") or {}
            call = ToolInvocation(
                call_id=str(meta.get("claudecode/toolUseId") or rpc_id),
                name=name,
                arguments=arguments if isinstance(arguments, Mapping) else {},
            )
            try:
                outcome = await self._host.call_tool(call)
            except LineupError as error:
                return _tool_text(error.message, ok=False)
            return _tool_text(outcome.text, ok=outcome.ok)
        finally:
            self._mcp_calls.pop(rpc_id, None)

    # --- plumbing -----------------------------------------------------------------------

    def _failed(self, turn_id: str) -> TurnFinished:
        return TurnFinished(
            turn_id=turn_id, status="failed", native_session_id=self.native_session_id
        )

    async def _next_event(self, events: asyncio.Queue[RuntimeEvent]) -> RuntimeEvent | None:
        """The next event, or ``None`` once the process is gone and nothing is left."""
        if not events.empty():
            return events.get_nowait()
        getting = asyncio.ensure_future(events.get())
        gone = asyncio.ensure_future(self._gone.wait())
        try:
            await asyncio.wait({getting, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
        if getting.done():
            return getting.result()
        getting.cancel()
        return events.get_nowait() if not events.empty() else None

    async def _reap(self) -> None:
        """Wait briefly for the exit status of a process whose output has ended."""
        if self._process is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._process.process.wait(), CLOSE_GRACE)

    def _exit_message(self) -> str:
        process = self._process
        code = process.process.returncode if process is not None else None
        how = "stopped"
        if code is not None:
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        if code is not None and code < 0:
            return f"Claude Code {how}"
        tail = "; ".join(process.tail[-3:]) if process is not None else ""
        return f"Claude Code {how}" + (f" ({tail})" if tail else "")


__all__ = [
    "INSTALL_HINT",
    "VERSION",
    "ClaudeCodeRuntime",
    "ClaudeCodeSession",
    "find_claude",
]
