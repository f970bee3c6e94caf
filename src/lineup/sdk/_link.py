"""The agent's link to the hub: connect, say hello, run one session, reconnect.

On each connection the agent says hello with its cursor and waits for the welcome (the
handshake's rules are :class:`~lineup.protocol.session.AgentSession`'s), then runs three
loops side by side until the connection ends:

* the **reader** — feeds the session what arrives: answers (acks/errors) to the frames the
  agent sent, and downlink events;
* the **sender** — the outbox (:mod:`lineup.sdk._outbox`);
* the **heartbeat**.

A refusal of the credential ends :meth:`Link.run` with
:class:`~lineup.sdk.ConnectionRefusedByHub`; anything else is a reason to reconnect, after
the backoff.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, cast, overload

from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import error_from_code
from lineup.protocol.events import AgentHello
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.session import (
    AgentSession,
    AnswerReceived,
    Event,
    EventReceived,
    FrameIgnored,
    FrameRefused,
    HelloAcknowledged,
    HelloRefused,
    Refused,
    ResyncRequired,
    Welcomed,
)
from lineup.sdk._diagnostics import DiagnosticLog, NoLogsAnswer, ship
from lineup.sdk._downlink import Downlink
from lineup.sdk._errors import ConnectionRefusedByHub, InsecureConnection
from lineup.sdk._outbox import NoAnswer, Outbox
from lineup.sdk._settings import Settings
from lineup.sdk._transport import Connection, TransportClosed, TransportError

logger = logging.getLogger("lineup.sdk")

DEFAULT_CAPABILITIES = ("tasks", "interactions", "artifacts", "streaming")


class Link:
    """At most one connection at a time, reopened until :meth:`stop`."""

    def __init__(
        self,
        settings: Settings,
        downlink: Downlink,
        outbox: Outbox,
        make_query: Callable[[], tuple[Envelope, str]],
        shutting_down: Callable[[], bool],
        diagnostics: DiagnosticLog | None = None,
    ) -> None:
        self._settings = settings
        self._diagnostics = diagnostics
        self._config = settings.config
        self._downlink = downlink
        self._outbox = outbox
        self._make_query = make_query
        self._shutting_down = shutting_down
        self._stop = asyncio.Event()
        self.connected = asyncio.Event()
        self._conn: Connection | None = None
        self._session: AgentSession | None = None
        self._answers_by_id: dict[str, asyncio.Future[Ack | ErrorFrame]] = {}
        self._hello_answer: asyncio.Future[Ack | ErrorFrame] | None = None
        self._welcome: asyncio.Future[None] | None = None

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        self._stop.set()

    async def _pause(self, seconds: float) -> None:
        """Sleep, unless asked to stop first."""
        try:
            async with asyncio.timeout(seconds):
                await self._stop.wait()
        except TimeoutError:
            pass

    async def run(self) -> None:
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
            except InsecureConnection as refusal:
                logger.error("not connecting to the hub: %s", refusal)
                raise
            except (TransportError, OSError, TimeoutError) as exc:
                delay = backoff.delay(attempt)
                attempt += 1
                logger.warning("cannot reach the hub at %s (%s); retry in %.2fs", url, exc, delay)
                await self._pause(delay)
                continue
            try:
                welcomed = await self._serve(connection)
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

    # --- what handlers send outside the outbox ----------------------------------------------

    async def send_live(self, text: str) -> bool:
        """Send now if connected (deltas: lost with the connection, never resent)."""
        connection = self._conn
        if connection is None or not self.connected.is_set():
            return False
        try:
            await connection.send(text)
        except TransportClosed:
            return False
        return True

    async def query_tools(self) -> list[dict[str, Any]]:
        """Ask the hub which tools the apps offer (``tool.list``); retried on a new
        connection if this one ends before the answer."""
        listed = await self.query(self._make_query, self._downlink.tool_lists, "the tools")
        return cast(list[dict[str, Any]], listed)

    async def query(
        self, make_query: Callable[[], tuple[Envelope, str]], answers: dict[str, Any], what: str
    ) -> Any:
        """Send a query made by ``make_query`` and return the frame the hub answers it with,
        which the downlink files in ``answers`` under the query's id before the hub acks the
        query; asked again on a new connection if this one ends before the answer."""
        while True:
            if self._shutting_down() or self._stop.is_set():
                raise RuntimeError(f"The agent stopped before the hub listed {what}.")
            connected = asyncio.ensure_future(self.connected.wait())
            stopped = asyncio.ensure_future(self._stop.wait())
            await asyncio.wait([connected, stopped], return_when=asyncio.FIRST_COMPLETED)
            connected.cancel()
            stopped.cancel()
            connection = self._conn
            if connection is None or not self.connected.is_set():
                continue
            query, text = make_query()
            answer = self._expect_answer(query.id)
            try:
                await connection.send(text)
            except TransportClosed:
                continue
            await asyncio.wait([answer], timeout=self._settings.answer_timeout)
            listed = answers.pop(query.id, None)
            if not answer.done() or answer.cancelled():
                continue
            frame = answer.result()
            if isinstance(frame, ErrorFrame):
                raise error_from_code(frame.code.value, frame.message, frame.details)
            if listed is not None:
                return listed

    # --- one connection ---------------------------------------------------------------------

    async def _serve(self, connection: Connection) -> bool:
        """Serve one connection until it ends; True if the hub welcomed the agent."""
        loop = asyncio.get_running_loop()
        session = AgentSession(self._config.workspace_id)
        self._session = session
        self._conn = connection
        self._answers_by_id = {}
        hello_answer: asyncio.Future[Ack | ErrorFrame] = loop.create_future()
        welcome: asyncio.Future[None] = loop.create_future()
        self._hello_answer, self._welcome = hello_answer, welcome
        reader = asyncio.create_task(self._read(connection, session), name="lineup-reader")
        stopper = asyncio.create_task(self._stop.wait(), name="lineup-stop")
        tasks: list[asyncio.Future[Any]] = [reader, stopper]
        try:
            session.say_hello(self._hello(), datetime.now(UTC))
            try:
                for data in session.data_to_send():
                    await connection.send(data)
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
                    return _hello_refused(answer)
            info = session.welcome
            assert info is not None
            if info.agent_id != self._config.agent_id:
                logger.warning(
                    "the hub welcomed agent %s; this is %s", info.agent_id, self._config.agent_id
                )
            interval = self._settings.heartbeat_interval or info.heartbeat_interval_ms / 1000
            self._downlink.binding.welcomed(info.name, info.awaiting_confirmation, info.settings)
            self.connected.set()
            logger.info(
                "connected to %s as %s (hub at sequence %d, ours %d)",
                self._config.websocket_url,
                self._config.agent_id,
                info.latest_sequence,
                self._downlink.store.cursor,
            )
            sender = asyncio.create_task(
                self._outbox.send(connection, self._expect_answer), name="lineup-sender"
            )
            beat = asyncio.create_task(
                self._heartbeat(connection, session, interval), name="lineup-beat"
            )
            tasks += [sender, beat]
            watched = [reader, sender, beat]
            if self._diagnostics is not None:
                assert self._settings.diagnostics_interval is not None
                logs = asyncio.create_task(
                    ship(
                        self._diagnostics,
                        connection,
                        self._expect_answer,
                        workspace_id=self._config.workspace_id,
                        interval=self._settings.diagnostics_interval,
                        answer_timeout=limit,
                    ),
                    name="lineup-logs",
                )
                tasks.append(logs)
                watched.append(logs)
            finished = await _first(*watched, stopper)
            if finished is not reader and _ended_by_close(finished):
                await self._drain_reader(reader, stopper)
            _check(finished)
            return True
        finally:
            self.connected.clear()
            self._conn = None
            self._session = None
            self._hello_answer = self._welcome = None
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

    def _hello(self) -> AgentHello:
        settings = self._settings
        capabilities = settings.capabilities
        if capabilities is None:
            capabilities = DEFAULT_CAPABILITIES
            if self._downlink.runners.handles_messages:
                capabilities += ("messages",)
        return AgentHello(
            agent_version=settings.agent_version,
            runtime=settings.runtime,
            capabilities=list(capabilities),
            last_sequence=self._downlink.store.cursor,
            tools=list(settings.tools) if settings.tools else None,
            settings_schema=settings.settings_schema,
        )

    def _expect_answer(self, envelope_id: str) -> asyncio.Future[Ack | ErrorFrame]:
        future: asyncio.Future[Ack | ErrorFrame] = asyncio.get_running_loop().create_future()
        self._answers_by_id[envelope_id] = future
        return future

    async def _heartbeat(
        self, connection: Connection, session: AgentSession, interval: float
    ) -> None:
        while True:
            await asyncio.sleep(interval)
            session.heartbeat(datetime.now(UTC))
            for data in session.data_to_send():
                await connection.send(data)

    # --- what the hub sends -----------------------------------------------------------------

    async def _read(self, connection: Connection, session: AgentSession) -> None:
        while True:
            try:
                raw = await connection.recv()
            except TransportClosed as closed:
                events = session.receive_close(closed.code, closed.reason)
                refused = next((e for e in events if isinstance(e, Refused)), None)
                if refused is not None:
                    raise _refusal(refused) from None
                logger.info("the hub closed the connection (%s)", closed)
                return
            for event in session.receive_frame(raw):
                self._on_event(event)

    def _on_event(self, event: Event) -> None:
        if isinstance(event, EventReceived):
            if event.unknown_fields:
                logger.debug(
                    "%s carries fields this SDK ignores: %s",
                    event.envelope.type,
                    ", ".join(event.unknown_fields),
                )
            self._downlink.handle(event.envelope, event.payload)
        elif isinstance(event, AnswerReceived):
            self._on_answer(event.frame)
        elif isinstance(event, HelloAcknowledged | HelloRefused):
            answer = event.ack if isinstance(event, HelloAcknowledged) else event.error
            if self._hello_answer is not None and not self._hello_answer.done():
                self._hello_answer.set_result(answer)
        elif isinstance(event, Welcomed):
            if self._welcome is not None and not self._welcome.done():
                self._welcome.set_result(None)
        elif isinstance(event, ResyncRequired):
            self._downlink.resync(event.resync)
        elif isinstance(event, FrameIgnored):
            self._downlink.ignored(event.envelope, event.warning)
        elif isinstance(event, FrameRefused):
            logger.warning("unreadable frame from the hub: %s", event.error.message)
        elif isinstance(event, Refused):
            refusal = _refusal(event)
            logger.error("the hub refused this agent: %s", refusal)
            raise refusal

    def _on_answer(self, frame: Ack | ErrorFrame) -> None:
        if frame.id is not None:
            future = self._answers_by_id.pop(frame.id, None)
            if future is not None:
                if not future.done():
                    future.set_result(frame)
                return
        if isinstance(frame, Ack):
            return  # heartbeats and deltas: nothing waits for their acks
        logger.warning(
            "the hub refused frame %s (%s: %s)", frame.id, frame.code.value, frame.message
        )


def _refusal(event: Refused) -> ConnectionRefusedByHub:
    return ConnectionRefusedByHub(
        event.code.value, event.message, details=event.details, close_code=event.close_code
    )


def _hello_refused(frame: ErrorFrame) -> bool:
    if frame.retryable:
        logger.warning("the hub is not ready for agents (%s); will retry", frame.message)
        return False
    refusal = ConnectionRefusedByHub(frame.code.value, frame.message, details=frame.details or None)
    logger.error("the hub refused the hello: %s", refusal)
    raise refusal


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


def _ended_by_close(task: asyncio.Future[Any]) -> bool:
    return task.done() and not task.cancelled() and isinstance(task.exception(), TransportClosed)


def _check(task: asyncio.Future[Any]) -> None:
    """Re-raise a refusal that ended ``task``; log anything else that went wrong in it."""
    if not task.done() or task.cancelled():
        return
    error = task.exception()
    if isinstance(error, ConnectionRefusedByHub):
        raise error
    if isinstance(error, NoAnswer | NoLogsAnswer):
        logger.warning("no answer from the hub to %s; reconnecting", error)
    elif error is not None and not isinstance(error, TransportClosed):
        logger.error("the connection loop failed; reconnecting", exc_info=error)


async def _close_quietly(connection: Connection) -> None:
    try:
        await connection.close()
    except Exception:
        logger.debug("closing the connection failed", exc_info=True)
