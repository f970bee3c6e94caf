"""The LAP session, both sides, with no socket, no sleep and no clock: frames in, events and
frames out."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from lineup.protocol import decode_answer, decode_frame, encode
from lineup.protocol.codec import Decoded
from lineup.protocol.envelope import Envelope
from lineup.protocol.errors import ErrorCode, InvalidArgument
from lineup.protocol.events import AgentHello, Sender
from lineup.protocol.frames import Ack, ErrorFrame
from lineup.protocol.session import (
    REFUSALS,
    AgentSession,
    AnswerReceived,
    Close,
    CloseCode,
    Closed,
    EventReceived,
    FrameIgnored,
    FrameRefused,
    HelloAcknowledged,
    HelloReceived,
    HelloRefused,
    HubSession,
    Refused,
    ResyncRequired,
    SessionState,
    Welcomed,
)

WS = "ws_1"
NOW = datetime(2026, 7, 24, 12, 0, tzinfo=UTC)
HELLO = AgentHello(agent_version="1.0", runtime="python", last_sequence=3)


def ids() -> Any:
    counter = itertools.count(1)
    return lambda prefix: f"{prefix}_{next(counter)}"


def frame(kind: str, payload: dict[str, Any], *, workspace: str = WS, **extra: Any) -> str:
    return json.dumps(
        {
            "id": extra.pop("id", "evt_x"),
            "type": kind,
            "version": "0.1",
            "occurredAt": "2026-07-24T12:00:00Z",
            "workspaceId": workspace,
            "payload": payload,
            **extra,
        }
    )


def open_hub(**accept: Any) -> tuple[HubSession, int]:
    hub = HubSession(WS, ids=ids())
    agent = AgentSession(WS, ids=ids())
    agent.say_hello(HELLO, NOW)
    (hello,) = agent.data_to_send()
    (received,) = hub.receive_frame(hello)
    assert isinstance(received, HelloReceived)
    hub.acknowledge_hello(7)
    options: dict[str, Any] = {
        "agent_id": "agent_1",
        "heartbeat_interval_ms": 25_000,
        "last_sequence": received.hello.last_sequence or 0,
        "latest_sequence": 9,
        "earliest_sequence": 1,
        "now": NOW,
    }
    after = hub.accept(**(options | accept))
    return hub, after


# --- the close codes ---------------------------------------------------------------------


def test_close_codes_keep_their_wire_values() -> None:
    assert {c.name: c.value for c in CloseCode} == {
        "NORMAL": 1000,
        "HUB_RESTARTING": 1012,
        "BAD_HANDSHAKE": 4400,
        "UNAUTHENTICATED": 4401,
        "FORBIDDEN": 4403,
        "SILENT": 4408,
        "REPLACED": 4409,
        "REVOKED": 4410,
    }
    assert REFUSALS == {4401: ErrorCode.UNAUTHENTICATED, 4403: ErrorCode.FORBIDDEN}


def test_the_protocol_document_lists_every_close_code() -> None:
    from pathlib import Path

    text = (Path(__file__).parents[3] / "docs" / "protocol.md").read_text()
    for code in CloseCode:
        if code is not CloseCode.NORMAL:
            assert str(code.value) in text, code


# --- the hub's side ----------------------------------------------------------------------


def test_the_hub_acks_the_hello_then_welcomes_and_replays_after_the_agents_cursor() -> None:
    hub, after = open_hub()
    assert hub.state is SessionState.OPEN and after == 3
    ack, welcome = hub.frames_to_send()
    assert isinstance(ack, Ack) and ack.sequence == 7
    assert isinstance(welcome, Envelope) and welcome.type == "agent.welcome"
    assert welcome.payload == {
        "agentId": "agent_1",
        "workspaceId": WS,
        "heartbeatIntervalMs": 25_000,
        "latestSequence": 9,
        "awaitingConfirmation": False,
    }
    assert welcome.occurred_at == NOW
    assert hub.close_to_send() is None


def test_a_compacted_log_says_resync_and_replays_what_is_kept_after_the_agents_cursor() -> None:
    hub, after = open_hub(earliest_sequence=6)
    assert after == 3
    _, _, resync = hub.frames_to_send()
    assert isinstance(resync, Envelope) and resync.type == "system.resync_required"
    assert resync.payload["earliestSequence"] == 6 and resync.payload["latestSequence"] == 9
    assert resync.payload["resumeAfter"] == 3


def test_no_resync_when_the_next_event_is_still_kept_or_nothing_was_missed() -> None:
    for earliest, latest in ((4, 9), (None, 9), (6, 3)):
        hub, after = open_hub(earliest_sequence=earliest, latest_sequence=latest)
        assert after == 3
        assert [f.type for f in hub.frames_to_send()] == ["ack", "agent.welcome"]


def test_a_first_frame_other_than_hello_is_answered_by_its_id_then_closed_4400() -> None:
    hub = HubSession(WS)
    (refused,) = hub.receive_frame(frame("agent.heartbeat", {}, id="evt_first"))
    assert isinstance(refused, FrameRefused)
    (error,) = hub.frames_to_send()
    assert isinstance(error, ErrorFrame)
    assert error.id == "evt_first" and error.code is ErrorCode.INVALID_ARGUMENT
    assert hub.close_to_send() == Close(4400, "The first frame must be agent.hello.")
    assert hub.state is SessionState.CLOSING
    assert hub.receive_frame(frame("agent.heartbeat", {})) == []


def test_a_hello_for_another_workspace_is_refused_4403() -> None:
    hub = HubSession(WS)
    hub.receive_frame(frame("agent.hello", {"agentVersion": "1", "runtime": "py"}, workspace="x"))
    (error,) = hub.frames_to_send()
    assert isinstance(error, ErrorFrame) and error.code is ErrorCode.FORBIDDEN
    close = hub.close_to_send()
    assert close is not None and close.code == CloseCode.FORBIDDEN


def test_an_unreadable_first_frame_gets_an_error_naming_no_id_then_4400() -> None:
    hub = HubSession(WS)
    hub.receive_frame(b"\x00binary")
    (error,) = hub.frames_to_send()
    assert isinstance(error, ErrorFrame) and error.id is None
    assert hub.close_to_send() == Close(4400, "bad hello")


def test_silence_before_the_hello_closes_4400_with_an_error() -> None:
    hub = HubSession(WS)
    hub.hello_timed_out()
    (error,) = hub.frames_to_send()
    assert isinstance(error, ErrorFrame) and error.message == "Send agent.hello first."
    assert hub.close_to_send() == Close(4400, "Send agent.hello first.")
    hub.hello_timed_out()
    assert hub.frames_to_send() == []


def test_an_open_hub_session_hands_on_events_and_answers_what_it_refuses() -> None:
    hub, _ = open_hub()
    hub.frames_to_send()
    (event,) = hub.receive_frame(frame("agent.heartbeat", {}, id="evt_b"))
    assert isinstance(event, EventReceived) and event.envelope.id == "evt_b"
    assert hub.frames_to_send() == []
    hub.answer("evt_b", sequence=10, warnings=["w"])
    assert hub.frames_to_send() == [Ack(id="evt_b", sequence=10, warnings=["w"])]

    (ignored,) = hub.receive_frame(frame("something.new", {}, id="evt_n"))
    assert isinstance(ignored, FrameIgnored)
    (ack,) = hub.frames_to_send()
    assert isinstance(ack, Ack) and ack.ignored and ack.warnings == [ignored.warning]

    (foreign,) = hub.receive_frame(frame("agent.heartbeat", {}, workspace="other", id="e2"))
    assert isinstance(foreign, FrameRefused) and foreign.error.code is ErrorCode.FORBIDDEN
    assert hub.frames_to_send() == [foreign.error]

    hub.fail("evt_c", InvalidArgument("no"))
    (error,) = hub.frames_to_send()
    assert isinstance(error, ErrorFrame) and error.id == "evt_c"


def test_a_hub_session_closes_once() -> None:
    hub, _ = open_hub()
    hub.close(CloseCode.REPLACED, "replaced by a newer connection")
    hub.close(CloseCode.SILENT, "recorded offline")
    assert hub.close_to_send() == Close(4409, "replaced by a newer connection")
    assert hub.close_to_send() is None
    assert hub.receive_close(1000) == [Closed(1000, "")]
    assert hub.state is SessionState.CLOSED


# --- the agent's side --------------------------------------------------------------------


def handshake() -> tuple[AgentSession, HubSession]:
    agent = AgentSession(WS, ids=ids())
    hub = HubSession(WS, ids=ids())
    agent.say_hello(HELLO, NOW)
    for data in agent.data_to_send():
        hub.receive_frame(data)
    return agent, hub


def test_the_agent_says_hello_with_its_cursor() -> None:
    agent = AgentSession(WS, ids=ids())
    envelope = agent.say_hello(HELLO, NOW)
    (sent,) = agent.data_to_send()
    decoded = decode_frame(sent, Sender.AGENT)
    assert isinstance(decoded, Decoded) and decoded.envelope == envelope
    assert decoded.payload.last_sequence == 3
    assert agent.state is SessionState.AWAITING_WELCOME


def test_the_agent_is_open_once_welcomed() -> None:
    agent, hub = handshake()
    hub.acknowledge_hello(7)
    hub.accept(
        agent_id="agent_1",
        heartbeat_interval_ms=25_000,
        last_sequence=3,
        latest_sequence=9,
        earliest_sequence=6,
        now=NOW,
    )
    events = [e for data in hub.data_to_send() for e in agent.receive_frame(data)]
    assert [type(e) for e in events] == [HelloAcknowledged, Welcomed, ResyncRequired]
    assert agent.state is SessionState.OPEN
    assert agent.welcome is not None and agent.welcome.heartbeat_interval_ms == 25_000


def test_a_refused_hello_is_told_with_its_error() -> None:
    agent, _ = handshake()
    hello_id = agent._hello_id
    error = ErrorFrame(id=hello_id, code=ErrorCode.UNAVAILABLE, message="later", retryable=True)
    (event,) = agent.receive_frame(encode(error))
    assert event == HelloRefused(error)


def test_answers_and_downlink_events_reach_the_agent() -> None:
    agent, _ = handshake()
    (answer,) = agent.receive_frame(encode(Ack(id="evt_9", sequence=4)))
    assert answer == AnswerReceived(Ack(id="evt_9", sequence=4))
    (event,) = agent.receive_frame(frame("task.cancel_requested", {"taskId": "task_1"}, sequence=5))
    assert isinstance(event, EventReceived) and event.envelope.sequence == 5
    (odd,) = agent.receive_frame("{not json")
    assert isinstance(odd, FrameRefused)


def test_an_error_naming_no_event_refuses_the_agent_and_the_close_carries_it() -> None:
    agent, _ = handshake()
    error = ErrorFrame(
        code=ErrorCode.UNAUTHENTICATED, message="revoked", details={"diagnostic": "LNP-AUTH"}
    )
    (refused,) = agent.receive_frame(encode(error))
    assert refused == Refused(ErrorCode.UNAUTHENTICATED, "revoked", {"diagnostic": "LNP-AUTH"})
    first, closed = agent.receive_close(4401, "unauthenticated")
    assert first == Refused(
        ErrorCode.UNAUTHENTICATED, "revoked", {"diagnostic": "LNP-AUTH"}, close_code=4401
    )
    assert closed == Closed(4401, "unauthenticated")


def test_a_refusal_close_without_an_error_frame_is_a_refusal_by_its_code() -> None:
    agent, _ = handshake()
    first, _ = agent.receive_close(4403, "moved")
    assert first == Refused(ErrorCode.FORBIDDEN, "moved", close_code=4403)
    for code in (None, 1006, CloseCode.SILENT, CloseCode.HUB_RESTARTING):
        assert [type(e) for e in AgentSession(WS).receive_close(code)] == [Closed]


def test_heartbeats_carry_the_time_given() -> None:
    agent = AgentSession(WS, ids=ids())
    agent.heartbeat(NOW)
    (beat,) = agent.frames_to_send()
    assert isinstance(beat, Envelope) and beat.type == "agent.heartbeat"
    assert beat.occurred_at == NOW


# --- garbage never breaks a session ------------------------------------------------------

texts = st.text(max_size=300) | st.binary(max_size=300)
envelope_like = st.builds(
    lambda kind, payload, workspace: frame(kind, payload, workspace=workspace),
    st.sampled_from(["agent.hello", "agent.heartbeat", "ack", "error", "x.y", "agent.welcome"]),
    st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=4),
    st.sampled_from([WS, "other"]),
)


@given(st.lists(texts | envelope_like, max_size=8))
def test_garbage_before_the_hello_is_answered_and_closes(frames: list[str | bytes]) -> None:
    hub = HubSession(WS)
    for raw in frames:
        events = hub.receive_frame(raw)
        sent = hub.frames_to_send()
        if hub.state is SessionState.ACCEPTING:
            assert isinstance(events[0], HelloReceived) and sent == []
            return
        if events:  # the first frame: exactly one answer, then a close
            assert len(sent) == 1 and isinstance(sent[0], ErrorFrame)
            close = hub.close_to_send()
            assert close is not None and close.code in (4400, 4403)
        else:
            assert sent == []


@given(st.lists(texts | envelope_like, max_size=8))
def test_every_frame_of_an_open_hub_session_gets_at_most_one_answer(
    frames: list[str | bytes],
) -> None:
    hub, _ = open_hub()
    hub.frames_to_send()
    for raw in frames:
        (event,) = hub.receive_frame(raw)
        sent = hub.frames_to_send()
        if isinstance(event, EventReceived):
            assert sent == []  # the application answers it
        else:
            assert len(sent) == 1
        assert hub.state is SessionState.OPEN


@given(st.lists(texts | envelope_like, max_size=8))
def test_an_agent_session_never_raises_on_what_the_hub_sends(frames: list[str | bytes]) -> None:
    agent, _ = handshake()
    for raw in frames:
        for event in agent.receive_frame(raw):
            assert not isinstance(event, Closed)
        assert agent.frames_to_send() == []
    assert agent.state in (SessionState.AWAITING_WELCOME, SessionState.OPEN)


def test_what_the_agent_receives_is_what_the_codec_reads() -> None:
    raw = encode(Ack(id="evt_1", sequence=2))
    (event,) = AgentSession(WS).receive_frame(raw)
    decoded = decode_answer(raw)
    assert isinstance(event, AnswerReceived) and decoded == type(decoded)(event.frame)
