"""Which passwords are refused, and how repeated wrong passwords slow an account down."""

from __future__ import annotations

import pytest

from lineup.hub.password_policy import check_password
from lineup.hub.ratelimit import FailureBackoff
from lineup.protocol.errors import InvalidArgument, RateLimited


@pytest.mark.parametrize(
    "password", ["password", "        ", "12345678", "password1", "qwertyuiop", "aaaaaaaaaaaa"]
)
def test_common_and_trivial_passwords_are_refused_with_advice(password: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        check_password(password)
    assert refused.value.details["field"] == "password"
    assert refused.value.message.startswith("That password is too easy to guess.")
    assert refused.value.details["suggestions"]


def test_a_password_made_of_the_persons_own_email_is_refused() -> None:
    check_password("marguerite.okafor")
    with pytest.raises(InvalidArgument):
        check_password("marguerite.okafor", ("marguerite.okafor@example.test", "Marguerite"))


@pytest.mark.parametrize("password", ["correct horse battery", "long enough pw", "a long password"])
def test_a_few_uncommon_words_are_accepted(password: str) -> None:
    check_password(password)


def test_a_short_or_huge_password_is_refused_before_it_is_scored() -> None:
    with pytest.raises(InvalidArgument, match="at least 8 characters"):
        check_password("Zq8#k2")
    with pytest.raises(InvalidArgument, match="too long"):
        check_password("x" * 1025)
    check_password("Zq8#k2!vW" + "correct horse battery" * 40)  # long and strong is fine


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def test_a_few_mistakes_cost_nothing_then_each_further_one_doubles_the_wait() -> None:
    clock = Clock()
    backoff = FailureBackoff(clock, free=3, base=1.0, cap=8.0)
    for _ in range(3):
        backoff.attempt("ana@example.test", "sign-in")
    waits = []
    for _ in range(6):
        with pytest.raises(RateLimited) as limited:
            backoff.attempt("ana@example.test", "sign-in")
        wait = limited.value.details["retryAfterMs"]
        waits.append(wait)
        clock.now += wait
        backoff.attempt("ana@example.test", "sign-in")
    assert waits == [1000, 2000, 4000, 8000, 8000, 8000]
    backoff.attempt("bo@example.test", "sign-in")  # another account is not slowed


def test_a_success_or_an_hour_of_quiet_clears_the_wait() -> None:
    clock = Clock()
    backoff = FailureBackoff(clock, free=2, base=1.0, forget_after=3600.0)
    for _ in range(2):
        backoff.attempt("ana@example.test", "sign-in")
    with pytest.raises(RateLimited):
        backoff.check("ana@example.test", "sign-in")
    clock.now += 3_600_001
    backoff.check("ana@example.test", "sign-in")
    for _ in range(2):
        backoff.attempt("ana@example.test", "sign-in")
    backoff.succeeded("ana@example.test")
    backoff.check("ana@example.test", "sign-in")
