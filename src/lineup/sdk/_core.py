"""The running agent: the connection loop, the outbox sender, downlink dispatch, handlers.

One :class:`Core` exists per :meth:`lineup.sdk.Agent.run`. It holds at most one connection
at a time. On each connection it says hello with its cursor, waits for the welcome, then
runs three loops side by side until the connection ends:

* the **reader** — answers (acks/errors) to the frames it sent, and downlink events, which
  are journaled in the state store before the cursor moves past them;
* the **sender** — the outbox, oldest first, one frame at a time: each waits for its answer
  before the next goes, so the hub sees the agent's events in the order they happened;
* the **heartbeat**.

Handlers run in their own asyncio tasks and never touch the connection: they write to the
journal and outbox, and wait for the hub's answers, across reconnects.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

import httpx
from pydantic import BaseModel

from lineup.protocol.builtin_tools import ToolCancel
from lineup.protocol.codec import Answer, Decoded, Ignored, decode_answer, encode
from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import ErrorCode, LineupError, error_from_code
from lineup.protocol.events import (
    AgentHeartbeat,
    AgentHello,
    AgentWelcome,
    InteractionCancelled,
    InteractionExpiry,
    InteractionResolved,
    MessageDelivered,
    SystemResyncRequired,
    TaskAssigned,
    TaskCancelRequested,
    TaskStatusChanged,
    TaskStatusName,
)
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.ids import new_id
from lineup.protocol.tools import ToolList, ToolResult
from lineup.sdk._backoff import Backoff
from lineup.sdk._config import AgentConfig
from lineup.sdk._context import MessageContext, TaskContext
from lineup.sdk._errors import (
    ConnectionRefusedByHub,
    InteractionExpired,
    RequestWithdrawn,
    TaskStopped,
)
from lineup.sdk._journal import derive_id
from lineup.sdk._state import Job, OutboxEntry, StateStore, Step
from lineup.sdk._tools import ANSWER_PREFIX, dump_result, parse_result
from lineup.sdk._transport import (
    REFUSAL_CLOSE_CODES,
    Connection,
    Transport,
    TransportClosed,
    TransportError,
)
from lineup.sdk._uploads import UploadedFile, Uploader

logger = logging.getLogger("lineup.sdk")

TaskHandler = Callable[[TaskContext], Awaitable[str | None]]
MessageHandler = Callable[[MessageContext], Awaitable[None]]

V = TypeVar("V")

_REFUSALS = frozenset({ErrorCode.UNAUTHENTICATED, ErrorCode.FORBIDDEN})


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything an :class:`~lineup.sdk.Agent` was configured with."""

    config: AgentConfig
    state_path: Path
    transport: Transport
    runtime: str
    agent_version: str
    capabilities: tuple[str, ...] | None
    tools: tuple[Any, ...] | None
    heartbeat_interval: float | None
    backoff: Backoff
    answer_timeout: float
    http_transport: httpx.AsyncBaseTransport | None = None
    """For uploads (HTTP); tests pass an ``httpx.MockTransport``."""

    def uploader(self) -> Uploader:
        return Uploader(
            self.config.hub_url, self.config.credential, self.backoff, self.http_transport
        )


WITHDRAWN_PREFIX = "withdrawn:"
"""State-file key of a request the hub withdrew (the value is its reason)."""


class _Waiters(Generic[V]):
    """Futures waiting for a value by key; a cancelled waiter leaves the others alone."""

    def __init__(self) -> None:
        self._by_key: dict[str, list[asyncio.Future[V]]] = {}

    async def wait(self, key: str) -> V:
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        self._by_key.setdefault(key, []).append(future)
        try:
            return await future
        finally:
            waiting = self._by_key.get(key)
            if waiting is not None and future in waiting:
                waiting.remove(future)
                if not waiting:
                    del self._by_key[key]

    def resolve(self, key: str, value: V) -> None:
        for future in self._by_key.pop(key, []):
            if not future.done():
                future.set_result(value)

    def fail(self, key: str, error: BaseException) -> None:
        for future in self._by_key.pop(key, []):
            if not future.done():
                future.set_exception(error)

    def cancel_all(self) -> None:
        """Cancel every waiter (the agent is stopping: nobody will resolve them here)."""
        waiting, self._by_key = self._by_key, {}
        for futures in waiting.values():
            for future in futures:
                future.cancel()


class Core:
    """The internals of a running agent; implements the contexts' ``Runtime`` protocol."""

    def __init__(
        self,
        settings: Settings,
        task_handler: TaskHandler | None,
        message_handler: MessageHandler | None,
    ) -> None:
        self._settings = settings
        self._config = settings.config
        self._task_handler = task_handler
        self._message_handler = message_handler
        self._store: StateStore | None = None
        self._stop = asyncio.Event()
        self._outbox_signal = asyncio.Event()
        self._drained = asyncio.Event()
        self.connected = asyncio.Event()
        self._conn: Connection | None = None
        self._answers_by_id: dict[str, asyncio.Future[Ack | ErrorFrame]] = {}
        self._welcome: asyncio.Future[AgentWelcome] | None = None
        self._last_error: ErrorFrame | None = None
        self._settled: _Waiters[None] = _Waiters()
        self._resolved: _Waiters[InteractionResolved] = _Waiters()
        self._expired: dict[str, datetime] = {}
        """Interactions the hub said expired, for a wait that starts after it said so."""
        self._tool_results: _Waiters[ToolResult] = _Waiters()
        self._tool_lists: dict[str, list[dict[str, Any]]] = {}
        self._runners: dict[str, asyncio.Task[None]] = {}
        self._contexts: dict[str, TaskContext] = {}
        self._shutting_down = False

    # --- Runtime protocol (used by the contexts) ------------------------------------------

    @property
    def agent_id(self) -> str:
        return self._config.agent_id

    @property
    def store(self) -> StateStore:
        if self._store is None:
            raise RuntimeError("The agent is not running.")
        return self._store

    def make_envelope(
        self,
        event_type: str,
        payload: BaseModel,
        *,
        envelope_id: str,
        task_id: str | None = None,
        conversation_id: str | None = None,
    ) -> Envelope:
        return Envelope(
            id=envelope_id,
            type=event_type,
            occurred_at=datetime.now(UTC),
            workspace_id=self._config.workspace_id,
            task_id=task_id,
            conversation_id=conversation_id,
            payload=payload.model_dump(mode="json", by_alias=True, exclude_none=True),
        )

    def outbox_changed(self) -> None:
        self._drained.clear()
        self._outbox_signal.set()

    async def wait_settled(self, step: Step) -> None:
        current = self.store.step(step.scope, step.index) or step
        if current.status in ("acked", "done"):
            return
        if current.status == "failed":
            raise _recorded_error(current.error)
        assert current.envelope_id is not None
        await self._settled.wait(current.envelope_id)

    async def send_live(self, envelope: Envelope) -> bool:
        connection = self._conn
        if connection is None or not self.connected.is_set():
            return False
        try:
            await connection.send(encode(envelope))
        except TransportClosed:
            return False
        return True

    async def wait_answer(
        self, interaction_id: str, expires_at: datetime | None
    ) -> InteractionResolved:
        stored = self.store.answer(interaction_id)
        if stored is not None:
            return InteractionResolved.model_validate_json(stored)
        self._raise_if_withdrawn(interaction_id)
        if interaction_id in self._expired:
            raise InteractionExpired(interaction_id, self._expired[interaction_id])
        if expires_at is None:
            return await self._resolved.wait(interaction_id)
        remaining = (expires_at - datetime.now(UTC)).total_seconds()
        try:
            async with asyncio.timeout(max(remaining, 0.0)):
                return await self._resolved.wait(interaction_id)
        except TimeoutError:
            raise InteractionExpired(interaction_id, expires_at) from None

    async def upload(
        self, name: str, content: bytes, mime_type: str | None, key: str
    ) -> UploadedFile:
        return await self._settings.uploader().upload(name, content, mime_type, key)

    # the ToolRuntime protocol of lineup.sdk._tools

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    async def wait_tool_result(self, call_id: str) -> ToolResult:
        """The answer to a tool call: kept in the state file when it arrived, or awaited."""
        stored = self.store.answer(ANSWER_PREFIX + call_id)
        if stored is not None:
            return parse_result(stored)
        self._raise_if_withdrawn(call_id)
        return await self._tool_results.wait(call_id)

    def _raise_if_withdrawn(self, request_id: str) -> None:
        reason = self.store.answer(WITHDRAWN_PREFIX + request_id)
        if reason is not None:
            raise RequestWithdrawn(request_id, reason or None)

    def _on_withdrawn(self, sequence: int | None, request_id: str, reason: str | None) -> None:
        """Kept in the state file like an answer, so a handler resumed after a restart learns
        it too; whoever waits now hears it at once."""
        logger.info("request %s withdrawn by the hub: %s", request_id, reason or "no reason")
        self.store.remember_answer(sequence, WITHDRAWN_PREFIX + request_id, reason or "")
        error = RequestWithdrawn(request_id, reason)
        self._resolved.fail(request_id, error)
        self._tool_results.fail(request_id, error)

    async def query_tools(self) -> list[dict[str, Any]]:
        """Ask the hub which tools the apps offer (``tool.list``); retried on a new
        connection if this one ends before the answer."""
        while True:
            if self._shutting_down or self._stop.is_set():
                raise RuntimeError("The agent stopped before the hub listed the tools.")
            connected = asyncio.ensure_future(self.connected.wait())
            stopped = asyncio.ensure_future(self._stop.wait())
            await asyncio.wait([connected, stopped], return_when=asyncio.FIRST_COMPLETED)
            connected.cancel()
            stopped.cancel()
            connection = self._conn
            if connection is None or not self.connected.is_set():
                continue
            query = self.make_envelope("tool.list", ToolList(tools=[]), envelope_id=new_id("evt"))
            answer = self._expect_answer(query.id)
            try:
                await connection.send(encode(query))
            except TransportClosed:
                continue
            await asyncio.wait([answer], timeout=self._settings.answer_timeout)
            listed = self._tool_lists.pop(query.id, None)
            if not answer.done() or answer.cancelled():
                continue
            frame = answer.result()
            if isinstance(frame, ErrorFrame):
                raise error_from_code(frame.code.value, frame.message, frame.details)
            if listed is not None:
                return listed

    def withdraw_tool_call(self, call_id: str, reason: str | None = None) -> None:
        """Queue ``tool.cancel`` for a call nobody answered yet (durable, like any uplink)."""
        if self.store.answer(ANSWER_PREFIX + call_id) is not None:
            return
        envelope = self.make_envelope(
            "tool.cancel",
            ToolCancel(call_id=call_id, reason=reason),
            envelope_id=derive_id("evt", self.agent_id, "tool.cancel", call_id),
        )
        self.store.enqueue(envelope.id, encode(envelope))
        self.outbox_changed()

    def forget_tool_call(self, scope: str, call_id: str) -> None:
        """A call's result was used and nothing will ask for it again: drop its records."""
        self.store.forget(scope, [ANSWER_PREFIX + call_id])

    def _on_tool_result(self, envelope: Envelope, payload: ToolResult) -> None:
        key = ANSWER_PREFIX + payload.call_id
        self.store.remember_answer(envelope.sequence, key, dump_result(payload))
        stored = self.store.answer(key)
        first = parse_result(stored) if stored else payload
        logger.info("tool call %s answered", payload.call_id)
        self._tool_results.resolve(payload.call_id, first)

    # --- lifecycle ------------------------------------------------------------------------

    def stop(self) -> None:
        self._stop.set()

    async def drain(self) -> None:
        while self.store.first_unsent() is not None:
            self._drained.clear()
            await self._drained.wait()

    async def run(self) -> None:
        self._store = StateStore(self._settings.state_path, self._config.agent_id)
        try:
            pending = self._store.pending_jobs()
            if pending:
                logger.info("resuming %d unfinished handler(s) from the journal", len(pending))
            for job in pending:
                self._start(job)
            await self._connect_until_stopped()
        finally:
            self._shutting_down = True
            runners = list(self._runners.values())
            for runner in runners:
                runner.cancel()
            await asyncio.gather(*runners, return_exceptions=True)
            self._tool_results.cancel_all()  # agent-level calls stop waiting
            self._store.close()
            self._store = None

    async def _pause(self, seconds: float) -> None:
        """Sleep, unless asked to stop first."""
        try:
            async with asyncio.timeout(seconds):
                await self._stop.wait()
        except TimeoutError:
            pass

    async def _connect_until_stopped(self) -> None:
        url = self._config.websocket_url
        headers = {"Authorization": f"Bearer {self._config.credential}"}
        backoff = self._settings.backoff
        attempt = 0
        while not self._stop.is_set():
            try:
                connection = await self._settings.transport.connect(url, headers)
            except ConnectionRefusedByHub as refusal:
                logger.error("the hub refused this agent: %s", refusal)
                raise
            except (TransportError, OSError, TimeoutError) as exc:
                delay = backoff.delay(attempt)
                attempt += 1
                logger.warning("cannot reach the hub at %s (%s); retry in %.2fs", url, exc, delay)
                await self._pause(delay)
                continue
            try:
                welcomed = await self._session(connection)
            finally:
                await _close_quietly(connection)
            if welcomed:
                attempt = 0
            if self._stop.is_set():
                break
            delay = backoff.delay(attempt)
            attempt += 1
            logger.info("disconnected from the hub; reconnecting in %.2fs", delay)
            await self._pause(delay)

    # --- one connection -------------------------------------------------------------------

    async def _session(self, connection: Connection) -> bool:
        """Serve one connection until it ends; True if the hub welcomed the agent."""
        loop = asyncio.get_running_loop()
        self._conn = connection
        self._answers_by_id = {}
        self._last_error = None
        welcome: asyncio.Future[AgentWelcome] = loop.create_future()
        self._welcome = welcome
        reader = asyncio.create_task(self._read(connection), name="lineup-reader")
        stopper = asyncio.create_task(self._stop.wait(), name="lineup-stop")
        tasks: list[asyncio.Future[Any]] = [reader, stopper]
        try:
            hello = self._hello()
            hello_answer = self._expect_answer(hello.id)
            try:
                await connection.send(encode(hello))
            except TransportClosed:
                await self._drain_reader(reader, stopper)  # it may hold the hub's reason
                return False
            limit = self._settings.answer_timeout
            for awaited in (hello_answer, welcome):
                first = await _first(awaited, reader, stopper, limit=limit)
                if first is None:
                    logger.warning("the hub did not answer the hello in %.0fs; reconnecting", limit)
                    return False
                if first is not awaited:
                    _check(reader)
                    return False
                answer = awaited.result()
                if isinstance(answer, ErrorFrame):
                    return self._hello_refused(answer)
            info = welcome.result()
            if info.agent_id != self._config.agent_id:
                logger.warning(
                    "the hub welcomed agent %s; this is %s", info.agent_id, self._config.agent_id
                )
            interval = self._settings.heartbeat_interval or info.heartbeat_interval_ms / 1000
            self.connected.set()
            logger.info(
                "connected to %s as %s (hub at sequence %d, ours %d)",
                self._config.websocket_url,
                self._config.agent_id,
                info.latest_sequence,
                self.store.cursor,
            )
            sender = asyncio.create_task(self._send_outbox(connection), name="lineup-sender")
            beat = asyncio.create_task(self._heartbeat(connection, interval), name="lineup-beat")
            tasks += [sender, beat]
            finished = await _first(reader, sender, beat, stopper)
            if finished is not reader and _ended_by_close(finished):
                await self._drain_reader(reader, stopper)
            _check(finished)
            return True
        finally:
            self.connected.clear()
            self._conn = None
            self._welcome = None
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for future in self._answers_by_id.values():
                future.cancel()
            self._answers_by_id = {}

    async def _drain_reader(
        self, reader: asyncio.Future[Any], stopper: asyncio.Future[Any]
    ) -> None:
        """The connection closed under a sender: let the reader take in what is left (an
        error frame saying why) before giving up on the connection."""
        try:
            async with asyncio.timeout(self._settings.answer_timeout):
                await _first(reader, stopper)
        except TimeoutError:
            return
        _check(reader)

    def _hello(self) -> Envelope:
        settings = self._settings
        capabilities = settings.capabilities
        if capabilities is None:
            capabilities = ("tasks", "interactions", "artifacts", "streaming")
            if self._message_handler is not None:
                capabilities += ("messages",)
        payload = AgentHello(
            agent_version=settings.agent_version,
            runtime=settings.runtime,
            capabilities=list(capabilities),
            last_sequence=self.store.cursor,
            tools=list(settings.tools) if settings.tools else None,
        )
        return self.make_envelope("agent.hello", payload, envelope_id=new_id("evt"))

    def _hello_refused(self, frame: ErrorFrame) -> bool:
        if frame.retryable:
            logger.warning("the hub is not ready for agents (%s); will retry", frame.message)
            return False
        refusal = ConnectionRefusedByHub(
            frame.code.value, frame.message, details=frame.details or None
        )
        logger.error("the hub refused the hello: %s", refusal)
        raise refusal

    def _expect_answer(self, envelope_id: str) -> asyncio.Future[Ack | ErrorFrame]:
        future: asyncio.Future[Ack | ErrorFrame] = asyncio.get_running_loop().create_future()
        self._answers_by_id[envelope_id] = future
        return future

    async def _heartbeat(self, connection: Connection, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            beat = self.make_envelope(
                "agent.heartbeat", AgentHeartbeat(), envelope_id=new_id("evt")
            )
            await connection.send(encode(beat))

    async def _send_outbox(self, connection: Connection) -> None:
        backoff = self._settings.backoff
        attempt = 0
        while True:
            entry = self.store.first_unsent()
            if entry is None:
                self._drained.set()
                self._outbox_signal.clear()
                await self._outbox_signal.wait()
                continue
            pending = self._expect_answer(entry.envelope_id)
            await connection.send(entry.frame)
            try:
                async with asyncio.timeout(self._settings.answer_timeout):
                    answer = await pending
            except TimeoutError:
                raise _NoAnswer(entry.envelope_id) from None
            if isinstance(answer, Ack):
                attempt = 0
                self._settle(entry, answer)
            elif answer.retryable:
                delay = _retry_after(answer) or backoff.delay(attempt)
                attempt += 1
                logger.warning(
                    "the hub asked to resend %s later (%s: %s); resending in %.2fs",
                    entry.envelope_id,
                    answer.code.value,
                    answer.message,
                    delay,
                )
                await asyncio.sleep(delay)
            else:
                attempt = 0
                logger.error(
                    "the hub refused %s (%s: %s); it will not be resent",
                    entry.envelope_id,
                    answer.code.value,
                    answer.message,
                )
                self._settle(entry, answer)

    def _settle(self, entry: OutboxEntry, answer: Ack | ErrorFrame) -> None:
        if isinstance(answer, Ack):
            self.store.settle(entry, sequence=answer.sequence)
            self._settled.resolve(entry.envelope_id, None)
            return
        error: dict[str, Any] = {"code": answer.code.value, "message": answer.message}
        if answer.details:
            error["details"] = answer.details
        self.store.settle(entry, error=error)
        self._settled.fail(entry.envelope_id, _recorded_error(error))

    # --- what the hub sends ---------------------------------------------------------------

    async def _read(self, connection: Connection) -> None:
        while True:
            try:
                raw = await connection.recv()
            except TransportClosed as closed:
                if closed.code in REFUSAL_CLOSE_CODES:
                    raise self._refusal(closed) from None
                logger.info("the hub closed the connection (%s)", closed)
                return
            self._on_frame(raw)

    def _refusal(self, closed: TransportClosed) -> ConnectionRefusedByHub:
        last = self._last_error
        code = REFUSAL_CLOSE_CODES.get(closed.code or 0, ErrorCode.UNAUTHENTICATED)
        if last is not None and last.code in _REFUSALS:
            return ConnectionRefusedByHub(
                last.code.value, last.message, details=last.details, close_code=closed.code
            )
        return ConnectionRefusedByHub(
            code.value,
            closed.reason or "The hub closed the connection, refusing this agent.",
            close_code=closed.code,
        )

    def _on_frame(self, raw: str) -> None:
        result = decode_answer(raw)
        if isinstance(result, Answer):
            self._on_answer(result.frame)
        elif isinstance(result, Decoded):
            if result.unknown_fields:
                logger.debug(
                    "%s carries fields this SDK ignores: %s",
                    result.envelope.type,
                    ", ".join(result.unknown_fields),
                )
            self._on_event(result.envelope, result.payload)
        elif isinstance(result, Ignored):
            logger.warning("%s", result.warning)
            self.store.advance(result.envelope.sequence)
        else:
            logger.warning("unreadable frame from the hub: %s", result.error.message)

    def _on_answer(self, frame: Ack | ErrorFrame) -> None:
        if frame.id is not None:
            future = self._answers_by_id.pop(frame.id, None)
            if future is not None:
                if not future.done():
                    future.set_result(frame)
                return
        if isinstance(frame, Ack):
            return  # heartbeats and deltas: nothing waits for their acks
        if frame.id is None:
            self._last_error = frame
            if frame.code in _REFUSALS:
                refusal = ConnectionRefusedByHub(
                    frame.code.value, frame.message, details=frame.details
                )
                logger.error("the hub refused this agent: %s", refusal)
                raise refusal
        logger.warning(
            "the hub refused frame %s (%s: %s)", frame.id, frame.code.value, frame.message
        )

    def _on_event(self, envelope: Envelope, payload: Any) -> None:
        if isinstance(payload, AgentWelcome):
            if self._welcome is not None and not self._welcome.done():
                self._welcome.set_result(payload)
            return
        if isinstance(payload, SystemResyncRequired):
            self._on_resync(payload)
            return
        sequence = envelope.sequence
        if sequence is not None and sequence <= self.store.cursor:
            logger.debug("already handled %s #%d", envelope.type, sequence)
            return
        if isinstance(payload, TaskAssigned):
            self._on_task_assigned(envelope, payload)
        elif isinstance(payload, InteractionResolved):
            self._on_interaction_resolved(envelope, payload)
        elif isinstance(payload, InteractionExpiry):
            self._on_interaction_expired(payload)
            self.store.advance(sequence)
        elif isinstance(payload, InteractionCancelled):
            self._on_withdrawn(sequence, payload.interaction_id, payload.reason)
        elif isinstance(payload, ToolCancel) and envelope.type == "tool.cancelled":
            self._on_withdrawn(sequence, payload.call_id, payload.reason)
        elif isinstance(payload, TaskCancelRequested):
            self._on_cancel_requested(envelope, payload)
        elif isinstance(payload, MessageDelivered):
            self._on_message_delivered(envelope, payload)
        elif isinstance(payload, ToolResult):
            self._on_tool_result(envelope, payload)
        elif isinstance(payload, ToolList) and envelope.correlation_id is not None:
            self._tool_lists[envelope.correlation_id] = [t.wire() for t in payload.tools]
        else:
            logger.debug("nothing to do for %s", envelope.type)
            self.store.advance(sequence)

    def _on_resync(self, payload: SystemResyncRequired) -> None:
        logger.warning(
            "the hub cannot replay what this agent missed (%s); continuing from sequence %s. "
            "Tasks already journaled go on; events in between are not replayed.",
            payload.reason,
            payload.latest_sequence,
        )
        if payload.latest_sequence is not None:
            self.store.reset_cursor(payload.latest_sequence)

    def _on_task_assigned(self, envelope: Envelope, payload: TaskAssigned) -> None:
        scope = payload.task_id
        if not self.store.remember_job(envelope.sequence, scope, "task", encode(envelope)):
            logger.debug("task %s was assigned before; ignored", scope)
            return
        logger.info("task %s assigned: %s", scope, payload.title)
        job = self.store.job(scope)
        assert job is not None
        self._start(job)

    def _on_interaction_resolved(self, envelope: Envelope, payload: InteractionResolved) -> None:
        raw = payload.model_dump_json(by_alias=True, exclude_none=True)
        self.store.remember_answer(envelope.sequence, payload.interaction_id, raw)
        stored = self.store.answer(payload.interaction_id)
        first = InteractionResolved.model_validate_json(stored) if stored else payload
        logger.info("interaction %s answered by %s", payload.interaction_id, payload.responded_by)
        self._resolved.resolve(payload.interaction_id, first)

    def _on_interaction_expired(self, payload: InteractionExpiry) -> None:
        """The hub's clock says nobody answered in time: whoever waits hears it now, not
        only when its own timer runs out."""
        logger.info("interaction %s expired unanswered", payload.interaction_id)
        expires_at = (
            datetime.fromtimestamp(payload.expires_at / 1000, tz=UTC)
            if payload.expires_at is not None
            else datetime.now(UTC)
        )
        self._expired[payload.interaction_id] = expires_at
        self._resolved.fail(
            payload.interaction_id, InteractionExpired(payload.interaction_id, expires_at)
        )

    def _on_cancel_requested(self, envelope: Envelope, payload: TaskCancelRequested) -> None:
        task_id = payload.task_id or envelope.task_id
        if task_id is None:
            logger.warning("task.cancel_requested names no task; ignored")
            self.store.advance(envelope.sequence)
            return
        if not self.store.request_cancel(envelope.sequence, task_id, payload.reason):
            logger.info("cancel requested for task %s, which is not running here", task_id)
            return
        logger.info("cancel requested for task %s: %s", task_id, payload.reason or "no reason")
        context = self._contexts.get(task_id)
        runner = self._runners.get(task_id)
        if context is not None and runner is not None and not runner.done():
            context._request_cancel(payload.reason)
            runner.cancel(f"a person asked to stop task {task_id}")
        # A runner that has not started yet reads the flag from the store when it does.

    def _on_message_delivered(self, envelope: Envelope, payload: MessageDelivered) -> None:
        if self._message_handler is None:
            logger.debug("message %s: no message handler; skipped", payload.message_id)
            self.store.advance(envelope.sequence)
            return
        scope = f"message:{payload.message_id}"
        if self.store.remember_job(envelope.sequence, scope, "message", encode(envelope)):
            job = self.store.job(scope)
            assert job is not None
            self._start(job)

    # --- handlers -------------------------------------------------------------------------

    def _start(self, job: Job) -> None:
        if job.scope in self._runners or job.done:
            return
        work = self._run_task(job.scope) if job.kind == "task" else self._run_message(job.scope)
        runner = asyncio.create_task(work, name=f"lineup:{job.scope}")
        self._runners[job.scope] = runner
        runner.add_done_callback(lambda done: self._runner_done(job.scope, done))

    def _runner_done(self, scope: str, runner: asyncio.Task[None]) -> None:
        if self._runners.get(scope) is runner:
            del self._runners[scope]
        if not runner.cancelled() and runner.exception() is not None:
            logger.error("handler bookkeeping for %s failed", scope, exc_info=runner.exception())

    async def _run_task(self, scope: str) -> None:
        job = self.store.job(scope)
        if job is None or job.done:
            return
        envelope = Envelope.model_validate_json(job.frame)
        context = TaskContext(self, envelope, TaskAssigned.model_validate(envelope.payload))
        self._contexts[scope] = context
        try:
            if job.cancel_requested:
                context._request_cancel(job.cancel_reason)
                self._finish(context, TaskStatusName.CANCELLED)
                return
            handler = self._task_handler
            if handler is None:
                self._finish(
                    context,
                    TaskStatusName.FAILED,
                    error="This agent has no task handler (register one with @agent.task).",
                )
                return
            try:
                try:
                    await context._accept()
                except LineupError as refused:
                    # Not this agent's task (any more): run nothing, report nothing.
                    logger.error(
                        "the hub refused to let this agent take task %s: %s", scope, refused
                    )
                    self.store.finish_job(scope, "refused")
                    return
                result = await handler(context)
            except asyncio.CancelledError:
                if self._shutting_down:
                    raise  # the agent is stopping: the task resumes when it starts again
                current = asyncio.current_task()
                if current is not None:
                    current.uncancel()
                if context.cancelled.is_set():
                    self._finish(context, TaskStatusName.CANCELLED)
                else:
                    self._finish(context, TaskStatusName.FAILED, error="The handler was cancelled.")
                return
            except TaskStopped as stop:
                self._finish(context, TaskStatusName.CANCELLED, summary=stop.summary)
                return
            except Exception as exc:
                logger.exception("task %s failed", scope)
                self._finish(context, TaskStatusName.FAILED, error=_short_error(exc))
                return
            self._finish(
                context,
                TaskStatusName.SUCCEEDED,
                summary=None if result is None else str(result),
            )
        finally:
            self._contexts.pop(scope, None)

    def _finish(
        self,
        context: TaskContext,
        status: TaskStatusName,
        *,
        summary: str | None = None,
        error: str | None = None,
    ) -> None:
        payload = TaskStatusChanged(
            status=status,
            progress=100 if status is TaskStatusName.SUCCEEDED else None,
            summary=_clip(summary, 500),
            error=_clip(error, 4000),
        )
        envelope = self.make_envelope(
            "task.status_changed",
            payload,
            envelope_id=derive_id("evt", self.agent_id, context.task_id, "finish"),
            task_id=context.task_id,
            conversation_id=context.conversation_id,
        )
        self.store.finish_job(context.task_id, status.value, envelope.id, encode(envelope))
        self.outbox_changed()
        logger.info("task %s %s", context.task_id, status.value)

    async def _run_message(self, scope: str) -> None:
        job = self.store.job(scope)
        if job is None or job.done:
            return
        envelope = Envelope.model_validate_json(job.frame)
        context = MessageContext(self, envelope, MessageDelivered.model_validate(envelope.payload))
        handler = self._message_handler
        try:
            if handler is not None:
                await handler(context)
        except asyncio.CancelledError:
            if self._shutting_down:
                raise
            logger.warning("the handler of message %s was cancelled", context.message_id)
        except Exception:
            logger.exception("the handler of message %s failed", context.message_id)
        self.store.finish_job(scope, "done")


@overload
async def _first(*waitables: asyncio.Future[Any]) -> asyncio.Future[Any]: ...


@overload
async def _first(*waitables: asyncio.Future[Any], limit: float) -> asyncio.Future[Any] | None: ...


async def _first(
    *waitables: asyncio.Future[Any], limit: float | None = None
) -> asyncio.Future[Any] | None:
    """The first of ``waitables`` to be done (the earliest given, on a tie); None if none is
    done within ``limit`` seconds."""
    done, _ = await asyncio.wait(waitables, timeout=limit, return_when=asyncio.FIRST_COMPLETED)
    if not done:
        return None
    return next(w for w in waitables if w.done())


class _NoAnswer(Exception):
    """The hub did not answer a frame in time; the connection is presumed broken."""


def _ended_by_close(task: asyncio.Future[Any]) -> bool:
    return task.done() and not task.cancelled() and isinstance(task.exception(), TransportClosed)


def _check(task: asyncio.Future[Any]) -> None:
    """Re-raise a refusal that ended ``task``; log anything else that went wrong in it."""
    if not task.done() or task.cancelled():
        return
    error = task.exception()
    if isinstance(error, ConnectionRefusedByHub):
        raise error
    if isinstance(error, _NoAnswer):
        logger.warning("no answer from the hub to %s; reconnecting", error)
    elif error is not None and not isinstance(error, TransportClosed):
        logger.error("the connection loop failed; reconnecting", exc_info=error)


async def _close_quietly(connection: Connection) -> None:
    try:
        await connection.close()
    except Exception:
        logger.debug("closing the connection failed", exc_info=True)


def _recorded_error(error: dict[str, Any] | None) -> LineupError:
    error = error or {}
    return error_from_code(
        str(error.get("code", ErrorCode.UNKNOWN_RESULT.value)),
        str(error.get("message", "The hub refused this event.")),
        error.get("details"),
    )


def _retry_after(frame: ErrorFrame) -> float | None:
    value = (frame.details or {}).get("retryAfterMs")
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value) / 1000
    return None


def _clip(text: str | None, limit: int) -> str | None:
    if text is None:
        return None
    text = text.strip()
    if not text:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short_error(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
