"""Hosted agents, run next to the hub: each one an SDK :class:`~lineup.sdk.Agent` connected to
the hub over loopback like any agent, whose conversations drive engine sessions.

A person's message starts (or reuses) the engine process of its conversation through the
:class:`~lineup.engines.manager.EngineManager`; a task given to the agent is a turn of its
conversation's session too. What the turn does is recorded as LineUp's own
(:mod:`lineup.engines.hosted_turn`): the reply streamed, the transcript of tool calls,
commands, diffs, reasoning, token use and errors, the engine's approval requests as approval
cards, its calls of LineUp's tools (:mod:`lineup.engines.tool_surface`).

**Steering and stopping.** A message a person marks as steering (``steer``) while a turn of
its conversation runs goes into that turn (``RuntimeSession.steer``); any other message sent
meanwhile waits, and is the next turn. A person who cancels a task stops its turn
(``RuntimeSession.interrupt``): the turn ends ``interrupted`` and the task ``cancelled``.

**The record.** LineUp's log is the conversation's record (seed 003 §1.5): a session
(re)started after a crash, an idle stop or a restart of the hub is given a context built from
it (:mod:`lineup.engines.context`), and that context is kept as a hub file, named by the
turn's ``context`` transcript entry. The engine's native session id, kept in the session's
directory, is only a resume hint. The hub composes this module in (``lineup serve``) rather
than importing it: the hub does not use the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from lineup.engines.catalog import runtimes, statuses
from lineup.engines.context import Budget, Estimator, approximate_tokens
from lineup.engines.hosted_turn import (
    ContextSettings,
    HostedTurn,
    SessionNote,
    TurnOutcome,
)
from lineup.engines.manager import EngineManager
from lineup.engines.process import confine
from lineup.engines.runtime import AgentRuntime, EngineStatus, ModelEndpoint, SessionSpec
from lineup.engines.tool_surface import Context
from lineup.hub.hosted import HostedDefinition
from lineup.sdk import Agent, AgentConfig, Backoff, MessageContext, TaskContext, TlsOptions

log = logging.getLogger("lineup.engines")

HINT_FILE = "resume-hint"
INTERRUPT_GRACE = 20.0
"""Seconds a stopped turn has to end before its engine process is stopped instead."""


@dataclass
class _Running:
    definition: HostedDefinition
    agent: Agent
    task: asyncio.Task[None]


class TurnFailed(Exception):
    """A task's turn did not complete; the message is the error people read."""


class EngineHosting:
    """An ``EngineHost`` (``lineup.hub.hosted``): runs each hosted agent it is given."""

    def __init__(
        self,
        hub_url: str,
        home: Path,
        *,
        engine_roots: Sequence[Path],
        cap: int = 4,
        idle_seconds: float = 600.0,
        reap_interval: float = 5.0,
        engines: Mapping[str, AgentRuntime] | None = None,
        tls_fingerprint: str | None = None,
        backoff: Backoff | None = None,
        context_tokens: int = 24_000,
        estimate: Estimator = approximate_tokens,
    ) -> None:
        self.hub_url = hub_url.rstrip("/")
        self.home = home
        self.engine_roots = tuple(engine_roots)
        # no engines given: every driver, the fake engine too (what a test composes)
        self.runtimes = dict(engines) if engines is not None else runtimes(fake=True)
        self.manager = EngineManager(self.runtimes, cap=cap, idle_seconds=idle_seconds)
        self.reap_interval = reap_interval
        self.tls_fingerprint = tls_fingerprint
        self.backoff = backoff or Backoff(initial=0.2, maximum=5.0)
        self.context = ContextSettings(Budget(tokens=context_tokens), estimate)
        self.sessions: dict[Hashable, SessionNote] = {}
        self._running: dict[str, _Running] = {}
        self._reaper: asyncio.Task[None] | None = None

    @classmethod
    def for_settings(cls, settings: Any) -> EngineHosting:
        """For a hub of these ``lineup.hub.Settings``, reached over loopback."""
        host = settings.host if settings.host not in ("0.0.0.0", "", "::") else "127.0.0.1"  # noqa: S104
        if ":" in host:
            host = f"[{host}]"
        scheme = "https" if settings.tls is not None else "http"
        hosting = cls(
            f"{scheme}://{host}:{settings.port}",
            settings.home / "engines",
            engine_roots=settings.engine_roots,
            cap=settings.engine_cap,
            idle_seconds=settings.engine_idle_seconds,
            engines=runtimes(fake=settings.engine_fake),
            tls_fingerprint=settings.tls.fingerprint if settings.tls is not None else None,
            context_tokens=settings.engine_context_tokens,
        )
        return hosting

    # --- EngineHost -------------------------------------------------------------------------

    def drivers(self) -> Sequence[str]:
        return sorted(self.runtimes)

    def statuses(self) -> Sequence[EngineStatus]:
        return statuses(drivers=self.runtimes)

    async def start(self, definition: HostedDefinition) -> None:
        if definition.agent_id in self._running:
            return
        if self._reaper is None:
            self._reaper = asyncio.create_task(
                self.manager.run_reaper(self.reap_interval), name="lineup-engine-reaper"
            )
        websocket = self.hub_url.replace("http", "ws", 1) + "/ws/agent"
        config = AgentConfig(
            hub_url=self.hub_url,
            websocket_url=websocket,
            agent_id=definition.agent_id,
            workspace_id=definition.workspace_id,
            credential=definition.credential,
            tls=TlsOptions(fingerprint=self.tls_fingerprint),
        )
        agent = Agent(
            config,
            name=definition.name,
            state_dir=self._agent_dir(definition.agent_id) / "sdk",
            runtime=f"engine:{definition.engine}",
            backoff=self.backoff,
            sensitive_fields=("api_key",),
            redact=_redactor(definition.api_key),
        )
        agent.on_message(lambda message: self._on_message(definition, message))
        agent.task(lambda task: self._on_task(definition, task))
        task = asyncio.create_task(agent.run(), name=f"lineup-hosted:{definition.agent_id}")
        task.add_done_callback(lambda t: _report_end(definition.agent_id, t))
        self._running[definition.agent_id] = _Running(definition, agent, task)

    async def stop(self, agent_id: str) -> None:
        running = self._running.pop(agent_id, None)
        for key in [k for k in self.manager.running() if isinstance(k, tuple) and k[0] == agent_id]:
            await self.manager.stop(key)
            self.sessions.pop(key, None)
        if running is not None:
            await _end(running)

    async def close(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reaper
        await self.manager.close()
        running, self._running = list(self._running.values()), {}
        await asyncio.gather(*(_end(r) for r in running), return_exceptions=True)

    # --- a message, a task ------------------------------------------------------------------

    def _agent_dir(self, agent_id: str) -> Path:
        return self.home / agent_id

    def session_dir(self, agent_id: str, conversation: str) -> Path:
        return self._agent_dir(agent_id) / "sessions" / conversation

    async def _on_message(self, definition: HostedDefinition, message: MessageContext) -> None:
        conversation = message.conversation_id or message.task_id or "default"
        key = (definition.agent_id, conversation)
        if message.steer and self.manager.busy(key):
            steered = await self.manager.steer(key, message.content)
            if steered:
                return
        await self._turn(
            definition, message, key, message.conversation_id, message.content, message.message_id
        )

    async def _on_task(self, definition: HostedDefinition, task: TaskContext) -> str | None:
        conversation = task.conversation_id or task.task_id
        key = (definition.agent_id, conversation)
        description = task.description or ""
        # a task made from a message is titled with its first line: the text says it all
        text = (
            description
            if description.startswith(task.title)
            else ("\n\n".join(p for p in (task.title, description) if p))
        )
        work = asyncio.create_task(
            self._turn(definition, task, key, task.conversation_id, text, task.task_id)
        )
        try:
            outcome = await asyncio.shield(work)
        except asyncio.CancelledError:
            if not task.cancelled.is_set():  # the agent is stopping: resumed on its restart
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
                raise
            await self._stop_turn(key, work)
            raise
        if outcome.status != "completed":
            raise TurnFailed(outcome.error or f"The engine's turn ended {outcome.status}.")
        return _summary(outcome.reply)

    async def _stop_turn(self, key: Hashable, work: asyncio.Task[TurnOutcome]) -> None:
        """A person cancelled the task: interrupt its turn and let it end (recorded as it
        ends); an engine that does not stop in time is stopped instead."""
        await self.manager.interrupt(key)
        done, _ = await asyncio.wait({work}, timeout=INTERRUPT_GRACE)
        if not done:
            log.warning("engine session %s did not stop its turn; stopping the process", key)
            await self.manager.stop(key)
            self.sessions.pop(key, None)
            work.cancel()
        await asyncio.gather(work, return_exceptions=True)

    async def _turn(
        self,
        definition: HostedDefinition,
        context: Context,
        key: tuple[str, str],
        conversation_id: str | None,
        text: str,
        reply_to: str,
    ) -> TurnOutcome:
        directory = self.session_dir(definition.agent_id, key[1])
        directory.mkdir(parents=True, exist_ok=True)
        if self.manager.pid(key) is None:
            self.sessions.pop(key, None)  # reaped or crashed: the next start makes a new note

        def base_spec() -> SessionSpec:
            return SessionSpec(
                cwd=confine(definition.cwd, self.engine_roots),
                model=ModelEndpoint(
                    api=cast(Any, definition.api),
                    base_url=definition.base_url,
                    model=definition.model,
                    api_key=definition.api_key,
                ),
                state_dir=str(directory),
                resume_hint=_read_hint(directory),
            )

        turn = HostedTurn(
            manager=self.manager,
            definition=definition,
            context=context,
            key=key,
            conversation_id=conversation_id,
            text=text,
            reply_to=reply_to,
            base_spec=base_spec,
            sessions=self.sessions,
            settings=self.context,
        )
        outcome = await turn.run()
        native = self.manager.native_session_id(key)
        if native:
            _write_hint(directory, native)
        return outcome


def _summary(reply: str) -> str | None:
    line = next((line.strip() for line in reply.splitlines() if line.strip()), "")
    return line[:500] or None


def _read_hint(directory: Path) -> str | None:
    path = directory / HINT_FILE
    return path.read_text(encoding="utf-8").strip() or None if path.exists() else None


def _write_hint(directory: Path, hint: str) -> None:
    (directory / HINT_FILE).write_text(hint, encoding="utf-8")


def _redactor(secret: str | None) -> Any:
    if not secret:
        return None
    return lambda text: text.replace(secret, "[redacted]")


def _report_end(agent_id: str, task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("hosted agent %s stopped: %s", agent_id, task.exception())


async def _end(running: _Running) -> None:
    running.agent.stop()
    try:
        await asyncio.wait_for(asyncio.shield(running.task), 10)
    except (TimeoutError, Exception):
        running.task.cancel()
        await asyncio.gather(running.task, return_exceptions=True)
