"""The :class:`Agent`: register handlers, then run until stopped."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx

from lineup import __version__
from lineup.protocol import agent_settings
from lineup.protocol.ids import new_id
from lineup.sdk._backoff import Backoff
from lineup.sdk._binding import Binding, SettingsHook
from lineup.sdk._config import AgentConfig, agent_home
from lineup.sdk._core import Core
from lineup.sdk._direct import (
    AgentHost,
    DirectEndpoint,
    DirectModeError,
    HostedAgent,
    HostedIdentity,
)
from lineup.sdk._settings import MessageHandler, Settings, TaskHandler
from lineup.sdk._state import StateStore
from lineup.sdk._tls import TlsTrust
from lineup.sdk._tools import ToolRuntime, Tools
from lineup.sdk._transport import Transport, WebSocketTransport
from lineup.sdk._uploads import FileContent, UploadedFile, read_content


class Agent:
    """An agent connected to a LineUp hub: it takes tasks, reports, and asks people.

    ::

        agent = Agent(AgentConfig.load())

        @agent.task
        async def handle(ctx: TaskContext) -> str:
            await ctx.progress(50, "Halfway")
            if (await ctx.ask_approval("Deploy to production?", risk="high")).approved:
                ...
            return "Deployed"

        asyncio.run(agent.run())

    The agent keeps its state (outbox, cursor, journal) in ``state_dir`` (default
    ``$LINEUP_AGENT_HOME/state/<agent id>/``), so a restarted agent resends what the hub has
    not acknowledged, and resumes the tasks it had not finished. Give each agent its own.

    ``heartbeat_interval`` (seconds) overrides the hub's; ``backoff`` sets reconnect delays;
    ``answer_timeout`` is how long to wait for the hub to answer a frame before reconnecting;
    ``transport`` replaces the WebSocket (tests pass an in-memory one), ``http_transport``
    the HTTP used for uploads (tests pass an ``httpx.MockTransport``).

    **Diagnostic lines.** While it runs, the agent keeps what the SDK logs (``lineup.sdk``:
    connection attempts, errors, reconnects, its version; plus the loggers named in
    ``diagnostic_loggers``) and sends the lines to the hub, where the Agents screen shows
    them — every ``diagnostics_interval`` seconds, and at once after each connection, so the
    failed attempts arrive when the hub is reachable again (``None`` keeps and sends
    nothing). Before a line is kept it is redacted: the agent's credential, LineUp tokens,
    bearer tokens, URLs' passwords and secret query parameters, values of fields whose names
    look secret or are listed in ``sensitive_fields`` (``extra={"api_key": …}`` in a logging
    call), and whatever the ``redact`` hook, a function of each string, takes out first.

    ``settings_schema`` describes the settings people may change from the app, as JSON
    Schema: an object whose properties are ``string``, ``number``, ``integer`` or
    ``boolean`` (optionally an ``enum``) with ``title``, ``description`` and ``default``
    (docs/protocol.md §5.1). The values are :attr:`settings`; :meth:`on_settings_change`
    hears of changes. A schema outside that subset is a ``ValueError`` here.
    """

    def __init__(
        self,
        config: AgentConfig,
        *,
        state_dir: str | os.PathLike[str] | None = None,
        name: str | None = None,
        runtime: str = "python",
        agent_version: str = __version__,
        capabilities: Sequence[str] | None = None,
        tools: Sequence[Any] | None = None,
        heartbeat_interval: float | None = None,
        backoff: Backoff | None = None,
        answer_timeout: float = 30.0,
        transport: Transport | None = None,
        http_transport: httpx.AsyncBaseTransport | None = None,
        sensitive_fields: Sequence[str] = (),
        redact: Callable[[str], str] | None = None,
        diagnostic_loggers: Sequence[str] = (),
        diagnostics_interval: float | None = 5.0,
        settings_schema: Mapping[str, Any] | None = None,
    ) -> None:
        if isinstance(sensitive_fields, str) or isinstance(diagnostic_loggers, str):
            raise TypeError("sensitive_fields and diagnostic_loggers are sequences of names.")
        if diagnostics_interval is not None and diagnostics_interval <= 0:
            raise ValueError("diagnostics_interval must be positive seconds (or None: off).")
        schema = None
        if settings_schema is not None:
            problems = agent_settings.schema_problems(dict(settings_schema))
            if problems:
                first = problems[0]
                raise ValueError(
                    f"settings_schema is not usable at {first['path'] or 'the top'}: "
                    f"{first['problem']}"
                )
            schema = dict(settings_schema)
        self._binding = Binding(schema)
        directory = (
            Path(state_dir) if state_dir is not None else agent_home() / "state" / config.agent_id
        )
        self.config = config
        self.name = name or config.agent_id
        trust = transport.tls if isinstance(transport, WebSocketTransport) else TlsTrust(config.tls)
        self._settings = Settings(
            config=config,
            state_path=directory / StateStore.FILE_NAME,
            transport=transport if transport is not None else WebSocketTransport(tls=trust),
            tls=trust,
            runtime=runtime,
            agent_version=agent_version,
            capabilities=tuple(capabilities) if capabilities is not None else None,
            tools=tuple(tools) if tools else None,
            heartbeat_interval=heartbeat_interval,
            backoff=backoff if backoff is not None else Backoff(),
            answer_timeout=answer_timeout,
            http_transport=http_transport,
            sensitive_fields=tuple(sensitive_fields),
            redact=redact,
            diagnostic_loggers=tuple(diagnostic_loggers),
            diagnostics_interval=diagnostics_interval,
            settings_schema=schema,
        )
        self._task_handler: TaskHandler | None = None
        self._message_handler: MessageHandler | None = None
        self._core: Core | None = None
        self._background: asyncio.Task[None] | None = None
        self._tools = Tools(self._tool_runtime)
        self._endpoint: DirectEndpoint | None = None
        self._serving: asyncio.Event | None = None

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, agent_id={self.config.agent_id!r})"

    @property
    def state_path(self) -> Path:
        """The SQLite file holding this agent's outbox, cursor and journal."""
        return self._settings.state_path

    @property
    def connected(self) -> bool:
        """True while a connection is open and the hub has welcomed the agent."""
        return self._core is not None and self._core.connected.is_set()

    @property
    def awaiting_confirmation(self) -> bool:
        """True while connected but not yet confirmed by a person in LineUp: the hub sends
        no work until then (the log says so; nothing fails)."""
        return self._binding.awaiting_confirmation

    @property
    def settings(self) -> dict[str, Any]:
        """The settings to run with: what a person saved in the app, else each setting's
        default (before the first connection, the defaults)."""
        return dict(self._binding.settings)

    def on_settings_change(self, hook: SettingsHook) -> SettingsHook:
        """Decorator: ``def on_settings(values: dict) -> None`` (or ``async def``), called
        with the complete settings when they change — a person saved them, or the hub's
        welcome brings values this agent did not have."""
        self._binding.on_change(hook)
        return hook

    @property
    def tools(self) -> Tools:
        """The tools of people's apps: ``await agent.tools.list()``, ``.call(…)``,
        ``.choice(…)``, ``.confirm(…)``, ``.input(…)``, ``.calculator``, ``.canvas``.

        Usable while the agent runs. Inside a task handler prefer ``ctx.tools``: its calls
        belong to the task and are journaled steps. Here, pass ``call_id=`` to make a call
        resumable across restarts (see :mod:`lineup.sdk._tools`).
        """
        return self._tools

    async def upload(
        self,
        name: str,
        content: FileContent,
        *,
        mime_type: str | None = None,
        idempotency_key: str | None = None,
    ) -> UploadedFile:
        """Store a file in the hub (bytes, or a path to read); returns its hub address.

        Use ``.url`` as an artifact's or an attachment's URL: members of the workspace open
        it there. Inside a task handler prefer ``ctx.upload`` or ``ctx.upload_artifact``
        (journaled steps). Here, pass ``idempotency_key`` (1–100 letters, digits, ``_ . : -``)
        to make a retried or repeated upload find the file already stored instead of adding
        another. Retries while the hub is unreachable. In direct mode the agent must be
        running (its hub lives in :meth:`run`).
        """
        data = read_content(content)
        key = idempotency_key or new_id("upl")
        if self._core is not None:
            return await self._core.upload(name, data, mime_type, key)
        if self.config.hosted:
            raise RuntimeError(
                f"In {self.config.mode} mode the hub runs inside agent.run(): start it first."
            )
        return await self._settings.uploader().upload(name, data, mime_type, key)

    def _tool_runtime(self) -> ToolRuntime:
        if self._core is None:
            raise RuntimeError("The agent is not running: start agent.run() first.")
        return self._core

    def task(self, handler: TaskHandler) -> TaskHandler:
        """Decorator: ``async def handle(ctx: TaskContext) -> str | None`` runs each task.

        Returning ends the task ``succeeded`` (the returned text is its summary); raising
        ends it ``failed`` (the error's type and message are reported, not the traceback);
        a person's cancel ends it ``cancelled``. ``task.accepted`` is sent before it starts.
        """
        if self._task_handler is not None:
            raise ValueError("This agent already has a task handler.")
        self._task_handler = handler
        return handler

    def on_message(self, handler: MessageHandler) -> MessageHandler:
        """Decorator: ``async def on_message(msg: MessageContext) -> None`` for each message a
        person sends this agent (for example a follow-up on a task)."""
        if self._message_handler is not None:
            raise ValueError("This agent already has a message handler.")
        self._message_handler = handler
        return handler

    async def run(self, *, host: AgentHost | None = None) -> None:
        """Connect, and serve tasks and messages until :meth:`stop` is called.

        Reconnects on its own after network errors (with backoff); raises
        :class:`~lineup.sdk.ConnectionRefusedByHub` if the hub refuses the credential.
        Handlers still running when it returns are resumed by the next ``run``.

        In direct mode (``config.direct``, see ``docs/direct-mode.md``) ``host`` serves
        LineUp inside this process for people with the token, and the agent connects to it;
        nothing is kept or resumed after it returns. ``await lineup.direct.run(agent)``
        passes the host LineUp ships; without one a direct-mode agent cannot run
        (:class:`~lineup.sdk.DirectModeError`, as when the host cannot serve). A hub-mode
        agent needs no host and ignores one.
        """
        if self._core is not None:
            raise RuntimeError("This agent is already running.")
        if not self.config.hosted:
            await self._run_core(self._settings)
            return
        if host is None and self.config.relay is not None:
            raise DirectModeError(
                "This agent's configuration says relay mode: it serves LineUp itself through "
                "WuKongIM, so run it with `await lineup.direct.run(agent)` (or `lineup relay "
                "--module PKG.MOD:FUNC`)."
            )
        if host is None:
            raise DirectModeError(
                "This agent's configuration says direct mode: it serves LineUp itself, so "
                "run it with `await lineup.direct.run(agent)` (or `lineup direct --module "
                "PKG.MOD:FUNC`)."
            )
        hosted = HostedAgent(
            config=self.config,
            name=self.name,
            run=self._run_hosted,
            stop=self.stop,
            serving=self._now_serving,
        )
        try:
            await host.serve(hosted)
        finally:
            self._endpoint = None
            if self._serving is not None:
                self._serving.clear()

    async def _run_hosted(
        self,
        hub_url: str,
        state_path: Path,
        tls_fingerprint: str | None = None,
        *,
        identity: HostedIdentity | None = None,
    ) -> None:
        """Run against the hub a host serves at ``hub_url``, with the state at ``state_path``
        (the host's: it only means something against that hub's log), pinning the
        certificate ``tls_fingerprint`` names when the host serves TLS. A host that keeps
        its hub between runs (relay mode) gives the agent's lasting ``identity``."""
        base = self.config
        if identity is not None:
            base = replace(
                base,
                agent_id=identity.agent_id,
                workspace_id=identity.workspace_id,
                credential=identity.credential,
            )
        config = replace(
            base,
            hub_url=hub_url,
            websocket_url=hub_url.replace("http", "ws", 1) + "/ws/agent",
            tls=self.config.tls.pinning(tls_fingerprint),
        )
        settings = replace(self._settings, config=config, state_path=state_path)
        if tls_fingerprint is not None and isinstance(settings.transport, WebSocketTransport):
            trust = TlsTrust(config.tls)
            settings = replace(settings, transport=WebSocketTransport(tls=trust), tls=trust)
        await self._run_core(settings)

    async def _run_core(self, settings: Settings) -> None:
        core = Core(settings, self._task_handler, self._message_handler, self._binding)
        self._core = core
        try:
            await core.run()
        finally:
            self._core = None

    @property
    def direct_endpoint(self) -> DirectEndpoint | None:
        """In direct mode, where people open this agent once it listens; else None."""
        return self._endpoint

    async def serving(self) -> DirectEndpoint:
        """Direct mode: wait until :meth:`run` listens for people; return where."""
        if not self.config.hosted:
            raise RuntimeError("This agent connects to a hub; it serves nothing itself.")
        if self._serving is None:
            self._serving = asyncio.Event()
        await self._serving.wait()
        assert self._endpoint is not None
        return self._endpoint

    def _now_serving(self, endpoint: DirectEndpoint) -> None:
        self._endpoint = endpoint
        if self._serving is None:
            self._serving = asyncio.Event()
        self._serving.set()

    async def drain(self) -> None:
        """Wait until the hub has answered everything this agent queued so far.

        Useful before :meth:`stop` in a short script. While the hub is unreachable this
        waits; bound it with ``asyncio.timeout`` if needed.
        """
        if self._core is None:
            raise RuntimeError("The agent is not running.")
        await self._core.drain()

    def stop(self) -> None:
        """Ask :meth:`run` to close the connection and return (safe to call any time)."""
        if self._core is not None:
            self._core.stop()

    async def __aenter__(self) -> Agent:
        """Run the agent in the background for the duration of the ``async with`` block."""
        self._background = asyncio.create_task(self.run(), name=f"lineup-agent:{self.name}")
        await asyncio.sleep(0)  # let run() start
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        background, self._background = self._background, None
        if background is None:
            return
        self.stop()
        await background
