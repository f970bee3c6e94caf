"""The agents' WebSocket (seed 001 §7.1, §7.4, §10): one outbound connection per agent.

Handshake: bearer credential → ``agent.hello`` → ack + ``agent.welcome`` → replay of the
downlink the agent missed → live. An agent no person has confirmed yet is welcomed too (the
welcome says ``awaitingConfirmation``) but gets no work and may send nothing but heartbeats
and its diagnostic lines until ``agent.confirmed`` reaches it on the downlink. The rules of
that exchange, the answers to what cannot be handled and the close codes are
:class:`~lineup.protocol.session.HubSession`'s; this module does the I/O around it and
dispatches events to the commands. Every inbound frame gets
exactly one answer (ack or error); nothing an agent sends can crash the connection or the hub.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from lineup.hub import agent_logs, app_tools, commands, transcript
from lineup.hub.actors import AgentIdentity
from lineup.hub.commands import Recorded, unconfirmed
from lineup.hub.credentials import authenticate_agent
from lineup.hub.downlink import CONNECTION_NEWS, concerns, for_agent
from lineup.hub.follow import Follower
from lineup.hub.governance import invoke, listing
from lineup.hub.presence import AgentLink
from lineup.hub.recorder import Writing
from lineup.hub.state import HubState
from lineup.protocol import agent_settings
from lineup.protocol import events as ev
from lineup.protocol.codec import encode
from lineup.protocol.envelope import Envelope, fingerprint
from lineup.protocol.errors import InvalidArgument, LineupError, Unauthenticated, UnknownResult
from lineup.protocol.frames import ErrorFrame
from lineup.protocol.session import (
    HELLO_TIMEOUT,
    CloseCode,
    EventReceived,
    HelloReceived,
    HubSession,
)
from lineup.protocol.times import ms_to_datetime
from lineup.store import Agent, StoredEvent, retention

log = logging.getLogger("lineup.hub.agents")

IN_FLIGHT = 256

WELCOME_SAYS = frozenset(("agent.confirmed", "agent.settings"))
"""Downlink types whose news before the connection the welcome already told (whether the
agent is confirmed, its settings): only later ones are sent, replayed or live."""


class AgentConnection:
    """The socket's I/O around a :class:`~lineup.protocol.session.HubSession`: reads feed
    the session, what it queues is sent under one lock, the close it asks for is made."""

    # slots: one per connection, for the connection's life (10,000 idle agents)
    __slots__ = (
        "_agent",
        "_conversations",
        "_send_lock",
        "confirmed",
        "connected_sequence",
        "hub",
        "identity",
        "link",
        "session",
        "socket",
    )

    def __init__(self, hub: HubState, socket: WebSocket, identity: AgentIdentity) -> None:
        self.hub = hub
        self.socket = socket
        self.identity = identity
        self.session = HubSession(identity.workspace_id)
        self._send_lock = asyncio.Lock()
        self.link: AgentLink | None = None
        self.connected_sequence: int | None = None  # our agent.connected
        self.confirmed = True  # set from the agent's row at the hello
        self._agent: Agent | None = None  # the row the hello found, for the welcome
        self._conversations: dict[str, str | None] = {}

    async def flush(self) -> None:
        """Send what the session queued (taken before the first ``await``, so each caller
        sends its own frames, in the order the lock grants), then any close it asked for."""
        frames = self.session.frames_to_send()
        close = self.session.close_to_send()
        for frame in frames:
            if isinstance(frame, ErrorFrame):  # errors by code
                self.hub.metrics.error(str(frame.code), "agent_ws")
        if frames:
            async with self._send_lock:
                for frame in frames:
                    await self.socket.send_text(encode(frame))
        if close is not None:
            await self.close(close.code, close.reason)

    async def send_event(self, envelope: Envelope) -> None:
        self.session.send_event(envelope)
        await self.flush()

    async def close(self, code: int, reason: str) -> None:
        if self.socket.application_state is WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await self.socket.close(code, reason)

    async def handshake(self) -> ev.AgentHello | None:
        """The first frame must be the agent's hello; any other first frame is answered with
        an error naming its id, like every frame, before the connection closes."""
        session = self.session
        try:
            message = await asyncio.wait_for(self.socket.receive(), HELLO_TIMEOUT)
        except TimeoutError:
            session.hello_timed_out()
            await self.flush()
            return None
        if message["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", 1000))
        raw = message.get("text")
        events = session.receive_frame(b"" if raw is None else raw)
        received = next((e for e in events if isinstance(e, HelloReceived)), None)
        if received is None:
            await self.flush()
            return None
        hello: ev.AgentHello = received.hello
        identity = self.identity

        def connect(w: Writing) -> Recorded:
            done = commands.agent_connected(w, identity, hello)
            # this node holds the agent, in the same transaction
            self.hub.cluster.link(w, identity.agent_id, identity.workspace_id)
            # what the agent surely has: compaction keeps people's messages to it after this
            retention.record_cursor(
                w.connection,
                identity.workspace_id,
                identity.agent_id,
                hello.last_sequence or 0,
                w.now_ms,
            )
            return done

        recorded = await self.hub.recorder.run(
            connect, lane=identity.actor, workspace=identity.workspace_id
        )
        self.connected_sequence = recorded.sequence
        self._agent = recorded.value
        self.confirmed = recorded.value.confirmed
        session.acknowledge_hello(recorded.sequence)
        await self.flush()
        return hello

    async def welcome(self, hello: ev.AgentHello) -> int:
        """Welcome the agent (and tell it to resync if what it missed is gone); the
        sequence to replay after.

        An agent without a cursor is replayed from its own pairing, not from the workspace's
        first event: nothing before it can be addressed to it, and in a long-lived workspace
        the difference is the whole log read for one connection."""
        ws = self.identity.workspace_id
        latest, horizon = await self.hub.store.read(
            lambda r: (r.last_sequence(ws), r.log_horizon(ws))
        )
        after = hello.last_sequence or 0
        agent = self._agent
        self._agent = None
        after = self.session.accept(
            name=agent.name if agent else None,
            awaiting_confirmation=not self.confirmed,
            settings=(
                agent_settings.effective(agent.settings_schema, agent.settings)
                if agent is not None and agent.settings_schema
                else None
            ),
            agent_id=self.identity.agent_id,
            heartbeat_interval_ms=int(self.hub.settings.heartbeat_interval * 1000),
            last_sequence=after,
            latest_sequence=latest,
            earliest_sequence=horizon,
            now=ms_to_datetime(self.hub.clock()),
        )
        await self.flush()
        paired = agent.paired_sequence if agent is not None else None
        return max(after, paired - 1) if paired is not None else after

    # --- downlink ----------------------------------------------------------------------

    async def send_downlink(self, event: StoredEvent) -> bool:
        # Whichever node recorded it, this connection learns from the
        # log that the agent connected again (maybe to another node), was revoked, or was
        # recorded offline: then it closes, so that the agent reconnects and is online again
        if event.type in CONNECTION_NEWS and (
            event.payload.get("agentId") == self.identity.agent_id
            and self.connected_sequence is not None
            and event.sequence > self.connected_sequence
        ):
            if event.type == "agent.revoked":
                await self.close(CloseCode.REVOKED, "revoked")
            elif event.type == "agent.rejected":
                await self.close(CloseCode.REVOKED, "rejected by a person")
            elif event.type == "agent.connected":
                await self.close(CloseCode.REPLACED, "replaced by a newer connection")
            elif event.payload.get("status") == "offline":
                await self.close(CloseCode.SILENT, "recorded offline")
            return False
        frame = for_agent(event, self.identity.agent_id)
        if frame is None:
            return False
        if frame.type in WELCOME_SAYS:
            if self.connected_sequence is None or event.sequence < self.connected_sequence:
                return False  # the welcome said where things stood at the connection
            if frame.type == "agent.confirmed":
                self.confirmed = True  # before the agent can hear of any work
        await self.send_event(frame)
        return True

    # --- uplink ------------------------------------------------------------------------

    async def receive_loop(self) -> None:
        """Read frames and handle them pipelined: each is handed to the writer in arrival
        order (so the log keeps the agent's order) without waiting for the previous commit;
        at most ``IN_FLIGHT`` are unanswered at once, and the workspace's agents on this node
        share ``hub.in_flight``'s window. Beyond either, the socket is not read until frames
        are answered: the agent is slowed, not refused."""
        window = asyncio.Semaphore(IN_FLIGHT)
        shared, workspace = self.hub.in_flight, self.identity.workspace_id
        pending: set[asyncio.Task[None]] = set()
        link = self.link

        async def handle(data: str | bytes) -> None:
            try:
                await self.handle_frame(data)
            except Exception as exc:  # the socket closed under the answer
                # handle_frame answers every failure itself, so only sending can fail here;
                # the agent resends what it did not see acknowledged (the id makes it safe).
                log.debug("agent %s: answer not delivered: %r", self.identity.agent_id, exc)
            finally:
                shared.release(workspace)
                window.release()
                if link is not None:
                    link.in_flight -= 1

        try:
            while True:
                raw = await self.socket.receive()
                if raw["type"] == "websocket.disconnect":
                    self.session.receive_close(raw.get("code"), raw.get("reason") or "")
                    return
                data = raw.get("text")
                if data is None:
                    data = raw.get("bytes") or b""
                self.hub.presence.beat(self.identity.agent_id, self.hub.clock())
                if link is not None:  # not silent while the hub works on what it sent
                    link.in_flight += 1
                await window.acquire()
                try:
                    await shared.acquire(workspace)
                except BaseException:
                    window.release()
                    raise
                task = asyncio.create_task(handle(data))
                pending.add(task)
                task.add_done_callback(pending.discard)
        finally:
            if pending:
                await asyncio.wait(pending, timeout=5)

    async def handle_frame(self, raw: str | bytes) -> None:
        for event in self.session.receive_frame(raw):
            if isinstance(event, EventReceived):
                self._answer(event, await self._handle(event))
        await self.flush()

    async def _handle(self, event: EventReceived) -> Recorded | LineupError:
        envelope = event.envelope
        try:
            return await self.dispatch(envelope, event.payload)
        except LineupError as exc:
            return exc
        except Exception:
            log.exception(
                "agent %s: %s failed",
                self.identity.agent_id,
                envelope.type,
                extra={  # JSON logs carry the ids
                    "event_id": envelope.id,
                    "agent_id": self.identity.agent_id,
                    "workspace_id": self.identity.workspace_id,
                },
            )
            return UnknownResult("The hub failed to process this event; its outcome is unknown.")

    def _answer(self, event: EventReceived, outcome: Recorded | LineupError) -> None:
        envelope_id = event.envelope.id
        if isinstance(outcome, LineupError):
            self.session.fail(envelope_id, outcome)
            return
        warnings = [f"unknown field {f!r} ignored" for f in event.unknown_fields] or None
        self.session.answer(
            envelope_id,
            sequence=outcome.sequence,
            duplicate=outcome.duplicate,
            warnings=warnings,
        )

    async def _conversation_of(self, task_id: str) -> str | None:
        """The task's conversation, for streamed text that named only the task (cached)."""
        if task_id not in self._conversations:
            ws, agent_id = self.identity.workspace_id, self.identity.agent_id
            task = await self.hub.store.read(lambda r: r.get_task(ws, task_id), brief=True)
            mine = task is not None and task.target_agent_id == agent_id
            self._conversations[task_id] = task.conversation_id if mine and task else None
        return self._conversations[task_id]

    async def dispatch(self, envelope: Envelope, payload: Any) -> Recorded:
        kind = envelope.type
        agent = self.identity
        if kind in ("agent.heartbeat", "agent.hello"):
            return Recorded(None)
        if kind == "agent.logs":  # kept beside the log, not in it
            await agent_logs.keep(self.hub, agent, payload)
            return Recorded(None)
        if not self.confirmed:
            raise unconfirmed(agent.agent_id, agent.name)
        if kind == "message.delta":
            if envelope.conversation_id is None and envelope.task_id is not None:
                envelope = envelope.model_copy(
                    update={"conversation_id": await self._conversation_of(envelope.task_id)}
                )
            frame = envelope.model_copy(update={"sequence": None}).wire()
            frame["actor"] = agent.actor
            self.hub.broker.publish_ephemeral(agent.workspace_id, frame)
            return Recorded(None)
        if kind == "tool.list":  # a query, answered by a tool.list frame
            answer = await app_tools.answer_query(self.hub, agent, envelope, payload)
            await self.send_event(answer)
            return Recorded(None)
        if kind == "capability.list":  # a query, answered by a capability.list frame
            await self.send_event(await listing.answer_query(self.hub, agent, envelope))
            return Recorded(None)
        if kind == "capability.invoke":  # asks a provider's preview before it records
            return await invoke.invoke(self.hub, agent, envelope, payload)
        handler = _HANDLERS.get(kind)
        if handler is None:
            raise InvalidArgument(f"{kind!r} is not handled by this hub yet.")

        digest = fingerprint(envelope)

        def job(w: Writing) -> Recorded:
            return commands.once(
                w,
                agent.workspace_id,
                agent.actor,
                envelope.id,
                lambda: handler(w, agent, envelope, payload),
                fingerprint=digest,
            )

        return await self.hub.recorder.run(
            job, lane=agent.actor, workspace=agent.workspace_id, brief=True
        )


Handler = Callable[[Writing, AgentIdentity, Envelope, Any], Recorded]

_HANDLERS: dict[str, Handler] = {
    "task.accepted": lambda w, a, e, p: commands.task_accepted(w, a, e.id, e.task_id, p),
    "task.status_changed": lambda w, a, e, p: commands.task_status_changed(
        w, a, e.id, e.task_id, p
    ),
    "task.child_created": lambda w, a, e, p: commands.task_child_created(w, a, e.id, p),
    "task.create": lambda w, a, e, p: commands.agent_task_created(w, a, e.id, e.conversation_id, p),
    "interaction.requested": lambda w, a, e, p: commands.interaction_requested(
        w, a, e.id, e.task_id, e.conversation_id, p
    ),
    "interaction.cancel": lambda w, a, e, p: commands.interaction_withdrawn_by_agent(w, a, e.id, p),
    "artifact.created": lambda w, a, e, p: commands.artifact_created(
        w, a, e.id, e.task_id, e.conversation_id, p
    ),
    "message.create": lambda w, a, e, p: commands.agent_message(
        w, a, e.id, e.task_id, e.conversation_id, p
    ),
    "tool.call": lambda w, a, e, p: app_tools.call_tool(
        w, a, e.id, e.task_id, e.conversation_id, p
    ),
    "tool.cancel": lambda w, a, e, p: app_tools.cancel_call(w, a, e.id, p),
    **{
        kind: lambda w, a, e, p: transcript.activity_reported(
            w, a, e.type, e.id, e.task_id, e.conversation_id, p
        )
        for kind in transcript.TYPES
    },
}


async def serve_agent(hub: HubState, socket: WebSocket) -> None:
    """The whole life of one agent connection."""
    await socket.accept()
    authorization = socket.headers.get("authorization", "")
    try:
        identity = await authenticate_agent(hub, authorization)
    except Unauthenticated as exc:
        await socket.send_text(encode(ErrorFrame.from_error(exc)))
        await socket.close(CloseCode.UNAUTHENTICATED, "unauthenticated")
        return
    # the handshake's headers were read (the middleware read theirs before): not kept for
    # the connection's life (some 1.2 KiB a socket, 10,000 idle agents)
    headers = socket.scope.get("headers")
    if isinstance(headers, list):
        headers.clear()
    connection = AgentConnection(hub, socket, identity)
    try:
        hello = await connection.handshake()
        if hello is None:
            return
        now = hub.clock()
        link = AgentLink(identity.agent_id, identity.workspace_id, now, now, connection.close)
        connection.link = link
        previous = hub.presence.attach(link)
        if previous is not None:
            await previous.close(CloseCode.REPLACED, "replaced by a newer connection")
        after = await connection.welcome(hello)
        del hello  # not kept for the connection's life
        follower = Follower(
            hub.store,
            hub.broker,
            identity.workspace_id,
            after,
            connection.send_downlink,
            relevant=lambda event: concerns(event, identity.agent_id),
        )
        await follower.replay()
        follower.start()  # no task of its own while there is nothing to send
        try:
            await connection.receive_loop()
        finally:
            await follower.stop()
    except WebSocketDisconnect:
        pass
    finally:
        await _disconnected(hub, connection)


async def _disconnected(hub: HubState, connection: AgentConnection) -> None:
    """Record the agent offline at once — shielded, so a cancelled connection task (server
    shutdown, a test client closing) still leaves the truth in the log."""
    link = connection.link
    if link is None or not hub.presence.detach(link):
        return

    async def record() -> None:
        try:
            # unless another node holds the agent by now
            await hub.recorder.run(
                hub.cluster.offline_job(link.workspace_id, link.agent_id, link.last_beat_ms),
                lane=connection.identity.actor,
                workspace=link.workspace_id,
            )
        except LineupError:
            log.exception("could not record agent %s offline", link.agent_id)

    await asyncio.shield(asyncio.ensure_future(record()))
