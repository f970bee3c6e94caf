"""The process manager's decisions, as a pure state machine over an injected clock.

Which session may start a process, which idle one makes room for it, which are idle long
enough to reap, and when a session that keeps crashing is given up on: all decided here from
the table of live processes and the time given, with no I/O — :mod:`lineup.engines.manager`
carries the decisions out.

A slot is ``busy`` from its admission (its process starting, then a turn running) until
:meth:`ProcessTable.idle`; only idle slots are reaped or evicted, least recently used first.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Literal

from lineup.protocol.errors import ErrorCode


@dataclass(frozen=True, slots=True)
class Reuse:
    """The session's process is there and idle: run the turn on it."""


@dataclass(frozen=True, slots=True)
class Start:
    """Start a process for the session, after stopping ``evict`` (an idle one) if set."""

    evict: Hashable | None = None


@dataclass(frozen=True, slots=True)
class Refuse:
    code: ErrorCode
    message: str


Admission = Reuse | Start | Refuse


@dataclass(slots=True)
class Slot:
    state: Literal["busy", "idle"]
    last_used_ms: int


@dataclass(slots=True)
class ProcessTable:
    cap: int
    """At most this many engine processes at once."""
    idle_ms: int
    """An idle process is stopped after this long without a turn."""
    crash_limit: int = 3
    crash_window_ms: int = 60_000
    """A session that crashed ``crash_limit`` times within the window is not restarted until
    the window has passed (``unavailable``), so a broken engine does not spin."""
    slots: dict[Hashable, Slot] = field(default_factory=dict)
    crashes: dict[Hashable, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.cap < 1:
            raise ValueError("the process cap must be at least 1")
        if self.idle_ms <= 0:
            raise ValueError("the idle time must be positive")

    def admit(self, key: Hashable, now_ms: int) -> Admission:
        """What to do for a turn of ``key``'s session now. Reuse and Start mark it busy."""
        slot = self.slots.get(key)
        if slot is not None:
            if slot.state == "busy":
                return Refuse(ErrorCode.CONFLICT, "This session is already running a turn.")
            slot.state, slot.last_used_ms = "busy", now_ms
            return Reuse()
        recent = [t for t in self.crashes.get(key, ()) if now_ms - t < self.crash_window_ms]
        self.crashes[key] = recent
        if len(recent) >= self.crash_limit:
            return Refuse(
                ErrorCode.UNAVAILABLE,
                f"The engine crashed {len(recent)} times in a row for this conversation; "
                "LineUp waits a minute before starting it again (see the engine's log).",
            )
        evict: Hashable | None = None
        if len(self.slots) >= self.cap:
            idle = [(s.last_used_ms, k) for k, s in self.slots.items() if s.state == "idle"]
            if not idle:
                return Refuse(
                    ErrorCode.RATE_LIMITED,
                    f"All {self.cap} engine processes this hub may run are busy; "
                    "try again when one of them finishes its turn.",
                )
            evict = min(idle, key=lambda pair: pair[0])[1]
            del self.slots[evict]
        self.slots[key] = Slot("busy", now_ms)
        return Start(evict)

    def idle(self, key: Hashable, now_ms: int) -> None:
        """The turn ended and the process lives on (a turn that ends well clears its crashes)."""
        self.crashes.pop(key, None)
        slot = self.slots.get(key)
        if slot is not None:
            slot.state, slot.last_used_ms = "idle", now_ms

    def gone(self, key: Hashable, now_ms: int, *, crashed: bool) -> None:
        """The process ended: stopped by us, or crashed (counted against its restarts)."""
        self.slots.pop(key, None)
        if crashed:
            self.crashes.setdefault(key, []).append(now_ms)
        else:
            self.crashes.pop(key, None)

    def expired(self, now_ms: int) -> list[Hashable]:
        """Idle slots past the idle time; removed from the table (the caller stops them)."""
        found = [
            k
            for k, s in self.slots.items()
            if s.state == "idle" and now_ms - s.last_used_ms >= self.idle_ms
        ]
        for key in found:
            del self.slots[key]
        return found

    def busy_count(self) -> int:
        return sum(1 for s in self.slots.values() if s.state == "busy")
