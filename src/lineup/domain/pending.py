"""A pending request: a question answered once, the lifecycle every kind of question shares.

An interaction card, a tool call on a person's app and a governed approval are all this:
someone is asked, the first answer wins, the same answer again is a no-op (two tabs, a resent
request), a different one is a conflict that names who answered first, and expiry or
withdrawal ends the question for good. The kinds differ only in what an answer is and how it
is checked, so they keep that and hand the lifecycle to the functions here::

    open ──answer──▶ answered
      ├──expire───▶ expired      (only once its expiry time has come)
      └──withdraw─▶ cancelled

Each function returns a decision — what the caller should record, or why nothing — and never
raises for a lifecycle outcome, so each kind words its own refusals. Times are injected as
integer milliseconds, so tests and replays need no clock.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Generic, Literal, TypeAlias, TypeVar

from lineup.domain.errors import DomainError

A = TypeVar("A")

__all__ = [
    "AnswerDecision",
    "AnsweredFirst",
    "ExpireDecision",
    "NoOp",
    "NotDue",
    "Pending",
    "PendingStatus",
    "Record",
    "Refused",
    "answer",
    "expire",
    "is_due",
    "withdraw",
]


class PendingStatus(StrEnum):
    OPEN = "open"
    ANSWERED = "answered"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class Pending(Generic[A]):
    """Where a request stands; ``A`` is what an answer is for its kind."""

    status: PendingStatus = PendingStatus.OPEN
    answer: A | None = None
    answered_by: str | None = None
    answered_at_ms: int | None = None
    expires_at_ms: int | None = None  # None: it waits as long as it takes
    cancel_reason: str | None = None

    @property
    def is_open(self) -> bool:
        return self.status is PendingStatus.OPEN


@dataclass(frozen=True, slots=True)
class Record(Generic[A]):
    """Something happened: record ``pending``, the request's new state."""

    pending: Pending[A]


@dataclass(frozen=True, slots=True)
class NoOp(Generic[A]):
    """Nothing to record: the same answer again, or an ending that had already happened."""

    pending: Pending[A]


@dataclass(frozen=True, slots=True)
class AnsweredFirst(Generic[A]):
    """A different answer to a request someone already answered: the first answer stands."""

    pending: Pending[A]

    @property
    def by(self) -> str | None:
        return self.pending.answered_by

    @property
    def at_ms(self) -> int | None:
        return self.pending.answered_at_ms


@dataclass(frozen=True, slots=True)
class Refused(Generic[A]):
    """The request ended (``reason``) before this answer came; the answer does not count.

    ``record_expiry``: the request was still open but its time had come, so the caller
    records the expiry (``pending``) now, in the same transaction that refuses the answer.
    """

    reason: Literal["expired", "cancelled"]
    pending: Pending[A]
    record_expiry: bool = False


@dataclass(frozen=True, slots=True)
class NotDue(Generic[A]):
    """An open request whose time has not come (or that has no expiry): it stays open."""

    pending: Pending[A]


AnswerDecision: TypeAlias = Record[A] | NoOp[A] | AnsweredFirst[A] | Refused[A]
ExpireDecision: TypeAlias = Record[A] | NoOp[A] | NotDue[A]


def is_due(pending: Pending[A], now_ms: int) -> bool:
    """Open, with an expiry, and that time has come."""
    expires = pending.expires_at_ms
    return pending.is_open and expires is not None and now_ms >= expires


def answer(
    pending: Pending[A],
    response: A,
    *,
    by: str,
    at_ms: int,
    same: Callable[[A, A], bool] = operator.eq,
) -> AnswerDecision[A]:
    """Decide what ``by``'s ``response`` at ``at_ms`` does to ``pending``.

    ``same(first, again)`` says whether two answers are the same answer; pass the kind's own
    comparison when equal answers may differ in form. Check the answer itself (its options,
    its format) in the kind's rules: only a :class:`Record` needs a valid one, and a refusal
    or a conflict is the more useful thing to say about a late answer, even an invalid one.
    """
    _check_clock(at_ms)
    if not isinstance(by, str) or not by.strip():
        raise DomainError("invalid_argument", "An answer needs to say who gave it.")
    if pending.status is PendingStatus.CANCELLED:
        return Refused("cancelled", pending)
    if pending.status is PendingStatus.EXPIRED:
        return Refused("expired", pending)
    if is_due(pending, at_ms):
        return Refused("expired", _expired(pending), record_expiry=True)
    if pending.status is PendingStatus.ANSWERED:
        first = pending.answer
        if first is not None and same(first, response):
            return NoOp(pending)
        return AnsweredFirst(pending)
    answered = replace(
        pending,
        status=PendingStatus.ANSWERED,
        answer=response,
        answered_by=by,
        answered_at_ms=at_ms,
    )
    return Record(answered)


def expire(pending: Pending[A], now_ms: int) -> ExpireDecision[A]:
    """End an open request whose time has come; one that already ended won the race."""
    _check_clock(now_ms)
    if not pending.is_open:
        return NoOp(pending)
    if not is_due(pending, now_ms):
        return NotDue(pending)
    return Record(_expired(pending))


def withdraw(pending: Pending[A], reason: str | None = None) -> Record[A] | NoOp[A]:
    """Withdraw an open request (its asker no longer needs the answer, or its task is being
    cancelled). An ended one is left as it is: check ``NoOp.pending.status`` to tell a
    second withdrawal from a request that was answered or expired first."""
    if not pending.is_open:
        return NoOp(pending)
    return Record(replace(pending, status=PendingStatus.CANCELLED, cancel_reason=reason))


def _expired(pending: Pending[A]) -> Pending[A]:
    return replace(pending, status=PendingStatus.EXPIRED)


def _check_clock(now_ms: object) -> None:
    if isinstance(now_ms, bool) or not isinstance(now_ms, int):
        raise DomainError(
            "invalid_argument", f"The time must be whole milliseconds; got {now_ms!r}."
        )
