"""One LAP session as a state machine with no I/O: the agent's side and the hub's side.

The handshake — ``agent.hello`` → ack → ``agent.welcome`` → (``system.resync_required``) →
replay → live — and the close codes were once written in the hub's gateway, in the SDK and in
the SDK's test hub, each a little differently. Here they are written once, in the manner of
python-websockets' protocol objects: the owner of the socket feeds in what arrived
(:meth:`HubSession.receive_frame`, :meth:`AgentSession.receive_frame`, ``receive_close``),
passes the time where a frame needs it, gets back :data:`Event` values for its application,
and sends what :meth:`frames_to_send` / :meth:`data_to_send` hold — draining them right after
the call that queued them, before its next ``await``, so each caller sends its own frames.
Nothing here reads a clock, opens a socket or waits.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import Enum, IntEnum
from typing import Any

from lineup.protocol.codec import (
    Answer,
    Decoded,
    Ignored,
    Rejected,
    decode_answer,
    decode_frame,
    encode,
    refuse_binary,
)
from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import ErrorCode, Forbidden, InvalidArgument, LineupError
from lineup.protocol.events import (
    AgentHeartbeat,
    AgentHello,
    AgentWelcome,
    Sender,
    SystemResyncRequired,
)
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.ids import new_id


class CloseCode(IntEnum):
    """Every WebSocket close code a hub sends (docs/protocol.md §5.2 and §7.9).

    The 44xx codes are 4000 plus the HTTP status of the matching error code, so a peer can
    tell a refusal (do not retry) from a reason to reconnect.
    """

    NORMAL = 1000
    """The peer closed on purpose (an agent stopping)."""
    HUB_RESTARTING = 1012
    """The hub is shutting down or restarting: reconnect."""
    BAD_HANDSHAKE = 4400
    """The first frame was not a readable ``agent.hello`` (or none came in time)."""
    UNAUTHENTICATED = 4401
    """The credential or session is not (or no longer) valid: an error frame says why first;
    do not retry."""
    FORBIDDEN = 4403
    """The hello named another workspace than the credential's, or a person is not a member
    of the workspace (or the page's origin is not allowed)."""
    SILENT = 4408
    """Two heartbeat intervals passed with no frame, or the agent was recorded offline while
    connected: reconnect."""
    REPLACED = 4409
    """A newer connection of the same agent took over."""
    REVOKED = 4410
    """The agent's credential was revoked."""


REFUSALS: Mapping[int, ErrorCode] = {
    CloseCode.UNAUTHENTICATED: ErrorCode.UNAUTHENTICATED,
    CloseCode.FORBIDDEN: ErrorCode.FORBIDDEN,
}
"""Close codes that refuse an agent for good, with the error code they stand for."""

HELLO_TIMEOUT = 10.0
"""Seconds the hub waits for the first frame before it closes with 4400."""

_RESYNC_REASON = "The log was compacted: the events after your lastSequence are not all kept."


class SessionState(Enum):
    """Where a session is. The hub starts in ``AWAITING_HELLO``, the agent in ``CONNECTING``."""

    CONNECTING = "connecting"
    AWAITING_HELLO = "awaiting_hello"
    ACCEPTING = "accepting"
    AWAITING_WELCOME = "awaiting_welcome"
    OPEN = "open"
    CLOSING = "closing"
    CLOSED = "closed"


Frame = Envelope | Ack | ErrorFrame


@dataclass(frozen=True, slots=True)
class Close:
    """The session wants the connection closed with this code (reason at most 120 chars)."""

    code: int
    reason: str


# --- events for the application ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HelloReceived:
    """Hub side: a valid hello. Record the connection, then :meth:`HubSession.accept`."""

    envelope: Envelope
    hello: AgentHello


@dataclass(frozen=True, slots=True)
class EventReceived:
    """A valid event in an open session: the hub handles it and answers; the agent handles
    a downlink event. ``warnings`` name fields this version ignored."""

    envelope: Envelope
    payload: Any
    unknown_fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class FrameRefused:
    """A frame that was answered with an error at once (unreadable, of another workspace,
    or breaking the handshake); the error is already queued to send."""

    error: ErrorFrame


@dataclass(frozen=True, slots=True)
class FrameIgnored:
    """An envelope of a type this version does not know (already acked as ignored on the
    hub's side)."""

    envelope: Envelope
    warning: str


@dataclass(frozen=True, slots=True)
class AnswerReceived:
    """Agent side: the hub's ack or error for a frame the agent sent (not the hello)."""

    frame: Ack | ErrorFrame


@dataclass(frozen=True, slots=True)
class HelloAcknowledged:
    """Agent side: the hub accepted the hello; the welcome comes next."""

    ack: Ack


@dataclass(frozen=True, slots=True)
class HelloRefused:
    """Agent side: the hub answered the hello with an error (``retryable`` says whether to
    try again)."""

    error: ErrorFrame


@dataclass(frozen=True, slots=True)
class Welcomed:
    """Agent side: the session is open; downlink events follow."""

    welcome: AgentWelcome


@dataclass(frozen=True, slots=True)
class ResyncRequired:
    """Agent side: the log after the agent's cursor was compacted; the hub replays what it
    kept for the agent after ``resync.resume_after`` (absent: nothing, go on after
    ``latest_sequence``)."""

    resync: SystemResyncRequired


@dataclass(frozen=True, slots=True)
class Refused:
    """Agent side: the hub refused the agent itself (``unauthenticated``/``forbidden``),
    either by an error frame naming no event or by a refusal close code."""

    code: ErrorCode
    message: str
    details: dict[str, Any] | None = None
    close_code: int | None = None


@dataclass(frozen=True, slots=True)
class Closed:
    """The connection ended with ``code`` (None: no close frame)."""

    code: int | None
    reason: str


Event = (
    HelloReceived
    | EventReceived
    | FrameRefused
    | FrameIgnored
    | AnswerReceived
    | HelloAcknowledged
    | HelloRefused
    | Welcomed
    | ResyncRequired
    | Refused
    | Closed
)


class _Session:
    """What both sides share: the outgoing queue, the state and the close."""

    def __init__(self, workspace_id: str, state: SessionState) -> None:
        self.workspace_id = workspace_id
        self.state = state
        self.close_code: int | None = None
        self.close_reason = ""
        self._outgoing: list[Frame] = []
        self._close: Close | None = None

    def frames_to_send(self) -> list[Frame]:
        """The frames queued since the last call, oldest first."""
        frames, self._outgoing = self._outgoing, []
        return frames

    def data_to_send(self) -> list[str]:
        """As :meth:`frames_to_send`, encoded for the wire."""
        return [encode(frame) for frame in self.frames_to_send()]

    def close_to_send(self) -> Close | None:
        """The close the session asked for, once (then the socket is the owner's to close)."""
        close, self._close = self._close, None
        return close

    def close(self, code: int, reason: str) -> None:
        """Ask for the connection to be closed (after the queued frames are sent)."""
        if self.state in (SessionState.CLOSING, SessionState.CLOSED):
            return
        self.state = SessionState.CLOSING
        self._close = Close(int(code), reason[:120])

    def receive_close(self, code: int | None, reason: str = "") -> list[Event]:
        """The connection ended (``code`` None when no close frame came)."""
        self.state = SessionState.CLOSED
        self.close_code, self.close_reason = code, reason
        return [Closed(code, reason)]

    def _envelope(
        self, kind: str, payload: dict[str, Any], now: datetime, event_id: str
    ) -> Envelope:
        return Envelope(
            id=event_id,
            type=kind,
            occurred_at=now,
            workspace_id=self.workspace_id,
            payload=payload,
        )


class HubSession(_Session):
    """The hub's side of one agent's connection, for the agent's own workspace.

    ``receive_frame`` before the hello checks the handshake rules (and closes with 4400 or
    4403 when they are broken); after :meth:`accept` it answers what the codec refuses or
    ignores, refuses events naming another workspace, and hands on the rest.
    """

    def __init__(self, workspace_id: str, *, ids: Callable[[str], str] = new_id) -> None:
        super().__init__(workspace_id, SessionState.AWAITING_HELLO)
        self._ids = ids
        self._hello_id = ""

    def receive_frame(self, raw: str | bytes) -> list[Event]:
        """One frame from the agent: text, or bytes (always refused)."""
        result = refuse_binary() if isinstance(raw, bytes) else decode_frame(raw, Sender.AGENT)
        if self.state is SessionState.AWAITING_HELLO:
            return self._first_frame(result)
        if self.state is not SessionState.OPEN:
            return []
        if isinstance(result, Rejected):
            self._outgoing.append(result.error)
            return [FrameRefused(result.error)]
        if isinstance(result, Ignored):
            self._outgoing.append(
                Ack(id=result.envelope.id, ignored=True, warnings=[result.warning])
            )
            return [FrameIgnored(result.envelope, result.warning)]
        if result.envelope.workspace_id != self.workspace_id:
            error = Forbidden("Events may only be sent to the agent's own workspace.")
            return [self._refuse(error, result.envelope.id)]
        return [EventReceived(result.envelope, result.payload, result.unknown_fields)]

    def _first_frame(self, result: Decoded | Ignored | Rejected) -> list[Event]:
        if isinstance(result, Rejected):
            self._outgoing.append(result.error)
            self.close(CloseCode.BAD_HANDSHAKE, "bad hello")
            return [FrameRefused(result.error)]
        envelope = result.envelope
        if not isinstance(result, Decoded) or envelope.type != "agent.hello":
            wrong = InvalidArgument("The first frame must be agent.hello.")
            refused = self._refuse(wrong, envelope.id)
            self.close(CloseCode.BAD_HANDSHAKE, wrong.message)
            return [refused]
        if envelope.workspace_id != self.workspace_id:
            error = Forbidden("This credential belongs to another workspace.")
            refused = self._refuse(error, envelope.id)
            self.close(CloseCode.FORBIDDEN, error.message)
            return [refused]
        self.state = SessionState.ACCEPTING
        self._hello_id = envelope.id
        return [HelloReceived(envelope, result.payload)]

    def hello_timed_out(self) -> None:
        """No first frame within :data:`HELLO_TIMEOUT`: an error, then 4400."""
        if self.state is not SessionState.AWAITING_HELLO:
            return
        error = InvalidArgument("Send agent.hello first.")
        self._refuse(error, None)
        self.close(CloseCode.BAD_HANDSHAKE, error.message)

    def acknowledge_hello(self, sequence: int | None) -> None:
        """The hello is recorded (at ``sequence``, the agent's ``agent.connected``)."""
        if self.state is not SessionState.ACCEPTING:
            raise RuntimeError(f"No hello to acknowledge in state {self.state.value}.")
        self._outgoing.append(Ack(id=self._hello_id, sequence=sequence))

    def accept(
        self,
        *,
        agent_id: str,
        heartbeat_interval_ms: int,
        last_sequence: int,
        latest_sequence: int,
        earliest_sequence: int | None,
        now: datetime,
        name: str | None = None,
        awaiting_confirmation: bool = False,
        settings: dict[str, Any] | None = None,
    ) -> int:
        """Welcome the agent and open the session; returns the sequence to replay after.

        ``earliest_sequence`` is the log's horizon: from it on the log is whole, and before
        it only what the hub still keeps for someone. When the agent's next event is before
        it, ``system.resync_required`` follows the welcome, and the replay still goes on
        after the agent's ``last_sequence`` (``resumeAfter``): what is kept of its downlink
        (its open tasks, its pending answers, the people's messages it has not had), then
        everything from the horizon.
        """
        if self.state is not SessionState.ACCEPTING:
            raise RuntimeError(f"Cannot welcome in state {self.state.value}.")
        welcome = AgentWelcome(
            agent_id=agent_id,
            workspace_id=self.workspace_id,
            heartbeat_interval_ms=heartbeat_interval_ms,
            latest_sequence=latest_sequence,
            name=name,
            awaiting_confirmation=awaiting_confirmation,
            settings=settings,
        )
        self._outgoing.append(
            self._envelope("agent.welcome", welcome.wire(), now, self._ids("evt"))
        )
        self.state = SessionState.OPEN
        after = last_sequence
        pruned = earliest_sequence is not None and after + 1 < earliest_sequence
        if pruned and after < latest_sequence:
            resync = SystemResyncRequired(
                reason=_RESYNC_REASON,
                earliest_sequence=earliest_sequence,
                latest_sequence=latest_sequence,
                resume_after=after,
            )
            self._outgoing.append(
                self._envelope("system.resync_required", resync.wire(), now, self._ids("evt"))
            )
        return after

    def answer(
        self,
        envelope_id: str,
        *,
        sequence: int | None = None,
        duplicate: bool = False,
        warnings: list[str] | None = None,
    ) -> None:
        """The ack for an event the application handled."""
        self._outgoing.append(
            Ack(id=envelope_id, sequence=sequence, duplicate=duplicate, warnings=warnings)
        )

    def fail(self, envelope_id: str | None, error: LineupError) -> None:
        """The error for an event the application refused."""
        self._refuse(error, envelope_id)

    def send_event(self, envelope: Envelope) -> None:
        """A downlink event (a replayed or live one, or an answer such as ``tool.list``)."""
        self._outgoing.append(envelope)

    def _refuse(self, error: LineupError, envelope_id: str | None) -> FrameRefused:
        frame = ErrorFrame.from_error(error, envelope_id)
        self._outgoing.append(frame)
        return FrameRefused(frame)


class AgentSession(_Session):
    """The agent's side of one connection: says hello with its cursor, expects the ack and
    the welcome, then hands on answers and downlink events.

    An error naming no event with ``unauthenticated``/``forbidden``, or a close with
    4401/4403, is a :class:`Refused` — the agent must not reconnect with that credential.
    """

    def __init__(self, workspace_id: str, *, ids: Callable[[str], str] = new_id) -> None:
        super().__init__(workspace_id, SessionState.CONNECTING)
        self._ids = ids
        self._hello_id: str | None = None
        self.welcome: AgentWelcome | None = None
        self.last_refusal: ErrorFrame | None = None

    def say_hello(self, hello: AgentHello, now: datetime) -> Envelope:
        """Queue ``agent.hello``; the session then awaits its ack and the welcome."""
        if self.state is not SessionState.CONNECTING:
            raise RuntimeError(f"Cannot say hello in state {self.state.value}.")
        envelope = self._envelope(
            "agent.hello",
            hello.model_dump(mode="json", by_alias=True, exclude_none=True),
            now,
            self._ids("evt"),
        )
        self._hello_id = envelope.id
        self._outgoing.append(envelope)
        self.state = SessionState.AWAITING_WELCOME
        return envelope

    def heartbeat(self, now: datetime) -> None:
        """Queue ``agent.heartbeat`` (any frame counts; this one says nothing else)."""
        payload = AgentHeartbeat().model_dump(mode="json", by_alias=True, exclude_none=True)
        self._outgoing.append(self._envelope("agent.heartbeat", payload, now, self._ids("evt")))

    def receive_frame(self, raw: str | bytes) -> list[Event]:
        """One frame from the hub."""
        result = decode_answer(raw)
        if isinstance(result, Answer):
            return self._answer(result.frame)
        if isinstance(result, Rejected):
            return [FrameRefused(result.error)]
        if isinstance(result, Ignored):
            return [FrameIgnored(result.envelope, result.warning)]
        payload = result.payload
        if isinstance(payload, AgentWelcome):
            if self.state is not SessionState.AWAITING_WELCOME:
                return []
            self.welcome = payload
            self.state = SessionState.OPEN
            return [Welcomed(payload)]
        if isinstance(payload, SystemResyncRequired):
            return [ResyncRequired(payload)]
        return [EventReceived(result.envelope, payload, result.unknown_fields)]

    def _answer(self, frame: Ack | ErrorFrame) -> list[Event]:
        if frame.id is not None and frame.id == self._hello_id:
            self._hello_id = None
            if isinstance(frame, ErrorFrame):
                return [HelloRefused(frame)]
            return [HelloAcknowledged(frame)]
        if isinstance(frame, ErrorFrame) and frame.id is None:
            self.last_refusal = frame
            if frame.code in REFUSALS.values():
                return [Refused(frame.code, frame.message, frame.details)]
        return [AnswerReceived(frame)]

    def receive_close(self, code: int | None, reason: str = "") -> list[Event]:
        """The connection ended; a refusal code becomes :class:`Refused`, carrying the
        hub's last error naming no event when there was one (it says why)."""
        events = super().receive_close(code, reason)
        if code is None or code not in REFUSALS:
            return events
        last = self.last_refusal
        if last is not None and last.code in REFUSALS.values():
            return [Refused(last.code, last.message, last.details, close_code=code), *events]
        message = reason or "The hub closed the connection, refusing this agent."
        return [Refused(REFUSALS[code], message, close_code=code), *events]


__all__ = [
    "HELLO_TIMEOUT",
    "REFUSALS",
    "AgentSession",
    "AnswerReceived",
    "Close",
    "CloseCode",
    "Closed",
    "Event",
    "EventReceived",
    "Frame",
    "FrameIgnored",
    "FrameRefused",
    "HelloAcknowledged",
    "HelloReceived",
    "HelloRefused",
    "HubSession",
    "Refused",
    "ResyncRequired",
    "SessionState",
    "Welcomed",
]
