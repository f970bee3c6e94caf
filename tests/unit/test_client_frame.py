"""The app's frame for a recorded event, written straight out, is byte for byte the
text of the envelope the models build, whatever the event holds; it is made once and shared
by every receiver, and a replay batches those same frames."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy.dialects import sqlite

from lineup.hub import client_gateway
from lineup.hub.client_gateway import batch_texts, encode_event, encode_raw
from lineup.hub.downlink import for_person
from lineup.protocol.codec import Decoded, decode_frame
from lineup.protocol.events import Sender
from lineup.protocol.times import format_timestamp, ms_to_datetime
from lineup.store import RawEvent, StoredEvent, event_of_raw
from lineup.store.jsontype import JSONText


def _event(**fields: object) -> StoredEvent:
    base: dict[str, object] = {
        "id": "evt_1",
        "workspace_id": "ws_1",
        "type": "task.status_changed",
        "actor": "agent:a1",
        "payload": {"taskId": "t1", "status": "running", "progress": 44},
        "occurred_at": 1_764_480_000_123,
        "sequence": 9,
        "recorded_at": 1_764_480_000_124,
    }
    return StoredEvent(**{**base, **fields})  # type: ignore[arg-type]


def _model_text(event: StoredEvent) -> str:
    return json.dumps(for_person(event), separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize(
    "event",
    [
        _event(),
        _event(conversation_id="c1", task_id="t1", correlation_id="k1"),
        _event(conversation_id="c1"),
        _event(correlation_id="k1"),
        _event(payload={}),
        _event(
            actor='user:"é"\\\n\u2028',
            payload={"text": 'héllo\t"x"\U0001f600', "n": None, "l": [1.5, -0.0, 2**70, True]},
        ),
        _event(occurred_at=0),
        _event(occurred_at=999),
        _event(occurred_at=-1),  # before 1970: the general path
        _event(occurred_at=8_000_000_000_000),  # the year 2223: the general path
    ],
)
def test_the_frame_is_the_models_text(event: StoredEvent) -> None:
    assert encode_event(event) == _model_text(event)


def test_times_are_written_as_format_timestamp_writes_them() -> None:
    rng = random.Random(7)
    times = [rng.randrange(0, 8_000_000_000_000) for _ in range(20_000)]
    times += [1_764_480_000_000 + i for i in range(2_000)]  # every millisecond of two seconds
    for ms in times:
        written = json.loads(encode_event(_event(occurred_at=ms)))["occurredAt"]
        assert written == format_timestamp(ms_to_datetime(ms)), ms


_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12
)
_json = st.recursive(
    st.none() | st.booleans() | st.integers() | _text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
    max_leaves=12,
)
_id = st.from_regex(r"\A[A-Za-z0-9_.:\-]{1,16}\Z")  # an envelope's ids
_ids = st.none() | _id


@st.composite
def _events(draw: st.DrawFn) -> StoredEvent:
    return _event(
        id=draw(_id),
        actor=draw(_text),
        payload=draw(st.dictionaries(_text, _json, max_size=5)),
        conversation_id=draw(_ids),
        task_id=draw(_ids),
        correlation_id=draw(_ids),
        sequence=draw(st.integers(1, 2**40)),
    )


def _raw(event: StoredEvent) -> RawEvent:
    """As SQLite's row holds it: the payload as the store's JSON column type wrote it."""
    text = JSONText().process_bind_param(event.payload, sqlite.dialect())
    assert text is not None
    return RawEvent(
        event.id,
        event.workspace_id,
        event.type,
        event.actor,
        text,
        event.occurred_at,
        event.conversation_id,
        event.task_id,
        event.correlation_id,
        event.sequence,
        event.recorded_at,
    )


@given(_events())
def test_the_shared_frame_is_each_receivers_own_encoding(event: StoredEvent) -> None:
    first = encode_event(event)
    # every follower of the event on the node writes the one text, made once
    assert encode_event(event) is first
    # …which is what each would have encoded for itself, and what a replay from the log writes
    assert first == _model_text(event)
    assert encode_raw(_raw(event)) == first
    assert event_of_raw(_raw(event)) == event


@given(st.lists(_events(), max_size=30), st.integers(1, 600))
def test_batches_hold_the_frames_in_order_each_as_sent_alone(
    events: list[StoredEvent], limit: int
) -> None:
    frames = [encode_event(e) for e in events]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(client_gateway, "BATCH_CHARS", limit)
        texts = batch_texts(frames, "ws_1", 1_764_480_000_000)
    batches = [json.loads(text) for text in texts]
    assert [e for b in batches for e in b["payload"]["events"]] == [json.loads(f) for f in frames]
    for batch, text in zip(batches, texts, strict=True):
        assert batch["type"] == "client.batch" and batch["workspaceId"] == "ws_1"
        inner = batch["payload"]["events"]
        assert inner, "no empty batch"
        held = sum(len(_compact(e)) for e in inner)
        assert len(inner) == 1 or held <= limit
        assert isinstance(decode_frame(text, Sender.HUB), Decoded)


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
