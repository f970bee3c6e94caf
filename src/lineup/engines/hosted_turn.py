"""One turn of a hosted agent: a person's message (or a task) through its engine session, and
everything the engine reports back as LineUp's record.

* The reply streams to the conversation as the engine writes it.
* Every other :class:`~lineup.engines.runtime.RuntimeEvent` becomes an entry of the live
  transcript (``ctx.activity``): tool calls with arguments and result, commands with their
  output streamed and exit code, file changes as diffs, reasoning summaries, token use, and
  errors with their code — recorded, so a page opened later shows them as they were.
* The turn begins with a ``context`` entry naming what it answers (``replyTo``): when its
  session was (re)started for it, the entry's file is the snapshot of what the engine was
  given (:mod:`lineup.engines.context`); otherwise it points to the snapshot the session
  started from. That entry is also where the record of a conversation is cut into turns.
* A turn begun before a restart of LineUp is not sent to an engine again: what the engine did
  may have been done (a command run, a file written), and doing it again could do it twice.
  The handler, resumed, skips what its first run recorded, withdraws its unanswered questions
  and says the turn did not finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Hashable
from dataclasses import dataclass, field, replace
from typing import Any

from lineup.engines.context import (
    Budget,
    ContextSnapshot,
    Estimator,
    build_context,
    exchanges_from,
)
from lineup.engines.manager import EngineManager
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
    ReasoningSummary,
    RuntimeEvent,
    SessionSpec,
    TokenUsage,
    ToolCallFinished,
    ToolCallStarted,
    ToolInvocation,
    ToolOutcome,
    TurnFinished,
)
from lineup.engines.tool_surface import (
    INSTRUCTIONS,
    CapabilityTool,
    Context,
    MessageHost,
    capability_tool,
    tool_specs,
)
from lineup.hub.hosted import HostedDefinition
from lineup.protocol.errors import ErrorCode, LineupError
from lineup.sdk import CommandEntry, ToolCallEntry

log = logging.getLogger("lineup.engines")

BEGUN = "engine turn"
ENDED = "engine turn ended"
RESTARTED = (
    "LineUp restarted while the engine was working on this, so it did not finish. What it "
    "did before stays done; check before asking again."
)
STOPPED = (
    "The engine stopped unexpectedly. LineUp starts it again with this conversation on your "
    "next message; what it did before it stopped stays done, so check before asking again."
)


@dataclass
class SessionNote:
    """What a live engine session started from: its snapshot, and its capabilities' tools."""

    snapshot_url: str | None
    capabilities: list[CapabilityTool] = field(default_factory=list)
    turns: int = 0


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    status: str
    """``completed``, ``interrupted`` or ``failed``."""
    reply: str
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ContextSettings:
    budget: Budget
    estimate: Estimator
    instructions: str = INSTRUCTIONS


class HostedTurn:
    """Runs one turn and records it; also the engine's host for the turn's questions."""

    def __init__(
        self,
        *,
        manager: EngineManager,
        definition: HostedDefinition,
        context: Context,
        key: Hashable,
        conversation_id: str | None,
        text: str,
        reply_to: str,
        base_spec: Callable[[], SessionSpec],
        sessions: dict[Hashable, SessionNote],
        settings: ContextSettings,
    ) -> None:
        self.manager = manager
        self.definition = definition
        self.context = context
        self.key = key
        self.conversation_id = conversation_id
        self.text = text
        self.reply_to = reply_to
        self.base_spec = base_spec
        self.sessions = sessions
        self.settings = settings
        self.host = MessageHost(context)
        self._marked = False
        self._mark_lock = asyncio.Lock()
        self._tools: dict[str, ToolCallEntry] = {}
        self._commands: dict[str, CommandEntry] = {}
        self._stream: _Stream | None = None
        self._replies: list[str] = []

    # --- the turn -------------------------------------------------------------------------

    async def run(self) -> TurnOutcome:
        context = self.context
        fresh: list[bool] = []

        def begin() -> str:
            fresh.append(True)  # not called when a resumed handler finds the step recorded
            return self.reply_to

        await context.step(BEGUN, begin)
        if not fresh:
            return await self._after_restart()
        outcome = await self._drive()
        await context.step(  # the reply's beginning: a task's summary, should it resume
            ENDED,
            lambda: {
                "status": outcome.status,
                "reply": outcome.reply[:2000],
                "error": outcome.error,
            },
        )
        return outcome

    async def _drive(self) -> TurnOutcome:
        finished: TurnFinished | None = None
        errors: list[EngineError] = []
        try:
            events = self.manager.turn(
                self.key, self.definition.engine, self._spec, self, self.text
            )
            async with contextlib.aclosing(events):
                async for event in events:
                    await self._mark()
                    if isinstance(event, EngineError):
                        errors.append(event)
                    if isinstance(event, TurnFinished):
                        finished = event
                    await self._record(event)
        except LineupError as refused:  # the cap, a crash loop, an engine that does not start
            await self._mark()
            await self._close_stream()
            await self.context.activity.error(refused.code, refused.message)
            await self.context.say(f"⚠ {refused.message} ({refused.code.value})")
            return TurnOutcome("failed", "", refused.message)
        finally:
            await self._close_stream()
            await self._close_entries("The turn ended before it finished.")
        note = self.sessions.get(self.key)
        if note is not None:
            note.turns += 1
        reply = "\n\n".join(r for r in self._replies if r.strip())
        status = finished.status if finished is not None else "failed"
        error = "; ".join(e.message for e in errors) or None
        if status == "failed" and error is None:
            error = "The engine's turn failed."
        return TurnOutcome(status, reply, error)

    async def _after_restart(self) -> TurnOutcome:
        skipped = await self.context.skip_recorded(RESTARTED)
        ended = next((s for s in reversed(skipped) if s.name == ENDED), None)
        if ended is not None and isinstance(ended.result, dict):
            result = ended.result
            return TurnOutcome(
                str(result.get("status")), str(result.get("reply") or ""), result.get("error")
            )
        await self.context.activity.error(ErrorCode.UNAVAILABLE, RESTARTED)
        await self.context.say(f"⚠ {RESTARTED}")
        outcome = TurnOutcome("failed", "", RESTARTED)
        await self.context.step(
            ENDED, lambda: {"status": outcome.status, "reply": "", "error": outcome.error}
        )
        return outcome

    # --- the session's start: its context ---------------------------------------------------

    async def _spec(self) -> SessionSpec:
        """The spec of a session (re)started for this turn, with the context LineUp built
        from its record; the snapshot is kept and the turn's ``context`` entry names it."""
        settings = self.settings
        history: list[Any] = []
        pinned: list[Any] = []
        record = self.definition.record
        if record is not None and self.conversation_id is not None:
            events = await record.conversation(self.definition.workspace_id, self.conversation_id)
            history, pinned = exchanges_from(events, self.definition.agent_id, before=self.reply_to)
        snapshot = build_context(
            history,
            estimate=settings.estimate,
            budget=settings.budget,
            instructions=settings.instructions,
            pinned=pinned,
        )
        capabilities = await self._capabilities()
        self.host.capabilities = {c.spec.name: c for c in capabilities}
        url = await self._record_snapshot(snapshot)
        self.sessions[self.key] = SessionNote(url, capabilities)
        return replace(
            self.base_spec(),
            tools=tuple(tool_specs(capabilities)),
            instructions=snapshot.instructions,
            history=snapshot.turns,
        )

    async def _capabilities(self) -> list[CapabilityTool]:
        try:
            listed = await asyncio.wait_for(self.context.capabilities.list(), 30)
        except (LineupError, TimeoutError) as problem:
            log.warning("capabilities for %s not listed: %s", self.key, problem)
            return []
        return [capability_tool(c) for c in listed]

    async def _record_snapshot(self, snapshot: ContextSnapshot) -> str:
        """Keep the snapshot as a hub file and open the turn with the entry naming it."""
        async with self._mark_lock:
            uploaded = await self.context.upload(
                "context.json", snapshot.to_text().encode(), mime_type="application/json"
            )
            await self.context.activity.context(
                snapshot.line(), snapshot_url=uploaded.url, reply_to=self.reply_to
            )
            self._marked = True
        return uploaded.url

    async def _mark(self) -> None:
        """The turn's ``context`` entry, before anything else of it is recorded."""
        if self._marked:
            return
        async with self._mark_lock:
            if self._marked:
                return
            self._marked = True
            note = self.sessions.get(self.key)
            if note is None:
                text = "Continues an engine session whose context LineUp did not record."
                url = None
            else:
                self.host.capabilities = {c.spec.name: c for c in note.capabilities}
                since = note.turns
                text = (
                    "Continues the engine session started from the snapshot named here, "
                    f"with the {since} turn{'s' if since != 1 else ''} since."
                )
                url = note.snapshot_url
            await self.context.activity.context(text, snapshot_url=url, reply_to=self.reply_to)

    # --- RuntimeHost: the turn's questions --------------------------------------------------

    async def approve(self, request: ApprovalRequest) -> ApprovalDecision:
        await self._mark()
        return await self.host.approve(request)

    async def call_tool(self, call: ToolInvocation) -> ToolOutcome:
        await self._mark()
        return await self.host.call_tool(call)

    # --- events into the record ---------------------------------------------------------------

    async def _record(self, event: RuntimeEvent) -> None:
        activity = self.context.activity
        if isinstance(event, MessageDelta):
            if self._stream is None:
                self._stream = _Stream(self.context)
            self._stream.put(event.text)
        elif isinstance(event, MessageDone):
            if self._stream is not None:
                await self._close_stream()
            else:
                await self.context.say(event.text)
            self._replies.append(event.text)
        elif isinstance(event, ReasoningSummary):
            await activity.reasoning(event.text)
        elif isinstance(event, ToolCallStarted):
            self._tools[event.call_id] = await activity.tool_call(event.name, event.arguments)
        elif isinstance(event, ToolCallFinished):
            entry = self._tools.pop(event.call_id, None)
            if entry is not None:
                await entry.finish(
                    event.result if event.ok else None,
                    ok=event.ok,
                    error=None if event.ok else event.result or "The tool failed.",
                )
        elif isinstance(event, CommandStarted):
            self._commands[event.item_id] = await activity.command(event.command, event.cwd)
        elif isinstance(event, CommandOutput):
            command = self._commands.get(event.item_id)
            if command is not None:
                command.write(event.chunk)
        elif isinstance(event, CommandFinished):
            finished = self._commands.pop(event.item_id, None)
            if finished is not None:
                await finished.finish(event.exit_code)
        elif isinstance(event, FileChange):
            await activity.file_change(event.path, event.diff, change=event.kind)
        elif isinstance(event, TokenUsage):
            await activity.usage(
                event.input_tokens,
                event.output_tokens,
                cached_input_tokens=event.cached_input_tokens or None,
                context_window=event.context_window,
                model=self.definition.model[:200],
            )
        elif isinstance(event, EngineError):
            await self._close_stream()
            await activity.error(event.code, event.message)
            text = STOPPED if event.code == ErrorCode.UNAVAILABLE else event.message
            await self.context.say(f"⚠ {text} ({event.code.value})")
        elif isinstance(event, TurnFinished):
            await self._close_stream()
            note = "The turn was interrupted." if event.status == "interrupted" else None
            await self._close_entries(note or "The turn ended before it finished.")

    async def _close_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            await stream.finish()

    async def _close_entries(self, why: str) -> None:
        tools, self._tools = self._tools, {}
        for entry in tools.values():
            await entry.finish(ok=False, error=why)
        commands, self._commands = self._commands, {}
        for command in commands.values():
            await command.finish(None, status="cancelled")


class _Stream:
    """One streamed reply: pieces go to ``say`` as they come."""

    def __init__(self, context: Context) -> None:
        self.queue: asyncio.Queue[str | None] = asyncio.Queue()
        self.task = asyncio.create_task(context.say(self._pieces()))

    async def _pieces(self) -> AsyncIterator[str]:
        while (piece := await self.queue.get()) is not None:
            yield piece

    def put(self, text: str) -> None:
        self.queue.put_nowait(text)

    async def finish(self) -> None:
        self.queue.put_nowait(None)
        await self.task
