"""The Codex driver: one ``codex app-server`` process per session, on stdio.

The process gets a ``CODEX_HOME`` of its own under the session's state directory, with a
``config.toml`` (:func:`~lineup.engines.codex_events.codex_config`) that points the model
provider at the session's endpoint and switches off everything else that would leave the
machine. The key reaches Codex in an environment variable, never its arguments. LineUp's
tools are the thread's ``dynamicTools`` (an experimental part of the protocol, hence
``experimentalApi``); Codex calls them back with ``item/tool/call``, and asks before a
command or a file change with ``item/*/requestApproval`` — both go to the
:class:`~lineup.engines.runtime.RuntimeHost`, and are cancelled when the turn is interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import platform
import re
import shutil
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from lineup.engines.codex_events import API_KEY_ENV, CodexEventMapper, codex_config
from lineup.engines.jsonrpc import JsonRpcPeer, MethodNotFound, PeerGone, RpcError
from lineup.engines.process import die_with_parent, engine_environment, program_version
from lineup.engines.process_tree import end_tree
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
from lineup.protocol.errors import ErrorCode, InvalidArgument, Unavailable

VERSION = "0.171.0"
"""The release this driver is written and tested against."""

INSTALL_HINT = f"npm install -g @openai/codex@{VERSION}"

BINARY_ENV = "LINEUP_CODEX_BIN"

CLOSE_GRACE = 3.0

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _vendor_binary(package_dir: Path) -> Path | None:
    """The native program inside an npm install of ``@openai/codex``: the package's
    ``codex`` command is a Node wrapper, and LineUp runs the program itself (no Node)."""
    arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}.get(
        platform.machine().lower(), platform.machine()
    )
    roots = [package_dir.parent, package_dir / "node_modules" / "@openai"]
    for root in roots:
        pattern = str(root / "codex-*" / "vendor" / f"{arch}-*" / "bin" / "codex")
        for found in sorted(glob.glob(pattern)):
            if os.access(found, os.X_OK):
                return Path(found)
    return None


def find_codex(explicit: str | None = None) -> Path | None:
    """The Codex program: ``explicit``, ``$LINEUP_CODEX_BIN``, or ``codex`` on ``PATH`` —
    resolved through an npm wrapper to the native binary it would run."""
    candidate = explicit or os.environ.get(BINARY_ENV) or shutil.which("codex")
    if not candidate:
        return None
    path = Path(candidate).resolve()
    if not path.exists():
        return None
    if path.suffix in {".js", ".mjs", ".cjs"}:
        package = next((p for p in path.parents if (p / "package.json").exists()), None)
        return _vendor_binary(package) if package is not None else None
    return path


class CodexRuntime:
    """Starts Codex sessions. ``approval_policy`` and ``sandbox`` are Codex's own values
    (``on-request`` asks the host before a command leaves the sandbox; ``untrusted`` before
    any command that is not known to be safe)."""

    name = "codex"

    def __init__(
        self,
        binary: str | None = None,
        *,
        approval_policy: str = "on-request",
        sandbox: str = "workspace-write",
        launcher: Sequence[str] = (),
    ) -> None:
        self._binary = binary
        self.launcher = tuple(launcher)
        """A command the program is started under (a tracer, a confining wrapper)."""
        self.approval_policy = approval_policy
        self.sandbox = sandbox

    def binary(self) -> Path | None:
        return find_codex(self._binary)

    def status(self) -> EngineStatus:
        path = self.binary()
        version = program_version([str(path)]) if path is not None else None
        return EngineStatus(
            engine=self.name,
            installed=path is not None and version is not None,
            version=version,
            path=str(path) if path is not None else None,
            install_hint=INSTALL_HINT,
        )

    async def start(self, spec: SessionSpec, host: RuntimeHost) -> CodexSession:
        if spec.model.api != "openai-responses":
            raise InvalidArgument(
                "Codex speaks the OpenAI Responses API only",
                details={"api": spec.model.api},
            )
        path = self.binary()
        if path is None:
            raise Unavailable(f"Codex is not installed: {INSTALL_HINT}")
        session = CodexSession(
            path,
            spec,
            host,
            approval_policy=self.approval_policy,
            sandbox=self.sandbox,
            launcher=self.launcher,
        )
        try:
            await session.open()
        except BaseException:
            await session.close()
            raise
        return session


def _dynamic_tool(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "inputSchema": dict(tool.input_schema),
    }


def _input(text: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": text, "text_elements": []}]


class CodexSession:
    """One ``codex app-server`` process and the one thread it works on."""

    def __init__(
        self,
        binary: Path,
        spec: SessionSpec,
        host: RuntimeHost,
        *,
        approval_policy: str,
        sandbox: str,
        launcher: Sequence[str] = (),
    ) -> None:
        self._launcher = tuple(launcher)
        self._binary = binary
        self._spec = spec
        self._host = host
        self._approval_policy = approval_policy
        self._sandbox = sandbox
        self._process: asyncio.subprocess.Process | None = None
        self._peer: JsonRpcPeer | None = None
        self._mapper = CodexEventMapper(spec.cwd)
        self._events: asyncio.Queue[RuntimeEvent] | None = None
        self._thread_id: str | None = None
        self._turn_id: str | None = None
        self._queued: list[str] = []
        self._stderr_tail: list[str] = []
        self._stderr_task: asyncio.Task[None] | None = None
        self.resumed = False
        """Whether the resume hint was taken (else the thread is new, seeded from history)."""

    # --- RuntimeSession -----------------------------------------------------------------

    @property
    def native_session_id(self) -> str | None:
        return self._thread_id

    @property
    def pid(self) -> int | None:
        """The process LineUp started: Codex, or the launcher it runs under."""
        return self._process.pid if self._process is not None else None

    def codex_home(self) -> Path:
        return Path(self._spec.state_dir) / "codex-home"

    def _environment(self) -> dict[str, str]:
        extra = {**self._spec.env, "CODEX_HOME": str(self.codex_home())}
        extra.pop(API_KEY_ENV, None)
        if self._spec.model.api_key:
            extra[API_KEY_ENV] = self._spec.model.api_key
        return engine_environment(str(self.codex_home()), extra)

    async def open(self) -> None:
        home = self.codex_home()
        home.mkdir(parents=True, exist_ok=True)
        config = codex_config(
            self._spec.model, approval_policy=self._approval_policy, sandbox=self._sandbox
        )
        (home / "config.toml").write_text(config)
        self._process = await asyncio.create_subprocess_exec(
            *self._launcher,
            str(self._binary),
            "app-server",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self._spec.cwd,
            env=self._environment(),
            start_new_session=True,  # its commands form one group, killed with it
            preexec_fn=die_with_parent,  # no engine outlives the hub
            limit=64 * 1024 * 1024,
        )
        assert self._process.stdin is not None and self._process.stdout is not None
        self._peer = JsonRpcPeer(
            self._process.stdout,
            self._process.stdin,
            on_notification=self._notification,
            on_request=self._request,
        )
        self._peer.start()
        self._stderr_task = asyncio.create_task(self._drain_stderr())
        await self._call(
            "initialize",
            {
                "clientInfo": {"name": "lineup", "title": "LineUp", "version": "1"},
                "capabilities": {"experimentalApi": True, "requestAttestation": False},
            },
        )
        await self._peer.notify("initialized")
        common: dict[str, Any] = {
            "cwd": self._spec.cwd,
            "approvalPolicy": self._approval_policy,
            "sandbox": self._sandbox,
        }
        if self._spec.resume_hint:
            try:
                result = await self._call(
                    "thread/resume", {"threadId": self._spec.resume_hint, **common}
                )
                self._thread_id = str(result["thread"]["id"])
                self._mapper.thread_id = self._thread_id
                self.resumed = True
                return
            except RpcError:
                pass  # not found in this home: start afresh from LineUp's history
        instructions = [s for s in (self._spec.instructions,) if s]
        if self._spec.history:
            instructions.append(history_text(self._spec.history))
        params = {
            **common,
            "ephemeral": False,  # kept in CODEX_HOME, so a later process can resume it
            "dynamicTools": [_dynamic_tool(t) for t in self._spec.tools],
        }
        if instructions:
            params["developerInstructions"] = "\n\n".join(instructions)
        result = await self._call("thread/start", params)
        self._thread_id = str(result["thread"]["id"])
        self._mapper.thread_id = self._thread_id

    async def turn(self, text: str) -> AsyncIterator[RuntimeEvent]:
        peer = self._require_peer()
        if self._events is not None:
            raise InvalidArgument("a turn is already running; steer it instead")
        events: asyncio.Queue[RuntimeEvent] = asyncio.Queue()
        self._events = events
        queued, self._queued = self._queued, []
        items = [i for t in [*queued, text] for i in _input(t)]
        try:
            try:
                result = await self._call(
                    "turn/start", {"threadId": self._thread_id, "input": items}
                )
                self._turn_id = str((result.get("turn") or {}).get("id") or "") or self._turn_id
            except (PeerGone, Unavailable) as error:
                yield EngineError(code=ErrorCode.UNAVAILABLE, message=str(error))
                yield TurnFinished(turn_id=self._turn_id or "", status="failed")
                return
            except RpcError as error:  # the engine refused the turn (bad input, say)
                yield EngineError(code=ErrorCode.INVALID_ARGUMENT, message=error.message)
                yield TurnFinished(turn_id="", status="failed", native_session_id=self._thread_id)
                return
            while True:
                event = await self._next_event(events, peer)
                if event is None:
                    await self._reap()
                    yield EngineError(code=ErrorCode.UNAVAILABLE, message=self._exit_message())
                    yield TurnFinished(
                        turn_id=self._turn_id or "",
                        status="failed",
                        native_session_id=self._thread_id,
                    )
                    return
                yield event
                if isinstance(event, TurnFinished):
                    return
        finally:
            self._events = None
            self._turn_id = None
            await peer.cancel_incoming()

    async def steer(self, text: str) -> None:
        """Into the running turn (``turn/steer``); queued for the next turn otherwise."""
        if self._events is not None and self._turn_id:
            try:
                await self._call(
                    "turn/steer",
                    {
                        "threadId": self._thread_id,
                        "expectedTurnId": self._turn_id,
                        "input": _input(text),
                    },
                )
                return
            except RpcError:
                pass  # the turn ended meanwhile
        self._queued.append(text)

    async def interrupt(self) -> None:
        peer = self._require_peer()
        try:
            if self._turn_id and self._events is not None:
                with contextlib.suppress(RpcError, Unavailable):
                    await self._call(
                        "turn/interrupt", {"threadId": self._thread_id, "turnId": self._turn_id}
                    )
        finally:
            # a pending approval or tool call: the person is not asked on. Cancelled after
            # the interrupt and left unanswered, so Codex tells the model the call was
            # cancelled (an error reply reaches it as "dynamic tool request failed")
            await peer.cancel_incoming(reply=False)

    async def close(self) -> None:
        process = self._process
        if self._peer is not None:
            await self._peer.aclose()
        if process is not None:
            await end_tree(process, CLOSE_GRACE)
        if self._stderr_task is not None:
            self._stderr_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._stderr_task

    # --- the engine's side --------------------------------------------------------------

    def _notification(self, method: str, params: Mapping[str, Any]) -> None:
        if method == "turn/started":
            self._turn_id = str((params.get("turn") or {}).get("id") or "") or self._turn_id
        for event in self._mapper.notification(method, params):
            if self._events is not None:
                self._events.put_nowait(event)

    async def _request(self, method: str, params: Mapping[str, Any]) -> Any:
        if method == "item/tool/call":
            name = str(params.get("tool", ""))
            arguments = params.get("arguments")
            outcome = await self._host.call_tool(
                ToolInvocation(
                    call_id=str(params.get("callId", "")),
                    name=name,
                    arguments=arguments if isinstance(arguments, Mapping) else {},
                )
            )
            return {
                "contentItems": [{"type": "inputText", "text": outcome.text}],
                "success": outcome.ok,
            }
        if method == "item/commandExecution/requestApproval":
            item_id = str(params.get("itemId", ""))
            command, cwd = self._mapper.command_of(item_id)
            command = str(params.get("command") or command or "")
            request = ApprovalRequest(
                request_id=str(params.get("approvalId") or item_id),
                kind="command",
                title=f"Run {command}" if command else "Run a command",
                command=command or None,
                cwd=str(params.get("cwd") or cwd or self._spec.cwd),
                reason=str(params["reason"]) if params.get("reason") else None,
            )
            decision = await self._host.approve(request)
            return {"decision": "accept" if decision.allow else "decline"}
        if method in ("item/fileChange/requestApproval", "applyPatchApproval"):
            item_id = str(params.get("itemId", ""))
            request = ApprovalRequest(
                request_id=item_id,
                kind="file_change",
                title="Change files",
                cwd=self._spec.cwd,
                diff=self._mapper.diff_of(item_id),
                reason=str(params["reason"]) if params.get("reason") else None,
            )
            decision = await self._host.approve(request)
            return {"decision": "accept" if decision.allow else "decline"}
        raise MethodNotFound(method)

    # --- plumbing -----------------------------------------------------------------------

    def _require_peer(self) -> JsonRpcPeer:
        if self._peer is None:
            raise Unavailable("the Codex session is not open")
        return self._peer

    async def _call(self, method: str, params: Mapping[str, Any]) -> Any:
        peer = self._require_peer()
        request = asyncio.ensure_future(peer.request(method, params))
        closed = asyncio.ensure_future(peer.closed.wait())
        try:
            await asyncio.wait({request, closed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
        if not request.done():
            request.cancel()
            await self._reap()
            raise Unavailable(self._exit_message())
        try:
            return request.result()
        except PeerGone:
            await self._reap()
            raise Unavailable(self._exit_message()) from None

    async def _next_event(
        self, events: asyncio.Queue[RuntimeEvent], peer: JsonRpcPeer
    ) -> RuntimeEvent | None:
        """The next event, or ``None`` once the process is gone and nothing is left."""
        if not events.empty():
            return events.get_nowait()
        getting = asyncio.ensure_future(events.get())
        closed = asyncio.ensure_future(peer.closed.wait())
        try:
            await asyncio.wait({getting, closed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            closed.cancel()
        if getting.done():
            return getting.result()
        getting.cancel()
        return events.get_nowait() if not events.empty() else None

    async def _reap(self) -> None:
        """Wait briefly for the exit status of a process whose output has ended."""
        if self._process is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._process.wait(), CLOSE_GRACE)

    def _exit_message(self) -> str:
        process = self._process
        code = process.returncode if process is not None else None
        how = "stopped"
        if code is not None:
            how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
        if code is not None and code < 0:
            return f"Codex {how}"
        tail = "; ".join(self._stderr_tail[-3:])  # it stopped of itself: say what it said
        return f"Codex {how}" + (f" ({tail})" if tail else "")

    async def _drain_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        while line := await self._process.stderr.readline():
            text = ANSI.sub("", line.decode(errors="replace")).strip()
            if text and not text.startswith("WARNING"):
                self._stderr_tail = [*self._stderr_tail[-19:], text[:500]]


__all__ = ["INSTALL_HINT", "VERSION", "CodexRuntime", "CodexSession", "find_codex"]
