import itertools
import pickle
from dataclasses import replace

import pytest

from lineup.domain import (
    CANCEL_TIMEOUT,
    LEGAL_TRANSITIONS,
    TERMINAL_STATUSES,
    DomainError,
    TaskState,
    TaskStatus,
    TaskTransitionError,
    can_transition,
    cancel_deadline,
    cancel_overdue,
    is_terminal,
    report,
    request_cancel,
    transition,
)

S = TaskStatus

LEGAL_PAIRS = sorted((frm, to) for frm, targets in LEGAL_TRANSITIONS.items() for to in targets)
ILLEGAL_PAIRS = sorted(
    (frm, to)
    for frm, to in itertools.product(TaskStatus, repeat=2)
    if to not in LEGAL_TRANSITIONS[frm]
)


def _error_for(to: TaskStatus) -> str | None:
    return "boom" if to is S.FAILED else None


def test_the_table_is_exactly_the_agreed_state_machine() -> None:
    expected = sorted(
        [
            (S.QUEUED, S.RUNNING),
            (S.QUEUED, S.CANCELLED),
            (S.QUEUED, S.FAILED),
            (S.RUNNING, S.WAITING_FOR_HUMAN),
            (S.RUNNING, S.SUCCEEDED),
            (S.RUNNING, S.FAILED),
            (S.RUNNING, S.CANCELLED),
            (S.WAITING_FOR_HUMAN, S.RUNNING),
            (S.WAITING_FOR_HUMAN, S.CANCELLED),
            (S.WAITING_FOR_HUMAN, S.FAILED),
        ]
    )
    assert expected == LEGAL_PAIRS
    assert set(LEGAL_TRANSITIONS) == set(TaskStatus)


def test_terminal_statuses_are_succeeded_failed_and_cancelled() -> None:
    expected = {S.SUCCEEDED, S.FAILED, S.CANCELLED}
    assert expected == TERMINAL_STATUSES
    assert all(is_terminal(s) == (s in TERMINAL_STATUSES) for s in TaskStatus)
    assert all(not LEGAL_TRANSITIONS[s] for s in TERMINAL_STATUSES)


def test_a_new_task_is_queued_with_no_progress() -> None:
    assert TaskState() == TaskState(status=S.QUEUED, progress=0)


@pytest.mark.parametrize(("frm", "to"), LEGAL_PAIRS)
def test_every_legal_transition_is_accepted(frm: TaskStatus, to: TaskStatus) -> None:
    assert can_transition(frm, to)
    new = transition(TaskState(status=frm), to, error=_error_for(to))
    assert new.status is to


@pytest.mark.parametrize(("frm", "to"), ILLEGAL_PAIRS)
def test_every_illegal_transition_is_a_conflict(frm: TaskStatus, to: TaskStatus) -> None:
    assert not can_transition(frm, to)
    with pytest.raises(TaskTransitionError) as info:
        transition(TaskState(status=frm), to, error=_error_for(to))
    assert info.value.code == "conflict"
    assert info.value.message


@pytest.mark.parametrize(("frm", "to"), ILLEGAL_PAIRS)
def test_an_illegal_transition_is_a_conflict_even_with_bad_arguments(
    frm: TaskStatus, to: TaskStatus
) -> None:
    with pytest.raises(TaskTransitionError) as info:
        transition(TaskState(status=frm), to, progress=500)
    assert info.value.code == "conflict"


def test_leaving_a_terminal_state_says_so_in_a_sentence() -> None:
    with pytest.raises(TaskTransitionError) as info:
        transition(TaskState(status=S.SUCCEEDED), S.RUNNING)
    assert info.value.message == "Task is already succeeded; it cannot move to running."
    assert str(info.value) == info.value.message


def test_statuses_sent_as_plain_strings_are_understood() -> None:
    assert transition(TaskState(), "running").status is S.RUNNING
    assert can_transition("running", "waiting_for_human")
    assert is_terminal("failed")


def test_an_unknown_status_is_an_invalid_argument() -> None:
    with pytest.raises(DomainError) as info:
        transition(TaskState(), "paused")
    assert info.value.code == "invalid_argument"
    assert "paused" in info.value.message


@pytest.mark.parametrize("progress", [0, 1, 50, 99, 100])
def test_progress_from_0_to_100_is_accepted(progress: int) -> None:
    running = transition(TaskState(), S.RUNNING, progress=progress)
    assert running.progress == progress


@pytest.mark.parametrize("progress", [-1, 101, 1000, 1.5, True, "50"])
def test_progress_outside_0_to_100_or_not_a_whole_number_is_invalid(progress: object) -> None:
    running = transition(TaskState(), S.RUNNING)
    with pytest.raises(DomainError) as info:
        report(running, progress=progress)  # type: ignore[arg-type]
    assert info.value.code == "invalid_argument"
    with pytest.raises(DomainError):
        transition(running, S.WAITING_FOR_HUMAN, progress=progress)  # type: ignore[arg-type]


def test_progress_may_go_backwards_when_an_agent_restarts_a_phase() -> None:
    running = transition(TaskState(), S.RUNNING, progress=80)
    assert report(running, progress=10).progress == 10


def test_success_sets_progress_to_100() -> None:
    running = transition(TaskState(), S.RUNNING, progress=40)
    assert transition(running, S.SUCCEEDED).progress == 100
    assert transition(running, S.SUCCEEDED, progress=70).progress == 100


def test_failing_requires_an_error_message() -> None:
    running = transition(TaskState(), S.RUNNING)
    for missing in (None, "", "   "):
        with pytest.raises(DomainError) as info:
            transition(running, S.FAILED, error=missing)
        assert info.value.code == "invalid_argument"
    failed = transition(running, S.FAILED, error="agent_unreachable")
    assert failed.error == "agent_unreachable"


def test_an_error_message_outside_a_failure_is_invalid() -> None:
    running = transition(TaskState(), S.RUNNING)
    with pytest.raises(DomainError) as info:
        transition(running, S.SUCCEEDED, error="oops")
    assert info.value.code == "invalid_argument"
    with pytest.raises(DomainError):
        report(running, error="oops")


def test_summary_is_kept_until_replaced() -> None:
    running = transition(TaskState(), S.RUNNING, summary="cloning")
    waiting = transition(running, S.WAITING_FOR_HUMAN)
    assert waiting.summary == "cloning"
    assert transition(waiting, S.RUNNING, summary="migrating").summary == "migrating"


def test_a_same_status_report_is_a_progress_update() -> None:
    running = transition(TaskState(), S.RUNNING)
    updated = report(running, status=S.RUNNING, progress=30, summary="half way")
    assert updated == TaskState(status=S.RUNNING, progress=30, summary="half way")
    assert report(updated, progress=40).progress == 40


def test_a_report_with_a_new_status_is_a_transition() -> None:
    running = transition(TaskState(), S.RUNNING)
    assert report(running, status="waiting_for_human").status is S.WAITING_FOR_HUMAN
    with pytest.raises(DomainError) as info:
        report(running, status=S.QUEUED)
    assert info.value.code == "conflict"


@pytest.mark.parametrize("terminal", sorted(TERMINAL_STATUSES))
def test_a_terminal_task_accepts_no_progress_update(terminal: TaskStatus) -> None:
    with pytest.raises(DomainError) as info:
        report(TaskState(status=terminal), status=terminal, progress=10)
    assert info.value.code == "conflict"


def test_cancel_requested_is_not_cancelled() -> None:
    running = transition(TaskState(), S.RUNNING, progress=20)
    requested, changed = request_cancel(running, "wrong branch")
    assert changed
    assert requested.status is S.RUNNING
    assert requested.cancel_requested
    assert requested.cancel_reason == "wrong branch"
    assert not is_terminal(requested.status)


def test_the_agent_can_keep_reporting_progress_after_a_cancel_request() -> None:
    requested, _ = request_cancel(transition(TaskState(), S.RUNNING))
    assert report(requested, progress=55).cancel_requested


def test_requesting_cancel_twice_changes_nothing_and_keeps_the_first_reason() -> None:
    first, _ = request_cancel(TaskState(), "first")
    again, changed = request_cancel(first, "second")
    assert not changed
    assert again is first
    assert again.cancel_reason == "first"


def test_a_blank_cancel_reason_is_no_reason() -> None:
    requested, _ = request_cancel(TaskState(), "  ")
    assert requested.cancel_reason is None


@pytest.mark.parametrize("terminal", sorted(TERMINAL_STATUSES))
def test_requesting_cancel_on_a_finished_task_is_a_conflict(terminal: TaskStatus) -> None:
    with pytest.raises(DomainError) as info:
        request_cancel(TaskState(status=terminal))
    assert info.value.code == "conflict"


def test_the_task_is_cancelled_only_when_the_agent_confirms_and_keeps_the_flag() -> None:
    requested, _ = request_cancel(transition(TaskState(), S.RUNNING), "stop")
    cancelled = transition(requested, S.CANCELLED)
    assert cancelled.status is S.CANCELLED
    assert cancelled.cancel_requested
    assert cancelled.cancel_reason == "stop"


def test_a_task_can_fail_while_a_cancel_is_pending() -> None:
    requested, _ = request_cancel(transition(TaskState(), S.RUNNING))
    failed = transition(requested, S.FAILED, error="crashed")
    assert failed.status is S.FAILED
    assert failed.cancel_requested


def test_a_domain_error_survives_pickling() -> None:
    err = TaskTransitionError("conflict", "Task is already failed.", details={"a": 1})
    copy = pickle.loads(pickle.dumps(err))
    assert type(copy) is TaskTransitionError
    assert (copy.code, copy.message, copy.details) == (
        "conflict",
        "Task is already failed.",
        {"a": 1},
    )


def test_an_unknown_error_code_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        DomainError("teapot", "no")  # type: ignore[arg-type]


# --- the cancel timeout policy: injected times, no clock ------------------------------------

REQUESTED_AT = 1_800_000_000_000


def test_a_cancels_deadline_is_the_request_time_plus_the_timeout() -> None:
    assert cancel_deadline(REQUESTED_AT, 600_000) == REQUESTED_AT + 600_000


@pytest.mark.parametrize("timeout_ms", [0, -1])
def test_a_cancel_timeout_must_be_a_positive_duration(timeout_ms: int) -> None:
    with pytest.raises(DomainError) as info:
        cancel_deadline(REQUESTED_AT, timeout_ms)
    assert info.value.code == "invalid_argument"


def test_an_unconfirmed_cancel_is_overdue_from_its_deadline_on_not_before() -> None:
    requested, _ = request_cancel(transition(TaskState(), S.RUNNING), "stop")
    deadline = cancel_deadline(REQUESTED_AT, 60_000)
    assert not cancel_overdue(requested, deadline, deadline - 1)
    assert cancel_overdue(requested, deadline, deadline)
    assert cancel_overdue(requested, deadline, deadline + 3_600_000)


@pytest.mark.parametrize("status", [S.QUEUED, S.RUNNING, S.WAITING_FOR_HUMAN])
def test_a_task_the_agent_has_not_ended_can_be_ended_by_the_timeout(status: TaskStatus) -> None:
    requested, _ = request_cancel(TaskState(status=status))
    assert cancel_overdue(requested, REQUESTED_AT, REQUESTED_AT)


@pytest.mark.parametrize("terminal", sorted(TERMINAL_STATUSES))
def test_a_task_that_ended_is_never_overdue(terminal: TaskStatus) -> None:
    requested, _ = request_cancel(transition(TaskState(), S.RUNNING))
    ended = replace(requested, status=terminal)
    assert not cancel_overdue(ended, REQUESTED_AT, REQUESTED_AT + 1)


def test_without_a_cancel_request_or_a_deadline_nothing_is_overdue() -> None:
    running = transition(TaskState(), S.RUNNING)
    assert not cancel_overdue(running, REQUESTED_AT, REQUESTED_AT + 1)
    requested, _ = request_cancel(running)
    assert not cancel_overdue(requested, None, REQUESTED_AT)  # a cancel from an older hub


def test_the_timeouts_cause_is_a_stable_wire_value() -> None:
    assert CANCEL_TIMEOUT == "cancel_timeout"
