"""The agents' WebSocket (seed 001 §7.1, §7.4, §10): one outbound connection per agent.

Handshake: bearer credential → ``agent.hello`` → ack + ``agent.welcome`` → replay of the
downlink the agent missed → live. Every inbound frame gets exactly one answer (ack or error);
nothing an agent sends can crash the connection or the hub.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from starlette.websockets import WebSocket, WebSocketDisconnect, WebSocketState

from lineup.hub import app_tools, commands
from lineup.hub.actors import AgentIdentity
from lineup.hub.commands import Recorded
from lineup.hub.credentials import authenticate_agent
from lineup.hub.downlink import CONNECTION_NEWS, concerns, for_agent
from lineup.hub.follow import Follower
from lineup.hub.presence import AgentLink
from lineup.hub.recorder import Writing
from lineup.hub.state import HubState
from lineup.protocol import events as ev
from lineup.protocol.codec import (
    Decoded,
    Ignored,
    Rejected,
    decode_frame,
    encode,
    refuse_binary,
)
from lineup.protocol.envelope import Envelope, fingerprint, ms_to_datetime
from lineup.protocol.errors import (
    Forbidden,
    InvalidArgument,
    LineupError,
    Unauthenticated,
    UnknownResult,
)
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.ids import new_id
from lineup.store import StoredEvent

log = logging.getLogger("lineup.hub.agents")

CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_BAD_HANDSHAKE = 4400
CLOSE_REPLACED = 4409
CLOSE_SILENT = 4408
CLOSE_REVOKED = 4410
HELLO_TIMEOUT = 10.0
IN_FLIGHT = 256


class AgentConnection:
    def __init__(self, hub: HubState, socket: WebSocket, identity: AgentIdentity) -> None:
        self.hub = hub
        self.socket = socket
        self.identity = identity
        self._send_lock = asyncio.Lock()
        self.link: AgentLink | None = None
        self.connected_sequence: int | None = None  # our agent.connected
        self._conversations: dict[str, str | None] = {}

    async def send_text(self, text: str) -> None:
        async with self._send_lock:
            await self.socket.send_text(text)

    async def answer(self, frame: Ack | ErrorFrame) -> None:
        if isinstance(frame, ErrorFrame):  # errors by code
            self.hub.metrics.error(str(frame.code), "agent_ws")
        await self.send_text(encode(frame))

    async def close(self, code: int, reason: str) -> None:
        if self.socket.application_state is WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await self.socket.close(code, reason)

    # --- handshake ---------------------------------------------------------------------

    async def handshake(self) -> ev.AgentHello | None:
        """The first frame must be the agent's hello; any other first frame is answered with
        an error naming its id, like every frame, before the connection closes."""
        try:
            message = await asyncio.wait_for(self.socket.receive(), HELLO_TIMEOUT)
        except TimeoutError:
            await self._refuse(InvalidArgument("Send agent.hello first."), CLOSE_BAD_HANDSHAKE)
            return None
        if message["type"] == "websocket.disconnect":
            raise WebSocketDisconnect(message.get("code", 1000))
        raw = message.get("text")
        result = refuse_binary() if raw is None else decode_frame(raw, ev.Sender.AGENT)
        if isinstance(result, Rejected):
            await self.answer(result.error)
            await self.close(CLOSE_BAD_HANDSHAKE, "bad hello")
            return None
        if not isinstance(result, Decoded) or result.envelope.type != "agent.hello":
            await self._refuse(
                InvalidArgument("The first frame must be agent.hello."),
                CLOSE_BAD_HANDSHAKE,
                result.envelope.id,
            )
            return None
        if result.envelope.workspace_id != self.identity.workspace_id:
            await self._refuse(
                Forbidden("This credential belongs to another workspace."),
                CLOSE_FORBIDDEN,
                result.envelope.id,
            )
            return None
        hello: ev.AgentHello = result.payload
        identity = self.identity

        def connect(w: Writing) -> Recorded:
            done = commands.agent_connected(w, identity, hello)
            # this node holds the agent, in the same transaction
            self.hub.cluster.link(w, identity.agent_id, identity.workspace_id)
            return done

        recorded = await self.hub.recorder.run(connect, lane=identity.actor)
        self.connected_sequence = recorded.sequence
        await self.answer(Ack(id=result.envelope.id, sequence=recorded.sequence))
        return hello

    async def _refuse(self, error: LineupError, code: int, envelope_id: str | None = None) -> None:
        await self.answer(ErrorFrame.from_error(error, envelope_id))
        await self.close(code, error.message[:120])

    async def welcome(self) -> int:
        latest = await self.hub.store.last_sequence(self.identity.workspace_id)
        settings = self.hub.settings
        frame = Envelope(
            id=new_id("evt"),
            type="agent.welcome",
            occurred_at=ms_to_datetime(self.hub.clock()),
            workspace_id=self.identity.workspace_id,
            payload=ev.AgentWelcome(
                agent_id=self.identity.agent_id,
                workspace_id=self.identity.workspace_id,
                heartbeat_interval_ms=int(settings.heartbeat_interval * 1000),
                latest_sequence=latest,
            ).wire(),
        )
        await self.send_text(encode(frame))
        return latest

    async def resync_if_needed(self, after: int, latest: int) -> int:
        first = await self.hub.store.first_sequence(self.identity.workspace_id)
        if first is None or after + 1 >= first or after >= latest:
            return after
        frame = Envelope(
            id=new_id("evt"),
            type="system.resync_required",
            occurred_at=ms_to_datetime(self.hub.clock()),
            workspace_id=self.identity.workspace_id,
            payload=ev.SystemResyncRequired(
                reason="The events after your lastSequence are no longer kept.",
                earliest_sequence=first,
                latest_sequence=latest,
            ).wire(),
        )
        await self.send_text(encode(frame))
        return latest

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
                await self.close(CLOSE_REVOKED, "revoked")
            elif event.type == "agent.connected":
                await self.close(CLOSE_REPLACED, "replaced by a newer connection")
            elif event.payload.get("status") == "offline":
                await self.close(CLOSE_SILENT, "recorded offline")
            return False
        frame = for_agent(event, self.identity.agent_id)
        if frame is None:
            return False
        await self.send_text(encode(frame))
        return True

    # --- uplink ------------------------------------------------------------------------

    async def receive_loop(self) -> None:
        """Read frames and handle them pipelined: each is handed to the writer in arrival
        order (so the log keeps the agent's order) without waiting for the previous commit;
        at most ``IN_FLIGHT`` are unanswered at once."""
        window = asyncio.Semaphore(IN_FLIGHT)
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
                window.release()
                if link is not None:
                    link.in_flight -= 1

        try:
            while True:
                raw = await self.socket.receive()
                if raw["type"] == "websocket.disconnect":
                    return
                data = raw.get("text")
                if data is None:
                    data = raw.get("bytes") or b""
                self.hub.presence.beat(self.identity.agent_id, self.hub.clock())
                if link is not None:  # not silent while the hub works on what it sent
                    link.in_flight += 1
                await window.acquire()
                task = asyncio.create_task(handle(data))
                pending.add(task)
                task.add_done_callback(pending.discard)
        finally:
            if pending:
                await asyncio.wait(pending, timeout=5)

    async def handle_frame(self, raw: str | bytes) -> None:
        result = refuse_binary() if isinstance(raw, bytes) else decode_frame(raw, ev.Sender.AGENT)
        if isinstance(result, Rejected):
            await self.answer(result.error)
            return
        if isinstance(result, Ignored):
            await self.answer(Ack(id=result.envelope.id, ignored=True, warnings=[result.warning]))
            return
        envelope = result.envelope
        warnings = [f"unknown field {f!r} ignored" for f in result.unknown_fields] or None
        try:
            if envelope.workspace_id != self.identity.workspace_id:
                raise Forbidden("Events may only be sent to the agent's own workspace.")
            recorded = await self.dispatch(envelope, result.payload)
        except LineupError as exc:
            await self.answer(ErrorFrame.from_error(exc, envelope.id))
            return
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
            error = UnknownResult("The hub failed to process this event; its outcome is unknown.")
            await self.answer(ErrorFrame.from_error(error, envelope.id))
            return
        await self.answer(
            Ack(
                id=envelope.id,
                sequence=recorded.sequence,
                duplicate=recorded.duplicate,
                warnings=warnings,
            )
        )

    async def _conversation_of(self, task_id: str) -> str | None:
        """The task's conversation, for streamed text that named only the task (cached)."""
        if task_id not in self._conversations:
            ws, agent_id = self.identity.workspace_id, self.identity.agent_id
            task = await self.hub.store.read(lambda r: r.get_task(ws, task_id))
            mine = task is not None and task.target_agent_id == agent_id
            self._conversations[task_id] = task.conversation_id if mine and task else None
        return self._conversations[task_id]

    async def dispatch(self, envelope: Envelope, payload: Any) -> Recorded:
        kind = envelope.type
        agent = self.identity
        if kind in ("agent.heartbeat", "agent.hello"):
            return Recorded(None)
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
            await self.send_text(encode(answer))
            return Recorded(None)
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

        return await self.hub.recorder.run(job, lane=agent.actor)


Handler = Callable[[Writing, AgentIdentity, Envelope, Any], Recorded]

_HANDLERS: dict[str, Handler] = {
    "task.accepted": lambda w, a, e, p: commands.task_accepted(w, a, e.id, e.task_id, p),
    "task.status_changed": lambda w, a, e, p: commands.task_status_changed(
        w, a, e.id, e.task_id, p
    ),
    "task.child_created": lambda w, a, e, p: commands.task_child_created(w, a, e.id, p),
    "interaction.requested": lambda w, a, e, p: commands.interaction_requested(
        w, a, e.id, e.task_id, e.conversation_id, p
    ),
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
}


async def serve_agent(hub: HubState, socket: WebSocket) -> None:
    """The whole life of one agent connection."""
    await socket.accept()
    authorization = socket.headers.get("authorization", "")
    try:
        identity = await authenticate_agent(hub, authorization)
    except Unauthenticated as exc:
        await socket.send_text(encode(ErrorFrame.from_error(exc)))
        await socket.close(CLOSE_UNAUTHENTICATED, "unauthenticated")
        return
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
            await previous.close(CLOSE_REPLACED, "replaced by a newer connection")
        latest = await connection.welcome()
        after = await connection.resync_if_needed(hello.last_sequence or 0, latest)
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
            )
        except LineupError:
            log.exception("could not record agent %s offline", link.agent_id)

    await asyncio.shield(asyncio.ensure_future(record()))
