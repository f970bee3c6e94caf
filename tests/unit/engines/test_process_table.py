"""The process manager's decisions, with a clock that moves only when told: start lazily,
reuse, reap idle processes, make room under the cap by stopping the least recently used idle
one (never a busy one), and give up on a session that keeps crashing — for a while."""

from __future__ import annotations

import pytest

from lineup.engines.table import ProcessTable, Refuse, Reuse, Start
from lineup.protocol.errors import ErrorCode
from tests.support.clock import FakeClock


def table(cap: int = 2, idle_seconds: float = 60.0) -> ProcessTable:
    return ProcessTable(cap=cap, idle_ms=int(idle_seconds * 1000))


def test_a_first_message_starts_a_process_and_the_next_reuses_it() -> None:
    clock = FakeClock()
    t = table()
    assert t.admit("a", clock()) == Start()
    t.idle("a", clock())
    assert t.admit("a", clock()) == Reuse()


def test_a_session_runs_one_turn_at_a_time() -> None:
    t = table()
    t.admit("a", 0)
    refused = t.admit("a", 0)
    assert isinstance(refused, Refuse) and refused.code == ErrorCode.CONFLICT


def test_idle_processes_are_reaped_after_the_idle_time_and_busy_ones_never() -> None:
    clock = FakeClock()
    t = table(cap=3, idle_seconds=60)
    for key in ("idle", "busy"):
        t.admit(key, clock())
    t.idle("idle", clock())
    clock.advance(59.9)
    assert t.expired(clock()) == []
    clock.advance(0.1)
    assert t.expired(clock()) == ["idle"]
    clock.advance(3600)
    assert t.expired(clock()) == [], "a turn that runs for an hour is not reaped"
    assert t.admit("idle", clock()) == Start(), "a reaped session starts again lazily"


def test_a_turn_resets_the_idle_time() -> None:
    clock = FakeClock()
    t = table(idle_seconds=60)
    t.admit("a", clock())
    t.idle("a", clock())
    clock.advance(50)
    assert t.admit("a", clock()) == Reuse()
    t.idle("a", clock())
    clock.advance(50)
    assert t.expired(clock()) == []


def test_beyond_the_cap_the_least_recently_used_idle_process_makes_room() -> None:
    clock = FakeClock()
    t = table(cap=2)
    t.admit("old", clock())
    t.idle("old", clock())
    clock.advance(1)
    t.admit("recent", clock())
    t.idle("recent", clock())
    clock.advance(1)
    assert t.admit("new", clock()) == Start(evict="old")
    assert set(t.slots) == {"recent", "new"}


def test_beyond_the_cap_with_every_process_busy_the_answer_is_rate_limited() -> None:
    t = table(cap=2)
    t.admit("a", 0)
    t.admit("b", 0)
    refused = t.admit("c", 0)
    assert isinstance(refused, Refuse) and refused.code == ErrorCode.RATE_LIMITED
    assert "2 engine processes" in refused.message
    assert "c" not in t.slots
    t.idle("a", 1)
    assert t.admit("c", 2) == Start(evict="a")


def test_a_session_that_keeps_crashing_waits_out_the_window() -> None:
    clock = FakeClock()
    t = ProcessTable(cap=2, idle_ms=60_000, crash_limit=3, crash_window_ms=60_000)
    for _ in range(3):
        assert isinstance(t.admit("a", clock()), Start)
        t.gone("a", clock(), crashed=True)
        clock.advance(1)
    refused = t.admit("a", clock())
    assert isinstance(refused, Refuse) and refused.code == ErrorCode.UNAVAILABLE
    clock.advance(60)
    assert t.admit("a", clock()) == Start()


def test_a_turn_that_ends_well_clears_the_crashes() -> None:
    t = ProcessTable(cap=2, idle_ms=60_000, crash_limit=2)
    t.admit("a", 0)
    t.gone("a", 0, crashed=True)
    t.admit("a", 1)
    t.idle("a", 2)
    t.gone("a", 3, crashed=False)
    t.admit("a", 4)
    t.gone("a", 4, crashed=True)
    assert t.admit("a", 5) == Start()


def test_a_cap_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="cap"):
        ProcessTable(cap=0, idle_ms=1000)
