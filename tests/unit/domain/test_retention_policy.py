"""The horizon rule: how far a workspace's log may be compacted, given its policy and pins."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineup.domain.errors import DomainError
from lineup.domain.retention import (
    DAY_MS,
    RetentionPolicy,
    age_cutoff,
    behind,
    plan_horizon,
)


def test_a_policy_with_no_limit_keeps_everything() -> None:
    policy = RetentionPolicy.of(0, 0)
    assert policy.keeps_everything
    assert plan_horizon(policy, last_sequence=500, current_horizon=1, first_recent=None) == 1


def test_by_size_the_latest_events_are_kept() -> None:
    policy = RetentionPolicy(max_events=100)
    assert plan_horizon(policy, last_sequence=500, current_horizon=1, first_recent=None) == 401


def test_by_age_the_first_recent_event_is_the_horizon() -> None:
    policy = RetentionPolicy(max_age_days=30)
    assert plan_horizon(policy, last_sequence=500, current_horizon=1, first_recent=250) == 250
    # every event is older than the limit: the log is compacted past its latest event
    assert plan_horizon(policy, last_sequence=500, current_horizon=1, first_recent=None) == 501


def test_either_limit_compacts() -> None:
    policy = RetentionPolicy(max_age_days=30, max_events=100)
    assert plan_horizon(policy, last_sequence=500, current_horizon=1, first_recent=250) == 401
    assert plan_horizon(policy, last_sequence=500, current_horizon=1, first_recent=450) == 450


def test_a_pin_holds_the_horizon_back() -> None:
    policy = RetentionPolicy(max_events=10)
    planned = plan_horizon(
        policy, last_sequence=500, current_horizon=1, first_recent=None, pins=[37]
    )
    assert planned == 37


def test_the_horizon_never_moves_back() -> None:
    policy = RetentionPolicy(max_events=1000)
    assert plan_horizon(policy, last_sequence=500, current_horizon=300, first_recent=None) == 300
    pinned = plan_horizon(
        policy, last_sequence=500, current_horizon=300, first_recent=None, pins=[2]
    )
    assert pinned == 300


def test_age_cutoff_is_days_before_now() -> None:
    assert age_cutoff(RetentionPolicy(max_age_days=2), 10 * DAY_MS) == 8 * DAY_MS
    assert age_cutoff(RetentionPolicy(max_events=5), 10 * DAY_MS) is None


@pytest.mark.parametrize("field", ["max_age_days", "max_events"])
def test_a_limit_below_one_is_refused(field: str) -> None:
    with pytest.raises(DomainError) as refused:
        RetentionPolicy(**{field: 0})
    assert refused.value.code == "invalid_argument"
    assert refused.value.details == {"key": field}


def test_a_cursor_is_behind_only_when_its_next_event_is_before_the_horizon() -> None:
    assert not behind(after=9, horizon=10)
    assert not behind(after=50, horizon=10)
    assert behind(after=8, horizon=10)
    assert not behind(after=0, horizon=1)


limits = st.one_of(st.none(), st.integers(1, 1000))


@given(
    age=limits,
    size=limits,
    last=st.integers(0, 5000),
    current=st.integers(1, 5001),
    recent=st.one_of(st.none(), st.integers(1, 5001)),
    pins=st.lists(st.integers(1, 6000), max_size=4),
)
def test_the_horizon_keeps_every_rule(
    age: int | None,
    size: int | None,
    last: int,
    current: int,
    recent: int | None,
    pins: list[int],
) -> None:
    current = min(current, last + 1)
    if recent is not None:
        recent = min(max(recent, current), last + 1)
    policy = RetentionPolicy(age, size)
    horizon = plan_horizon(
        policy, last_sequence=last, current_horizon=current, first_recent=recent, pins=pins
    )
    assert current <= horizon <= last + 1  # never back, never past the end
    if horizon > current:  # it moved: not past any pin, and only as a limit asked
        assert all(horizon <= p for p in pins)
        by_age = age is not None and horizon <= (last + 1 if recent is None else recent)
        by_size = size is not None and horizon <= last + 1 - size
        assert by_age or by_size
    if size is not None and not pins:
        assert last + 1 - horizon <= max(size, last + 1 - current)  # at most size kept
    if size is None and recent is not None:
        assert horizon <= max(recent, current)  # events younger than the age limit stay
    # planning again from where it got changes nothing
    again = plan_horizon(
        policy, last_sequence=last, current_horizon=horizon, first_recent=recent, pins=pins
    )
    assert again == horizon
