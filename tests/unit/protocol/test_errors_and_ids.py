import re

from lineup.protocol.errors import (
    ERROR_CLASSES,
    HTTP_STATUS,
    RETRYABLE,
    Conflict,
    ErrorCode,
    error_from_code,
)
from lineup.protocol.ids import new_id, new_ulid


def test_every_code_has_one_class_and_one_http_status():
    assert set(ERROR_CLASSES) == set(ErrorCode) == set(HTTP_STATUS)


def test_only_rate_limited_and_unavailable_are_retried():
    assert {ErrorCode.RATE_LIMITED, ErrorCode.UNAVAILABLE} == RETRYABLE


def test_an_error_rebuilt_from_its_code_keeps_code_message_and_details():
    error = error_from_code("conflict", "answered already", {"by": "ana"})
    assert isinstance(error, Conflict)
    assert error.to_dict() == {
        "code": "conflict",
        "message": "answered already",
        "details": {"by": "ana"},
    }


def test_an_unknown_code_becomes_unknown_result():
    assert error_from_code("teapot", "?").code is ErrorCode.UNKNOWN_RESULT


def test_ulids_sort_by_time_and_use_crockford_base32():
    early = new_ulid(now_ms=1_000, rand=bytes(10))
    late = new_ulid(now_ms=2_000, rand=b"\xff" * 10)
    assert re.fullmatch(r"[0-9A-HJKMNP-TV-Z]{26}", early)
    assert early < late
    assert new_ulid(now_ms=0, rand=bytes(10)) == "0" * 26


def test_prefixed_ids_are_unique():
    assert len({new_id("task") for _ in range(1000)}) == 1000
