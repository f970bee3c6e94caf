"""A pending request is answered once: what every kind of question (cards, tool calls) relies on."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lineup.domain import DomainError
from lineup.domain.pending import (
    AnsweredFirst,
    NoOp,
    NotDue,
    Pending,
    PendingStatus,
    Record,
    Refused,
    answer,
    expire,
    is_due,
    withdraw,
)

OPEN: Pending[str] = Pending()
DUE_AT = 1_000


def answered(by: str = "user:ada", at_ms: int = 10, response: str = "yes") -> Pending[str]:
    decision = answer(OPEN, response, by=by, at_ms=at_ms)
    assert isinstance(decision, Record)
    return decision.pending


def test_the_first_answer_is_recorded_with_who_and_when() -> None:
    decision = answer(OPEN, "yes", by="user:ada", at_ms=10)
    assert decision == Record(
        Pending(PendingStatus.ANSWERED, "yes", answered_by="user:ada", answered_at_ms=10)
    )


def test_the_same_answer_again_changes_nothing_whoever_sends_it() -> None:
    first = answered()
    assert answer(first, "yes", by="user:bob", at_ms=20) == NoOp(first)


def test_a_different_answer_is_a_conflict_naming_who_answered_first_and_when() -> None:
    decision = answer(answered(), "no", by="user:bob", at_ms=20)
    assert isinstance(decision, AnsweredFirst)
    assert (decision.by, decision.at_ms, decision.pending.answer) == ("user:ada", 10, "yes")


def test_a_kind_may_say_which_answers_are_the_same() -> None:
    first = answered(response="Yes")
    same = answer(first, "yes", by="user:bob", at_ms=20, same=lambda a, b: a.lower() == b.lower())
    assert same == NoOp(first)


def test_an_answer_to_a_withdrawn_request_is_refused_as_cancelled() -> None:
    withdrawn = withdraw(OPEN, "The task was cancelled.")
    assert isinstance(withdrawn, Record)
    assert withdrawn.pending.cancel_reason == "The task was cancelled."
    assert answer(withdrawn.pending, "yes", by="user:ada", at_ms=10) == Refused(
        "cancelled", withdrawn.pending
    )


def test_an_answer_after_the_expiry_time_is_refused_and_the_expiry_is_to_be_recorded() -> None:
    request: Pending[str] = Pending(expires_at_ms=DUE_AT)
    decision = answer(request, "yes", by="user:ada", at_ms=DUE_AT)
    assert decision == Refused(
        "expired", Pending(PendingStatus.EXPIRED, expires_at_ms=DUE_AT), record_expiry=True
    )


def test_an_answer_to_an_expired_request_is_refused_without_recording_anything_more() -> None:
    expired = Pending(PendingStatus.EXPIRED, expires_at_ms=DUE_AT)
    assert answer(expired, "yes", by="user:ada", at_ms=5) == Refused("expired", expired)


def test_an_answer_before_the_expiry_time_counts() -> None:
    request: Pending[str] = Pending(expires_at_ms=DUE_AT)
    assert isinstance(answer(request, "yes", by="user:ada", at_ms=DUE_AT - 1), Record)


def test_without_an_expiry_time_a_request_waits_forever() -> None:
    assert not is_due(OPEN, 10**15)
    assert expire(OPEN, 10**15) == NotDue(OPEN)
    assert isinstance(answer(OPEN, "yes", by="user:ada", at_ms=10**15), Record)


def test_a_request_expires_only_once_its_time_has_come() -> None:
    request: Pending[str] = Pending(expires_at_ms=DUE_AT)
    assert expire(request, DUE_AT - 1) == NotDue(request)
    assert expire(request, DUE_AT) == Record(Pending(PendingStatus.EXPIRED, expires_at_ms=DUE_AT))


@pytest.mark.parametrize(
    "ended",
    [
        answered(),
        Pending(PendingStatus.EXPIRED, expires_at_ms=DUE_AT),
        Pending(PendingStatus.CANCELLED),
    ],
)
def test_an_ended_request_neither_expires_nor_is_withdrawn_again(ended: Pending[str]) -> None:
    assert expire(ended, DUE_AT * 2) == NoOp(ended)
    assert withdraw(ended, "late") == NoOp(ended)
    assert not is_due(ended, DUE_AT * 2)


@pytest.mark.parametrize("by", ["", "   "])
def test_an_answer_must_say_who_gave_it(by: str) -> None:
    with pytest.raises(DomainError) as caught:
        answer(OPEN, "yes", by=by, at_ms=10)
    assert caught.value.code == "invalid_argument"


@pytest.mark.parametrize("at", [1.5, True, "10"])
def test_times_are_whole_milliseconds(at: object) -> None:
    with pytest.raises(DomainError):
        answer(OPEN, "yes", by="user:ada", at_ms=at)  # type: ignore[arg-type]
    with pytest.raises(DomainError):
        expire(OPEN, at)  # type: ignore[arg-type]


# --- any sequence of events ----------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    response: str
    by: str
    at_ms: int


@dataclass(frozen=True)
class Expire:
    at_ms: int


@dataclass(frozen=True)
class Withdraw:
    reason: str | None


times = st.integers(min_value=0, max_value=2 * DUE_AT)
steps = st.lists(
    st.one_of(
        st.builds(Answer, st.sampled_from(["yes", "no"]), st.sampled_from(["ada", "bob"]), times),
        st.builds(Expire, times),
        st.builds(Withdraw, st.none() | st.just("changed my mind")),
    ),
    max_size=8,
)


@settings(max_examples=300)
@given(expires_at=st.none() | times, script=steps)
def test_whatever_happens_a_request_ends_once_and_its_first_ending_stands(
    expires_at: int | None, script: list[Answer | Expire | Withdraw]
) -> None:
    state: Pending[str] = Pending(expires_at_ms=expires_at)
    ended: Pending[str] | None = None
    for step in script:
        if isinstance(step, Answer):
            decision = answer(state, step.response, by=step.by, at_ms=step.at_ms)
        elif isinstance(step, Expire):
            decision = expire(state, step.at_ms)
        else:
            decision = withdraw(state, step.reason)
        if ended is not None:
            # An ended request records nothing new, whatever arrives.
            assert not isinstance(decision, Record)
            assert decision.pending == ended
            assert not (isinstance(decision, Refused) and decision.record_expiry)
            if isinstance(step, Answer) and ended.status is PendingStatus.ANSWERED:
                same = step.response == ended.answer
                assert isinstance(decision, NoOp if same else AnsweredFirst)
            continue
        if isinstance(decision, Record | Refused) and decision.pending.status is not (
            PendingStatus.OPEN
        ):
            if isinstance(decision, Refused):
                assert decision.record_expiry  # an open request refuses only once it is due
            after = decision.pending
            if after.status is PendingStatus.EXPIRED:
                at = step.at_ms  # type: ignore[union-attr]
                assert expires_at is not None and at >= expires_at
            if after.status is PendingStatus.ANSWERED:
                assert isinstance(step, Answer)
                assert (after.answer, after.answered_by) == (step.response, step.by)
                assert expires_at is None or step.at_ms < expires_at
            state = ended = after
        else:
            assert isinstance(decision, NotDue)
            assert state.status is PendingStatus.OPEN
