"""A person's notification preferences: which events, which channels, and quiet hours in
their own time zone. Defaults: "waiting for you" and "failed", on every channel, no quiet hours.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from lineup.protocol.errors import InvalidArgument
from lineup.store.notifications import (
    DEFAULT_CHANNELS,
    DEFAULT_EVENTS,
    Preferences,
    default_preferences,
)

EVENTS: dict[str, str] = {
    "waiting": "An agent is waiting for you (an approval, a choice, an answer or a review)",
    "failed": "A task failed, or an agent lost its connection while working",
    "done": "A task finished",
}
CHANNELS: dict[str, str] = {
    "push": "Push notifications to the devices you subscribed",
    "email": "Email to your account's address",
    "browser": "Browser notifications while LineUp is open in a background tab",
}
_HHMM = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")

__all__ = [
    "CHANNELS",
    "DEFAULT_CHANNELS",
    "DEFAULT_EVENTS",
    "EVENTS",
    "Preferences",
    "default_preferences",
    "quiet_until",
    "validated",
]


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidArgument(
            f"Unknown time zone {name!r}; use a name like Europe/Berlin.",
            details={"field": "timeZone"},
        ) from exc


def validated(
    user_id: str,
    events: list[str],
    channels: list[str],
    quiet_start: str | None,
    quiet_end: str | None,
    time_zone: str,
) -> Preferences:
    unknown = [e for e in events if e not in EVENTS]
    if unknown:
        raise InvalidArgument(
            f"Unknown notification events: {', '.join(unknown)}.",
            details={"field": "events", "allowed": sorted(EVENTS)},
        )
    unknown = [c for c in channels if c not in CHANNELS]
    if unknown:
        raise InvalidArgument(
            f"Unknown notification channels: {', '.join(unknown)}.",
            details={"field": "channels", "allowed": sorted(CHANNELS)},
        )
    if (quiet_start is None) != (quiet_end is None):
        raise InvalidArgument(
            "Quiet hours need both a start and an end (or neither).",
            details={"field": "quietHours"},
        )
    for field, value in (("quietHours.start", quiet_start), ("quietHours.end", quiet_end)):
        if value is not None and not _HHMM.match(value):
            raise InvalidArgument("Write times as HH:MM (24-hour).", details={"field": field})
    if quiet_start is not None and quiet_start == quiet_end:
        raise InvalidArgument(
            "Quiet hours must not start and end at the same time.",
            details={"field": "quietHours"},
        )
    _zone(time_zone)
    return Preferences(
        user_id,
        [e for e in EVENTS if e in events],
        [c for c in CHANNELS if c in channels],
        quiet_start,
        quiet_end,
        time_zone,
    )


def _minutes(hhmm: str) -> int:
    hours, minutes = hhmm.split(":")
    return int(hours) * 60 + int(minutes)


def quiet_until(prefs: Preferences, now_ms: int) -> int | None:
    """When ``now_ms`` falls in the person's quiet hours, the time (ms) they end; else None.

    Quiet hours may wrap midnight (22:00–07:00). Local times are resolved in the person's time
    zone, so they follow daylight saving time.
    """
    if prefs.quiet_start is None or prefs.quiet_end is None:
        return None
    try:
        zone = ZoneInfo(prefs.time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        zone = ZoneInfo("UTC")
    local = datetime.fromtimestamp(now_ms / 1000, UTC).astimezone(zone)
    minute = local.hour * 60 + local.minute
    start, end = _minutes(prefs.quiet_start), _minutes(prefs.quiet_end)
    quiet = start <= minute < end if start < end else (minute >= start or minute < end)
    if not quiet:
        return None
    end_day = local.date() if minute < end else local.date() + timedelta(days=1)
    ends = datetime(end_day.year, end_day.month, end_day.day, end // 60, end % 60, tzinfo=zone)
    return max(int(ends.timestamp() * 1000), now_ms + 1)
