"""How far a workspace's event log may be compacted (seed 001 §10.3, §11).

The log is the truth, but it need not be kept for ever: the projections are the current state,
and a client whose cursor is older than what is kept rebuilds from them after
``system.resync_required``. A workspace's **horizon** is the earliest sequence from which its
log is whole again: every event at or after it is kept; before it, only the events something
still needs (the store's keep rules) survive.

:func:`plan_horizon` is the rule that moves it, with no I/O: the policy (an age, a number of
events, or both — either one compacts), the log's shape and the *pins* (sequences the horizon
must not pass, such as the first event the notification worker has not read yet). A horizon
never moves back, never passes a pin, and never goes past the event after the latest one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from lineup.domain.errors import DomainError

DAY_MS = 24 * 3600 * 1000


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """What a workspace keeps: events no older than ``max_age_days`` and at most the latest
    ``max_events``; ``None`` (or 0 in configuration) leaves that limit off."""

    max_age_days: int | None = None
    max_events: int | None = None

    def __post_init__(self) -> None:
        for name in ("max_age_days", "max_events"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise DomainError(
                    "invalid_argument",
                    f"{name} must be at least 1, or unset to keep events without that limit.",
                    details={"key": name},
                )

    @classmethod
    def of(cls, max_age_days: int | None, max_events: int | None) -> RetentionPolicy:
        """From configured values, where 0 means "no limit"."""
        return cls(max_age_days or None, max_events or None)

    @property
    def keeps_everything(self) -> bool:
        return self.max_age_days is None and self.max_events is None


def age_cutoff(policy: RetentionPolicy, now_ms: int) -> int | None:
    """Events recorded before this time (ms) are past the age limit; None: no age limit."""
    if policy.max_age_days is None:
        return None
    return now_ms - policy.max_age_days * DAY_MS


def plan_horizon(
    policy: RetentionPolicy,
    *,
    last_sequence: int,
    current_horizon: int,
    first_recent: int | None,
    pins: Iterable[int] = (),
) -> int:
    """The workspace's next horizon.

    ``last_sequence`` is its latest event; ``current_horizon`` the horizon it has (1 for a log
    never compacted); ``first_recent`` the first sequence recorded at or after
    :func:`age_cutoff` (None when no event is that recent — all are past the age limit).
    ``pins`` are sequences the horizon may not pass. The result is between
    ``current_horizon`` and ``last_sequence + 1``.
    """
    end = last_sequence + 1
    wanted = current_horizon
    if policy.max_age_days is not None:
        wanted = max(wanted, end if first_recent is None else first_recent)
    if policy.max_events is not None:
        wanted = max(wanted, end - policy.max_events)
    wanted = min(wanted, end, *pins)
    return max(current_horizon, wanted)


def behind(after: int, horizon: int) -> bool:
    """Whether a cursor (the last sequence a client has) needs events no longer kept in full:
    the next one it needs is before the horizon."""
    return after + 1 < horizon


__all__ = ["DAY_MS", "RetentionPolicy", "age_cutoff", "behind", "plan_horizon"]
