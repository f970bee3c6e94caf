"""The app's frame for a recorded event, written straight out, is byte for byte the
text of the envelope the models build, whatever the event holds."""

from __future__ import annotations

import json
import random

import pytest

from lineup.hub.client_gateway import encode_event
from lineup.hub.downlink import for_person
from lineup.protocol.times import format_timestamp, ms_to_datetime
from lineup.store import StoredEvent


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
