"""The Pi driver: one ``pi --mode rpc`` process per session, JSON lines on stdio.

The process gets a ``PI_CODING_AGENT_DIR`` of its own under the session's state directory,
with a ``models.json`` and ``settings.json`` (:func:`~lineup.engines.pi_events.pi_models`,
:func:`~lineup.engines.pi_events.pi_settings`) that name the session's endpoint as the only
provider; ``PI_OFFLINE`` turns off Pi's update checks, install ping and tool downloads, and
Pi's discovery of extensions, skills, prompt templates and themes is off, so only LineUp's
extension runs inside it. The key reaches Pi in an environment variable that ``models.json``
names, never its arguments or a file.

**LineUp's extension** (``pi_extension/lineup.ts``, loaded with ``-e``) registers LineUp's
tools, asks before Pi's own bash, edit and write run (as the runtime's ``ask_before`` says),
keeps edits and writes inside the working directory, and reports each file change with its
content before and after. It talks to the driver **over the same RPC pipe**, through Pi's
extension UI protocol (an ``input`` dialog titled ``lineup.bridge`` carries a JSON request;
the answer carries the JSON reply), rather than over a loopback HTTP bridge with a random
port and a nonce. The pipe is already there and already private: only this process and Pi
hold its ends, so there is no port another local user could reach, no nonce to keep out of
``/proc``, no origin to check and no server to start and stop with the session. Requests and
events share one ordered stream, so a tool call never overtakes the event that announced it;
and every question is asked with Pi's abort signal, so ``abort`` resolves it on Pi's side —
the driver then cancels the host call it made (``RuntimeHost`` sees ``CancelledError``) and
does not answer.

Person-facing questions of Pi's (``ctx.ui`` dialogs that are not LineUp's) go to the host
too: ``confirm`` as an approval, ``select``/``input``/``editor`` as calls of LineUp's
``ask_choice``/``ask_input`` (:func:`~lineup.engines.pi_events.question_tool`), whose answer
Pi gets as it expects it: the chosen option's label, the typed text.

**Resume:** Pi keeps each session in a JSONL file under the state directory; its id is the
resume hint. A later process opens the file of that id (looked up by LineUp, passed as a
path); when there is none, the session starts afresh with LineUp's recorded history appended
to Pi's system prompt (from a file: it is no business of ``ps``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
from collections.abc import AsyncIterator, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from lineup.engines.codex_events import API_KEY_ENV
from lineup.engines.pi_events import (
    PiEventMapper,
    approval_request,
    bridge_request,
    error_code,
    pi_models,
    pi_settings,
    question_tool,
    tool_request,
)
from lineup.engines.process import (
    RotatingLog,
    die_with_parent,
    engine_environment,
    program_version,
)
from lineup.engines.process_tree import end_tree
from lineup.engines.runtime import (
    ApprovalRequest,
    EngineError,
    EngineStatus,
    RuntimeEvent,
    RuntimeHost,
    SessionSpec,
    ToolInvocation,
    Turn,
    TurnFinished,
    history_text,
)
from lineup.protocol.errors import ErrorCode, InvalidArgument, Unavailable

VERSION = "0.73.1"
"""The release this driver is written and tested against."""

PACKAGE = "@mariozechner/pi-coding-agent"
INSTALL_HINT = f"npm install -g {PACKAGE}@{VERSION}"
BINARY_ENV = "LINEUP_PI_BIN"

EXTENSION = Path(__file__).with_name("pi_extension") / "lineup.ts"
"""LineUp's Pi extension, shipped in this package."""

ASK_BEFORE_CHANGES = frozenset({"bash", "edit", "write"})
"""Pi's tools that run commands or change files: the person is asked before each."""

START_SECONDS = 60.0
CLOSE_GRACE = 3.0
ABORT_SECONDS = 30.0
LOG_FILE = "pi.log"
DIALOGS = frozenset({"select", "confirm", "input", "editor"})
_HINT = re.compile(r"^[0-9A-Za-z-]{8,64}$")


def find_pi(explicit: str | None = None) -> Path | None:
    """Pi's program: ``explicit``, ``$LINEUP_PI_BIN``, or ``pi`` on ``PATH`` — the npm
    command resolved to the script it links to (``dist/cli.js``)."""
    candidate = explicit or os.environ.get(BINARY_ENV) or shutil.which("pi")
    if not candidate:
        return None
    path = Path(candidate).resolve()
    return path if path.is_file() else None


def pi_package(program: Path) -> Path | None:
    """The npm package the program belongs to."""
    for parent in program.parents:
        manifest = parent / "package.json"
        if manifest.is_file():
            try:
                data = json.loads(manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            return parent if isinstance(data, dict) and data.get("name") == PACKAGE else None
    return None


def pi_version(program: Path) -> str | None:
    package = pi_package(program)
    if package is not None:
        with contextlib.suppress(OSError, ValueError):
            version = json.loads((package / "package.json").read_text(encoding="utf-8"))["version"]
            return str(version)
    node = _node_for(program)
    if node is None:
        return None
    return program_version([*node, str(program)])


def _node_for(program: Path) -> list[str] | None:
    """What runs the program: Node for a script, nothing for a native build."""
    if program.suffix in {".js", ".mjs", ".cjs"}:
        node = shutil.which("node")
        return [node] if node else None
    return []


class PiRuntime:
    """Starts Pi sessions. ``ask_before`` names Pi's tools the person approves each call of
    (:data:`ASK_BEFORE_CHANGES` by default; empty to ask for nothing); ``confine_writes``
    refuses edits and writes outside the session's working directory; ``extensions`` are
    Pi extensions of the operator's, loaded after LineUp's (their questions to the person
    reach the host like Pi's own)."""

    name = "pi"

    def __init__(
        self,
        binary: str | None = None,
        *,
        ask_before: Collection[str] = ASK_BEFORE_CHANGES,
        confine_writes: bool = True,
        extensions: Sequence[str | Path] = (),
        launcher: Sequence[str] = (),
        log_max_bytes: int = 1_000_000,
    ) -> None:
        self._binary = binary
        self.extensions = tuple(Path(e) for e in extensions)
        self.ask_before = frozenset(ask_before)
        self.confine_writes = confine_writes
        self.launcher = tuple(launcher)
        """A command the program is started under (a tracer, a confining wrapper)."""
        self.log_max_bytes = log_max_bytes

    def binary(self) -> Path | None:
        return find_pi(self._binary)

    def status(self) -> EngineStatus:
        path = self.binary()
        version = pi_version(path) if path is not None else None
        runnable = path is not None and _node_for(path) is not None
        return EngineStatus(
            engine=self.name,
            installed=runnable and version is not None,
            version=version,
            path=str(path) if path is not None else None,
            install_hint=INSTALL_HINT,
        )

    async def start(self, spec: SessionSpec, host: RuntimeHost) -> PiSession:
        path = self.binary()
        node = _node_for(path) if path is not None else None
        if path is None or node is None:
            raise Unavailable(f"Pi is not installed (it needs Node.js): {INSTALL_HINT}")
        session = PiSession(
            [*node, str(path)],
            spec,
            host,
            ask_before=self.ask_before,
            confine_writes=self.confine_writes,
            extensions=self.extensions,
            launcher=self.launcher,
            log_max_bytes=self.log_max_bytes,
        )
        try:
            await asyncio.wait_for(session.open(), START_SECONDS)
        except TimeoutError:
            await session.close()
            raise Unavailable(
                f"Pi did not start within {START_SECONDS:.0f} s; see its log."
            ) from None
        except BaseException:
            await session.close()
            raise
        return session


def _context(instructions: str | None, history: Sequence[Turn]) -> str:
    parts = [instructions] if instructions else []
    if history:
        parts.append(history_text(history))
    return "\n\n".join(parts)


class PiSession:
    """One ``pi --mode rpc`` process and the one Pi session it works on."""

    def __init__(
        self,
        command: Sequence[str],
        spec: SessionSpec,
        host: RuntimeHost,
        *,
        ask_before: Collection[str] = ASK_BEFORE_CHANGES,
        confine_writes: bool = True,
        extensions: Sequence[Path] = (),
        launcher: Sequence[str] = (),
        log_max_bytes: int = 1_000_000,
    ) -> None:
        self._command_line = [*launcher, *command]
        self._extensions = tuple(extensions)
        self._spec = spec
        self._host = host
        self._ask_before = sorted(ask_before)
        self._confine_writes = confine_writes
        secrets = [spec.model.api_key] if spec.model.api_key else []
        self.log = RotatingLog(
            Path(spec.state_dir) / LOG_FILE, max_bytes=log_max_bytes, secrets=secrets
        )
        self._process: asyncio.subprocess.Process | None = None
        self._mapper = PiEventMapper(spec.cwd)
        self._events: asyncio.Queue[RuntimeEvent | None] | None = None
        self._replies: dict[str, asyncio.Future[Mapping[str, Any]]] = {}
        self._next_id = 0
        self._asks: set[asyncio.Task[None]] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._settling: set[asyncio.Task[None]] = set()
        self._gone = asyncio.Event()
        self._queued: list[str] = []
        self._stderr_tail: list[str] = []
        self._session_id: str | None = None
        self.session_file: str | None = None
        self.resumed = False
        """Whether the resume hint was taken (else the session is new, seeded from history)."""

    # --- RuntimeSession -----------------------------------------------------------------

    @property
    def native_session_id(self) -> str | None:
        return self._session_id

    @property
    def pid(self) -> int | None:
        """The process LineUp started: Pi's Node, or the launcher it runs under."""
        return self._process.pid if self._process is not None else None

    def home(self) -> Path:
        """Pi's ``PI_CODING_AGENT_DIR`` (and ``HOME``): its config and sessions."""
        return Path(self._spec.state_dir) / "pi"

    def sessions(self) -> Path:
        return self.home() / "sessions"

    def _resume_file(self) -> Path | None:
        hint = self._spec.resume_hint
        if not hint or not _HINT.match(hint) or not self.sessions().is_dir():
            return None
        found = sorted(self.sessions().glob(f"*_{hint}.jsonl"))
        return found[-1] if found else None

    def _environment(self) -> dict[str, str]:
        home = self.home()
        extra = {
            **self._spec.env,
            "PI_CODING_AGENT_DIR": str(home),
            "PI_OFFLINE": "1",
            "PI_SKIP_VERSION_CHECK": "1",
            "PI_TELEMETRY": "0",
            "LINEUP_PI_BRIDGE": str(home / "lineup-bridge.json"),
        }
        extra.pop(API_KEY_ENV, None)
        if self._spec.model.api_key:
            extra[API_KEY_ENV] = self._spec.model.api_key
        return engine_environment(str(home), extra)

    async def open(self) -> None:
        home = self.home()
        self.sessions().mkdir(parents=True, exist_ok=True)
        model = self._spec.model
        (home / "models.json").write_text(json.dumps(pi_models(model), indent=2))
        (home / "settings.json").write_text(json.dumps(pi_settings(model), indent=2))
        bridge = {
            "tools": [
                {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
                for t in self._spec.tools
            ],
            "ask_before": self._ask_before,
            "confine_writes": self._confine_writes,
        }
        (home / "lineup-bridge.json").write_text(json.dumps(bridge))
        arguments = [
            "--mode",
            "rpc",
            "--session-dir",
            str(self.sessions()),
            "--no-extensions",
            "--no-skills",
            "--no-prompt-templates",
            "--no-themes",
            "-e",
            str(EXTENSION),
        ]
        for extension in self._extensions:
            arguments += ["-e", str(extension)]
        resume = self._resume_file()
        if resume is not None:
            arguments += ["--session", str(resume)]
        context = _context(self._spec.instructions, () if resume else self._spec.history)
        if context:
            context_file = home / "lineup-context.md"
            context_file.write_text(context, encoding="utf-8")
            arguments += ["--append-system-prompt", str(context_file)]
        self._process = await asyncio.create_subprocess_exec(
            *self._command_line,
            *arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=self._spec.cwd,
            env=self._environment(),
            start_new_session=True,  # its commands form one group, killed with it
            preexec_fn=die_with_parent,  # no engine outlives the hub
            limit=64 * 1024 * 1024,  # a line carries the whole reply so far
        )
        self.log.write(
            f"pi process {self._process.pid} started: {' '.join(arguments)} (in {self._spec.cwd})"
        )
        self._tasks = [
            asyncio.create_task(self._read(), name=f"pi-stdout:{self._process.pid}"),
            asyncio.create_task(self._drain_stderr(), name=f"pi-stderr:{self._process.pid}"),
        ]
        state = await self._command({"type": "get_state"})
        data = state.get("data") or {}
        self._session_id = str(data.get("sessionId") or "") or None
        self.session_file = str(data.get("sessionFile") or "") or None
        self._mapper.session_id = self._session_id
        self.resumed = resume is not None and self._session_id == self._spec.resume_hint

    async def turn(self, text: str) -> AsyncIterator[RuntimeEvent]:
        if self._events is not None:
            raise InvalidArgument("a turn is already running; steer it instead")
        events: asyncio.Queue[RuntimeEvent | None] = asyncio.Queue()
        self._events = events
        queued, self._queued = self._queued, []
        message = "\n\n".join([*queued, text])
        try:
            try:
                reply = await self._command({"type": "prompt", "message": message})
            except Unavailable as error:
                yield EngineError(code=ErrorCode.UNAVAILABLE, message=str(error))
                yield TurnFinished(turn_id="", status="failed", native_session_id=self._session_id)
                return
            if not reply.get("success"):
                problem = str(reply.get("error") or "Pi refused the message")
                yield EngineError(code=error_code(problem), message=problem)
                yield TurnFinished(turn_id="", status="failed", native_session_id=self._session_id)
                return
            while True:
                event = await events.get()
                if event is None:
                    await self._reap()
                    yield EngineError(code=ErrorCode.UNAVAILABLE, message=self._exit_message())
                    yield TurnFinished(
                        turn_id=self._mapper.turn_id or "",
                        status="failed",
                        native_session_id=self._session_id,
                    )
                    return
                yield event
                if isinstance(event, TurnFinished):
                    return
        finally:
            self._events = None
            await self._cancel_asks()

    async def steer(self, text: str) -> None:
        """Into the running turn (Pi's ``steer``: delivered after the tools running now,
        before the next model call); queued for the next turn otherwise."""
        if await self._queue_in_pi("steer", text):
            return
        self._queued.append(text)

    async def follow_up(self, text: str) -> None:
        """For when the running turn is done (Pi's ``follow_up``: delivered only once the
        agent would otherwise stop, in the same turn); queued for the next turn otherwise."""
        if await self._queue_in_pi("follow_up", text):
            return
        self._queued.append(text)

    async def interrupt(self) -> None:
        """Pi's ``abort``. A pending host call is cancelled and left unanswered: Pi's side of
        it already ended with the abort, and the model is told the tool was cancelled."""
        if self._events is None or self._process is None:
            return
        self._mapper.interrupting = True
        await self._cancel_asks()
        with contextlib.suppress(Unavailable, TimeoutError):
            await asyncio.wait_for(self._command({"type": "abort"}), ABORT_SECONDS)

    async def close(self) -> None:
        await self._cancel_asks()
        process = self._process
        if process is not None:
            await end_tree(process, CLOSE_GRACE)
        tasks = [*self._tasks, *self._settling]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if process is not None:
            self.log.write(f"pi process {process.pid} exited with {process.returncode}")

    # --- Pi's side ----------------------------------------------------------------------

    async def _read(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        try:
            while True:
                try:
                    line = await process.stdout.readline()  # split on "\n" alone, as Pi asks
                except ValueError:  # longer than the limit: not ours to parse
                    self.log.write("skipped an over-long line from Pi")
                    continue
                if not line:
                    break
                text = line.decode("utf-8", "replace").rstrip("\n").removesuffix("\r")
                if not text.strip():
                    continue
                try:
                    message = json.loads(text)
                except ValueError:
                    self.log.write(f"stdout: {text[:500]}")
                    continue
                if isinstance(message, dict):
                    self._dispatch(message)
        finally:
            self._gone.set()
            for reply in self._replies.values():
                if not reply.done():
                    reply.set_exception(Unavailable(self._exit_message()))
            self._replies.clear()
            for task in list(self._asks):
                task.cancel()
            if self._events is not None:
                self._events.put_nowait(None)

    def _dispatch(self, message: Mapping[str, Any]) -> None:
        kind = message.get("type")
        if kind == "response":
            reply = self._replies.pop(str(message.get("id")), None)
            if reply is not None and not reply.done():
                reply.set_result(message)
            return
        if kind == "extension_ui_request" and message.get("method") in DIALOGS:
            task = asyncio.create_task(self._answer(message))
            self._asks.add(task)
            task.add_done_callback(self._asks.discard)
            return
        if kind == "extension_error":
            self.log.write(f"extension error in {message.get('event')}: {message.get('error')}")
        for event in self._mapper.event(message):
            self._emit(event)
        if kind == "agent_end" and self._mapper.ending:
            settling = asyncio.create_task(self._settle())
            self._settling.add(settling)
            settling.add_done_callback(self._settling.discard)

    def _emit(self, event: RuntimeEvent) -> None:
        if self._events is not None:
            self._events.put_nowait(event)

    async def _settle(self) -> None:
        """After ``agent_end``: a question Pi answers in order, so whatever Pi does next on
        its own (compacting, then running again) is announced before the answer."""
        with contextlib.suppress(Unavailable):
            await self._command({"type": "get_state"})
            for event in self._mapper.settle():
                self._emit(event)

    async def _answer(self, request: Mapping[str, Any]) -> None:
        method = str(request.get("method"))
        bridge = (
            bridge_request(request.get("title"), request.get("placeholder"))
            if method == "input"
            else None
        )
        response: dict[str, Any] = {"type": "extension_ui_response", "id": request.get("id")}
        try:
            if bridge is not None:
                response["value"] = json.dumps(await self._bridge(bridge))
            elif method == "confirm":
                decision = await self._host.approve(
                    ApprovalRequest(
                        request_id=str(request.get("id")),
                        kind="tool",
                        title=str(request.get("title") or "Confirm"),
                        reason=str(request["message"]) if request.get("message") else None,
                    )
                )
                response["confirmed"] = decision.allow
            else:
                response.update(await self._question(request))
        except asyncio.CancelledError:
            raise  # the turn was interrupted: Pi's own abort ended the question
        except Exception as exc:  # a host that failed: the engine is told, not left waiting
            self.log.write(f"the host could not answer {method}: {exc}")
            if bridge is not None and bridge.get("op") == "approve":
                response["value"] = json.dumps({"allow": False, "reason": "LineUp could not ask"})
            elif bridge is not None:
                response["value"] = json.dumps({"ok": False, "text": f"LineUp failed: {exc}"})
            else:
                response["cancelled"] = True
        with contextlib.suppress(Unavailable):
            await self._send(response)

    async def _question(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """One of Pi's ``select``/``input``/``editor`` dialogs, asked as LineUp's question:
        the answer as Pi takes it (the option's own label, the text), or cancelled."""
        asked = question_tool(request)
        if asked is None:
            return {"cancelled": True}
        outcome = await self._host.call_tool(
            ToolInvocation(
                call_id=str(request.get("id")), name=asked.tool, arguments=asked.arguments
            )
        )
        answer = asked.read(outcome)
        if not answer:
            return {"cancelled": True}
        return {"value": answer[0]}

    async def _bridge(self, request: Mapping[str, Any]) -> dict[str, Any]:
        if request.get("op") == "approve":
            asked = approval_request(request, self._spec.cwd)
            decision = await self._host.approve(asked)
            reply: dict[str, Any] = {"allow": decision.allow, "reason": decision.reason}
            if decision.allow and decision.updated_input is not None:
                reply["input"] = dict(decision.updated_input)
                self._mapper.permitted(asked.request_id, decision.updated_input)
            return reply
        call = tool_request(request)
        outcome = await self._host.call_tool(
            ToolInvocation(call_id=call.call_id, name=call.name, arguments=call.arguments)
        )
        return {"ok": outcome.ok, "text": outcome.text}

    # --- plumbing -----------------------------------------------------------------------

    async def _send(self, message: Mapping[str, Any]) -> None:
        process = self._process
        if process is None or process.stdin is None or self._gone.is_set():
            raise Unavailable(self._exit_message())
        try:
            process.stdin.write(json.dumps(message).encode() + b"\n")
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as error:
            raise Unavailable(self._exit_message()) from error

    async def _command(self, command: Mapping[str, Any]) -> Mapping[str, Any]:
        """Send one command and wait for its response (``unavailable`` once Pi is gone)."""
        self._next_id += 1
        key = f"lineup-{self._next_id}"
        reply: asyncio.Future[Mapping[str, Any]] = asyncio.get_running_loop().create_future()
        self._replies[key] = reply
        try:
            await self._send({**command, "id": key})
            return await reply
        finally:
            self._replies.pop(key, None)

    async def _queue_in_pi(self, kind: str, text: str) -> bool:
        """Pi keeps a steered or follow-up message for its run, even one not started yet,
        and for the next run when this one has just ended."""
        if self._events is None:
            return False
        try:
            reply = await self._command({"type": kind, "message": text})
        except Unavailable:
            return False
        return bool(reply.get("success"))

    async def _cancel_asks(self) -> None:
        asks = list(self._asks)
        for task in asks:
            task.cancel()
        await asyncio.gather(*asks, return_exceptions=True)

    async def _reap(self) -> None:
        """Wait briefly for the exit status of a process whose output has ended."""
        if self._process is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._process.wait(), CLOSE_GRACE)

    def _exit_message(self) -> str:
        process = self._process
        code = process.returncode if process is not None else None
        if code is None:
            return "Pi stopped"
        if code < 0:
            return f"Pi was killed by signal {-code}"
        tail = "; ".join(self._stderr_tail[-3:])  # it stopped of itself: say what it said
        return f"Pi exited with status {code}" + (f" ({tail})" if tail else "")

    async def _drain_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        while line := await self._process.stderr.readline():
            text = self.log.redact(line.decode("utf-8", "replace")).rstrip()
            self.log.write(text)
            if text.strip():
                self._stderr_tail = [*self._stderr_tail[-19:], text.strip()[:500]]


__all__ = [
    "ASK_BEFORE_CHANGES",
    "EXTENSION",
    "INSTALL_HINT",
    "VERSION",
    "PiRuntime",
    "PiSession",
    "find_pi",
    "pi_version",
]
