"""Time as LineUp keeps it: integer UTC milliseconds inside, ISO 8601 text on the wire.

:func:`now_ms` is the one wall clock; code that must be testable takes a clock argument that
defaults to it, so tests inject their own.
"""

from __future__ import annotations

import functools
import time
from datetime import UTC, datetime
from typing import Annotated, Any, overload

from pydantic import BeforeValidator, Field


def now_ms() -> int:
    """Wall-clock milliseconds since the epoch, UTC."""
    return time.time_ns() // 1_000_000


def format_timestamp(value: datetime) -> str:
    """ISO 8601 in UTC with millisecond precision and a ``Z``, the one form LineUp writes."""
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def ms_to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def datetime_to_ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def _iso_text_as_ms(value: Any) -> Any:
    """ISO 8601 text is read as milliseconds too: an agent's journal and some older facts
    hold times in that form."""
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return int(when.timestamp() * 1000)
    return value


Millis = Annotated[int, Field(ge=0), BeforeValidator(_iso_text_as_ms)]
"""A time in milliseconds since the epoch (UTC) in a model, as recorded facts carry it."""


@overload
def iso(ms: int) -> str: ...
@overload
def iso(ms: None) -> None: ...
@overload
def iso(ms: int | None) -> str | None: ...
def iso(ms: int | None) -> str | None:
    """``format_timestamp`` of a millisecond time; ``None`` (never happened) stays ``None``.

    A replay formats as many times as events, and they fall in few seconds, so a second's
    text is made once and the milliseconds appended."""
    if ms is None:
        return None
    if 0 <= ms < _FAST_UNTIL_MS:
        seconds, millis = divmod(ms, 1000)
        return _second(seconds) + _MILLIS[millis]
    return format_timestamp(ms_to_datetime(ms))


_FAST_UNTIL_MS = 8_000_000_000_000
"""Until here (the year 2223) a millisecond time is exact as the float seconds
``ms_to_datetime`` makes of it, so its text splits into a second's text and the milliseconds."""

_MILLIS = tuple(f".{millis:03d}Z" for millis in range(1000))


@functools.lru_cache(maxsize=1024)
def _second(seconds: int) -> str:
    return format_timestamp(ms_to_datetime(seconds * 1000))[: -len(".000Z")]
