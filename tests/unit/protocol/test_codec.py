import json

import pytest

from lineup.protocol import CATALOG, ErrorCode, Sender, decode_answer, decode_frame, encode
from lineup.protocol.codec import MAX_DEPTH, MAX_FRAME_BYTES, Answer, Decoded, Ignored, Rejected
from lineup.protocol.envelope import Envelope
from lineup.protocol.events import TaskEndedByHub, TaskStatusChanged
from lineup.protocol.frames import Ack, ErrorFrame

from .samples import SAMPLES, envelope


def test_every_catalog_type_has_a_sample():
    assert {event_type for event_type, _ in SAMPLES} == set(CATALOG)


@pytest.mark.parametrize(("event_type", "sender"), list(SAMPLES), ids=lambda v: str(v))
def test_a_valid_frame_of_every_type_decodes_to_its_payload_model(event_type, sender):
    raw = json.dumps(envelope(event_type, SAMPLES[(event_type, sender)]))
    result = decode_frame(raw, sender)
    assert isinstance(result, Decoded), result
    assert result.envelope.type == event_type
    assert result.unknown_fields == ()


@pytest.mark.parametrize(("event_type", "sender"), list(SAMPLES), ids=lambda v: str(v))
def test_a_decoded_frame_encodes_back_to_an_equal_frame(event_type, sender):
    raw = json.dumps(envelope(event_type, SAMPLES[(event_type, sender)]))
    first = decode_frame(raw, sender)
    assert isinstance(first, Decoded)
    again = decode_frame(encode(first.envelope), sender)
    assert isinstance(again, Decoded)
    assert again.envelope == first.envelope
    assert again.payload == first.payload


def test_unknown_fields_are_tolerated_and_reported_with_their_path():
    frame = envelope("task.create", {"title": "t", "targetAgentId": "a", "colour": "red"})
    frame["traceparent"] = "00-abc"
    result = decode_frame(json.dumps(frame), Sender.USER)
    assert isinstance(result, Decoded)
    assert result.unknown_fields == ("traceparent", "payload.colour")


def test_unknown_nested_fields_are_reported_too():
    payload = dict(SAMPLES[("interaction.requested", Sender.AGENT)])
    payload = {"interaction": {**payload["interaction"], "mood": "calm"}}
    result = decode_frame(json.dumps(envelope("interaction.requested", payload)), Sender.AGENT)
    assert isinstance(result, Decoded)
    assert result.unknown_fields == ("payload.interaction.mood",)


def test_unknown_event_type_is_ignored_with_a_compatibility_warning():
    result = decode_frame(json.dumps(envelope("task.teleported", {"x": 1})), Sender.AGENT)
    assert isinstance(result, Ignored)
    assert "task.teleported" in result.warning
    assert result.envelope.id == "evt_1"


def _rejected(raw, sender=Sender.USER) -> ErrorFrame:
    result = decode_frame(raw, sender)
    assert isinstance(result, Rejected), result
    assert result.error.code is ErrorCode.INVALID_ARGUMENT
    assert result.error.retryable is False
    return result.error


def test_malformed_json_is_an_invalid_argument_saying_so():
    assert "not valid JSON" in _rejected('{"id": ').message


def test_a_frame_that_is_not_an_object_is_refused():
    assert "JSON object" in _rejected("[1, 2]").message


def test_wrong_version_is_refused_naming_the_supported_one():
    error = _rejected(json.dumps(envelope("task.create", {}, version="0.2")))
    assert "0.2" in error.message
    assert error.details == {"supported": ["0.1"]}
    assert error.id == "evt_1"


def test_missing_required_payload_field_names_the_field():
    error = _rejected(json.dumps(envelope("task.create", {"title": "t"})))
    assert "payload.targetAgentId" in error.message
    assert error.id == "evt_1"


def test_wrong_type_in_payload_names_the_field():
    frame = envelope("task.status_changed", {"status": "running", "progress": "lots"})
    error = _rejected(json.dumps(frame), Sender.AGENT)
    assert "payload.progress" in error.message


def test_progress_outside_0_to_100_is_refused():
    frame = envelope("task.status_changed", {"status": "running", "progress": 101})
    assert "payload.progress" in _rejected(json.dumps(frame), Sender.AGENT).message


def test_missing_envelope_field_is_refused():
    frame = envelope("task.create", {"title": "t", "targetAgentId": "a"})
    del frame["workspaceId"]
    assert "workspaceId" in _rejected(json.dumps(frame)).message


def test_a_naive_timestamp_is_refused():
    frame = envelope("agent.heartbeat", {}, occurredAt="2026-07-24T12:00:00")
    assert "occurredAt" in _rejected(json.dumps(frame), Sender.AGENT).message


def test_oversize_frame_is_refused_with_the_limit():
    frame = envelope("message.create", {"content": "x" * (MAX_FRAME_BYTES + 1)})
    error = _rejected(json.dumps(frame))
    assert error.details is not None
    assert error.details["limit"] == MAX_FRAME_BYTES


def test_the_size_limit_counts_utf8_bytes_not_characters():
    # under the limit in characters, over it in bytes (each "é" is two)
    frame = envelope("message.create", {"content": "é" * (MAX_FRAME_BYTES // 2 + 1)})
    raw = json.dumps(frame, ensure_ascii=False)
    assert len(raw) < MAX_FRAME_BYTES < len(raw.encode("utf-8"))
    assert _rejected(raw).details == {"size": len(raw.encode("utf-8")), "limit": MAX_FRAME_BYTES}


def test_deeply_nested_frame_is_refused():
    nested: object = 1
    for _ in range(MAX_DEPTH + 5):
        nested = [nested]
    frame = envelope("message.create", {"content": "x", "blocks": nested})
    assert "nested" in _rejected(json.dumps(frame)).message


def test_nan_is_not_json():
    raw = json.dumps(envelope("task.create", {"title": "t", "targetAgentId": "a"}))
    raw = raw.replace('"payload": {', '"payload": {"n": NaN, ')
    assert "not valid JSON" in _rejected(raw).message


def test_invalid_utf8_is_refused():
    assert "UTF-8" in _rejected(b'{"id": "\xff"}').message


def test_an_agent_may_not_send_what_only_the_hub_sends():
    frame = envelope("task.assigned", SAMPLES[("task.assigned", Sender.HUB)])
    assert "may not send" in _rejected(json.dumps(frame), Sender.AGENT).message


def test_a_person_may_not_impersonate_an_agent_hello():
    frame = envelope("agent.hello", SAMPLES[("agent.hello", Sender.AGENT)])
    assert "may not send" in _rejected(json.dumps(frame), Sender.USER).message


def test_agent_message_payload_differs_from_a_persons():
    frame = envelope("message.create", {"content": "hi", "messageId": "msg_9"})
    result = decode_frame(json.dumps(frame), Sender.AGENT)
    assert isinstance(result, Decoded)
    assert result.payload.message_id == "msg_9"


def test_answers_decode_as_acks_and_errors():
    ack = decode_answer(encode(Ack(id="evt_1", sequence=4, duplicate=True)))
    assert isinstance(ack, Answer)
    assert ack.frame == Ack(id="evt_1", sequence=4, duplicate=True)
    error = decode_answer('{"type":"error","id":null,"code":"conflict","message":"no"}')
    assert isinstance(error, Answer)
    assert isinstance(error.frame, ErrorFrame)
    assert error.frame.code is ErrorCode.CONFLICT


def test_events_from_the_hub_decode_as_events():
    frame = envelope("task.assigned", SAMPLES[("task.assigned", Sender.HUB)], sequence=5)
    result = decode_answer(json.dumps(frame))
    assert isinstance(result, Decoded)
    assert result.envelope.sequence == 5


def test_timestamps_are_written_in_utc_with_milliseconds():
    env = Envelope.model_validate(
        envelope("agent.heartbeat", {}, occurredAt="2026-07-24T14:00:00+02:00")
    )
    assert json.loads(encode(env))["occurredAt"] == "2026-07-24T12:00:00.000Z"


def test_a_nul_character_is_refused_anywhere_in_the_frame():
    frame = envelope("message.create", {"content": "a\u0000b"})
    assert "NUL" in _rejected(json.dumps(frame)).message
    frame = envelope("message.create", {"content": "ok", "blocks": [{"type": "x", "\u0000": 1}]})
    assert "NUL" in _rejected(json.dumps(frame)).message


def test_the_hubs_task_status_changed_says_which_task_it_ended_and_why():
    frame = envelope("task.status_changed", SAMPLES[("task.status_changed", Sender.HUB)])
    told = decode_frame(json.dumps(frame), Sender.HUB)
    assert isinstance(told, Decoded) and isinstance(told.payload, TaskEndedByHub)
    assert (told.payload.task_id, told.payload.cause) == ("task_1", "cancel_timeout")
    reported = decode_frame(json.dumps(frame), Sender.AGENT)  # an agent's report is its own
    assert isinstance(reported, Decoded) and isinstance(reported.payload, TaskStatusChanged)
    without_cause = envelope("task.status_changed", {"taskId": "task_1", "status": "cancelled"})
    assert isinstance(decode_frame(json.dumps(without_cause), Sender.HUB), Rejected)
