"""The codec never lets an exception escape, whatever arrives."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from lineup.protocol import CATALOG, ErrorCode, Sender, decode_answer, decode_frame
from lineup.protocol._model import WireModel
from lineup.protocol.codec import (
    Decoded,
    Ignored,
    Rejected,
    _may_have_shape_problem,
    _shape_problem,
)
from lineup.protocol.frames import Ack

from .samples import SAMPLES, envelope

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)
senders = st.sampled_from(list(Sender))


@given(st.binary(max_size=2000), senders)
def test_arbitrary_bytes_never_raise(raw, sender):
    result = decode_frame(raw, sender)
    assert isinstance(result, Decoded | Ignored | Rejected)


@given(st.text(max_size=2000), senders)
def test_arbitrary_text_never_raises(raw, sender):
    assert isinstance(decode_frame(raw, sender), Decoded | Ignored | Rejected)
    decode_answer(raw)


@given(json_values, senders)
def test_arbitrary_json_never_raises(value, sender):
    result = decode_frame(json.dumps(value), sender)
    assert isinstance(result, Decoded | Ignored | Rejected)
    if isinstance(result, Rejected):
        assert result.error.code is ErrorCode.INVALID_ARGUMENT
        assert result.error.message


@settings(max_examples=300)
@given(
    st.sampled_from(sorted(SAMPLES, key=str)),
    st.text(min_size=1, max_size=20),
    json_values,
)
def test_a_valid_frame_with_one_field_replaced_is_decoded_or_refused_cleanly(key, field, value):
    event_type, sender = key
    payload = dict(SAMPLES[key])
    payload[field] = value
    frame = envelope(event_type, payload)
    result = decode_frame(json.dumps(frame), sender)
    assert isinstance(result, Decoded | Rejected)
    if isinstance(result, Rejected):
        assert result.error.id == "evt_1"


@given(
    st.sampled_from(sorted(CATALOG)),
    st.sampled_from(["id", "type", "version", "occurredAt", "workspaceId", "payload", "sequence"]),
    json_values,
    senders,
)
def test_any_envelope_field_replaced_by_any_json_is_handled(event_type, field, value, sender):
    frame = envelope(event_type, {})
    frame[field] = value
    result = decode_frame(json.dumps(frame), sender)
    assert isinstance(result, Decoded | Ignored | Rejected)


deep_json_values = st.recursive(
    st.none() | st.integers() | st.text(alphabet=st.sampled_from('a\x00\\u0"{[')),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=80,
)


@given(deep_json_values, st.booleans(), st.integers(min_value=0, max_value=6))
def test_the_text_precheck_never_misses_a_shape_problem(value, ascii_only, limit):
    """decode_frame skips the walk over the value when its text shows no NUL and few brackets;
    that shortcut must be sound for every value, however it is spelled."""
    text = json.dumps(value, ensure_ascii=ascii_only)
    if _shape_problem(value, limit) is not None:
        assert _may_have_shape_problem(text, limit)


@given(
    st.text(min_size=1, max_size=20),
    st.none() | st.integers(min_value=1),
    st.booleans(),
    st.booleans(),
    st.none() | st.lists(st.text(max_size=10), max_size=3),
)
def test_an_ack_is_written_as_the_generic_model_dump_would(
    id_, sequence, duplicate, ignored, warnings
):
    ack = Ack(id=id_, sequence=sequence, duplicate=duplicate, ignored=ignored, warnings=warnings)
    assert json.dumps(ack.wire()) == json.dumps(WireModel.wire(ack))
