"""The task state machine.

Kept pure so that replaying the event log rebuilds exactly the same task states, and so that
hub, SDK and store agree on what is legal without sharing anything but this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from lineup.domain.errors import DomainError
from lineup.protocol.events import TaskStatusName

TaskStatus = TaskStatusName
"""The statuses are the wire's, defined once in the protocol; the rules over them are here."""


class TaskTransitionError(DomainError):
    """Lets callers tell task rule violations apart while still handling them as DomainError."""


_S = TaskStatus

TERMINAL_STATUSES: frozenset[TaskStatus] = frozenset({_S.SUCCEEDED, _S.FAILED, _S.CANCELLED})

ACTIVE_STATUSES: tuple[TaskStatus, ...] = (_S.RUNNING, _S.WAITING_FOR_HUMAN)
"""The agent has the task and has not finished it: what an unreachable agent leaves hanging."""

# Staying in the same status is deliberately absent: that is a progress update (see `report`).
LEGAL_TRANSITIONS: Mapping[TaskStatus, frozenset[TaskStatus]] = MappingProxyType(
    {
        # failed from queued: hub policy when the agent is revoked or unreachable.
        _S.QUEUED: frozenset({_S.RUNNING, _S.CANCELLED, _S.FAILED}),
        _S.RUNNING: frozenset({_S.WAITING_FOR_HUMAN, _S.SUCCEEDED, _S.FAILED, _S.CANCELLED}),
        _S.WAITING_FOR_HUMAN: frozenset({_S.RUNNING, _S.CANCELLED, _S.FAILED}),
        _S.SUCCEEDED: frozenset(),
        _S.FAILED: frozenset(),
        _S.CANCELLED: frozenset(),
    }
)


@dataclass(frozen=True, slots=True)
class TaskState:
    """Only what the rules need; identity and timestamps live with the caller.

    ``cancel_requested`` is a flag rather than a status because a request to cancel is not a
    cancellation: the task keeps running until the agent confirms (or a timeout policy fires).
    """

    status: TaskStatus = TaskStatus.QUEUED
    progress: int = 0
    summary: str | None = None
    error: str | None = None
    cancel_requested: bool = False
    cancel_reason: str | None = None


def is_terminal(status: TaskStatus | str) -> bool:
    return _coerce_status(status) in TERMINAL_STATUSES


def can_transition(frm: TaskStatus | str, to: TaskStatus | str) -> bool:
    return _coerce_status(to) in LEGAL_TRANSITIONS[_coerce_status(frm)]


def transition(
    state: TaskState,
    to: TaskStatus | str,
    *,
    progress: int | None = None,
    summary: str | None = None,
    error: str | None = None,
) -> TaskState:
    """Move to another status; ``None`` arguments keep the current value.

    Legality is checked before the arguments, so moving out of a terminal state is reported as
    the conflict it is rather than as a complaint about a missing argument.
    """
    target = _coerce_status(to)
    frm = state.status
    if target not in LEGAL_TRANSITIONS[frm]:
        raise TaskTransitionError("conflict", _illegal_message(frm, target))
    _check_progress(progress)
    _check_text("summary", summary)
    _check_text("error", error)
    if target is TaskStatus.FAILED:
        if error is None or not error.strip():
            raise TaskTransitionError(
                "invalid_argument",
                "A failed task needs an error message that says what went wrong.",
            )
    elif error is not None:
        raise TaskTransitionError(
            "invalid_argument",
            f"An error message is only accepted when a task fails, not {target}.",
        )
    new_progress = state.progress if progress is None else progress
    if target is TaskStatus.SUCCEEDED:
        new_progress = 100
    return replace(
        state,
        status=target,
        progress=new_progress,
        summary=state.summary if summary is None else summary,
        error=error,
    )


def report(
    state: TaskState,
    *,
    status: TaskStatus | str | None = None,
    progress: int | None = None,
    summary: str | None = None,
    error: str | None = None,
) -> TaskState:
    """Apply a ``task.status_changed`` report, which may or may not change the status."""
    if status is not None and _coerce_status(status) is not state.status:
        return transition(state, status, progress=progress, summary=summary, error=error)
    if state.status in TERMINAL_STATUSES:
        raise TaskTransitionError(
            "conflict", f"Task is already {state.status}; it no longer accepts progress updates."
        )
    _check_progress(progress)
    _check_text("summary", summary)
    if error is not None:
        raise TaskTransitionError(
            "invalid_argument",
            "An error message is only accepted when a task fails; report status 'failed'.",
        )
    return replace(
        state,
        progress=state.progress if progress is None else progress,
        summary=state.summary if summary is None else summary,
    )


CANCEL_TIMEOUT = "cancel_timeout"
"""The cause the hub records when it ends a task whose cancel its agent never confirmed."""


def cancel_deadline(requested_at_ms: int, timeout_ms: int) -> int:
    """When a cancel requested at ``requested_at_ms`` stops waiting for the agent."""
    if timeout_ms <= 0:
        raise DomainError("invalid_argument", "A cancel timeout must be a positive duration.")
    return requested_at_ms + timeout_ms


def cancel_overdue(state: TaskState, deadline_ms: int | None, now_ms: int) -> bool:
    """Whether the hub records the task cancelled itself (principle 4's timeout policy): the
    cancel is still requested, the agent has not ended the task, and its deadline has come."""
    return (
        state.cancel_requested
        and deadline_ms is not None
        and state.status not in TERMINAL_STATUSES
        and now_ms >= deadline_ms
    )


def request_cancel(state: TaskState, reason: str | None = None) -> tuple[TaskState, bool]:
    """Raise the cancel flag; the bool says whether anything changed (so whether to emit).

    A repeated request keeps the first reason: the agent may already be acting on it.
    """
    if state.status in TERMINAL_STATUSES:
        raise TaskTransitionError(
            "conflict", f"Task is already {state.status}; there is nothing left to cancel."
        )
    _check_text("reason", reason)
    if state.cancel_requested:
        return state, False
    clean_reason = (reason.strip() or None) if reason is not None else None
    return replace(state, cancel_requested=True, cancel_reason=clean_reason), True


def _coerce_status(value: TaskStatus | str) -> TaskStatus:
    # Statuses arrive from the wire as plain strings; an unknown one is the sender's mistake.
    try:
        return TaskStatus(value)
    except ValueError:
        known = ", ".join(s.value for s in TaskStatus)
        raise TaskTransitionError(
            "invalid_argument", f"Unknown task status {value!r}; expected one of: {known}."
        ) from None


def _illegal_message(frm: TaskStatus, to: TaskStatus) -> str:
    if frm in TERMINAL_STATUSES:
        return f"Task is already {frm}; it cannot move to {to}."
    if frm is to:
        return f"Task is already {frm}; send a progress update instead of a transition."
    allowed = ", ".join(sorted(LEGAL_TRANSITIONS[frm]))
    return f"A {frm} task cannot move to {to}; from {frm} it can move to: {allowed}."


def _check_progress(progress: object) -> None:
    # bool is an int subclass; "progress": true is a sender bug, not 1 percent.
    if progress is None:
        return
    if isinstance(progress, bool) or not isinstance(progress, int) or not 0 <= progress <= 100:
        raise TaskTransitionError(
            "invalid_argument",
            f"Progress must be a whole number from 0 to 100; got {progress!r}.",
        )


def _check_text(name: str, value: object) -> None:
    if value is not None and not isinstance(value, str):
        raise TaskTransitionError(
            "invalid_argument", f"The {name} must be text; got {type(value).__name__}."
        )
